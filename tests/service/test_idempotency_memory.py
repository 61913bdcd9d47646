"""The fields that make an action's lost reply safe to resend cost a running game bounded memory: an
action sent without an `Idempotency-Key` keeps its own field only among the game's last
RECENT_FIELDS appends (a resend comes right after the lost reply), while a client's key keeps its
answer for the life of the game (docs/storage.md)."""

from __future__ import annotations

import fakeredis
import flask
from flask.testing import FlaskClient

from service.storage.event_store import RECENT_FIELDS
from tests.conftest import RecordingDispatcher, auth


def two_people() -> dict[str, object]:
    return {"game": "golf", "seed": "memory", "options": {"rounds": 9}, "seats": [{"kind": "human"}, {"kind": "human"}]}


def play_without_keys(client: FlaskClient, game: dict[str, object], moves: int) -> int:
    """Up to `moves` legal actions of whichever person may act, none with an Idempotency-Key."""
    game_id = str(game["id"])
    tokens = [seat["token"] for seat in game["seats"] if "token" in seat]  # type: ignore[attr-defined]
    played = 0
    while played < moves:
        for token in tokens:
            view = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
            if view["status"] != "active":
                return played
            if view["you"]["legal"]:
                answer = client.post(f"/v1/games/{game_id}/actions", json=view["you"]["legal"][0], headers=auth(token))
                assert answer.status_code == 200, answer.get_json()
                played += 1
    return played


def test_actions_without_a_key_keep_their_fields_only_for_the_last_appends(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> None:
    game = client.post("/v1/games", json=two_people()).get_json()
    played = play_without_keys(client, game, 3 * RECENT_FIELDS)
    assert played > RECENT_FIELDS
    tag = f"game:{{{game['id']}}}"
    assert fake_redis.hlen(f"{tag}:idem") == 0, "no field of an action without a key is kept for the game's life"
    assert fake_redis.llen(f"{tag}:recent") == RECENT_FIELDS


def test_a_clients_key_still_answers_for_the_life_of_the_game(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> None:
    game = client.post("/v1/games", json=two_people()).get_json()
    token = game["seats"][0]["token"]
    url = f"/v1/games/{game['id']}/actions"
    view = client.get(f"/v1/games/{game['id']}", headers=auth(token)).get_json()
    keyed = {**auth(token), "Idempotency-Key": "first"}
    first = client.post(url, json=view["you"]["legal"][0], headers=keyed)
    play_without_keys(client, game, 3 * RECENT_FIELDS)
    again = client.post(url, json=view["you"]["legal"][0], headers=keyed)
    assert again.status_code == 200 and again.get_json() == first.get_json()
