"""Experts that share the machine: their turns on a queue of their own, their think time capped by the server."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping, Sequence
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from domain.bots.expert import Budget, default_budget
from domain.shuffle import SeededStream
from service.app import create_app
from service.bootstrap import game_service
from service.play import seats as seat_registry
from service.play.due_turns import play_bot_turns
from service.play.game_service import GameService
from service.play.loaded_game import MatchPlace
from service.play.seats import ThinkCapError, think_ms_max_from_env
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import BOT_QUEUE, EXPERT_QUEUE, MATCH_QUEUE, RQDispatcher, bot_job_id
from tests.conftest import RecordingDispatcher
from workers.__main__ import queue_names
from workers.reconcile import Reconciler, waiting_for

EXPERT_FIRST = [{"kind": "bot", "level": "expert"}, {"kind": "bot", "level": "greedy"}]
ONE_ROUND = {"rounds": 1}


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


def make_service(server: fakeredis.FakeServer, think_ms_max: int | None = None) -> GameService:
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))
    return game_service(store, RQDispatcher(fakeredis.FakeRedis(server=server)), think_ms_max=think_ms_max)


def job_ids(server: fakeredis.FakeServer, name: str) -> list[str]:
    return Queue(name, connection=fakeredis.FakeRedis(server=server), serializer=JSONSerializer).job_ids


def test_an_expert_turn_goes_on_the_expert_queue_and_a_chain_stops_at_the_other_queues_bot(
    server: fakeredis.FakeServer,
) -> None:
    """The expert's turn is a job on `bots-expert` only; the job plays the expert's turn and stops at
    the greedy bot's, whose job goes on `bots`: each kind of bot thinks on its own queue's workers."""
    service = make_service(server)
    game = service.create_game("golf", EXPERT_FIRST, ONE_ROUND)
    first = bot_job_id(game["id"], game["version"])
    assert job_ids(server, EXPERT_QUEUE) == [first]
    assert job_ids(server, BOT_QUEUE) == []

    assert play_bot_turns(service, game["id"], game["version"]) == "played"
    after = service.repository.load(game["id"])
    assert after.version == game["version"] + 1, "the chain stopped at the greedy bot"
    assert after.bot_to_act() is not None and after.bot_to_act().level == "greedy"  # type: ignore[union-attr]
    assert job_ids(server, BOT_QUEUE) == [bot_job_id(game["id"], after.version)]


def test_a_matchs_quick_bots_play_on_the_matches_queue_and_its_expert_on_the_experts(
    server: fakeredis.FakeServer,
) -> None:
    """In a match's game the greedy bot's turns go on `bots-match` (work nobody waits for, on workers that take only
    spare CPU), the expert's stay on `bots-expert`; the chain stops where the queue changes, and the reconciler
    asks for a lost turn on the same queue."""
    service = make_service(server)
    place = MatchPlace("m1", 0, 0)
    game = service.create_game("golf", EXPERT_FIRST, ONE_ROUND, seed="deal-0", game_id="m1-0-0", place=place)
    assert job_ids(server, EXPERT_QUEUE) == [bot_job_id("m1-0-0", game["version"])]
    assert play_bot_turns(service, "m1-0-0", game["version"]) == "played"
    after = service.repository.load("m1-0-0")
    assert after.version == game["version"] + 1, "the chain stopped at the greedy bot"
    assert job_ids(server, MATCH_QUEUE) == [bot_job_id("m1-0-0", after.version)]
    assert job_ids(server, BOT_QUEUE) == []
    waiting = waiting_for(service, "m1-0-0")
    assert waiting is not None and waiting.queue == MATCH_QUEUE


def test_the_reconciler_requeues_a_lost_expert_turn_onto_the_expert_queue(server: fakeredis.FakeServer) -> None:
    """An expert's job that is lost (gone from its queue and from Redis) comes back on `bots-expert`."""
    service = make_service(server)
    game = service.create_game("golf", EXPERT_FIRST, ONE_ROUND)
    job_id = bot_job_id(game["id"], game["version"])
    queue_client = fakeredis.FakeRedis(server=server)
    queue_client.delete(Queue(EXPERT_QUEUE, connection=queue_client).key, Job.key_for(job_id))
    assert job_ids(server, EXPERT_QUEUE) == []

    assert isinstance(service.turns.dispatcher, RQDispatcher)
    repaired = Reconciler(service.turns.dispatcher, functools.partial(waiting_for, service)).run_once()
    assert repaired == [(game["id"], game["version"])]
    assert job_ids(server, EXPERT_QUEUE) == [job_id]
    assert job_ids(server, BOT_QUEUE) == []


