"""Hostile input against every game type: always a 4xx problem, and the game never changes.

For each of golf, romme, switch and go5 a game of humans is made; then the seat that is to act
(so that nothing is refused merely for being out of turn) sends: oversized bodies, malformed and
deeply nested JSON, wrong types, huge numbers, unknown fields, unknown card codes, unknown action
types, the vocabulary of another game; and the events and replay reads get absurd query values.
Each answer must be a 4xx application/problem+json, and the game's stream (its version and every
event) must be byte-for-byte what it was before.
"""

from __future__ import annotations

import json
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from service.app import MAX_BODY_BYTES
from tests.conftest import auth
from tests.service.helpers import assert_problem, assert_unchanged, stream_entries

GAMES = ("golf", "romme", "switch", "go5")
HUMANS = {"golf": 2, "romme": 2, "switch": 4, "go5": 2}
HUGE = 10**30

# a well-formed action of each game, used as the vehicle for the hostile variations
VOCABULARY: dict[str, dict[str, dict[str, Any]]] = {
    "golf": {
        "reveal": {"type": "reveal", "positions": [0, 1]},
        "flip": {"type": "flip", "position": 0},
        "swap": {"type": "swap", "position": 0},
        "take_discard": {"type": "take_discard", "position": 0},
        "discard": {"type": "discard", "flip": None},
    },
    "romme": {
        "cut": {"type": "cut", "position": 10},
        "meld": {"type": "meld", "kind": "set", "cards": ["AS", "AH", "AD"]},
        "lay_off": {"type": "lay_off", "meld": 1, "card": "AS", "end": "low"},
        "swap_joker": {"type": "swap_joker", "meld": 1, "card": "AS"},
        "discard": {"type": "discard", "card": "AS"},
        "take_discard": {"type": "take_discard", "meld": {"kind": "set", "cards": ["AS", "AH", "AD"]}},
    },
    "switch": {
        "play": {"type": "play", "cards": ["AS"]},
        "choose_suit": {"type": "choose_suit", "suit": "S"},
        "pass": {"type": "pass"},
    },
    "go5": {
        "meld": {"type": "meld", "cards": ["1-dots-red", "2-dots-red", "3-dots-red"], "by": "pattern"},
        "lay_off": {"type": "lay_off", "set": 1, "card": "1-dots-red"},
        "stop": {"type": "stop"},
        "go5": {"type": "go5", "set": 1},
        "discard": {"type": "discard", "card": "1-dots-red"},
        "swap": {
            "type": "swap",
            "from_seat": 1,
            "set": 1,
            "take": "joker",
            "give": "1-dots-red",
            "then": {"lay_off": {"set": 1}},
        },
    },
}
CARD_FIELD_EXAMPLE = {  # an action of the game that names a card: (type, field, is_list)
    "golf": None,
    "romme": ("discard", "card", False),
    "switch": ("play", "cards", True),
    "go5": ("discard", "card", False),
}
FOREIGN_CARDS = {  # codes that are not cards of the game
    "golf": ["ZZ", "1-waves-blue", "joker", "10h"],
    "romme": ["ZZ", "1-waves-blue", "stop", "as", "1S", ""],
    "switch": ["ZZ", "1-waves-blue", "joker", "A S", "JOKER"],
    "go5": ["QS", "ZZ", "JK", "1-waves-purple", "0-dots-red", "50-dots-red"],
}


class Table:
    """One game of humans, with the token of the seat that is to act."""

    def __init__(self, client: FlaskClient, redis: fakeredis.FakeRedis, app: flask.Flask, game: str) -> None:
        self.client = client
        self.redis = redis
        seats = [{"kind": "human", "name": f"P{i}"} for i in range(HUMANS[game])]
        response = client.post("/v1/games", json={"game": game, "seats": seats, "seed": f"hostile-{game}"})
        assert response.status_code == 201, response.get_data(as_text=True)
        created = response.get_json()
        self.game = game
        self.id: str = created["id"]
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        snap = app.extensions["games"].repository.load(self.id).snap
        self.seat = snap.to_act()[0]
        self.token: str = tokens[self.seat]
        self.legal = engine.legal_actions(snap, self.seat)
        assert self.legal, "the seat to act has legal actions"
        self.before = stream_entries(redis, self.id)

    @property
    def url(self) -> str:
        return f"/v1/games/{self.id}"

    def post(self, body: Any = None, *, data: str | bytes | None = None, **kwargs: Any) -> Any:
        headers = {**auth(self.token), **kwargs.pop("headers", {})}
        if data is not None:
            return self.client.post(
                f"{self.url}/actions",
                data=data,
                content_type=kwargs.pop("content_type", "application/json"),
                headers=headers,
            )
        return self.client.post(f"{self.url}/actions", json=body, headers=headers)

    def unchanged(self) -> None:
        assert_unchanged(self.client, self.redis, self.id, self.before)


