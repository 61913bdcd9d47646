"""The remote view holds all a policy needs (issue "Outside bots", Done when): the bridge's `--level greedy`
player, deciding each turn only from what `GET /v1/bots/me/turns` hands out, and the house `greedy`, each in
seat 0 of the same 300 Golf deals against house greedy opponents, score within noise of each other.

Two proofs: every turn the bridge's player decides, the house greedy decides alike from the seat's view that
the game's state gives (`domain.engine.view`) with the same random stream; and the paired difference of their
points holds 0 in its 99.9% interval. (Each side's random tie-breaks and its opponents' differ from game to
game, so a 95% interval would leave out 0 one run in twenty by its definition, as one CI run found.)"""

from __future__ import annotations

from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from domain.bots import choose_action
from domain.duplicate_deals import mean_interval
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.test_registered_bots import ONE_ROUND, games_of, registered
from workers.bridge.players import LevelPlayer
from workers.bridge.turns import parse_turn

pytestmark = pytest.mark.slow
DEALS = 300
Z_999 = 3.29  # 1 time in 1,000 outside by chance
OPPONENTS = [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "greedy"}]


def remote_points(client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, token: str, seed: str) -> int:
    """Seat 0's points in the deal `seed`, played by the bridge's greedy player from its turns alone."""
    game = create_golf(client, [{"kind": "bot", "bot": "remote-greedy"}, *OPPONENTS], options=ONE_ROUND, seed=seed)
    options_of = lambda game_id: client.get(f"/v1/games/{game_id}/record").get_json()["options"]  # noqa: E731
    player = LevelPlayer("greedy", token, options_of)
    while True:
        dispatcher.drain()
        if games_of(app).repository.load(game["id"]).snap.finished:
            break
        answer = client.get("/v1/bots/me/turns", headers=auth(token)).get_json()
        for raw in answer["turns"]:
            turn = parse_turn(raw, 0.0, None)
            action = player.decide(turn)
            assert isinstance(action, dict), action
            state = games_of(app).repository.load(turn.game_id).snap
            seat_view = engine.view(state, turn.seat)
            assert action == choose_action("golf", "greedy", seat_view, turn.legal, player.stream(turn), None)
            body = {**action, "expected_version": turn.version}
            posted = client.post(
                f"/v1/games/{turn.game_id}/actions", json=body, headers={**auth(token), "Idempotency-Key": turn.id}
            )
            assert posted.status_code == 200, posted.get_json()
    return _points(client, game["id"])


def house_points(client: FlaskClient, dispatcher: RecordingDispatcher, seed: str) -> int:
    """Seat 0's points in the deal `seed`, played by the house greedy through the workers' path."""
    game = create_golf(client, [{"kind": "bot", "level": "greedy"}, *OPPONENTS], options=ONE_ROUND, seed=seed)
    dispatcher.drain()
    return _points(client, game["id"])


def _points(client: FlaskClient, game_id: str) -> int:
    """Seat 0's points at the end of the game, which every seat played itself (no timeout)."""
    record: dict[str, Any] = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished" and not [r for r in record["events"] if r.get("reason")]
    points: int = client.get(f"/v1/games/{game_id}").get_json()["seats"][0]["score"]
    return points


def test_the_bridges_greedy_and_the_house_greedy_are_not_told_apart_over_300_golf_deals(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client, "remote-greedy")["token"]
    differences = []
    for deal in range(DEALS):
        seed = f"remote-greedy-{deal}"
        differences.append(remote_points(client, app, dispatcher, token, seed) - house_points(client, dispatcher, seed))
    mean, interval = mean_interval(differences, z=Z_999)
    assert interval is not None
    low, high = interval
    said = f"remote minus house greedy over {DEALS} deals: mean {mean:+.2f}, 99.9% interval [{low:.2f}, {high:.2f}]"
    print(said)
    assert low <= 0 <= high, said
