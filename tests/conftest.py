"""Shared fixtures: a fakeredis-backed app for service tests, bot turns drained in-process."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import bots
from service.app import create_app
from service.play.due_turns import play_bot_turns, play_turn_timeout
from service.play.game_service import GameService
from service.play.ports import NoDispatcher
from service.storage.turn_queue import BOT_QUEUE


class RecordingDispatcher(NoDispatcher):
    """Collects bot-turn requests and turn timeouts; `drain` and `fire_timeouts` play them as a worker would."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, int]] = []
        self.delays: dict[tuple[str, int], int] = {}  # (game, version) -> how long the bot turn was to wait
        self.timeouts: dict[tuple[str, int], int] = {}  # (game, version) -> seconds, while scheduled
        self.cancelled: list[tuple[str, int]] = []
        self.queues: dict[tuple[str, int], str] = {}  # (game, version) -> the queue the bot turn was asked on
        self.service: GameService | None = None

    def schedule(self, game_id: str, version: int, delay_seconds: int = 0, queue: str = BOT_QUEUE) -> None:
        self.jobs.append((game_id, version))
        self.delays[(game_id, version)] = delay_seconds
        self.queues[(game_id, version)] = queue

    def schedule_timeout(self, game_id: str, version: int, seconds: int) -> None:
        self.timeouts.setdefault((game_id, version), seconds)

    def cancel_timeout(self, game_id: str, version: int) -> None:
        if self.timeouts.pop((game_id, version), None) is not None:
            self.cancelled.append((game_id, version))

    def fire_timeouts(self) -> list[str]:
        """Run every scheduled turn timeout now, as if its time had come (each may schedule the next)."""
        assert self.service is not None
        due, self.timeouts = list(self.timeouts), {}
        return [play_turn_timeout(self.service, game_id, version) for game_id, version in due]

    def drain(self, limit: int = 100_000) -> list[str]:
        """Play queued bot turns (each may queue the next) until none is left."""
        assert self.service is not None
        outcomes: list[str] = []
        while self.jobs and len(outcomes) < limit:
            game_id, version = self.jobs.pop(0)
            outcomes.append(play_bot_turns(self.service, game_id, version))
        return outcomes


BOT_PLUGINS = Path(__file__).resolve().parent / "plugins"
"""A bot plug-in package of the tests' own, with its dist-info: installed for whoever has it on sys.path."""


@pytest.fixture
def bot_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The tests' bot plug-ins (tests/plugins) installed, as a package is: where importlib.metadata finds their
    entry points, for an app or services built after this; the plug-in levels of before, after the test."""
    before = bots.plugin_levels()
    monkeypatch.syspath_prepend(str(BOT_PLUGINS))
    yield BOT_PLUGINS
    bots.use_plugin_levels(before)
    for name in [name for name in sys.modules if name.split(".")[0] == "cardtable_test_bots"]:
        del sys.modules[name]


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
