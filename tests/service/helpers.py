"""Helpers for the service tests: problem checks, the hash chain, hidden cards and a game driver.

The chain and deal arithmetic are written from API.md and the rule texts, not imported from
the code under test, so that a test fails when the code drifts from the contract.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from domain import engine
from tests.conftest import RecordingDispatcher, auth
from tests.json_walk import strings_in

PROBLEM_JSON = "application/problem+json"
RULE_ID = re.compile(r"^[A-Z]+-\d+$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical(value: Any) -> str:
    """API.md: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- problems


def assert_problem(
    response: TestResponse,
    status: int,
    code: str | Iterable[str] | None = None,
    *,
    rule: bool | str | None = None,
) -> dict[str, Any]:
    """The response is application/problem+json with API.md's fields; returns the body.

    `rule`: True = a rule id must be present, a string = exactly that rule id,
    False = no rule, None = not checked.
    """
    text = response.get_data(as_text=True)
    assert response.status_code == status, text
    assert response.mimetype == PROBLEM_JSON, (response.mimetype, text)
    body = json.loads(text)
    assert isinstance(body, dict), text
    for field, kind in (("type", str), ("title", str), ("status", int), ("code", str), ("detail", str)):
        assert isinstance(body.get(field), kind), f"problem field {field!r} missing or not {kind.__name__}: {text}"
    assert body["status"] == status
    assert re.fullmatch(r"[a-z][a-z0-9_]*", body["code"]), body["code"]
    assert body["detail"].strip(), text
    assert body["title"].strip(), text
    if code is not None:
        allowed = {code} if isinstance(code, str) else set(code)
        assert body["code"] in allowed, text
    if rule is True:
        assert isinstance(body.get("rule"), str) and RULE_ID.match(body["rule"]), text
    elif rule is False:
        assert "rule" not in body, text
    elif isinstance(rule, str):
        assert body.get("rule") == rule, text
    return body


# ---------------------------------------------------------------- events and the chain


EVENT_FIELDS = {"seq", "type", "actor", "data", "at", "prev_hash", "hash"}
STAND_IN_FIELDS = {"seat", "reason"}  # a seat's action played by the system (a turn timeout)


def check_record_shape(record: dict[str, Any]) -> None:
    if set(record) & STAND_IN_FIELDS:
        assert record["actor"] == "system" and isinstance(record["seat"], int) and record["seat"] >= 0, record
        assert record["reason"] == "turn_timeout", record
        assert set(record) == EVENT_FIELDS | STAND_IN_FIELDS, record
    else:
        assert set(record) == EVENT_FIELDS, record
    assert isinstance(record["seq"], int) and record["seq"] >= 1
    assert isinstance(record["type"], str) and record["type"]
    assert record["actor"] == "system" or (isinstance(record["actor"], int) and record["actor"] >= 0), record
    assert isinstance(record["data"], dict)
    assert isinstance(record["at"], str) and re.match(
        r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$", record["at"]
    )
    assert HEX64.match(record["prev_hash"]) and HEX64.match(record["hash"]), record


def check_chain(records: list[dict[str, Any]], first_prev_hash: str, first_seq: int = 1) -> None:
    """Every record: consecutive seq, prev_hash = the previous hash, hash per API.md."""
    prev = first_prev_hash
    for offset, record in enumerate(records):
        check_record_shape(record)
        assert record["seq"] == first_seq + offset, [r["seq"] for r in records]
        assert record["prev_hash"] == prev, f"seq {record['seq']}: prev_hash does not continue the chain"
        body = {k: v for k, v in record.items() if k not in ("at", "hash")}
        assert record["hash"] == sha256_hex(prev + canonical(body)), f"seq {record['seq']}: wrong hash"
        prev = record["hash"]


# ---------------------------------------------------------------- hidden information (G-5, C-6)


def secret_cards(snap: engine.Snapshot[Any], viewer: int | None) -> set[str]:
    """Cards `viewer` may not see now: face-down grid cards, the stock, another's drawn card.

    Read through the game's full view (every hand and stack). Only meaningful with one
    deck (up to 4 players), where each code is one card.
    """
    table = snap.game.full_view(snap.state)["table"]
    hidden = {slot["card"] for grid in table["grids"] for slot in grid["slots"] if slot["state"] == "down"}
    hidden |= set(table.get("stock", ()))
    drawn = table.get("drawn")
    if drawn is not None and (viewer is None or viewer != table.get("drawn_by")):
        hidden.add(drawn)
    return hidden


def check_no_face_down_cards(view: dict[str, Any]) -> None:
    """Structurally, no face-down slot carries a card, in the table or in `you`."""
    slots = [slot for grid in view["table"]["grids"] for slot in grid["slots"]]
    slots += view.get("you", {}).get("hand", [])
    for slot in slots:
        assert slot["state"] in ("up", "down", "empty"), slot
        if slot["state"] != "up":
            assert slot["card"] is None, f"a {slot['state']} card is visible: {slot}"
    assert "stock" not in view["table"], "the stock order is never shown while the game runs (C-6)"


def check_view_hides(view: dict[str, Any], snap: engine.Snapshot[Any], viewer: int | None) -> None:
    """No card the viewer may not see appears anywhere in the view (G-5, C-6)."""
    check_no_face_down_cards(view)
    leaked = strings_in(view) & secret_cards(snap, viewer)
    assert not leaked, f"view of {viewer} shows hidden cards {sorted(leaked)}"


# ---------------------------------------------------------------- redis


