"""The one loop for due turns (service/play/due_turns.py): a bot chain and a turn timeout that a person
beats between the loop's load and its append store nothing and schedule nothing of their own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import fakeredis
import pytest

from service.bootstrap import game_service
from service.play.due_turns import play_bot_turns, play_turn_timeout
from service.play.game_service import DueTurn, GameService, LoadedGame
from service.storage.redis_store import RedisStore
from tests.conftest import RecordingDispatcher

REVEAL = {"type": "reveal", "positions": [0, 1]}  # G-4: every seat turns two cards up first, in any order


def make_service() -> tuple[GameService, RecordingDispatcher]:
    dispatcher = RecordingDispatcher()
    service = game_service(RedisStore.connect(fakeredis.FakeRedis(decode_responses=True)), dispatcher)
    dispatcher.service = service
    return service, dispatcher


def person_acts_first(service: GameService, monkeypatch: pytest.MonkeyPatch, game_id: str) -> list[int]:
    """Seat 0 reveals after the loop has loaded the game and before its append; returns the versions
    the loop's appends were decided at."""
    real_store = service.store_due_turns
    decided_at: list[int] = []

    def beaten(loaded: LoadedGame, batch: Sequence[DueTurn]) -> None:
        decided_at.append(loaded.version)
        service.submit(game_id, 0, REVEAL)  # the person's action lands first
        real_store(loaded, batch)

    monkeypatch.setattr(service, "store_due_turns", beaten)
    return decided_at


@pytest.mark.parametrize(
    ("seats", "turn_seconds", "job", "outcome"),
    [
        ([{"kind": "human"}, {"kind": "bot"}], None, play_bot_turns, "conflict"),
        ([{"kind": "human"}, {"kind": "human"}], 30, play_turn_timeout, "stale"),
    ],
    ids=["bot-chain", "turn-timeout"],
)
def test_a_due_turn_beaten_by_a_person_stores_and_schedules_nothing(
    monkeypatch: pytest.MonkeyPatch,
    seats: list[dict[str, Any]],
    turn_seconds: int | None,
    job: Callable[[GameService, str, int], str],
    outcome: str,
) -> None:
    service, dispatcher = make_service()
    created = service.create_game("golf", seats, {"rounds": 1}, seed="beaten", turn_seconds=turn_seconds)
    game_id, version = created["id"], created["version"]
    decided_at = person_acts_first(service, monkeypatch, game_id)
    jobs_before, timeouts_before = list(dispatcher.jobs), dict(dispatcher.timeouts)

    assert job(service, game_id, version) == outcome

    records = service.store.read(game_id)
    assert decided_at == [version], "one turn decided, at the version the job was for"
    assert [(r["type"], r["actor"]) for r in records[version:]] == [("CardsRevealed", 0)], "only the person's move"
    added_jobs = dispatcher.jobs[len(jobs_before) :]
    added_timeouts = {key: s for key, s in dispatcher.timeouts.items() if key not in timeouts_before}
    # what follows the person's move was scheduled by that move, once; the beaten job added nothing
    expected_jobs = [(game_id, version + 1)] if turn_seconds is None else []
    expected_timeouts = {(game_id, version + 1): turn_seconds} if turn_seconds else {}
    assert (added_jobs, added_timeouts) == (expected_jobs, expected_timeouts)
