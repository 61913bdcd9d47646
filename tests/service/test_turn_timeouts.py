"""Turn timeouts on fakeredis: `turn_seconds` at creation, the job per human turn, its cancellation,
the move the system plays (actor "system", the seat, reason `turn_timeout`) and the verifier on it."""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from domain.chain import event_hash
from domain.verify import verify
from service.bootstrap import game_service
from service.play.due_turns import TURN_TIMEOUT, play_turn_timeout, timeout_action
from service.play.game_service import GameService
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import RQDispatcher, bot_job_id, timeout_job_id
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem, check_chain
from workers.reconcile import Reconciler, Waiting, waiting_for

HUMAN_AND_BOT = [{"kind": "human", "name": "Ana"}, {"kind": "bot"}]
ONE_ROUND = {"rounds": 1}


def games_of(app: flask.Flask) -> GameService:
    service: GameService = app.extensions["games"]
    return service


def timeout_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("reason") == TURN_TIMEOUT]


# ---------------------------------------------------------------- the setting


@pytest.mark.parametrize("value", [0, -5, 86401, 10**30, "30", 1.5, True, [30]])
def test_a_bad_turn_seconds_is_a_400_problem_and_creates_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, value: Any
) -> None:
    before = fake_redis.keys("game:*")
    response = client.post("/v1/games", json={"game": "golf", "seats": HUMAN_AND_BOT, "turn_seconds": value})
    body = assert_problem(response, 400, "invalid_request")
    assert "turn_seconds" in body["detail"]
    assert fake_redis.keys("game:*") == before


def test_turn_seconds_shows_in_the_created_game_its_view_and_its_record(client: FlaskClient) -> None:
    created = create_golf(client, HUMAN_AND_BOT, turn_seconds=45, options=ONE_ROUND)
    assert created["turn_seconds"] == 45
    token = created["seats"][0]["token"]
    game = f"/v1/games/{created['id']}"
    assert client.get(game, headers=auth(token)).get_json()["turn_seconds"] == 45
    assert client.get(game).get_json()["turn_seconds"] == 45
    assert client.get(f"{game}/record").get_json()["turn_seconds"] == 45
    assert client.get(f"{game}/replay?at=1").get_json()["turn_seconds"] == 45


