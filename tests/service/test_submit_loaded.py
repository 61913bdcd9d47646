"""`GameService.act`: the API's use case loads the game itself (its process's cached copy plus what the
store holds beyond it), and never lets an action be decided on, or appended over, a game that another
API process has moved on since (two processes over one Redis, each with its own cache)."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from service.api.problems import problem_for
from service.bootstrap import game_service
from service.play.errors import VersionConflict
from service.play.game_service import GameService
from service.storage.event_store import EventStore
from tests.conftest import RecordingDispatcher
from tests.service.helpers import check_chain

TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]
REVEAL = {"type": "reveal", "positions": [0, 1]}  # G-4: two cards up before the first turn


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


def api_process(server: fakeredis.FakeServer) -> GameService:
    """One API process: its own service and game cache over the shared Redis."""
    return game_service(EventStore(fakeredis.FakeRedis(server=server, decode_responses=True)), RecordingDispatcher())


def token(created: dict[str, Any], seat: int) -> str:
    """The seat's token from the creation answer."""
    found: str = created["seats"][seat]["token"]
    return found


def test_a_copy_that_fell_behind_is_not_appended_over(server: fakeredis.FakeServer) -> None:
    first, second = api_process(server), api_process(server)
    created = first.create_game("golf", TWO_HUMANS, {}, seed="behind")
    stale = first.repository.load(created["id"])
    second.submit(created["id"], 0, REVEAL)

    answer = first.act(created["id"], token(created, 1), REVEAL)

    assert answer["version"] == stale.version + 2
    records = first.store.read(created["id"])
    check_chain(records, created["seed_commitment"])
    assert [(r["type"], r["actor"]) for r in records[stale.version :]] == [("CardsRevealed", 0), ("CardsRevealed", 1)]


def test_an_action_the_behind_copy_would_refuse_is_decided_on_the_game_as_it_is(server: fakeredis.FakeServer) -> None:
    first, second = api_process(server), api_process(server)
    created = first.create_game("golf", TWO_HUMANS, {}, seed="moved-on")
    stale = first.repository.load(created["id"])  # still in setup: a draw is refused there (G-4)
    second.submit(created["id"], 0, REVEAL)
    second.submit(created["id"], 1, REVEAL)
    (turn,) = second.repository.load(created["id"]).snap.to_act()

    answer = first.act(created["id"], token(created, turn), {"type": "draw", "from": "stock"})  # G-6

    assert answer["version"] == stale.version + 3
    assert [e["type"] for e in answer["events"]] == ["CardDrawn"]
    check_chain(first.store.read(created["id"]), created["seed_commitment"])


def test_an_expected_version_newer_than_the_copy_is_checked_against_the_store(server: fakeredis.FakeServer) -> None:
    first, second = api_process(server), api_process(server)
    created = first.create_game("golf", TWO_HUMANS, {}, seed="expected")
    stale = first.repository.load(created["id"])
    second.submit(created["id"], 0, REVEAL)

    answer = first.act(created["id"], token(created, 1), REVEAL, expected_version=stale.version + 1)

    assert answer["version"] == stale.version + 2


def test_an_expected_version_that_is_no_longer_current_is_a_conflict(server: fakeredis.FakeServer) -> None:
    first, second = api_process(server), api_process(server)
    created = first.create_game("golf", TWO_HUMANS, {}, seed="conflict")
    stale = first.repository.load(created["id"])
    second.submit(created["id"], 0, REVEAL)

    with pytest.raises(VersionConflict) as refused:
        first.act(created["id"], token(created, 1), REVEAL, expected_version=stale.version)

    problem = problem_for(refused.value)
    assert (problem.status, problem.code) == (409, "version_conflict")
    assert len(first.store.read(created["id"])) == stale.version + 1


def test_a_copy_of_another_game_is_ignored(server: fakeredis.FakeServer) -> None:
    service = api_process(server)
    one = service.create_game("golf", TWO_HUMANS, {}, seed="one")
    other = service.create_game("golf", TWO_HUMANS, {}, seed="other")
    service.submit(other["id"], 0, REVEAL)
    service.repository.load(other["id"])  # the other game is in the process's cache too

    answer = service.act(one["id"], token(one, 0), REVEAL)

    assert answer["version"] == one["version"] + 1
    check_chain(service.store.read(one["id"]), one["seed_commitment"])


def test_a_cache_ahead_of_a_store_that_lost_its_last_events_is_rebuilt(server: fakeredis.FakeServer) -> None:
    """A store that lost writes (a failover, a restart without its append-only file): the process's
    cached game must not stay ahead of it, or every later append there would be refused."""
    service = api_process(server)
    created = service.create_game("golf", TWO_HUMANS, {}, seed="ahead")
    service.submit(created["id"], 0, REVEAL)
    ahead = service.repository.load(created["id"])
    raw, key = fakeredis.FakeRedis(server=server, decode_responses=True), f"game:{{{created['id']}}}:events"
    kept = raw.xrange(key)[:-1]
    raw.delete(key)  # the stream as a store that never got its last write holds it
    for entry_id, fields in kept:
        raw.xadd(key, fields, id=entry_id)

    reloaded = service.repository.load(created["id"])

    assert reloaded.version == ahead.version - 1
    answer = service.submit(created["id"], 0, REVEAL, expected_version=reloaded.version)
    assert answer["version"] == ahead.version
    check_chain(service.store.read(created["id"]), created["seed_commitment"])
