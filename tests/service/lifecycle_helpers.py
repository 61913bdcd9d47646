"""Helpers for the lifecycle tests: whole games with a person and bots, and every read endpoint's answer."""

from __future__ import annotations

from typing import Any

import flask
from flask.testing import FlaskClient

from domain import engine
from domain.bots import choose_action
from domain.shuffle import SeededStream
from tests.conftest import RecordingDispatcher, auth
from tests.unit.test_verify import small_options

GAME_IDS = [game.id for game in engine.all_games()]


def create(client: FlaskClient, game_id: str, bots: int | None = None) -> dict[str, Any]:
    """A short game of `game_id`: one person (seat 0) and greedy bots."""
    game = engine.get_game(game_id)
    seats = [{"kind": "human", "name": "Ana"}] + [{"kind": "bot", "level": "greedy"}] * (bots or game.min_players - 1)
    body = {"game": game_id, "seats": seats, "options": small_options(game.describe()), "seed": f"life-{game_id}"}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def play_to_end(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, created: dict[str, Any]
) -> list[str]:
    """The person plays greedy moves through the API with an Idempotency-Key each, the bots through the
    dispatcher, until the game ends; returns the keys used."""
    service = app.extensions["games"]
    game_id, token = created["id"], created["seats"][0]["token"]
    keys = []
    for step in range(5000):
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        if loaded.snap.finished:
            return keys
        assert 0 in loaded.snap.to_act(), f"nobody may act at version {loaded.version}"
        view = engine.view(loaded.snap, 0)
        action = choose_action(loaded.config.game, "greedy", view, view["you"]["legal"], SeededStream("t", str(step)))
        keys.append(f"move-{step}")
        headers = {**auth(token), "Idempotency-Key": keys[-1]}
        response = client.post(f"/v1/games/{game_id}/actions", json=action, headers=headers)
        assert response.status_code == 200, response.get_json()
    raise AssertionError("the game did not end")


def answers(client: FlaskClient, created: dict[str, Any]) -> dict[str, tuple[int, Any]]:
    """Every read endpoint's answer (status and body), with the person's token and without one."""
    game_id, token = created["id"], created["seats"][0]["token"]
    base = f"/v1/games/{game_id}"
    version = client.get(base).get_json()["version"]
    paths = ["", "/record", "/audit", "/events", "/events?after=3", f"/events?after={version}&wait=0"]
    paths += ["/disputes", "/replay"] + [f"/replay?at={at}" for at in (1, 2, version // 2, version - 1, version)]
    out = {}
    for path in paths:
        for who, headers in (("spectator", {}), ("seat 0", auth(token))):
            response = client.get(base + path, headers=headers)
            out[f"{who} GET {path}"] = (response.status_code, response.get_json())
    return out