@pytest.fixture
def capped_client(monkeypatch: pytest.MonkeyPatch) -> FlaskClient:
    monkeypatch.setenv("EXPERT_THINK_MS_MAX", "500")
    app: flask.Flask = create_app(
        {"TESTING": True}, redis_client=fakeredis.FakeRedis(decode_responses=True), dispatcher=RecordingDispatcher()
    )
    return app.test_client()


def test_the_creation_answer_shows_the_think_time_an_expert_gets(capped_client: FlaskClient) -> None:
    """Asked for more than EXPERT_THINK_MS_MAX, an expert seat gets the cap, and its creation answer and
    the game's view say so; less than the cap is kept; a greedy seat has no think time."""
    seats = [
        {"kind": "human"},
        {"kind": "bot", "level": "expert", "think_ms": 10_000},
        {"kind": "bot", "level": "expert", "think_ms": 200},
        {"kind": "bot", "level": "greedy"},
    ]
    answer = capped_client.post("/v1/games", json={"game": "golf", "seats": seats, "options": ONE_ROUND})
    assert answer.status_code == 201, answer.json
    assert [seat.get("think_ms") for seat in answer.json["seats"]] == [None, 500, 200, None]
    view = capped_client.get(f"/v1/games/{answer.json['id']}").json
    assert [seat.get("think_ms") for seat in view["seats"]] == [None, 500, 200, None]


@pytest.fixture
def budgets(monkeypatch: pytest.MonkeyPatch) -> list[Budget]:
    """The budgets the service hands to the bots' policies, one a turn."""
    seen: list[Budget] = []
    real_choose = seat_registry.choose_action

    def spy(
        name: str, level: str, view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream, *a: Any
    ) -> dict[str, Any]:
        seen.append(a[0])
        return real_choose(name, level, view, legal, rng, *a)

    monkeypatch.setattr(seat_registry, "choose_action", spy)
    return seen


def test_an_expert_thinks_at_most_the_cap_whatever_its_seat_asked(
    server: fakeredis.FakeServer, budgets: list[Budget]
) -> None:
    """A seat stored with a larger think time (a game made under a higher cap) is played with the
    service's cap: the budget handed to the expert's policy is at most EXPERT_THINK_MS_MAX."""
    game = make_service(server, think_ms_max=10_000).create_game(
        "golf", [{"kind": "bot", "level": "expert", "think_ms": 10_000}] * 2, ONE_ROUND
    )
    assert [seat["think_ms"] for seat in game["seats"]] == [10_000, 10_000]
    assert play_bot_turns(make_service(server), game["id"], game["version"], max_turns=2) == "played"
    assert budgets and {budget.think_ms for budget in budgets} == {seat_registry.THINK_MS_MAX}


def test_an_expert_seat_that_asked_nothing_plays_its_games_default_budget(
    server: fakeredis.FakeServer, budgets: list[Budget]
) -> None:
    """Issue 27: the service's expert plays the budget docs/strength.md measured, the game's own
    (Switch's: 48 samples, 100 ms a move), timed by the clock."""
    game = make_service(server).create_game("switch", [{"kind": "bot", "level": "expert"}] * 4, {"target": 1})
    assert [seat.get("think_ms") for seat in game["seats"]] == [None] * 4
    assert play_bot_turns(make_service(server), game["id"], game["version"], max_turns=2) == "played"
    assert budgets and set(budgets) == {dataclasses.replace(default_budget("switch"), clock=time.monotonic)}


@pytest.mark.parametrize("setting", ["0", "9", "10001", "2s", "١٠٠٠", "-5", "1_000"])
def test_a_think_cap_out_of_range_is_refused(setting: str) -> None:
    """EXPERT_THINK_MS_MAX is a whole number of milliseconds from 10 to 10,000, else a clear error."""
    with pytest.raises(ThinkCapError, match="EXPERT_THINK_MS_MAX"):
        think_ms_max_from_env({"EXPERT_THINK_MS_MAX": setting})


def test_the_think_cap_defaults_to_two_seconds_and_follows_the_setting() -> None:
    assert think_ms_max_from_env({}) == 2000
    assert think_ms_max_from_env({"EXPERT_THINK_MS_MAX": "750"}) == 750


def test_a_worker_takes_the_quick_bots_first_and_refuses_unknown_queues() -> None:
    """`python -m workers` reads BOT_QUEUES: by default every queue, people's quick bots first and matches' last
    (RQ takes jobs from its queues in order); a queue that is no bot queue, or one named twice, is refused."""
    assert queue_names(None) == [BOT_QUEUE, EXPERT_QUEUE, MATCH_QUEUE]
    assert queue_names(" bots ") == [BOT_QUEUE]
    assert queue_names("bots-expert,bots") == [EXPERT_QUEUE, BOT_QUEUE]
    for setting in ("default", "bots,bots", ",", "bots;bots-expert"):
        with pytest.raises(ValueError, match="BOT_QUEUES"):
            queue_names(setting)
