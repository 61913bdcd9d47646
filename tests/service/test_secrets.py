"""Seat tokens are strong, stored only as hashes, compared in constant time, and bound to one seat
of one game."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from service.play import loaded_game
from tests.conftest import auth
from tests.service.helpers import assert_problem, redis_dump, stream_entries

TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}, {"kind": "bot"}]

PLAYERS = {"golf": (2, 4), "romme": (2, 4), "switch": (4, 6), "go5": (2, 4)}
# fields that repeat a card shown elsewhere in the same document (not another physical card)
DERIVED = {"discard_top", "top_card", "stands_for", "low", "high", "jokers", "playable", "legal", "go5"}


def test_tokens_carry_at_least_128_bits(client: FlaskClient) -> None:
    tokens = []
    for _ in range(20):
        created = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS}).get_json()
        tokens += [s["token"] for s in created["seats"] if "token" in s]
        assert "token" not in created["seats"][2], "a bot seat has no token"
    assert len(set(tokens)) == len(tokens) == 40
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]+", token), token  # base64url: 6 bits a character
        assert len(token) * 6 >= 128, token
    # and the characters are used the way random ones would be: no fixed prefix or padding
    assert len({t[:4] for t in tokens}) > 30
    assert len(set("".join(tokens))) > 50


def test_tokens_are_stored_only_as_hashes(client: FlaskClient, fake_redis: fakeredis.FakeRedis) -> None:
    created = client.post("/v1/games", json={"game": "romme", "seats": TWO_HUMANS}).get_json()
    tokens = [s["token"] for s in created["seats"] if "token" in s]
    client.get(f"/v1/games/{created['id']}", headers=auth(tokens[0]))
    dump = json.dumps(redis_dump(fake_redis))
    for token in tokens:
        assert token not in dump, "a token is stored in clear"
        assert hashlib.sha256(token.encode()).hexdigest() in dump, "the token's hash is what is stored"
    for path in ("", "/record", "/events", "/replay", "/audit", "/disputes"):
        text = client.get(f"/v1/games/{created['id']}{path}").get_data(as_text=True)
        for token in tokens:
            assert token not in text and hashlib.sha256(token.encode()).hexdigest() not in text, path


def test_tokens_are_compared_in_constant_time(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    created = client.post("/v1/games", json={"game": "switch", "seats": [{"kind": "human"}] * 4}).get_json()
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def counting(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(loaded_game.hmac, "compare_digest", counting)
    token = created["seats"][2]["token"]
    response = client.get(f"/v1/games/{created['id']}", headers=auth(token))
    assert response.status_code == 200 and response.get_json()["you"]["seat"] == 2
    # every seat's digest is compared (no early exit that would tell which seat matched)
    assert len(calls) == 4
    assert all(a == hashlib.sha256(token.encode()).hexdigest() for a, _ in calls)
    calls.clear()
    assert client.get(f"/v1/games/{created['id']}", headers=auth("x" * 43)).status_code == 401
    assert len(calls) == 4


def test_a_token_acts_only_for_its_own_seat_in_its_own_game(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis
) -> None:
    first = client.post("/v1/games", json={"game": "go5", "seats": [{"kind": "human"}] * 2}).get_json()
    second = client.post("/v1/games", json={"game": "go5", "seats": [{"kind": "human"}] * 2}).get_json()
    snap = app.extensions["games"].repository.load(first["id"]).snap
    (to_act,) = snap.to_act()
    idle = 1 - to_act
    action = engine.legal_actions(snap, to_act)[0]
    before = [stream_entries(fake_redis, g["id"]) for g in (first, second)]
    url = f"/v1/games/{first['id']}/actions"
    # the idle seat's token cannot send the seat to act's move, nor name that seat
    assert_problem(client.post(url, json=action, headers=auth(first["seats"][idle]["token"])), 422, "not_your_turn")
    assert_problem(client.post(url, json={**action, "seat": to_act}, headers=auth(first["seats"][idle]["token"])), 400)
    # a token of the other game is nobody here, whatever its seat number
    for seat in (0, 1):
        foreign = second["seats"][seat]["token"]
        assert_problem(client.post(url, json=action, headers=auth(foreign)), 401, "unauthorized")
        assert_problem(client.get(f"/v1/games/{first['id']}", headers=auth(foreign)), 401, "unauthorized")
        assert_problem(client.get(f"/v1/games/{first['id']}/replay", headers=auth(foreign)), 401, "unauthorized")
        dispute = client.post(
            f"/v1/games/{first['id']}/disputes", json={"seq": 1, "reason": "x"}, headers=auth(foreign)
        )
        assert_problem(dispute, 401, "unauthorized")
    # a token's digest, or a token with a changed character, is not the token
    token = first["seats"][to_act]["token"]
    for fake in (
        hashlib.sha256(token.encode()).hexdigest(),
        token[:-1] + ("A" if token[-1] != "A" else "B"),
        token[1:],
    ):
        assert_problem(client.post(url, json=action, headers=auth(fake)), 401, "unauthorized")
    assert [stream_entries(fake_redis, g["id"]) for g in (first, second)] == before
    # and the right token still works
    assert client.post(url, json=action, headers=auth(token)).status_code == 200
