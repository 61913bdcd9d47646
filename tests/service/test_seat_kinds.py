"""A new kind of seat is one entry in the seat registry (service/play/seats.py): the command path and the
due-turn loop ask its controller whether the seat holds a token, which queue its due turn goes on and
whether a worker decides it, and need no line of their own for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import fakeredis
import pytest

from domain import engine
from service.bootstrap import game_service
from service.play import seats
from service.play.due_turns import play_bot_turns
from service.storage.redis_store import RedisStore
from tests.conftest import RecordingDispatcher

OUTSIDE_QUEUE = "outside:croupier"


@dataclasses.dataclass(frozen=True)
class OutsideProgram:
    """A seat played by a program outside the service, which takes its turns from a queue of its own."""

    holds_token = False
    turn_queue = OUTSIDE_QUEUE
    bot_name = None

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        return None

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any] | None:
        return None


def outside_seat(index: int, request: Mapping[str, Any], game: str, think_ms_max: int) -> seats.Seat:
    return seats.Seat(index, request["kind"], request.get("name") or f"program {index}")


@pytest.fixture
def outside_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(seats.KINDS, "outside", seats.SeatKind(outside_seat, lambda seat: OutsideProgram()))
    seats.controller_of.cache_clear()
    yield
    seats.controller_of.cache_clear()


def test_a_registered_kind_of_seat_is_asked_for_its_turn_on_its_own_queue(outside_kind: None) -> None:
    dispatcher = RecordingDispatcher()
    service = game_service(RedisStore.connect(fakeredis.FakeRedis(decode_responses=True)), dispatcher)
    dispatcher.service = service
    created = service.create_game("golf", [{"kind": "outside"}, {"kind": "human"}], {}, seed="outside")

    assert "token" not in created["seats"][0] and "token" in created["seats"][1]
    assert created["seats"][0] == {"seat": 0, "kind": "outside", "name": "program 0"}
    assert dispatcher.jobs == [(created["id"], created["version"])]
    assert dispatcher.queues[(created["id"], created["version"])] == OUTSIDE_QUEUE
    assert play_bot_turns(service, created["id"], created["version"]) == "no_bot_to_act", "no worker decides it"
    assert service.repository.load(created["id"]).version == created["version"]
