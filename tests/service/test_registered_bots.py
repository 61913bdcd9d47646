"""Registered bots (shared/API.md "Registered bots"): registration and its refusals, tokens kept as
digests and rotated, a registered bot in a seat, acting and reading its seat's view with the bot's
token, and the turn timeout that plays for a bot that never acts."""

from __future__ import annotations

import random
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain.bots import choose_action
from domain.verify import verify
from service.app import create_app
from service.play.bots import Bots
from service.play.errors import Unauthorized
from service.play.game_service import GameService
from service.play.loaded_game import token_digest
from service.play.seats import BOT_MOVE_SECONDS
from service.storage import keys
from service.storage.bot_registry import BotRegistry
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem

ONE_ROUND = {"rounds": 1}


def register(client: FlaskClient, name: str = "acme-golfer", games: list[str] | None = None, **extra: Any) -> Any:
    return client.post("/v1/bots", json={"name": name, "games": games or ["golf"], **extra})


def registered(client: FlaskClient, name: str = "acme-golfer", games: list[str] | None = None) -> dict[str, Any]:
    response = register(client, name, games)
    assert response.status_code == 201, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def games_of(app: flask.Flask) -> GameService:
    service: GameService = app.extensions["games"]
    return service


# ---------------------------------------------------------------- registration


def test_a_registration_answers_201_with_location_and_the_token_once_kept_only_as_its_digest(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    response = register(client, games=["golf", "switch"], description="plays golf")
    assert response.status_code == 201, response.get_json()
    assert response.headers["Location"] == "/v1/bots/acme-golfer"
    body = response.get_json()
    assert body["name"] == "acme-golfer" and body["games"] == ["golf", "switch"]
    assert body["description"] == "plays golf" and body["created_at"]
    token = body["token"]
    stored = fake_redis.hgetall(keys.bot("acme-golfer"))
    assert stored["token"] == token_digest(token)
    assert token not in str(fake_redis.hgetall(keys.bot("acme-golfer")).values())
    profile = client.get("/v1/bots/acme-golfer").get_json()
    assert "token" not in profile
    assert profile == {**{k: v for k, v in body.items() if k != "token"}}
    assert (profile["online"], profile["playing"], profile["played"], profile["timeouts"]) == (False, 0, 0, 0)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "ab", "games": ["golf"]}, "name"),
        ({"name": "-abc", "games": ["golf"]}, "name"),
        ({"name": "Acme", "games": ["golf"]}, "name"),
        ({"name": "a" * 33, "games": ["golf"]}, "name"),
        ({"name": "acme_golfer", "games": ["golf"]}, "name"),
        ({"name": "acme", "games": ["chess"]}, "games"),
        ({"name": "acme", "games": []}, "games"),
        ({"name": "acme", "games": ["golf", "golf"]}, "games"),
        ({"name": "acme", "games": "golf"}, "games"),
        ({"name": "acme", "games": ["golf"], "description": "x" * 501}, "description"),
        ({"games": ["golf"]}, "name"),
        ({"name": 7, "games": ["golf"]}, "name"),
    ],
)
def test_a_bad_registration_is_a_problem_naming_the_field_and_stores_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, body: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/bots", json=body)
    problem = assert_problem(response, response.status_code)
    assert response.status_code in (400, 422)
    assert field in problem["detail"], problem
    assert not fake_redis.keys("bots:*")


