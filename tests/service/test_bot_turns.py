"""A registered bot's turn queue (shared/API.md "Registered bots"): `GET /v1/bots/me/turns` hands out each due
turn with the seat's view, its legal actions and its deadline, leased for a short time; a turn whose game
moved on is withdrawn; the long-poll wakes when a turn is offered; `GET /v1/bots/me/stream` sends the same
turns as Server-Sent Events; the profile counts the bot's games, timeouts and whether it is online."""

from __future__ import annotations

import dataclasses
import functools
import random
import threading
import time
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain.bots import choose_action
from domain.verify import verify
from service.api import bot_waiters
from service.bootstrap import game_service
from service.play.bot_turns import BotTurns
from service.storage import keys
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import RQDispatcher
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem
from tests.service.test_registered_bots import ONE_ROUND, games_of, registered
from workers.reconcile import Reconciler, waiting_for

BOT = {"kind": "bot", "bot": "acme-golfer"}


def turns_of(app: flask.Flask) -> BotTurns:
    found: BotTurns = app.extensions["bot_turns"]
    return found


def get_turns(client: FlaskClient, token: str, query: str = "") -> list[dict[str, Any]]:
    response = client.get(f"/v1/bots/me/turns{query}", headers=auth(token))
    assert response.status_code == 200, response.get_json()
    turns: list[dict[str, Any]] = response.get_json()["turns"]
    return turns


def later(app: flask.Flask, seconds: float) -> None:
    """Move the bot turns' clock on by `seconds` (leases end, deadlines pass)."""
    turns = turns_of(app)
    now = turns.now_ms()
    turns.now_ms = lambda: now + int(seconds * 1000)


def test_a_bot_plays_a_game_to_its_end_from_its_turns_and_each_turn_holds_its_seats_view(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    game = create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND, seed="turns")
    game_id, rng, played = game["id"], random.Random(3), 0
    for _ in range(500):
        dispatcher.drain()
        if games_of(app).repository.load(game_id).snap.finished:
            break
        (turn,) = get_turns(client, token)
        fields = {"turn", "game_id", "game", "rules_version", "seat", "version", "deadline", "view", "legal", "options"}
        assert set(turn) == fields
        assert turn["options"] == client.get(f"/v1/games/{game_id}/record").get_json()["options"]
        assert (turn["game_id"], turn["game"], turn["seat"]) == (game_id, "golf", 0)
        assert turn["turn"] == f"{game_id}:{turn['version']}"
        assert turn["view"] == client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
        assert turn["legal"] == turn["view"]["you"]["legal"] and turn["deadline"].endswith("Z")
        action = choose_action("golf", "greedy", turn["view"], turn["legal"], rng)
        body = {**action, "expected_version": turn["version"]}
        response = client.post(
            f"/v1/games/{game_id}/actions", json=body, headers={**auth(token), "Idempotency-Key": turn["turn"]}
        )
        assert response.status_code == 200, response.get_json()
        played += 1
    assert played > 3
    record = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished" and verify(record).ok
    assert not [r for r in record["events"] if r.get("reason")], "the bot played every turn itself"
    assert get_turns(client, token) == []
    profile = client.get("/v1/bots/acme-golfer").get_json()
    assert (profile["online"], profile["playing"], profile["played"], profile["timeouts"]) == (True, 0, 1, 0)


def test_a_turn_handed_out_is_leased_and_handed_out_again_after_the_lease(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    game = create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND)
    dispatcher.drain()
    (first,) = get_turns(client, token)
    assert get_turns(client, token) == [], "leased: not handed out again at once"
    later(app, turns_of(app).lease_seconds + 0.5)
    (again,) = get_turns(client, token)
    assert again["turn"] == first["turn"] and again["view"] == first["view"]
    assert again["game_id"] == game["id"]


def test_a_turn_whose_game_moved_on_is_withdrawn_and_counted_as_a_timeout(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND)
    dispatcher.drain()
    (turn,) = get_turns(client, token)
    assert dispatcher.fire_timeouts() == ["played"]
    assert turn["turn"].encode() not in fake_redis.zrange(keys.bot_turns("acme-golfer"), 0, -1)
    dispatcher.drain()
    for fresh in get_turns(client, token):
        assert fresh["version"] > turn["version"]
    late = client.post(
        f"/v1/games/{turn['game_id']}/actions",
        json={**turn["legal"][0], "expected_version": turn["version"]},
        headers={**auth(token), "Idempotency-Key": turn["turn"]},
    )
    assert_problem(late, 409, "version_conflict")
    assert client.get("/v1/bots/acme-golfer").get_json()["timeouts"] == 1


def test_a_bot_with_many_games_gets_its_turns_a_page_at_a_time(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    games = {create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND)["id"] for _ in range(3)}
    dispatcher.drain()
    first = get_turns(client, token, "?limit=2")
    second = get_turns(client, token, "?limit=2")
    assert len(first) == 2 and len(second) == 1
    assert {turn["game_id"] for turn in first + second} == games
    assert client.get("/v1/bots/acme-golfer").get_json()["playing"] == 3


