"""Game creation is limited per client and window (service/api/rate_limits.py), on fakeredis."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
import redis
import yaml
from flask.testing import FlaskClient

from service.api.rate_limits import DEFAULT_GAMES_PER_MINUTE, DEFAULT_READ_BURST, DEFAULT_READS_PER_SECOND, RateLimiter
from service.app import create_app
from service.openapi import spec_yaml
from tests.conftest import RecordingDispatcher

GOLF = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "bot"}]}


def limited_app(fake_redis: fakeredis.FakeRedis, **settings: Any) -> flask.Flask:
    return create_app({"TESTING": True, **settings}, redis_client=fake_redis, dispatcher=RecordingDispatcher())


@pytest.fixture
def limited(fake_redis: fakeredis.FakeRedis) -> Iterator[FlaskClient]:
    yield limited_app(fake_redis, GAMES_PER_MINUTE=3).test_client()


def create(client: FlaskClient, **environ: Any) -> Any:
    return client.post("/v1/games", json=GOLF, **environ)


def test_the_limit_admits_that_many_games_then_answers_429_with_retry_after(limited: FlaskClient) -> None:
    assert [create(limited).status_code for _ in range(3)] == [201, 201, 201]
    refused = create(limited)
    assert refused.status_code == 429
    assert refused.mimetype == "application/problem+json"
    problem = refused.get_json()
    assert problem["code"] == "rate_limited" and problem["status"] == 429 and problem["title"] == "Too Many Requests"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert create(limited).status_code == 429, "refusals go on for the rest of the window"


def test_a_refused_creation_stores_no_game(limited: FlaskClient, fake_redis: fakeredis.FakeRedis) -> None:
    for _ in range(5):
        create(limited)
    assert len(list(fake_redis.scan_iter("game:*:meta"))) == 3


def test_the_window_ends_and_the_client_may_create_again(limited: FlaskClient, fake_redis: fakeredis.FakeRedis) -> None:
    for _ in range(3):
        create(limited)
    assert create(limited).status_code == 429
    (key,) = fake_redis.scan_iter("ratelimit:games:*")
    assert 0 < fake_redis.pttl(key) <= 60_000, "the counter expires with its window"
    fake_redis.delete(key)  # what the expiry does at the end of the window
    assert create(limited).status_code == 201


def test_each_client_address_has_its_own_counter(limited: FlaskClient) -> None:
    for _ in range(3):
        assert create(limited, environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code == 201
    assert create(limited, environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code == 429
    assert create(limited, environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code == 201


def test_x_forwarded_for_is_ignored_unless_the_proxy_is_trusted(limited: FlaskClient) -> None:
    for number in range(3):
        assert create(limited, headers={"X-Forwarded-For": f"203.0.113.{number}"}).status_code == 201
    refused = create(limited, headers={"X-Forwarded-For": "203.0.113.99"})
    assert refused.status_code == 429, "a client cannot escape the limit by inventing addresses"


def test_behind_a_trusted_proxy_the_address_it_saw_counts(fake_redis: fakeredis.FakeRedis) -> None:
    client = limited_app(fake_redis, GAMES_PER_MINUTE=1, TRUSTED_PROXY_HOPS=1).test_client()
    proxy = {"REMOTE_ADDR": "10.0.0.9"}
    assert create(client, environ_base=proxy, headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 201
    assert create(client, environ_base=proxy, headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 429
    assert create(client, environ_base=proxy, headers={"X-Forwarded-For": "198.51.100.2"}).status_code == 201
    forged = {"X-Forwarded-For": "1.2.3.4, 198.51.100.1"}  # the client wrote the first entry, the proxy the last
    assert create(client, environ_base=proxy, headers=forged).status_code == 429


def test_zero_turns_the_limit_off(fake_redis: fakeredis.FakeRedis) -> None:
    client = limited_app(fake_redis, GAMES_PER_MINUTE=0).test_client()
    assert all(create(client).status_code == 201 for _ in range(40))
    assert not list(fake_redis.scan_iter("ratelimit:*"))


def test_the_setting_comes_from_the_environment_outside_tests(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAMES_PER_MINUTE", "2")
    client = create_app(redis_client=fake_redis, dispatcher=RecordingDispatcher()).test_client()
    assert [create(client).status_code for _ in range(3)] == [201, 201, 429]
    monkeypatch.delenv("GAMES_PER_MINUTE")
    assert create_app(redis_client=fake_redis).config["GAMES_PER_MINUTE"] == DEFAULT_GAMES_PER_MINUTE


def test_under_testing_the_limit_is_off_unless_a_test_sets_it(app: flask.Flask, client: FlaskClient) -> None:
    assert app.config["GAMES_PER_MINUTE"] == 0
    assert all(create(client).status_code == 201 for _ in range(DEFAULT_GAMES_PER_MINUTE + 5))


def test_only_game_creation_is_limited(limited: FlaskClient) -> None:
    created = [create(limited).get_json() for _ in range(3)]
    assert create(limited).status_code == 429
    game_url = f"/v1/games/{created[0]['id']}"
    assert limited.get(game_url).status_code == 200
    token = created[0]["seats"][0]["token"]
    reveal = {"type": "reveal", "positions": [0, 1]}
    assert (
        limited.post(f"{game_url}/actions", json=reveal, headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )


def test_the_counter_and_its_expiry_are_set_together(fake_redis: fakeredis.FakeRedis) -> None:
    limiter = RateLimiter(fake_redis, limit=5, window_seconds=60)
    key = limiter.key("client")
    fake_redis.set(key, 2)  # a counter without expiry (as if written by hand): the next hit repairs it
    limiter.hit("client")
    assert fake_redis.get(key) == "3" and 0 < fake_redis.pttl(key) <= 60_000


def test_redis_down_is_503_store_unavailable(fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> None:
    app = limited_app(fake_redis, GAMES_PER_MINUTE=3)
    limiter = app.extensions["ratelimit"]

    def down(*_: Any, **__: Any) -> Any:
        raise redis.ConnectionError("gone")

    monkeypatch.setattr(limiter, "_hit", down)
    response = create(app.test_client())
    assert response.status_code == 503 and response.get_json()["code"] == "store_unavailable"


def test_the_openapi_documents_the_429(app: flask.Flask) -> None:
    spec = yaml.safe_load(spec_yaml())
    responses = spec["paths"]["/v1/games"]["post"]["responses"]
    assert "429" in responses
    assert responses["429"]["content"]["application/problem+json"]


# ---------------------------------------------------------------- reads: a token bucket per client


def read_limited(fake_redis: fakeredis.FakeRedis, **settings: Any) -> FlaskClient:
    return limited_app(fake_redis, READS_PER_SECOND=1, READ_BURST=3, **settings).test_client()


def test_reads_take_a_token_each_and_without_one_get_429_with_retry_after(fake_redis: fakeredis.FakeRedis) -> None:
    client = read_limited(fake_redis)
    game_url = f"/v1/games/{create(client).get_json()['id']}"
    paths = (game_url, f"{game_url}/events", f"{game_url}/events?after=1")
    assert [client.get(path).status_code for path in paths] == [200] * 3
    refused = client.get(f"{game_url}/replay?at=1")
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    problem = refused.get_json()
    assert problem["code"] == "rate_limited" and problem["status"] == 429 and "reads" in problem["detail"]
    assert int(refused.headers["Retry-After"]) == 1, "one token a second: the next one within a second"
    assert client.get("/healthz").status_code == 200 and client.get("/").status_code == 200, "only /v1/ is limited"
    assert client.get("/v1/catalog").status_code == 200, "the static catalog takes no token"
    assert client.get(game_url, environ_base={"REMOTE_ADDR": "10.0.0.7"}).status_code == 200, "each client its own"
    assert create(client).status_code == 201, "writes take no read token"


def test_the_bucket_refills_at_the_rate_up_to_the_burst(fake_redis: fakeredis.FakeRedis) -> None:
    client = read_limited(fake_redis)
    game_url = f"/v1/games/{create(client).get_json()['id']}"
    assert [client.get(game_url).status_code for _ in range(4)] == [200, 200, 200, 429]
    (key,) = fake_redis.scan_iter("ratelimit:reads:*")
    assert 0 < fake_redis.pttl(key) <= 4_000, "the bucket's key goes once it would be full again"
    at = int(fake_redis.hget(key, "at") or 0)
    fake_redis.hset(key, "at", str(at - 2_000))  # two seconds pass: two tokens
    assert [client.get(game_url).status_code for _ in range(3)] == [200, 200, 429]
    fake_redis.hset(key, "at", str(at - 3_600_000))  # an hour passes: a full bucket, no more
    assert [client.get(game_url).status_code for _ in range(4)] == [200, 200, 200, 429]


def test_the_read_limit_comes_from_the_environment_and_is_off_under_testing(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch, app: flask.Flask, client: FlaskClient
) -> None:
    assert app.config["READS_PER_SECOND"] == 0
    assert all(client.get("/v1/catalog").status_code == 200 for _ in range(300))
    monkeypatch.setenv("READS_PER_SECOND", "5")
    monkeypatch.setenv("READ_BURST", "2")
    outside = create_app(redis_client=fake_redis, dispatcher=RecordingDispatcher()).test_client()
    assert [outside.get("/v1/games/none").status_code for _ in range(3)] == [404, 404, 429]
    monkeypatch.delenv("READS_PER_SECOND")
    monkeypatch.delenv("READ_BURST")
    defaults = create_app(redis_client=fake_redis).config
    assert (defaults["READS_PER_SECOND"], defaults["READ_BURST"]) == (DEFAULT_READS_PER_SECOND, DEFAULT_READ_BURST)


EXPERT_GOLF = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "bot", "level": "expert"}]}


def test_a_client_has_at_most_its_running_expert_games_and_one_that_ends_frees_a_place(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    """All-expert games can think for hours (thousands of moves at up to EXPERT_THINK_MS_MAX each): one
    client has at most EXPERT_GAMES_PER_CLIENT of them running, so it holds at most that many of the
    expert queue's jobs at once; games without an expert and other clients are not counted."""
    app = limited_app(fake_redis, EXPERT_GAMES_PER_CLIENT=2)
    client = app.test_client()
    ids = []
    for _ in range(2):
        response = client.post("/v1/games", json=EXPERT_GOLF)
        assert response.status_code == 201
        ids.append(response.get_json()["id"])
    refused = client.post("/v1/games", json=EXPERT_GOLF)
    assert refused.status_code == 429 and refused.get_json()["code"] == "rate_limited"
    assert "expert seat" in refused.get_json()["detail"] and refused.headers["Retry-After"] == "60"
    assert len(list(fake_redis.scan_iter("game:*:meta"))) == 2, "the refused creation stored a game"
    assert client.post("/v1/games", json=GOLF).status_code == 201
    assert client.post("/v1/games", json=EXPERT_GOLF, environ_base={"REMOTE_ADDR": "10.0.0.9"}).status_code == 201
    app.extensions["games"].abandon(ids[0], "ended for the test")
    assert client.post("/v1/games", json=EXPERT_GOLF).status_code == 201
    assert client.post("/v1/games", json=EXPERT_GOLF).status_code == 429