def test_a_taken_name_is_409_bot_exists_and_keeps_the_first_token(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    first = registered(client)
    assert_problem(register(client, games=["switch"]), 409, "bot_exists")
    assert fake_redis.hget(keys.bot("acme-golfer"), "token") == token_digest(first["token"])
    assert client.get("/v1/bots?game=switch").get_json()["bots"] == []


def test_an_unknown_bot_is_404(client: FlaskClient) -> None:
    assert_problem(client.get("/v1/bots/nobody-here"), 404, "bot_not_found")
    assert_problem(client.get("/v1/bots/Not_A_Name"), 404, "bot_not_found")


def test_registration_closed_or_by_token_is_403_without_the_token(fake_redis: fakeredis.FakeRedis) -> None:
    closed = create_app({"TESTING": True, "BOT_REGISTRATION": "closed"}, redis_client=fake_redis).test_client()
    assert_problem(register(closed), 403, "registration_closed")
    settings = {"TESTING": True, "BOT_REGISTRATION": "token", "BOT_REGISTRATION_TOKEN": "let-me-in"}
    by_token = create_app(settings, redis_client=fake_redis).test_client()
    assert_problem(register(by_token), 403, "registration_closed")
    wrong = by_token.post("/v1/bots", json={"name": "acme", "games": ["golf"]}, headers=auth("wrong"))
    assert_problem(wrong, 403, "registration_closed")
    assert not fake_redis.keys("bots:*")
    response = by_token.post("/v1/bots", json={"name": "acme", "games": ["golf"]}, headers=auth("let-me-in"))
    assert response.status_code == 201, response.get_json()


def test_registrations_are_rate_limited_per_client(fake_redis: fakeredis.FakeRedis) -> None:
    limited = create_app({"TESTING": True, "BOT_REGISTRATIONS_PER_HOUR": 2}, redis_client=fake_redis).test_client()
    registered(limited, "bot-one")
    registered(limited, "bot-two")
    response = register(limited, "bot-three")
    assert_problem(response, 429, "rate_limited")
    assert int(response.headers["Retry-After"]) > 0
    assert fake_redis.zcard(keys.BOT_NAMES_KEY) == 2


def test_the_cap_is_409_bots_full(fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher) -> None:
    app = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=dispatcher)
    app.extensions["bots"].cap = 1
    client = app.test_client()
    registered(client, "bot-one")
    assert_problem(register(client, "bot-two"), 409, "bots_full")
    assert fake_redis.zcard(keys.BOT_NAMES_KEY) == 1 and not fake_redis.exists(keys.bot("bot-two"))


def test_two_registrations_racing_for_the_last_place_under_the_cap_add_one_bot_whole() -> None:
    """A forced interleaving: the second registration runs while the first is between its checks in
    Python and its script; the cap and the name are checked in the script, so one of them is refused
    and nothing of it is written."""
    redis_client = fakeredis.FakeRedis(decode_responses=True)
    outcomes: list[str] = []

    def the_other_registers_first() -> None:
        if not outcomes:
            outcomes.append("racing")
            outcomes.append(BotRegistry(redis_client).register(bot("bot-two"), "d2", cap=1))

    racing = BotRegistry(redis_client, before_register=the_other_registers_first)
    outcomes.append(racing.register(bot("bot-one"), "d1", cap=1))
    assert outcomes == ["racing", "ok", "full"]
    assert redis_client.zrange(keys.BOT_NAMES_KEY, 0, -1) == ["bot-two"]
    assert not redis_client.exists(keys.bot("bot-one"))
    assert redis_client.zrange(keys.bots_of_game("golf"), 0, -1) == ["bot-two"]


def bot(name: str) -> dict[str, Any]:
    return {"name": name, "games": ["golf"], "description": None, "created_at": "2026-01-01T00:00:00.000Z"}


def test_the_list_pages_by_name_and_filters_by_game(client: FlaskClient) -> None:
    for name in ("bot-c", "bot-a", "bot-b"):
        registered(client, name)
    registered(client, "switcher", ["switch"])
    first = client.get("/v1/bots?limit=2").get_json()
    assert [b["name"] for b in first["bots"]] == ["bot-a", "bot-b"]
    second = client.get(first["next"]).get_json()
    assert [b["name"] for b in second["bots"]] == ["bot-c", "switcher"] and second["next"] is None
    golf = client.get("/v1/bots?game=golf&limit=2").get_json()
    assert [b["name"] for b in golf["bots"]] == ["bot-a", "bot-b"]
    assert [b["name"] for b in client.get(golf["next"]).get_json()["bots"]] == ["bot-c"]
    assert [b["name"] for b in client.get("/v1/bots?game=switch").get_json()["bots"]] == ["switcher"]
    assert_problem(client.get("/v1/bots?game=chess"), 400)
    assert_problem(client.get("/v1/bots?limit=0"), 400)


