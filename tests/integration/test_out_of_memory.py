"""Redis at its `maxmemory` under `noeviction` refuses writes: the API answers 503 and stores nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from service.app import create_app
from tests.conftest import RecordingDispatcher
from tests.integration.conftest import start_redis, stop, store_client

pytestmark = pytest.mark.integration
TWO_BOTS = [{"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]


@pytest.fixture
def full_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis.Redis]:
    """A redis-server of its own, filled up to its 2 MB maxmemory with one unrelated key."""
    process, port = start_redis(
        tmp_path_factory.mktemp("oom-redis"), "--maxmemory", "2mb", "--maxmemory-policy", "noeviction"
    )
    client = redis.Redis(port=port)
    try:
        while True:
            client.append("filler", "x" * 65536)
    except redis.exceptions.OutOfMemoryError:
        pass
    yield client
    stop(process)


def test_a_write_refused_for_memory_is_a_503_and_stores_nothing(full_redis: redis.Redis) -> None:
    url = f"redis://127.0.0.1:{full_redis.connection_pool.connection_kwargs['port']}/0"
    app = create_app({"TESTING": True}, redis_client=store_client(url), dispatcher=RecordingDispatcher())
    keys_before = set(full_redis.keys("*"))
    answer = app.test_client().post("/v1/games", json={"game": "golf", "seats": TWO_BOTS})
    assert answer.status_code == 503, answer.get_json()
    assert answer.get_json()["code"] == "store_unavailable"
    assert not {key for key in full_redis.keys("*") if key.startswith(b"game:")} - keys_before