def redis_dump(redis_client: Any) -> dict[str, Any]:
    """Every key with its whole value, whatever its type."""
    out: dict[str, Any] = {}
    for key in redis_client.keys("*"):
        kind = redis_client.type(key)
        if kind == "string":
            out[key] = redis_client.get(key)
        elif kind == "hash":
            out[key] = redis_client.hgetall(key)
        elif kind == "stream":
            out[key] = redis_client.xrange(key)
        elif kind == "list":
            out[key] = redis_client.lrange(key, 0, -1)
        elif kind == "set":
            out[key] = sorted(redis_client.smembers(key))
        elif kind == "zset":
            out[key] = redis_client.zrange(key, 0, -1, withscores=True)
        else:
            raise AssertionError(f"unexpected redis type {kind} of {key}")
    return out


def stream_entries(redis_client: Any, game_id: str) -> list[tuple[str, dict[str, str]]]:
    entries: list[tuple[str, dict[str, str]]] = redis_client.xrange(f"game:{{{game_id}}}:events")
    return entries


def assert_unchanged(client: FlaskClient, redis_client: Any, game_id: str, before: Any) -> None:
    """The game's stream (and so its version and events) is exactly as `before`."""
    assert stream_entries(redis_client, game_id) == before
    view = client.get(f"/v1/games/{game_id}")
    assert view.status_code == 200
    assert view.get_json()["version"] == len(before)


# ---------------------------------------------------------------- playing through the API


def deal_index(players: int, dealer: int, seat: int, position: int) -> int:
    """G-3: the deck index of the card `seat` receives as its `position`-th card."""
    return position * players + (seat - dealer - 1) % players


def choose_golf_action(legal: list[dict[str, Any]], turn_no: int) -> dict[str, Any]:
    """A scripted human that uses every action type and turns up one card a turn."""
    types = {a["type"] for a in legal}
    if "reveal" in types:
        return legal[turn_no % len(legal)]
    face_down = [a["flip"] for a in legal if a["type"] == "discard" and a["flip"] is not None]
    if {"swap", "discard"} & types:  # a card is in hand
        if turn_no % 2 == 0 and face_down:
            return {"type": "discard", "flip": face_down[0]}
        swaps = [a for a in legal if a["type"] == "swap"]
        return {"type": "swap", "position": face_down[0]} if face_down else swaps[0]
    flips = [a for a in legal if a["type"] == "flip"]
    wanted = ("flip", "draw", "take_discard")[turn_no % 3]
    if wanted == "flip" and flips:
        return flips[0]
    if wanted == "take_discard" and flips:
        return {"type": "take_discard", "position": flips[0]["position"]}
    draws = [a for a in legal if a["type"] == "draw"]
    return draws[0] if draws else legal[0]


class Transcript:
    """Every response text the test saw, to check later what was never shown."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, response: TestResponse) -> dict[str, Any]:
        text = response.get_data(as_text=True)
        self.texts.append(text)
        body: dict[str, Any] = json.loads(text)
        return body


def play_to_end(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    created: dict[str, Any],
    transcript: Transcript,
    *,
    check_views: bool = True,
    choose: Callable[[list[dict[str, Any]], int], dict[str, Any]] = choose_golf_action,
    max_actions: int = 3000,
) -> dict[str, int]:
    """Drive humans through the API and bots through the dispatcher until the game ends.

    Checks on the way: the view's `actions` match the legal actions, no view shows a
    hidden card, every action response chains on the events before it. Returns how
    often each action type was sent by a human.
    """
    service = app.extensions["games"]
    game_id = created["id"]
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}
    sent: dict[str, int] = {}
    turn_no = 0
    for _ in range(max_actions):
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        if loaded.snap.finished:
            return sent
        humans = [seat for seat in loaded.snap.to_act() if seat in tokens]
        assert humans, f"nobody can act at version {loaded.version}, but the game is not finished"
        seat = humans[0]
        view = transcript.add(client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])))
        assert view["version"] == loaded.version and view["status"] == "active"
        legal = engine.legal_actions(loaded.snap, seat)
        assert set(view["actions"]) == {a["type"] for a in legal}
        if check_views:
            check_view_hides(view, loaded.snap, seat)
            spectator = transcript.add(client.get(f"/v1/games/{game_id}"))
            assert "you" not in spectator and spectator["actions"] == []
            check_view_hides(spectator, loaded.snap, None)
        action = choose(legal, turn_no)
        assert action["type"] in view["actions"]
        response = client.post(
            f"/v1/games/{game_id}/actions",
            json={**action, "expected_version": loaded.version},
            headers=auth(tokens[seat]),
        )
        assert response.status_code == 200, (action, response.get_data(as_text=True))
        result = transcript.add(response)
        sent[action["type"]] = sent.get(action["type"], 0) + 1
        if action["type"] != "draw":  # a turn is over (a draw is followed by swap or discard)
            turn_no += 1
        events = result["events"]
        check_chain(events, loaded.last_hash, loaded.version + 1)
        assert result["version"] == loaded.version + len(events) == events[-1]["seq"]
        assert result["state"]["version"] == result["version"]
        assert "you" in result["state"] and result["state"]["you"]["seat"] == seat
        if check_views:
            check_view_hides(result["state"], service.repository.load(game_id).snap, seat)
    raise AssertionError(f"the game did not end within {max_actions} human actions")


def all_events(client: FlaskClient, game_id: str) -> list[dict[str, Any]]:
    """Every public event of the game, page after page (`/events` answers at most 1,000 at a time)."""
    events: list[dict[str, Any]] = []
    path: str | None = f"/v1/games/{game_id}/events?after=0"
    while path is not None:
        page = client.get(path)
        assert page.status_code == 200, page.get_data(as_text=True)
        body = page.get_json()
        events += body["events"]
        path = body["next"]
    return events