def test_without_turn_seconds_there_is_no_timeout(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create_golf(client, HUMAN_AND_BOT, options=ONE_ROUND)
    assert created["turn_seconds"] is None
    assert client.get(f"/v1/games/{created['id']}").get_json()["turn_seconds"] is None
    dispatcher.drain()
    assert dispatcher.timeouts == {} and dispatcher.cancelled == []


# ---------------------------------------------------------------- scheduling and cancelling


def test_a_timeout_is_scheduled_when_a_human_is_to_act_and_cancelled_when_the_game_moves_on(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    created = create_golf(client, HUMAN_AND_BOT, turn_seconds=30, options=ONE_ROUND)
    game_id, first = created["id"], created["version"]
    assert dispatcher.timeouts == {(game_id, first): 30}, "setup: the human must reveal (G-4)"
    dispatcher.drain()  # the bot reveals: the game moves on, so the human's clock starts again
    version = games_of(app).repository.load(game_id).version
    assert version > first
    assert dispatcher.cancelled == [(game_id, first)]
    assert dispatcher.timeouts == {(game_id, version): 30}
    token = created["seats"][0]["token"]
    response = client.post(
        f"/v1/games/{game_id}/actions",
        json={"type": "reveal", "positions": [0, 1], "expected_version": version},
        headers=auth(token),
    )
    assert response.status_code == 200, response.get_json()
    assert (game_id, version) in dispatcher.cancelled and (game_id, version) not in dispatcher.timeouts
    dispatcher.drain()
    loaded = games_of(app).repository.load(game_id)
    expected = {(game_id, loaded.version): 30} if 0 in loaded.snap.to_act() else {}
    assert dispatcher.timeouts == expected


def test_a_timeout_that_the_human_beat_plays_nothing(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    created = create_golf(client, HUMAN_AND_BOT, turn_seconds=30, options=ONE_ROUND)
    dispatcher.drain()
    stale = games_of(app).repository.load(created["id"]).version
    client.post(
        f"/v1/games/{created['id']}/actions",
        json={"type": "reveal", "positions": [2, 3]},
        headers=auth(created["seats"][0]["token"]),
    )
    after = games_of(app).repository.load(created["id"]).version
    assert play_turn_timeout(games_of(app), created["id"], stale) == "stale"
    assert games_of(app).repository.load(created["id"]).version == after


# ---------------------------------------------------------------- the move it plays


def test_a_timeout_plays_the_greedy_move_recorded_as_the_system_for_the_seat(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    created = create_golf(client, HUMAN_AND_BOT, turn_seconds=30, options=ONE_ROUND)
    dispatcher.drain()
    before = games_of(app).repository.load(created["id"])
    greedy = timeout_action(before, 0)
    assert dispatcher.fire_timeouts() == ["played"]
    records = client.get(f"/v1/games/{created['id']}/events?after={before.version}").get_json()["events"]
    check_chain(records, before.last_hash, before.version + 1)
    first = records[0]
    assert (first["actor"], first["seat"], first["reason"]) == ("system", 0, "turn_timeout")
    event = before.snap.game.catalog.build(first["type"], 0, first["data"])
    assert event.to_action() == greedy, "the greedy policy's move, from the seat's view"
    record = client.get(f"/v1/games/{created['id']}/record").get_json()
    assert timeout_events(record["events"]) == [first]


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [
        ("golf", HUMAN_AND_BOT, ONE_ROUND),
        ("romme", HUMAN_AND_BOT, {"target": 1}),
        ("switch", [{"kind": "human"}, *[{"kind": "bot", "level": "random"}] * 3], {"target": 1}),
        ("go5", HUMAN_AND_BOT, {"target": 1}),
    ],
)
def test_a_game_whose_human_never_acts_is_played_to_the_end_by_timeouts_and_verifies(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    game: str,
    seats: list[dict[str, Any]],
    options: dict[str, Any],
) -> None:
    response = client.post(
        "/v1/games", json={"game": game, "seats": seats, "options": options, "seed": "timeouts", "turn_seconds": 5}
    )
    assert response.status_code == 201, response.get_json()
    game_id = response.get_json()["id"]
    for _ in range(5000):
        dispatcher.drain()
        if games_of(app).repository.load(game_id).snap.finished:
            break
        assert dispatcher.fire_timeouts() == ["played"], "only the human can act, so its timeout is due"
    record = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished"
    played = timeout_events(record["events"])
    assert played and all(r["actor"] == "system" and r["seat"] == 0 for r in played)
    assert not [r for r in record["events"] if r["actor"] == 0], "the human never acted"
    verdict = verify(record)
    assert verdict.ok, verdict.detail
    audit = client.get(f"/v1/games/{game_id}/audit").get_json()
    assert audit["first_bad_seq"] is None and audit["complete"], audit


# ---------------------------------------------------------------- the verifier on such events


def finished_golf_by_timeouts(client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher) -> Any:
    created = create_golf(client, HUMAN_AND_BOT, turn_seconds=5, options=ONE_ROUND, seed="verify")
    while not games_of(app).repository.load(created["id"]).snap.finished:
        dispatcher.drain()
        dispatcher.fire_timeouts()
    return client.get(f"/v1/games/{created['id']}/record").get_json()


def rechain(record: dict[str, Any]) -> None:
    """Recompute every hash, as someone who rewrote an event would."""
    prev = record["seed_commitment"]
    for event in record["events"]:
        event["prev_hash"] = prev
        event["hash"] = prev = event_hash(prev, event)


@pytest.mark.parametrize(
    "change",
    [
        {"seat": 1},  # someone else's move
        {"actor": 0},  # a seat field on the seat's own action
        {"reason": ""},
        {"seat": True},
    ],
)
def test_the_verifier_names_a_timeout_event_whose_seat_or_reason_was_changed(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, change: dict[str, Any]
) -> None:
    record = finished_golf_by_timeouts(client, app, dispatcher)
    assert verify(record).ok
    tampered = json.loads(json.dumps(record))
    target = timeout_events(tampered["events"])[0]
    target.update(change)
    rechain(tampered)
    verdict = verify(tampered)
    assert verdict.chain_ok and not verdict.ok
    assert verdict.first_bad_seq == target["seq"], verdict.detail


def test_the_verifier_refuses_a_seats_action_relabelled_as_a_system_event(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    record = finished_golf_by_timeouts(client, app, dispatcher)
    tampered = json.loads(json.dumps(record))
    target = timeout_events(tampered["events"])[0]
    del target["seat"], target["reason"]
    rechain(tampered)
    verdict = verify(tampered)
    # taken for a system step, the event leaves the game short of the seat's action: the rules break there
    # or at the next action
    assert verdict.chain_ok and not verdict.ok, verdict.detail
    assert verdict.first_bad_seq in (target["seq"], target["seq"] + 1), verdict.detail


# ---------------------------------------------------------------- the RQ dispatcher


@pytest.fixture
def rq_service() -> GameService:
    server = fakeredis.FakeServer()
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))
    return game_service(store, RQDispatcher(fakeredis.FakeRedis(server=server)))


def scheduled(service: GameService) -> dict[str, float]:
    dispatcher = service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    registry = ScheduledJobRegistry(queue=dispatcher.queue)
    entries: list[tuple[bytes, float]] = dispatcher.connection.zrange(registry.key, 0, -1, withscores=True)  # type: ignore[assignment]
    return {member.decode(): score for member, score in entries}


def test_rq_timeout_jobs_are_scheduled_by_id_and_deleted_when_the_human_acts(rq_service: GameService) -> None:
    created = rq_service.create_game("golf", HUMAN_AND_BOT, ONE_ROUND, seed="rq", turn_seconds=60)
    game_id, version = created["id"], created["version"]
    job_id = timeout_job_id(game_id, version)
    assert list(scheduled(rq_service)) == [job_id]
    dispatcher = rq_service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    job = Job.fetch(job_id, connection=dispatcher.connection, serializer=dispatcher.queue.serializer)
    assert job.func_name == "workers.turn_timeouts.play_turn_timeout" and job.args == [game_id, version]
    due = scheduled(rq_service)[job_id]
    dispatcher.schedule_timeout(game_id, version, 600)  # a second request for the same turn changes nothing
    assert scheduled(rq_service) == {job_id: due}
    rq_service.submit(game_id, 0, {"type": "reveal", "positions": [0, 1]}, expected_version=version)
    assert not Job.exists(job_id, connection=dispatcher.connection)
    assert job_id not in scheduled(rq_service)
    loaded = rq_service.repository.load(game_id)
    assert list(scheduled(rq_service)) == ([timeout_job_id(game_id, loaded.version)] if loaded.humans_to_act() else [])


TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]


def test_the_reconciler_schedules_a_lost_turn_timeout_again(
    rq_service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's timeout that was lost from the schedule, or never scheduled (a crash right after the
    append), is scheduled again by the reconciler, a full `turn_seconds` from then; one in hand is left
    alone; a finished game leaves the waiting index."""
    dispatcher = rq_service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    reconciler = Reconciler(dispatcher, functools.partial(waiting_for, rq_service))
    created = rq_service.create_game("golf", TWO_HUMANS, ONE_ROUND, seed="lost", turn_seconds=60)
    game_id, version = created["id"], created["version"]
    assert dispatcher.index.entries() == [(game_id, version)]
    assert reconciler.run_once() == [], "the timeout is in hand"

    dispatcher.cancel_timeout(game_id, version)  # lost from the schedule
    before = time.time()
    assert reconciler.run_once() == [(game_id, version)]
    assert before + 60 <= scheduled(rq_service)[timeout_job_id(game_id, version)] <= before + 62
    assert reconciler.run_once() == []

    def lost(*args: Any) -> None:
        raise ConnectionError("the queue's Redis is away")

    monkeypatch.setattr(dispatcher, "schedule_timeout", lost)
    rq_service.submit(game_id, 0, {"type": "reveal", "positions": [0, 1]}, expected_version=version)
    monkeypatch.undo()
    now = rq_service.repository.load(game_id).version
    assert rq_service.repository.load(game_id).humans_to_act() == [1]
    assert dispatcher.index.entries() == [(game_id, now)] and scheduled(rq_service) == {}
    assert reconciler.run_once() == [(game_id, now)]
    assert list(scheduled(rq_service)) == [timeout_job_id(game_id, now)]

    while not (loaded := rq_service.repository.load(game_id)).snap.finished:
        assert play_turn_timeout(rq_service, game_id, loaded.version) == "played"
    assert dispatcher.index.entries() == [] and scheduled(rq_service) == {}


def test_the_reconciler_does_not_load_a_game_whose_turn_timeout_is_in_hand(rq_service: GameService) -> None:
    """A person on a timeout's clock whose timeout is scheduled costs a reconciler pass no game load
    (it would otherwise be loaded on every pass, for every such game); a lost one is looked at."""
    dispatcher = rq_service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    looked: list[str] = []

    def due(game_id: str) -> Waiting | None:
        looked.append(game_id)
        return waiting_for(rq_service, game_id)

    reconciler = Reconciler(dispatcher, due)
    created = rq_service.create_game("golf", TWO_HUMANS, ONE_ROUND, seed="unloaded", turn_seconds=60)
    game_id, version = created["id"], created["version"]
    assert reconciler.run_once() == [] and reconciler.run_once() == []
    assert looked == []
    dispatcher.cancel_timeout(game_id, version)
    assert reconciler.run_once() == [(game_id, version)] and looked == [game_id]


def test_a_reconciler_pass_fetches_no_job_that_the_queue_lists_hold(
    rq_service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Persons on a timeout's clock stay in the waiting index for life: a pass reads the queues' lists
    and schedule once, and fetches the job of no entry found there (fetching each entry's jobs, twice,
    every 2 s made a pass cost about 190 µs an entry: 1.9 s at 10,000, bench/reconcile.py); a lost
    timeout is still fetched and scheduled again."""
    dispatcher = rq_service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    fetched: list[str] = []
    fetch_many = Job.fetch_many

    def counting(job_ids: list[str], *args: Any, **kwargs: Any) -> Any:
        fetched.extend(job_ids)
        return fetch_many(job_ids, *args, **kwargs)

    monkeypatch.setattr(Job, "fetch_many", counting)
    reconciler = Reconciler(dispatcher, functools.partial(waiting_for, rq_service))
    ids = [rq_service.create_game("golf", TWO_HUMANS, ONE_ROUND, turn_seconds=60)["id"] for _ in range(3)]
    assert reconciler.run_once() == [] and fetched == []
    lost = ids[1]
    version = dict(dispatcher.index.entries())[lost]
    dispatcher.cancel_timeout(lost, version)
    assert reconciler.run_once() == [(lost, version)]
    assert set(fetched) == {bot_job_id(lost, version), timeout_job_id(lost, version)}


def test_a_game_without_turn_timeouts_or_bots_never_waits_for_the_workers(rq_service: GameService) -> None:
    dispatcher = rq_service.turns.dispatcher
    assert isinstance(dispatcher, RQDispatcher)
    rq_service.create_game("golf", TWO_HUMANS, ONE_ROUND, seed="plain")
    assert dispatcher.index.entries() == [] and scheduled(rq_service) == {}