@pytest.fixture(params=GAMES)
def table(
    request: pytest.FixtureRequest, client: FlaskClient, fake_redis: fakeredis.FakeRedis, app: flask.Flask
) -> Table:
    return Table(client, fake_redis, app, request.param)


def refused(response: Any, table: Table, status: int | None = None, code: str | set[str] | None = None) -> None:
    """A 4xx problem (the given status if any), and the game exactly as it was."""
    text = response.get_data(as_text=True)
    assert 400 <= response.status_code < 500, text
    assert_problem(response, status or response.status_code, code)
    table.unchanged()


# ---------------------------------------------------------------- bodies


def test_oversized_bodies_are_413(table: Table) -> None:
    padding = "x" * (MAX_BODY_BYTES + 1)
    refused(table.post({**table.legal[0], "pad": padding}), table, 413, "payload_too_large")
    refused(table.post(data="[" + "1," * (MAX_BODY_BYTES // 2) + "1]"), table, 413, "payload_too_large")


@pytest.mark.parametrize(
    "data",
    [
        pytest.param("{", id="truncated"),
        pytest.param('{"type": "draw",}', id="trailing-comma"),
        pytest.param("{'type': 'draw'}", id="single-quotes"),
        pytest.param(b"\xff\xfe\x00{", id="not-utf8"),
        pytest.param("NaN", id="nan"),
        pytest.param('{"type": "draw", "position": NaN}', id="nan-field"),
        pytest.param('{"type": "draw", "position": Infinity}', id="infinity-field"),
        pytest.param('{"type": "draw", "position": ' + "9" * 5000 + "}", id="5000-digit-int"),
        pytest.param("[" * 30_000, id="deep-unclosed-arrays"),
        pytest.param('{"type": "meld", "meld": ' + '{"a":' * 10_000 + "1" + "}" * 10_001, id="deep-objects"),
        pytest.param('{"type": "play", "cards": ' + "[" * 20_000 + "]" * 20_000 + "}", id="deep-arrays"),
        pytest.param("", id="empty"),
        pytest.param("null", id="null"),
        pytest.param("[]", id="array"),
        pytest.param('"draw"', id="string"),
    ],
)
def test_malformed_and_deeply_nested_json_is_400(table: Table, data: str | bytes) -> None:
    refused(table.post(data=data), table, 400)


def test_a_body_that_is_not_json_is_415(table: Table) -> None:
    refused(table.post(data='{"type": "draw"}', content_type="text/plain"), table, 415, "unsupported_media_type")
    refused(table.post(data="type=draw", content_type="application/x-www-form-urlencoded"), table, 415)


def _wrong_types(game: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": 7},
        {"type": None},
        {"type": ["draw"]},
        {"type": {"draw": True}},
        {"type": "draw", "expected_version": "1"},
        {"type": "draw", "expected_version": 1.5},
        {"type": "draw", "expected_version": True},
        {"type": "draw", "expected_version": -1},
    ]
    for vocab in VOCABULARY[game].values():
        for field, value in vocab.items():
            if field == "type":
                continue
            for wrong in ("1", 1.5, True, {"x": 1}, [[]]):
                if wrong == value or (isinstance(value, dict) and isinstance(wrong, dict)):
                    continue
                out.append({**vocab, field: wrong})
    return out


def test_wrong_types_are_400(table: Table) -> None:
    bodies = _wrong_types(table.game)
    assert len(bodies) >= 15
    for body in bodies:
        refused(table.post(body), table, 400)


def test_huge_numbers_are_refused(table: Table) -> None:
    bodies: list[dict[str, Any]] = [{**table.legal[0], "expected_version": HUGE}]
    for vocab in VOCABULARY[table.game].values():
        for field, value in vocab.items():
            if isinstance(value, int) and not isinstance(value, bool):
                bodies += [{**vocab, field: HUGE}, {**vocab, field: -HUGE}, {**vocab, field: 2**63}]
            if isinstance(value, list) and value and isinstance(value[0], int):
                bodies += [{**vocab, field: [HUGE, 0]}, {**vocab, field: [0, -HUGE]}]
    bodies.append({"type": "discard", "flip": HUGE})
    for body in bodies:
        response = table.post(body)
        if "expected_version" in body:
            refused(response, table, 409, "version_conflict")  # a version that is not current
        else:
            refused(response, table)
    refused(table.post(table.legal[0], headers={"If-Match": f'"{HUGE}"'}), table, 400)
    refused(table.post(table.legal[0], headers={"If-Match": '"-1"'}), table, 400)


def test_unknown_fields_are_400(table: Table) -> None:
    for body in (
        {**table.legal[0], "colour": "red"},
        {**table.legal[0], "__proto__": {"admin": True}},
        {**table.legal[0], "seat": (table.seat + 1) % 2},
        {**table.legal[0], "actor": "system"},
        {**table.legal[0], "": 1},
    ):
        refused(table.post(body), table, 400, "invalid_request")


def test_unknown_card_codes_are_400(table: Table) -> None:
    example = CARD_FIELD_EXAMPLE[table.game]
    for code in FOREIGN_CARDS[table.game]:
        if example is None:  # golf names no card in an action: a card field is an unknown field
            body: dict[str, Any] = {"type": "swap", "position": 0, "card": code}
            refused(table.post(body), table, 400)
            continue
        action, field, is_list = example
        body = {**VOCABULARY[table.game][action], field: [code] if is_list else code}
        refused(table.post(body), table, 400, {"unknown_card", "invalid_request"})
        if is_list:  # a bad card after a good one
            good = VOCABULARY[table.game][action][field][0]
            refused(table.post({**body, field: [good, code]}), table, 400, {"unknown_card", "invalid_request"})


def test_unknown_action_types_are_400(table: Table) -> None:
    for kind in ("jump", "", "DRAW", "draw ", "Reveal", "__class__", "x" * 10_000, "\u0000", "drop table"):
        refused(table.post({"type": kind}), table, 400)


def test_another_games_vocabulary_is_refused(table: Table) -> None:
    own = {spec.type for spec in engine.get_game(table.game).actions}
    sent = 0
    for other, vocab in VOCABULARY.items():
        if other == table.game:
            continue
        for kind, body in vocab.items():
            response = table.post(body)
            if kind in own:  # a shared name with another shape: 400, or (shape fits) the rules refuse it
                refused(response, table)
            else:
                refused(response, table, 400, "unknown_action")
            sent += 1
    assert sent >= 10


# ---------------------------------------------------------------- queries


@pytest.mark.parametrize(
    "query",
    [
        "after=-1",
        "after=x",
        "after=1e3",
        f"after={HUGE}",
        "after=",
        "wait=1e9",
        "wait=-1",
        "wait=nan",
        "wait=inf",
        "wait=30.001",
        "wait=x",
        "after=0&wait=-0.5",
    ],
)
def test_absurd_event_queries_are_400(table: Table, query: str) -> None:
    refused(table.client.get(f"{table.url}/events?{query}"), table, 400, "invalid_request")


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("at=-5", 400),
        ("at=x", 400),
        ("at=1.5", 400),
        (f"at={HUGE}", 400),
        ("at=", 400),
        ("at=0", 422),
        ("at=100000", 422),
    ],
)
def test_absurd_replay_queries_are_refused(table: Table, query: str, status: int) -> None:
    refused(table.client.get(f"{table.url}/replay?{query}"), table, status)
    refused(table.client.get(f"{table.url}/replay?{query}", headers=auth(table.token)), table, status)


def test_hostile_input_leaves_the_game_playable(table: Table) -> None:
    """After a barrage of refusals, a legal action is still accepted at the same version."""
    for body in ({"type": "jump"}, {**table.legal[0], "colour": 1}, {"type": table.legal[0]["type"], "set": HUGE}):
        table.post(body)
    table.unchanged()
    response = table.post({**table.legal[0], "expected_version": len(table.before)})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["version"] > len(table.before)
    assert json.loads(response.get_data(as_text=True))["events"][0]["seq"] == len(table.before) + 1
