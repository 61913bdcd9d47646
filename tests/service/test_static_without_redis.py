"""Static routes answer with Redis down, the read limit on (issue 28, item 8): they read nothing from
Redis, so they take no read token either; a route that needs the store still answers 503."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
import redis

from service.app import create_app
from tests.conftest import RecordingDispatcher
from tests.service.helpers import assert_problem

STATIC = ["/v1/catalog", "/openapi.json", "/openapi.yaml", "/docs", "/healthz", "/", "/web/app.js", "/web/docs.js"]


class RedisDown(fakeredis.FakeRedis):
    """Every command, scripts included, fails as when Redis cannot be reached."""

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        raise redis.ConnectionError("Redis is down")


@pytest.mark.parametrize("path", STATIC)
def test_a_static_route_answers_200_with_redis_down(path: str) -> None:
    app = create_app(
        {"TESTING": True, "READS_PER_SECOND": 5, "READ_BURST": 5},
        redis_client=RedisDown(),
        dispatcher=RecordingDispatcher(),
    )
    client = app.test_client()
    assert client.get(path).status_code == 200
    assert_problem(client.get("/v1/games/some-game"), 503, "store_unavailable")  # the store is needed here
