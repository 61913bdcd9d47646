"""Shared fixtures: a fakeredis-backed app for service tests, bot turns drained in-process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.commands import GameService


class RecordingDispatcher:
    """Collects bot-turn requests; `drain` plays them the way a worker would."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, int]] = []
        self.service: GameService | None = None

    def schedule(self, game_id: str, version: int) -> None:
        self.jobs.append((game_id, version))

    def drain(self, limit: int = 100_000) -> list[str]:
        """Play queued bot turns (each may queue the next) until none is left."""
        assert self.service is not None
        outcomes: list[str] = []
        while self.jobs and len(outcomes) < limit:
            game_id, version = self.jobs.pop(0)
            outcomes.append(self.service.play_bot_turn(game_id, version))
        return outcomes


@pytest.fixture
def fake_redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(decode_responses=True)


@pytest.fixture
def dispatcher() -> RecordingDispatcher:
    return RecordingDispatcher()


@pytest.fixture
def app(fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    application = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


@pytest.fixture
def client(app: flask.Flask) -> FlaskClient:
    return app.test_client()


def auth(token: str) -> dict[str, str]:
    """The Authorization header for a seat token."""
    return {"Authorization": f"Bearer {token}"}


def create_golf(client: FlaskClient, seats: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """Create a Golf game (default: one human, one greedy bot) and return the 201 body."""
    body = {"game": "golf", "seats": seats or [{"kind": "human", "name": "Ana"}, {"kind": "bot"}], **extra}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created
