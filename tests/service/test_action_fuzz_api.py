"""Mutated actions through the HTTP API on fakeredis: never a 5xx, every refusal a 4xx problem+json, and a
refused action changes nothing (C-2, and each game's rules).

A sample of tests/unit/test_action_fuzz.py's cases: games of people made through the API, brought to
random positions by random legal play through the service's command path, then hostile variants of
the legal actions posted with the token of the seat to act, of another seat, or with a token that
is no seat's, a quarter of them with an `Idempotency-Key`. The stream (so the version and every
event) must be exactly as before each refusal.
"""

from __future__ import annotations

import os
import random
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from domain import engine
from tests.action_fuzz import (
    GAMES,
    OPTION_CHOICES,
    REPRO_OPENING,
    REPRO_SEED,
    STOP_SWAPS,
    Mutator,
    Position,
    fuzz_settings,
    positions,
    vocabulary,
)
from tests.conftest import auth
from tests.service.helpers import assert_problem, assert_unchanged, stream_entries

SEED, _ = fuzz_settings(os.environ)
CASES_PER_GAME = 300
CHECKPOINTS = 3  # positions per game: the start, then after random legal play
FOREIGN_TOKEN = "not-a-seat-token-" + "x" * 20


def test_go5_crafted_swap_of_a_stop_card_answers_422_and_changes_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    """V-6: the swap that gave a 500 (KeyError 'stop') is a 422 naming V-6; nothing is written."""
    seats = [{"kind": "human", "name": name} for name in ("Ana", "Ben")]
    created = client.post("/v1/games", json={"game": "go5", "seats": seats, "seed": REPRO_SEED}).get_json()
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}
    url = f"/v1/games/{created['id']}/actions"
    for seat, action in REPRO_OPENING:
        assert client.post(url, json=action, headers=auth(tokens[seat])).status_code == 200
    before = stream_entries(fake_redis, created["id"])
    for swap in STOP_SWAPS:
        body = assert_problem(client.post(url, json=swap, headers=auth(tokens[0])), 422, "stop_never_in_hand")
        assert body["rule"] == "V-6"
        assert_unchanged(client, fake_redis, created["id"], before)


class ApiTable:
    """A game of people through the API; `advance` plays random legal actions through the command path."""

    def __init__(self, client: FlaskClient, app: flask.Flask, game: str, rng: random.Random) -> None:
        self.client = client
        self.service = app.extensions["games"]
        self.game = game
        self.rng = rng
        rules = engine.get_game(game)
        players = rng.randint(rules.min_players, min(rules.max_players, 5))
        body = {
            "game": game,
            "seats": [{"kind": "human", "name": f"P{i}"} for i in range(players)],
            "options": rng.choice(OPTION_CHOICES[game]),
            "seed": f"api-fuzz-{game}-{rng.randrange(10**6)}",
        }
        response = client.post("/v1/games", json=body)
        assert response.status_code == 201, response.get_data(as_text=True)
        created = response.get_json()
        self.id: str = created["id"]
        self.tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}

    def snap(self) -> engine.Snapshot[Any]:
        snap: engine.Snapshot[Any] = self.service.repository.load(self.id).snap
        return snap

    def advance(self, steps: int) -> None:
        for _ in range(steps):
            snap = self.snap()
            if snap.finished:
                return
            seat = self.rng.choice(snap.to_act())
            self.service.submit(self.id, seat, self.rng.choice(engine.legal_actions(snap, seat)))

    def post(self, seat: int, action: dict[str, Any], idempotency_key: str | None) -> TestResponse:
        headers = auth(self.tokens.get(seat, FOREIGN_TOKEN))
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return self.client.post(f"/v1/games/{self.id}/actions", json=action, headers=headers)


@pytest.fixture(scope="module")
def mutation_vocabulary() -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(SEED)
    return vocabulary({game: positions(game, rng, 2, 4, 200) for game in GAMES})


@pytest.mark.parametrize("game", GAMES)
def test_mutated_actions_through_the_api_are_4xx_problems_that_change_nothing(
    game: str,
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: fakeredis.FakeRedis,
    mutation_vocabulary: dict[str, list[dict[str, Any]]],
) -> None:
    """C-2 and every rule at the edge: no 5xx; a refusal is a problem and leaves the stream as it was."""
    rng = random.Random(f"{SEED}/{game}/api")
    mutator = Mutator(rng, mutation_vocabulary)
    table = ApiTable(client, app, game, rng)
    statuses: dict[int, int] = {}
    sent = 0
    for checkpoint in range(CHECKPOINTS):
        table.advance(0 if checkpoint == 0 else rng.randint(5, 60))
        before = stream_entries(fake_redis, table.id)
        position = Position(table.snap(), f"{game} {table.id} version {len(before)}")
        for seat, action in mutator.cases(game, position, CASES_PER_GAME // CHECKPOINTS):
            shown = repr(action)
            response = table.post(seat, action, f"fuzz-{sent}" if rng.random() < 0.25 else None)
            sent += 1
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            text = response.get_data(as_text=True)
            assert response.status_code < 500, f"{position.origin} seat={seat} action={shown}: {text}"
            if response.status_code == 200:  # a variant the rules accept: the game moved on
                before = stream_entries(fake_redis, table.id)
                assert response.get_json()["version"] == len(before)
                continue
            assert 400 <= response.status_code < 500, text
            assert_problem(response, response.status_code, rule=True if response.status_code == 422 else None)
            assert stream_entries(fake_redis, table.id) == before, f"a refused {shown} changed the game"
        assert_unchanged(client, fake_redis, table.id, before)
    assert sent >= CASES_PER_GAME - CHECKPOINTS
    assert statuses.get(400, 0) and statuses.get(422, 0) and statuses.get(401, 0), statuses
