"""REDIS_URL and QUEUE_REDIS_URL: a plain Redis or a cluster for the store, always a plain Redis for RQ."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.storage.redis_clients import RedisSettingsError, is_cluster_url, queue_url_for


@pytest.mark.parametrize(
    ("url", "cluster"),
    [
        ("redis://localhost:6379/0", False),
        ("rediss://cache.example:6380/0", False),
        ("unix:///run/redis.sock", False),
        ("redis+cluster://10.0.0.1:7000", True),
        ("REDIS+CLUSTER://10.0.0.1:7000", True),
        ("rediss+cluster://user:secret@10.0.0.1:7000", True),
    ],
)
def test_a_cluster_is_named_by_its_scheme(url: str, cluster: bool) -> None:
    assert is_cluster_url(url) is cluster


def test_the_queue_shares_a_plain_redis_unless_told_otherwise() -> None:
    assert queue_url_for("redis://a:1/0", None) == "redis://a:1/0"
    assert queue_url_for("redis://a:1/0", "") == "redis://a:1/0"
    assert queue_url_for("redis://a:1/0", "redis://q:2/0") == "redis://q:2/0"
    assert queue_url_for("redis+cluster://a:1", "redis://q:2/0") == "redis://q:2/0"


def test_a_cluster_store_without_a_queue_redis_is_refused_with_the_reason() -> None:
    with pytest.raises(RedisSettingsError, match="set QUEUE_REDIS_URL to a plain Redis"):
        queue_url_for("redis+cluster://a:1", None)


def test_the_queue_on_a_cluster_is_refused() -> None:
    with pytest.raises(RedisSettingsError, match="QUEUE_REDIS_URL must name one plain Redis"):
        queue_url_for("redis://a:1/0", "redis+cluster://q:2")


def test_the_app_refuses_a_cluster_store_without_a_queue_redis_before_it_connects() -> None:
    with pytest.raises(RedisSettingsError, match="QUEUE_REDIS_URL"):
        create_app({"REDIS_URL": "redis+cluster://127.0.0.1:1", "QUEUE_REDIS_URL": None})
