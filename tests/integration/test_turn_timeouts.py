"""Turn timeouts with a real redis-server, gunicorn and a real worker (with RQ's scheduler): a human who does
not act has the greedy move played for it, recorded as the system's; a timeout the human beat plays nothing.

Waits are generous: a worker that starts while an earlier one's scheduler lock is still held waits for it.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest
import redis
from rq.registry import ScheduledJobRegistry

from domain.verify import verify
from service.storage.turn_queue import BOT_QUEUE, timeout_job_id
from tests.integration.conftest import call

pytestmark = pytest.mark.integration

HUMAN_AND_BOT = [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "greedy"}]
PATIENCE = 180.0  # seconds: far beyond any turn_seconds here


def create(api_url: str, turn_seconds: int) -> dict[str, Any]:
    body = {"game": "golf", "seats": HUMAN_AND_BOT, "options": {"rounds": 1}, "turn_seconds": turn_seconds}
    status, created = call("POST", f"{api_url}/v1/games", body)
    assert status == 201, created
    assert created["turn_seconds"] == turn_seconds
    game: dict[str, Any] = created
    return game


def events_until(game_url: str, done: Any) -> list[dict[str, Any]]:
    """Follow the events with the long-poll until `done(events)`; fail after PATIENCE seconds."""
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + PATIENCE
    while not done(events):
        assert time.monotonic() < deadline, f"gave up after {PATIENCE} s with {len(events)} events"
        status, body = call("GET", f"{game_url}/events?after={len(events)}&wait=10")
        assert status == 200, body
        events += body["events"]
    return events


def timeouts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("reason") == "turn_timeout"]


def finished(events: list[dict[str, Any]]) -> bool:
    return bool(events) and events[-1]["type"] == "SeedRevealed"


def test_a_human_who_never_acts_has_every_move_played_by_timeouts_and_the_game_verifies(
    api_url: str, worker: subprocess.Popen[bytes]
) -> None:
    created = create(api_url, turn_seconds=1)
    game_url = f"{api_url}/v1/games/{created['id']}"
    events = events_until(game_url, finished)
    played = timeouts(events)
    assert played, "the human never acted, so the system played its moves"
    assert played[0]["type"] == "CardsRevealed", "the first move due was the setup reveal (G-4)"
    assert all(e["actor"] == "system" and e["seat"] == 0 for e in played)
    assert not [e for e in events if e["actor"] == 0]
    status, record = call("GET", f"{game_url}/record")
    assert status == 200 and timeouts(record["events"]) == played
    verdict = verify(record)
    assert verdict.ok, verdict
    status, audit = call("GET", f"{game_url}/audit")
    assert status == 200 and audit["first_bad_seq"] is None and audit["complete"], audit


def test_a_timeout_the_human_beat_is_cancelled_and_plays_nothing(
    api_url: str, redis_url: str, worker: subprocess.Popen[bytes]
) -> None:
    created = create(api_url, turn_seconds=5)
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][0]["token"]
    status, answer = call(
        "POST", f"{game_url}/actions", {"type": "reveal", "positions": [0, 1]}, {"Authorization": f"Bearer {token}"}
    )
    assert status == 200, answer
    own = next(e for e in answer["events"] if e["actor"] == 0)
    # every timeout of a version before the human's action is off the schedule
    with redis.Redis.from_url(redis_url) as client:
        scheduled = set(ScheduledJobRegistry(BOT_QUEUE, connection=client).get_job_ids())
    earlier = {timeout_job_id(created["id"], version) for version in range(1, own["seq"])}
    assert not scheduled & earlier, scheduled & earlier
    # the human now idles: its next turn times out; the one it beat never played
    events = events_until(game_url, lambda seen: bool(timeouts(seen)))
    first = timeouts(events)[0]
    assert first["seq"] > own["seq"], (first, own)
    assert (first["actor"], first["seat"]) == ("system", 0)
    assert [e["seq"] for e in events if e["type"] == "CardsRevealed" and 0 in (e["actor"], e.get("seat"))] == [
        own["seq"]
    ], "the human's reveal is the only one of its seat: no timeout revealed for it"