def test_a_turn_whose_append_never_happened_is_not_handed_out_and_dropped_at_its_deadline(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    """The turn is put in the queue before the append that makes it due (an intent): a game that never reaches
    that version (the append lost a race) does not hand it out, and drops it once its deadline is past."""
    token = registered(client)["token"]
    game = create_golf(client, [{"kind": "human"}, BOT], options=ONE_ROUND)
    dispatcher.drain()
    get_turns(client, token)  # the turn due now, if any, is leased
    ahead = f"{game['id']}:{game['version'] + 5}"
    now = turns_of(app).now_ms()
    fake_redis.zadd(keys.bot_turns("acme-golfer"), {ahead: now})
    fake_redis.hset(keys.bot_deadlines("acme-golfer"), ahead, now + 10_000)
    assert get_turns(client, token) == []
    assert fake_redis.zscore(keys.bot_turns("acme-golfer"), ahead) is not None, "kept until its deadline"
    later(app, 11)
    assert ahead not in [turn["turn"] for turn in get_turns(client, token)]
    assert fake_redis.zscore(keys.bot_turns("acme-golfer"), ahead) is None


def test_the_long_poll_wakes_when_a_persons_move_makes_the_bot_due(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot_waiters, "RECHECK_SECONDS", 60.0)  # so only the offer can end the wait early
    token = registered(client)["token"]
    game = create_golf(client, [{"kind": "human"}, BOT], options=ONE_ROUND)
    person = game["seats"][0]["token"]
    dispatcher.drain()
    while turns := get_turns(client, token):  # the bot's opening moves, until only the person may act
        for turn in turns:
            body = {**turn["legal"][0], "expected_version": turn["version"]}
            client.post(f"/v1/games/{game['id']}/actions", json=body, headers=auth(token))
    answer: dict[str, Any] = {}

    def poll() -> None:
        with app.test_client() as other:
            started = time.monotonic()
            answer["turns"] = get_turns(other, token, "?wait=20")
            answer["seconds"] = time.monotonic() - started

    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(0.3)
    assert not answer, "nothing was due: it waits"
    for _ in range(10):  # the person moves until the bot is to act
        view = client.get(f"/v1/games/{game['id']}", headers=auth(person)).get_json()
        if view["you"]["legal"]:
            client.post(f"/v1/games/{game['id']}/actions", json=view["you"]["legal"][0], headers=auth(person))
        if answer or not waiting.is_alive():
            break
        time.sleep(0.1)
    waiting.join(25)
    assert [turn["seat"] for turn in answer["turns"]] == [1]
    assert answer["seconds"] < 20, "woken by the offer, not by the end of its wait"


def test_the_turn_stream_sends_each_turn_and_a_reconnect_gets_the_leased_ones_again(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    app.config["STREAM_HEARTBEAT_SECONDS"] = 0.2
    token = registered(client)["token"]
    game = create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND)
    dispatcher.drain()

    def first_message(headers: dict[str, str]) -> str:
        response = client.get("/v1/bots/me/stream", headers={**auth(token), **headers})
        assert response.status_code == 200 and response.mimetype == "text/event-stream"
        frames = response.response
        try:
            for chunk in frames:
                return bytes(chunk).decode()
        finally:
            response.close()
        raise AssertionError("the stream ended")

    message = first_message({})
    assert message.startswith(f"id: {game['id']}:") and "\nevent: turn\ndata: {" in message
    assert first_message({}) == ": heartbeat\n\n", "leased: not sent again on a new stream"
    resumed = first_message({"Last-Event-ID": message.split("\n")[0].removeprefix("id: ")})
    assert resumed.split("\n")[0] == message.split("\n")[0], "a reconnect gets the leased turn again at once"


@pytest.mark.parametrize(
    ("query", "headers", "status"),
    [
        ("", {}, 401),
        ("", {"Authorization": "Bearer not-a-token"}, 401),
        ("", {"Authorization": "Basic eDp5"}, 401),
        ("?wait=31", None, 400),
        ("?wait=-1", None, 400),
        ("?wait=x", None, 400),
        ("?limit=0", None, 400),
        ("?limit=101", None, 400),
    ],
)
def test_bad_turn_requests_are_problems(
    client: FlaskClient, query: str, headers: dict[str, str] | None, status: int
) -> None:
    token = registered(client)["token"]
    response = client.get(f"/v1/bots/me/turns{query}", headers=auth(token) if headers is None else headers)
    assert_problem(response, status)
    assert_problem(client.get("/v1/bots/me/stream", headers=headers or {}), 401)


def test_a_seats_own_token_or_a_replaced_bot_token_gets_no_turns(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    old = registered(client)["token"]
    game = create_golf(client, [{"kind": "human"}, BOT], options=ONE_ROUND)
    assert_problem(client.get("/v1/bots/me/turns", headers=auth(game["seats"][0]["token"])), 401, "unauthorized")
    new = client.post("/v1/bots/acme-golfer/token", headers=auth(old)).get_json()["token"]
    assert_problem(client.get("/v1/bots/me/turns", headers=auth(old)), 401, "unauthorized")
    assert client.get("/v1/bots/me/turns", headers=auth(new)).status_code == 200


def test_an_abandoned_game_leaves_the_bots_playing_count_without_counting_it_played(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    registered(client)
    game = create_golf(client, [{"kind": "human"}, BOT], options=ONE_ROUND)
    assert client.get("/v1/bots/acme-golfer").get_json()["playing"] == 1
    games_of(app).abandon(game["id"], "idle")
    profile = client.get("/v1/bots/acme-golfer").get_json()
    assert (profile["playing"], profile["played"]) == (0, 0)


def test_a_turn_whose_offers_were_lost_with_its_turn_timeout_is_offered_again_by_the_reconciler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No turn lost ("Nothing lost" item 1): the offer before the append, the one after it and the turn
    timeout all failed (the queue's Redis away, a crash); the reconciler's pass puts the turn in the queue."""
    server = fakeredis.FakeServer()
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))
    dispatcher = RQDispatcher(fakeredis.FakeRedis(server=server))
    service = game_service(store, dispatcher)
    assert service.bots is not None
    service.bots.register("acme-golfer", ["golf"])

    def away(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("Redis is away")

    monkeypatch.setattr(store.bot_turns, "offer", away)
    monkeypatch.setattr(dispatcher, "schedule_timeout", away)
    created = service.create_game("golf", [BOT, {"kind": "human"}], ONE_ROUND, seed="lost")
    monkeypatch.undo()
    assert store.bot_turns.queued("acme-golfer") == 0
    reconciler = Reconciler(dispatcher, functools.partial(waiting_for, service))
    assert reconciler.run_once() == [(created["id"], created["version"])]
    turns, _ = store.bot_turns.lease("acme-golfer", 0, 0, 10, every=True)
    assert [turn for turn, _ in turns] == [f"{created['id']}:{created['version']}"]


def test_a_bot_token_gets_a_stream_ticket_for_its_seat_and_its_views_on_the_stream(client: FlaskClient) -> None:
    token = registered(client)["token"]
    game = create_golf(client, [{"kind": "human"}, BOT], options=ONE_ROUND)
    response = client.post(f"/v1/games/{game['id']}/stream-tickets", headers=auth(token))
    assert response.status_code == 201, response.get_json()
    other = registered(client, "other-bot")["token"]
    assert_problem(client.post(f"/v1/games/{game['id']}/stream-tickets", headers=auth(other)), 401, "unauthorized")
    stream = client.get(f"/v1/games/{game['id']}/stream?ticket={response.get_json()['ticket']}")
    try:
        first = bytes(next(iter(stream.response))).decode()
    finally:
        stream.close()
    assert first.startswith("event: view\n") and '"seat":1' in first.split('"you":', 1)[1][:40]


def test_a_turn_found_before_its_append_lands_is_handed_out_as_soon_as_it_has(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn is put in the queue just before the append that makes it due: a long-poll that looks in between
    finds the game a version behind. It must not keep the turn leased for BOT_TURN_LEASE_SECONDS: once the
    append has landed, the turn is handed out at once."""
    token = registered(client)["token"]
    game = create_golf(client, [BOT, {"kind": "bot"}], options=ONE_ROUND)
    dispatcher.drain()
    turns = turns_of(app)
    real_load = turns.repository.load
    now = real_load(game["id"])
    behind = dataclasses.replace(now, snap=dataclasses.replace(now.snap, version=now.version - 1))
    monkeypatch.setattr(turns.repository, "load", lambda game_id: behind)  # the read races the append
    assert get_turns(client, token) == []
    monkeypatch.setattr(turns.repository, "load", real_load)  # the append has landed
    assert [turn["version"] for turn in get_turns(client, token)] == [now.version]


def test_a_bot_registered_before_tokens_were_indexed_gets_its_turns_once_the_app_has_started(
    fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    """A registration kept before the token index existed (its token in the bot's hash only): a new API process
    indexes it at start, so the bot's token finds its turns."""
    from service.app import create_app

    client = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=dispatcher).test_client()
    token = registered(client)["token"]
    fake_redis.delete(keys.BOT_TOKENS_KEY)  # as a store written before the index was kept
    assert_problem(client.get("/v1/bots/me/turns", headers=auth(token)), 401, "unauthorized")
    restarted = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=dispatcher).test_client()
    assert restarted.get("/v1/bots/me/turns", headers=auth(token)).status_code == 200