def test_a_new_token_voids_the_old_one(client: FlaskClient) -> None:
    old = registered(client)["token"]
    assert_problem(client.post("/v1/bots/acme-golfer/token"), 401, "unauthorized")
    assert_problem(client.post("/v1/bots/acme-golfer/token", headers=auth("not-it")), 401, "unauthorized")
    assert_problem(client.post("/v1/bots/nobody-here/token", headers=auth(old)), 404, "bot_not_found")
    response = client.post("/v1/bots/acme-golfer/token", headers=auth(old))
    assert response.status_code == 200, response.get_json()
    new = response.get_json()["token"]
    assert new != old
    assert_problem(client.post("/v1/bots/acme-golfer/token", headers=auth(old)), 401, "unauthorized")
    game = create_golf(client, [{"kind": "bot", "bot": "acme-golfer"}, {"kind": "bot"}], options=ONE_ROUND)
    assert_problem(client.get(f"/v1/games/{game['id']}", headers=auth(old)), 401, "unauthorized")
    assert client.get(f"/v1/games/{game['id']}", headers=auth(new)).get_json()["you"]["seat"] == 0


# ---------------------------------------------------------------- a registered bot in a seat


@pytest.mark.parametrize(
    ("seats", "status"),
    [
        ([{"kind": "bot", "bot": "nobody-here"}, {"kind": "bot"}], 422),  # unknown
        ([{"kind": "bot", "bot": "switcher"}, {"kind": "bot"}], 422),  # not registered for golf
        ([{"kind": "bot", "bot": "acme-golfer"}, {"kind": "bot", "bot": "acme-golfer"}], 422),  # two seats
        ([{"kind": "bot", "bot": "acme-golfer", "level": "greedy"}, {"kind": "bot"}], 400),  # both
        ([{"kind": "human", "bot": "acme-golfer"}, {"kind": "bot"}], 400),  # a person's seat
        ([{"kind": "bot", "bot": ""}, {"kind": "bot"}], 400),
    ],
)
def test_a_seat_naming_a_bot_that_cannot_sit_there_is_refused_and_creates_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, seats: list[dict[str, Any]], status: int
) -> None:
    registered(client)
    registered(client, "switcher", ["switch"])
    response = client.post("/v1/games", json={"game": "golf", "seats": seats})
    problem = assert_problem(response, status)
    assert "bot" in problem["detail"] or "seats" in problem["detail"], problem
    assert not fake_redis.keys("game:*")


def test_the_bot_seat_shows_its_bot_and_gets_no_seat_token(client: FlaskClient) -> None:
    registered(client)
    game = create_golf(client, [{"kind": "human"}, {"kind": "bot", "bot": "acme-golfer"}], options=ONE_ROUND)
    seat = game["seats"][1]
    assert seat == {"seat": 1, "kind": "bot", "name": "acme-golfer", "bot": "acme-golfer"}
    view = client.get(f"/v1/games/{game['id']}").get_json()
    assert view["seats"][1]["bot"] == "acme-golfer"


def test_a_bot_token_acts_only_for_the_seat_its_bot_holds(client: FlaskClient) -> None:
    """A bot's token in a game where its bot holds no seat gets what another game's token gets (401)."""
    token = registered(client)["token"]
    other = registered(client, "other-bot")["token"]
    game = create_golf(client, [{"kind": "bot", "bot": "acme-golfer"}, {"kind": "human"}], options=ONE_ROUND)
    elsewhere = create_golf(client, [{"kind": "human"}, {"kind": "bot"}], options=ONE_ROUND)
    legal = client.get(f"/v1/games/{game['id']}", headers=auth(token)).get_json()["you"]["legal"]
    for headers, game_id in ((auth(other), game["id"]), (auth(token), elsewhere["id"])):
        assert_problem(client.post(f"/v1/games/{game_id}/actions", json=legal[0], headers=headers), 401, "unauthorized")
        assert_problem(client.get(f"/v1/games/{game_id}", headers=headers), 401, "unauthorized")


