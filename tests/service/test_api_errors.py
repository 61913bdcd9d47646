"""Every error status of API.md, as application/problem+json, and nothing written on a refusal."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import redis
from flask.testing import FlaskClient
from redis.backoff import NoBackoff
from redis.retry import Retry

from domain.cards import canonical_deck
from service.app import MAX_BODY_BYTES, create_app
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem, assert_unchanged, redis_dump, stream_entries

TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]
REVEAL = {"type": "reveal", "positions": [0, 1]}


@pytest.fixture
def game(client: FlaskClient) -> dict[str, Any]:
    """A Golf game of two humans in its setup phase (G-4)."""
    return create_golf(client, seats=TWO_HUMANS)


def token(game: dict[str, Any], seat: int = 0) -> str:
    value: str = game["seats"][seat]["token"]
    return value


def act(
    client: FlaskClient, game: dict[str, Any], body: Any, seat: int = 0, headers: dict[str, str] | None = None
) -> Any:
    return client.post(
        f"/v1/games/{game['id']}/actions", json=body, headers={**auth(token(game, seat)), **(headers or {})}
    )


def act_raw(client: FlaskClient, game: dict[str, Any], data: str | bytes, seat: int = 0) -> Any:
    return client.post(
        f"/v1/games/{game['id']}/actions", data=data, content_type="application/json", headers=auth(token(game, seat))
    )


def create_raw(client: FlaskClient, data: str | bytes) -> Any:
    return client.post("/v1/games", data=data, content_type="application/json")


def in_play(client: FlaskClient, game: dict[str, Any]) -> None:
    """Both seats reveal; seat 1 (left of the dealer) is to act (G-3)."""
    for seat in (0, 1):
        assert act(client, game, REVEAL, seat).status_code == 200


# ---------------------------------------------------------------- 400 on create


@pytest.mark.parametrize(
    ("body", "code"),
    [
        pytest.param({"seats": TWO_HUMANS}, "invalid_request", id="no-game"),
        pytest.param({"game": "golf"}, "invalid_request", id="no-seats"),
        pytest.param({"game": 7, "seats": TWO_HUMANS}, "invalid_request", id="game-not-a-string"),
        pytest.param({"game": "golf", "seats": "two"}, "invalid_request", id="seats-not-a-list"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "colour": "red"}, "invalid_request", id="unknown-field"),
        pytest.param(
            {"game": "golf", "seats": [{"kind": "human", "age": 3}, {"kind": "human"}]},
            "invalid_request",
            id="unknown-seat-field",
        ),
        pytest.param({"game": "golf", "seats": [{"kind": "alien"}, {"kind": "human"}]}, "invalid_request", id="kind"),
        pytest.param(
            {"game": "golf", "seats": [{"kind": "bot", "level": "genius"}, {"kind": "human"}]},
            "invalid_request",
            id="unknown-level",
        ),
        pytest.param(
            {"game": "golf", "seats": [{"kind": "human", "level": "greedy"}, {"kind": "human"}]},
            "invalid_request",
            id="level-for-a-human",
        ),
        pytest.param({"game": "golf", "seats": [{"kind": "human", "name": ""}, {"kind": "human"}]}, "invalid_request"),
        pytest.param({"game": "golf", "seats": [{"kind": "human"}] * 17}, "invalid_request", id="17-seats"),
        pytest.param({"game": "chess", "seats": TWO_HUMANS}, "unknown_game", id="unknown-game"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "seed": ""}, "invalid_seed", id="empty-seed"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "seed": "s" * 129}, "invalid_seed", id="long-seed"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "seed": "tab\there"}, "invalid_seed", id="control-char"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "seed": "caf\u00e9"}, "invalid_seed", id="non-ascii"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "seed": 42}, "invalid_request", id="seed-not-a-string"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"holes": 9}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"rounds": 0}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"rounds": 19}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"rounds": "9"}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"rounds": True}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"rounds": 2.5}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"layout": "4x4"}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"layout": ["2x3"]}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": {"initial_flips": 6}}, "invalid_option"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "options": "none"}, "invalid_request", id="options-text"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "decks": "all"}, "invalid_request", id="decks-text"),
        pytest.param({"game": "golf", "seats": TWO_HUMANS, "decks": [[1, 2]]}, "invalid_request", id="deck-of-ints"),
    ],
)
def test_create_refuses_bad_requests_with_400(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, body: dict[str, Any], code: str
) -> None:
    assert_problem(client.post("/v1/games", json=body), 400, code)
    assert fake_redis.keys("*") == []


@pytest.mark.parametrize(
    "deck",
    [
        pytest.param(list(canonical_deck())[:-1], id="a-card-short"),
        pytest.param([*list(canonical_deck())[:-1], "AS"], id="a-duplicate"),
        pytest.param([*list(canonical_deck()), "JK"], id="a-joker-too-many"),
        pytest.param([], id="empty"),
        pytest.param(list(canonical_deck()) * 2, id="two-decks-for-one"),
    ],
)
def test_stacked_deck_that_is_not_a_permutation_is_invalid_deck(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, deck: list[str]
) -> None:
    body = assert_problem(client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "decks": [deck]}), 400)
    assert body["code"] == "invalid_deck"
    assert fake_redis.keys("*") == []


@pytest.mark.parametrize("bad", ["XX", "as", "1S", "10h", "", "A S", "JOKER"])
def test_stacked_deck_with_unknown_card_codes_is_a_400_problem(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, bad: str
) -> None:
    deck = [*list(canonical_deck())[:-1], bad]
    response = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "decks": [deck]})
    assert_problem(response, 400, ("unknown_card", "invalid_deck"))
    assert fake_redis.keys("*") == []


def test_a_second_stacked_deck_is_checked_too(client: FlaskClient) -> None:
    good = list(canonical_deck())
    response = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "decks": [good, good[:10]]})
    body = assert_problem(response, 400, "invalid_deck")
    assert "2" in body["detail"]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param("{", id="truncated"),
        pytest.param("{'game': 'golf'}", id="single-quotes"),
        pytest.param('{"game": "golf",}', id="trailing-comma"),
        pytest.param("not json", id="text"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param("[]", id="array"),
        pytest.param('"golf"', id="string"),
        pytest.param("null", id="null"),
        pytest.param("[" * 60_000, id="nested-unclosed"),
        pytest.param('{"game":' + "[" * 30_000 + "]" * 30_000 + "}", id="nested-closed"),
        pytest.param('{"game": "golf", "options": ' + '{"a":' * 10_000 + "1" + "}" * 10_001, id="nested-objects"),
        pytest.param('{"game": "golf", "seats": ' + "9" * 5000 + "}", id="huge-integer"),
    ],
)
def test_malformed_json_on_create_is_400(client: FlaskClient, fake_redis: fakeredis.FakeRedis, data: Any) -> None:
    assert_problem(create_raw(client, data), 400, "invalid_request")
    assert fake_redis.keys("*") == []


def test_far_too_deep_json_is_refused_not_crashed(client: FlaskClient, game: dict[str, Any]) -> None:
    for response in (create_raw(client, "[" * 100_000), act_raw(client, game, "[" * 100_000)):
        assert 400 <= response.status_code < 500
        assert_problem(response, response.status_code)


# ---------------------------------------------------------------- 400 on actions


@pytest.mark.parametrize(
    ("body", "code"),
    [
        pytest.param({"type": "reveal", "positions": ["3", 1]}, "invalid_request", id="position-as-text"),
        pytest.param({"type": "reveal", "positions": [True, 1]}, "invalid_request", id="true-for-an-int"),
        pytest.param({"type": "reveal", "positions": [0.0, 1]}, "invalid_request", id="float-for-an-int"),
        pytest.param({"type": "reveal", "positions": "0,1"}, "invalid_request", id="text-for-a-list"),
        pytest.param({"type": "reveal", "positions": [0, 1], "expected_version": "2"}, "invalid_request"),
        pytest.param({"type": "reveal", "positions": [0, 1], "expected_version": True}, "invalid_request"),
        pytest.param({"type": "reveal", "positions": [0, 1], "expected_version": -1}, "invalid_request"),
        pytest.param({"type": "reveal", "positions": [0, 1], "colour": "red"}, "invalid_request", id="unknown-field"),
        pytest.param({"type": "reveal", "positions": [0, 1], "card": "AS"}, "invalid_request", id="other-game-field"),
        pytest.param({"type": "reveal", "position": 1}, "invalid_request", id="wrong-shape"),
        pytest.param({"type": "reveal"}, "invalid_request", id="missing-field"),
        pytest.param({"type": "reveal", "positions": None}, "invalid_request", id="null-field"),
        pytest.param({"type": "draw", "from": "discard"}, "invalid_request", id="golf-draws-from-the-stock-only"),
        pytest.param({"type": "draw", "from": 1}, "invalid_request", id="from-not-text"),
        pytest.param({"type": "flip", "position": "3"}, "invalid_request", id="flip-position-text"),
        pytest.param({"type": "flip", "position": True}, "invalid_request", id="flip-position-true"),
        pytest.param({"type": "flip", "position": 1.5}, "invalid_request", id="flip-position-float"),
        pytest.param({"type": "jump"}, "unknown_action", id="unknown-type"),
        pytest.param({"type": ""}, "unknown_action", id="empty-type"),
        pytest.param({"type": 5}, "invalid_request", id="type-not-text"),
        pytest.param({"type": None}, "invalid_request", id="type-null"),
        pytest.param({"positions": [0, 1]}, "invalid_request", id="no-type"),
        pytest.param([REVEAL], "invalid_request", id="array-body"),
    ],
)
def test_action_refuses_bad_requests_with_400(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any], body: Any, code: str
) -> None:
    before = stream_entries(fake_redis, game["id"])
    assert_problem(act(client, game, body), 400, code)
    assert_unchanged(client, fake_redis, game["id"], before)


@pytest.mark.parametrize(
    "data",
    [
        "{",
        "",
        b"\xff",
        '{"type": "flip", "position": NaN}',
        '{"type": "flip", "position": Infinity}',
        '{"type": "flip", "position": 1e400}',
        '{"type": "flip", "position": ' + "9" * 5000 + "}",
        '{"type": "reveal", "positions": ' + "[" * 30_000 + "]" * 30_000 + "}",
    ],
)
def test_malformed_json_on_an_action_is_400(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any], data: Any
) -> None:
    before = stream_entries(fake_redis, game["id"])
    assert_problem(act_raw(client, game, data), 400, "invalid_request")
    assert_unchanged(client, fake_redis, game["id"], before)


def test_bad_headers_are_400(client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]) -> None:
    before = stream_entries(fake_redis, game["id"])
    for if_match in ('"two"', "2x", "*", '"-1"', '"' + "9" * 30 + '"'):
        assert_problem(act(client, game, REVEAL, headers={"If-Match": if_match}), 400, "invalid_request")
    assert_problem(act(client, game, REVEAL, headers={"Idempotency-Key": "k" * 201}), 400, "invalid_request")
    assert_unchanged(client, fake_redis, game["id"], before)


def test_if_match_and_expected_version_disagreeing_is_400(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]
) -> None:
    before = stream_entries(fake_redis, game["id"])
    version = game["version"]
    response = act(client, game, {**REVEAL, "expected_version": version}, headers={"If-Match": f'"{version + 1}"'})
    assert_problem(response, 400, "invalid_request")
    assert_unchanged(client, fake_redis, game["id"], before)
    agreeing = act(client, game, {**REVEAL, "expected_version": version}, headers={"If-Match": f'"{version}"'})
    assert agreeing.status_code == 200


@pytest.mark.parametrize(
    "query",
    ["after=-1", "after=x", "after=1.5", f"after={10**30}", f"after={2**64}", "wait=-1", "wait=31", "wait=soon"],
)
def test_bad_event_queries_are_400(client: FlaskClient, game: dict[str, Any], query: str) -> None:
    assert_problem(client.get(f"/v1/games/{game['id']}/events?{query}"), 400, "invalid_request")


# ---------------------------------------------------------------- 401


def test_actions_need_a_valid_token_of_this_game(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]
) -> None:
    other = create_golf(client, seats=TWO_HUMANS)
    url = f"/v1/games/{game['id']}/actions"
    before = stream_entries(fake_redis, game["id"])
    cases = [
        {},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer"},
        auth(token(other)),
        {"Authorization": f"Basic {token(game)}"},
        {"Authorization": token(game)},
        {"Authorization": f"Token {token(game)}"},
        {"Authorization": f"Bearer {token(game)}x"},
    ]
    for headers in cases:
        assert_problem(client.post(url, json=REVEAL, headers=headers), 401, "unauthorized")
    assert_unchanged(client, fake_redis, game["id"], before)
    assert client.post(url, json=REVEAL, headers={"Authorization": f"bearer {token(game)}"}).status_code == 200


def test_a_view_with_a_token_that_is_not_this_games_is_401(client: FlaskClient, game: dict[str, Any]) -> None:
    other = create_golf(client, seats=TWO_HUMANS)
    url = f"/v1/games/{game['id']}"
    assert_problem(client.get(url, headers=auth(token(other))), 401, "unauthorized")
    assert_problem(client.get(url, headers=auth("nonsense")), 401, "unauthorized")
    assert_problem(client.get(url, headers={"Authorization": f"Basic {token(game)}"}), 401, "unauthorized")
    assert client.get(url, headers=auth(token(game))).get_json()["you"]["seat"] == 0


def test_a_bot_seat_has_no_token(client: FlaskClient, fake_redis: fakeredis.FakeRedis) -> None:
    created = create_golf(client)  # a human and a bot
    game_id = created["id"]
    before = stream_entries(fake_redis, game_id)
    for guess in ("", "None", "null", "bot"):
        response = client.post(f"/v1/games/{game_id}/actions", json=REVEAL, headers=auth(guess))
        assert_problem(response, 401, "unauthorized")
    assert_unchanged(client, fake_redis, game_id, before)


# ---------------------------------------------------------------- 404


@pytest.mark.parametrize("game_id", ["nosuchgame", "x" * 65, "a.b", "%20", "sp%20ace", "bad*id"])
def test_unknown_games_are_404(client: FlaskClient, game: dict[str, Any], game_id: str) -> None:
    headers = auth(token(game))
    assert_problem(client.get(f"/v1/games/{game_id}"), 404, "game_not_found")
    assert_problem(client.get(f"/v1/games/{game_id}", headers=headers), 404, "game_not_found")
    assert_problem(client.post(f"/v1/games/{game_id}/actions", json=REVEAL, headers=headers), 404, "game_not_found")
    assert_problem(client.post(f"/v1/games/{game_id}/actions", json=REVEAL), 404, "game_not_found")
    assert_problem(client.get(f"/v1/games/{game_id}/events"), 404, "game_not_found")
    assert_problem(client.get(f"/v1/games/{game_id}/events?wait=0.1"), 404, "game_not_found")


def test_unknown_routes_and_methods_are_problems_too(client: FlaskClient, game: dict[str, Any]) -> None:
    assert_problem(client.get("/v1/nothing-here"), 404)
    assert_problem(client.delete(f"/v1/games/{game['id']}"), 405)
    assert_problem(client.put("/v1/catalog", json={}), 405)


# ---------------------------------------------------------------- 409


def test_stale_versions_are_409(client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]) -> None:
    version = game["version"]
    assert act(client, game, REVEAL, seat=0).status_code == 200
    before = stream_entries(fake_redis, game["id"])
    for body, headers in (
        ({**REVEAL, "expected_version": version}, {}),
        (REVEAL, {"If-Match": f'"{version}"'}),
        ({**REVEAL, "expected_version": version + 5}, {}),
        ({**REVEAL, "expected_version": 0}, {}),
    ):
        body_409 = assert_problem(act(client, game, body, seat=1, headers=headers), 409, "version_conflict")
        assert str(version + 1) in body_409["detail"]
    assert_unchanged(client, fake_redis, game["id"], before)


# ---------------------------------------------------------------- 413


def test_bodies_over_64_kib_are_413(client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]) -> None:
    before = redis_dump(fake_redis)
    create = json.dumps({"game": "golf", "seats": TWO_HUMANS})
    assert_problem(create_raw(client, create + " " * (MAX_BODY_BYTES + 1 - len(create))), 413, "payload_too_large")
    action = json.dumps(REVEAL)
    too_big = action + " " * (MAX_BODY_BYTES + 1 - len(action))
    assert_problem(act_raw(client, game, too_big), 413, "payload_too_large")
    assert_problem(act_raw(client, game, "[" * 100_000), 413, "payload_too_large")
    assert redis_dump(fake_redis) == before


def test_a_body_of_exactly_64_kib_is_accepted(client: FlaskClient) -> None:
    assert MAX_BODY_BYTES == 64 * 1024
    create = json.dumps({"game": "golf", "seats": TWO_HUMANS})
    response = create_raw(client, create + " " * (MAX_BODY_BYTES - len(create)))
    assert response.status_code == 201, response.get_json()


# ---------------------------------------------------------------- 422


@pytest.mark.parametrize("seats", [1, 13, 16])
def test_bad_player_count_is_422(client: FlaskClient, fake_redis: fakeredis.FakeRedis, seats: int) -> None:
    response = client.post("/v1/games", json={"game": "golf", "seats": [{"kind": "human"}] * seats})
    body = assert_problem(response, 422, "bad_player_count")
    assert str(seats) in body["detail"]
    assert fake_redis.keys("*") == []


def test_not_your_turn_is_422_with_a_rule(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]
) -> None:
    in_play(client, game)
    before = stream_entries(fake_redis, game["id"])
    for body in (
        {"type": "flip", "position": 3},
        {"type": "draw", "from": "stock"},
        {"type": "take_discard", "position": 2},
    ):
        assert_problem(act(client, game, body, seat=0), 422, "not_your_turn", rule=True)
    assert_unchanged(client, fake_redis, game["id"], before)


@pytest.mark.parametrize(
    ("body", "code", "rule"),
    [
        pytest.param({"type": "reveal", "positions": [0]}, "wrong_flip_count", "G-4", id="one-card"),
        pytest.param({"type": "reveal", "positions": [0, 0]}, "wrong_flip_count", "G-4", id="same-card-twice"),
        pytest.param({"type": "reveal", "positions": [0, 1, 2]}, "wrong_flip_count", "G-4", id="three-cards"),
        pytest.param({"type": "reveal", "positions": [0, 6]}, "invalid_position", "G-2", id="off-the-grid"),
        pytest.param({"type": "reveal", "positions": [-1, 0]}, "invalid_position", "G-2", id="negative"),
        pytest.param({"type": "flip", "position": 2}, "setup_not_done", "G-4", id="turn-before-setup"),
    ],
)
def test_rule_refusals_in_setup_are_422_with_the_rule(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any], body: Any, code: str, rule: str
) -> None:
    before = stream_entries(fake_redis, game["id"])
    assert_problem(act(client, game, body), 422, code, rule=rule)
    assert_unchanged(client, fake_redis, game["id"], before)


def test_rule_refusals_in_play_are_422_with_a_rule(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, game: dict[str, Any]
) -> None:
    in_play(client, game)
    before = stream_entries(fake_redis, game["id"])
    refusals = [
        {"type": "reveal", "positions": [2, 3]},  # setup is over
        {"type": "flip", "position": 0},  # already face up (G-8)
        {"type": "swap", "position": 2},  # nothing drawn (G-6)
        {"type": "discard", "flip": 2},  # nothing drawn (G-6)
        {"type": "flip", "position": 9},  # off the grid (G-2)
    ]
    for body in refusals:
        assert_problem(act(client, game, body, seat=1), 422, rule=True)
    assert_unchanged(client, fake_redis, game["id"], before)
    assert act(client, game, {"type": "draw", "from": "stock"}, seat=1).status_code == 200
    drawn = stream_entries(fake_redis, game["id"])
    for body in (
        {"type": "draw", "from": "stock"},
        {"type": "take_discard", "position": 2},
        {"type": "flip", "position": 2},
        {"type": "discard", "flip": None},  # a face-down card must be turned (G-6)
        {"type": "discard", "flip": 0},  # not face down
    ):
        assert_problem(act(client, game, body, seat=1), 422, rule=True)
    assert_unchanged(client, fake_redis, game["id"], drawn)


def test_game_finished_is_422(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    created = create_golf(client, seats=[{"kind": "human"}, {"kind": "bot"}], options={"rounds": 1})
    game_id, human = created["id"], created["seats"][0]["token"]
    dispatcher.drain()
    assert client.post(f"/v1/games/{game_id}/actions", json=REVEAL, headers=auth(human)).status_code == 200
    for _ in range(200):
        dispatcher.drain()
        view = client.get(f"/v1/games/{game_id}", headers=auth(human)).get_json()
        if view["status"] == "finished":
            break
        assert view["to_act"] == [0], view["to_act"]
        position = next(p for p, slot in enumerate(view["you"]["hand"]) if slot["state"] == "down")
        flipped = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "flip", "position": position}, headers=auth(human)
        )
        assert flipped.status_code == 200
    before = stream_entries(fake_redis, game_id)
    for body in (REVEAL, {"type": "flip", "position": 0}, {"type": "draw", "from": "stock"}):
        response = client.post(f"/v1/games/{game_id}/actions", json=body, headers=auth(human))
        assert_problem(response, 422, "game_finished")
    assert_unchanged(client, fake_redis, game_id, before)


# ---------------------------------------------------------------- 503


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def down_client() -> FlaskClient:
    """An app whose Redis is a closed port (no retries, so the test stays fast)."""
    client = redis.Redis(
        host="127.0.0.1",
        port=closed_port(),
        socket_connect_timeout=0.2,
        retry=Retry(NoBackoff(), 0),
        decode_responses=True,
    )
    return create_app({"TESTING": True}, redis_client=client, dispatcher=RecordingDispatcher()).test_client()


def test_unreachable_store_is_503_on_every_store_endpoint(down_client: FlaskClient) -> None:
    responses = [
        down_client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS}),
        down_client.get("/v1/games/some-game"),
        down_client.get("/v1/games/some-game", headers=auth("tok")),
        down_client.post("/v1/games/some-game/actions", json=REVEAL, headers=auth("tok")),
        down_client.get("/v1/games/some-game/events"),
        down_client.get("/v1/games/some-game/events?after=3&wait=1"),
        down_client.get("/readyz"),
    ]
    for response in responses:
        assert_problem(response, 503, "store_unavailable")
    assert down_client.get("/healthz").get_json() == {"status": "ok"}
    assert down_client.get("/v1/catalog").status_code == 200  # needs no store


class FlakyStore:
    """A fakeredis server that can be taken down and brought back."""

    def __init__(self) -> None:
        self.server = fakeredis.FakeServer()
        self.redis = fakeredis.FakeRedis(server=self.server, decode_responses=True)
        self.dispatcher = RecordingDispatcher()
        self.app = create_app({"TESTING": True}, redis_client=self.redis, dispatcher=self.dispatcher)
        self.dispatcher.service = self.app.extensions["games"]
        self.client = self.app.test_client()

    def down(self) -> None:
        self.server.connected = False

    def up(self) -> None:
        self.server.connected = True


@pytest.fixture
def flaky() -> Iterator[FlakyStore]:
    store = FlakyStore()
    yield store
    store.up()


def test_a_store_outage_writes_nothing(flaky: FlakyStore) -> None:
    client = flaky.client
    game = create_golf(client, seats=TWO_HUMANS)
    before = redis_dump(flaky.redis)
    flaky.down()
    assert_problem(act(client, game, REVEAL), 503, "store_unavailable")
    assert_problem(act(client, game, REVEAL, headers={"Idempotency-Key": "during-outage"}), 503, "store_unavailable")
    assert_problem(client.get(f"/v1/games/{game['id']}", headers=auth(token(game))), 503, "store_unavailable")
    assert_problem(client.get(f"/v1/games/{game['id']}/events"), 503, "store_unavailable")
    assert_problem(client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS}), 503, "store_unavailable")
    assert_problem(client.get("/readyz"), 503, "store_unavailable")
    flaky.up()
    assert redis_dump(flaky.redis) == before
    assert client.get("/readyz").status_code == 200
    retried = act(client, game, REVEAL, headers={"Idempotency-Key": "during-outage"})
    assert retried.status_code == 200 and retried.get_json()["version"] == game["version"] + 1


def test_errors_never_leak_as_html_or_500(client: FlaskClient, game: dict[str, Any]) -> None:
    """A sweep of odd requests: every answer is JSON, and none is a 5xx."""
    url = f"/v1/games/{game['id']}"
    odd = [
        client.post("/v1/games", data="{}", content_type="text/plain"),
        client.post("/v1/games", data=json.dumps({"game": "golf", "seats": TWO_HUMANS}), content_type="text/plain"),
        client.post(f"{url}/actions", data=json.dumps(REVEAL), content_type="text/plain", headers=auth(token(game))),
        client.post(f"{url}/actions", json={"type": "reveal", "positions": [10**30, 1]}, headers=auth(token(game))),
        client.post(f"{url}/actions", json={"type": "flip", "position": -(10**30)}, headers=auth(token(game))),
        client.post(f"{url}/actions", json={**REVEAL, "expected_version": 10**30}, headers=auth(token(game))),
        client.post(f"{url}/actions", json={"type": "flip", "then": [[[[]]]]}, headers=auth(token(game))),
        client.post(f"{url}/actions", json={"type": "x" * 10_000}, headers=auth(token(game))),
        client.get(f"{url}/events?after={10**30}"),
        client.get(f"{url}?x=1"),
    ]
    for response in odd:
        assert response.status_code < 500, response.get_data(as_text=True)
        assert response.mimetype in ("application/json", "application/problem+json")
        if response.status_code >= 400:
            assert_problem(response, response.status_code)
