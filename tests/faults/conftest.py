"""The fault suite's set-up: a redis-server of its own, the fault proxy in front of it, and the app
wired to the proxy through the production clients (service/storage/redis_clients.py's redis_clients, with
their driver retries), bot turns recorded in-process."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
import redis
from flask.testing import FlaskClient

from service.app import create_app
from tests.conftest import RecordingDispatcher
from tests.faults.redis_proxy import RedisProxy
from tests.integration.conftest import start_redis, stop


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A redis-server of our own on a free port (the proxy's upstream)."""
    process, port = start_redis(tmp_path_factory.mktemp("faults-redis"))
    yield port
    stop(process)


@pytest.fixture
def upstream(redis_port: int) -> Iterator[redis.Redis]:
    """A direct client of the test's own redis-server (no proxy, no faults), emptied for each test."""
    client = redis.Redis(port=redis_port, decode_responses=True)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def proxy(redis_port: int, upstream: redis.Redis) -> Iterator[RedisProxy]:
    """The fault proxy in front of the test's redis-server; its plan faults nothing until set."""
    with RedisProxy(redis_port) as running:
        yield running


@dataclasses.dataclass
class Proxied:
    """The app on the proxied Redis, its test client and its recording dispatcher."""

    app: flask.Flask
    client: FlaskClient
    dispatcher: RecordingDispatcher

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a game (no faults expected); its creation answer."""
        response = self.client.post("/v1/games", json=body)
        assert response.status_code == 201, response.get_data(as_text=True)
        created: dict[str, Any] = response.get_json()
        return created


@pytest.fixture
def proxied(proxy: RedisProxy, tmp_path: Path) -> Proxied:
    """The app with REDIS_URL at the proxy, built as in production (create_app connects itself)."""
    dispatcher = RecordingDispatcher()
    app = create_app({"TESTING": True, "REDIS_URL": proxy.url, "QUEUE_REDIS_URL": None}, dispatcher=dispatcher)
    dispatcher.service = app.extensions["games"]
    return Proxied(app, app.test_client(), dispatcher)


def game_ids(client: redis.Redis) -> set[str]:
    """Every game id Redis holds a meta hash or a packed value of."""
    ids = set()
    for pattern in ("game:{*}:meta", "game:{*}:packed"):
        for key in client.scan_iter(match=pattern, count=1000):
            ids.add(str(key).split("{", 1)[1].split("}", 1)[0])
    return ids