def test_a_registered_bot_plays_a_game_to_its_end_over_http_and_the_record_verifies(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    game = create_golf(
        client, [{"kind": "bot", "bot": "acme-golfer"}, {"kind": "bot"}], options=ONE_ROUND, seed="remote"
    )
    game_id, rng, acted = game["id"], random.Random(7), 0
    for _ in range(2000):
        dispatcher.drain()
        view = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
        if view["status"] != "active":
            break
        assert view["you"]["seat"] == 0 and "hand" not in str(view["seats"])
        if not view["you"]["legal"]:
            continue
        action = choose_action("golf", "greedy", view, view["you"]["legal"], rng)
        body = {**action, "expected_version": view["version"]}
        key = {"Idempotency-Key": f"turn-{view['version']}"}
        response = client.post(f"/v1/games/{game_id}/actions", json=body, headers={**auth(token), **key})
        assert response.status_code == 200, response.get_json()
        again = client.post(f"/v1/games/{game_id}/actions", json=body, headers={**auth(token), **key})
        assert again.get_json() == response.get_json(), "a resent action gets the first answer"
        stale = client.post(f"/v1/games/{game_id}/actions", json=body, headers=auth(token))
        assert_problem(stale, 409, "version_conflict")
        acted += 1
    assert acted > 3 and dispatcher.timeouts == {}
    record = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished"
    assert record["seats"][0] == {"seat": 0, "kind": "bot", "name": "acme-golfer", "bot": "acme-golfer"}
    assert [r for r in record["events"] if r["actor"] == 0]
    assert not [r for r in record["events"] if r.get("reason")], "the bot played every turn itself"
    verdict = verify(record)
    assert verdict.ok, verdict.detail


def test_a_bot_that_never_acts_has_its_turns_played_by_the_turn_timeout_at_bot_move_seconds(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    registered(client)
    game = create_golf(client, [{"kind": "bot", "bot": "acme-golfer"}, {"kind": "bot"}], options=ONE_ROUND)
    game_id = game["id"]
    for _ in range(2000):
        dispatcher.drain()
        if games_of(app).repository.load(game_id).snap.finished:
            break
        assert set(dispatcher.timeouts.values()) == {BOT_MOVE_SECONDS}, "the bot's clock: BOT_MOVE_SECONDS"
        assert dispatcher.fire_timeouts() == ["played"]
    record = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished"
    played = [r for r in record["events"] if r.get("reason") == "turn_timeout"]
    assert played and all(r["actor"] == "system" and r["seat"] == 0 for r in played)
    assert verify(record).ok


def test_a_bot_seat_is_on_the_games_turn_seconds_when_it_has_them(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    registered(client)
    seats = [{"kind": "bot", "bot": "acme-golfer"}, {"kind": "bot"}]
    game = create_golf(client, seats, options=ONE_ROUND, turn_seconds=3)
    dispatcher.drain()
    assert [(game_id, seconds) for (game_id, _), seconds in dispatcher.timeouts.items()] == [(game["id"], 3)]


def test_bots_use_case_needs_no_flask(fake_redis: fakeredis.FakeRedis) -> None:
    """The use case on its own: a token checked against another bot's digest is refused."""
    bots = Bots(BotRegistry(fake_redis), lambda: "2026-01-01T00:00:00.000Z")
    one = bots.register("bot-one", ["golf"])["token"]
    bots.register("bot-two", ["golf"])
    with pytest.raises(Unauthorized, match="current token"):
        bots.new_token("bot-two", one)


def test_a_bot_token_replays_and_disputes_as_the_seat_its_bot_holds(client: FlaskClient) -> None:
    token = registered(client)["token"]
    game = create_golf(client, [{"kind": "human"}, {"kind": "bot", "bot": "acme-golfer"}], options=ONE_ROUND)
    replay = client.get(f"/v1/games/{game['id']}/replay?at=1", headers=auth(token)).get_json()
    assert replay["you"]["seat"] == 1
    filed = client.post(f"/v1/games/{game['id']}/disputes", json={"seq": 1, "reason": "why"}, headers=auth(token))
    assert filed.status_code == 201, filed.get_json()
    assert filed.get_json()["seat"] == 1
    other = registered(client, "other-bot")["token"]
    assert_problem(client.get(f"/v1/games/{game['id']}/replay?at=1", headers=auth(other)), 401, "unauthorized")


def test_a_bot_token_never_starts_with_a_dash_so_the_bridge_takes_it_as_its_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A token starting with `-` (one in 64 of URL-safe base64) would read as an option on the bridge's command
    line (`--token T`): the service draws again. The random source is made to give one such token first."""
    from service.play import bots as bots_module
    from workers.bridge.__main__ import parse_args

    drawn = iter(["-starts-with-a-dash", "fine-token"])
    monkeypatch.setattr(bots_module.secrets, "token_urlsafe", lambda _n: next(drawn))
    token = bots_module.bot_token()
    assert token == "fine-token"
    assert parse_args(["--url", "http://127.0.0.1:8000", "--token", token, "--level", "greedy"]).token == token
