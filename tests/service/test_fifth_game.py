"""A game the service has never heard of: Pick (tests/fifth_game.py), registered only by this test.

It is created, played to its end by a person over HTTP and a house bot through the turn queue, replayed,
audited and verified offline, with no line of its own in service/ or workers/: the catalog, the action's
loading, the views, the record and the bot all come from the registry. It keeps C-6 (a seat sees only its
own cards until the end) and C-9 (the engine gives it `max_events` and ends it when that is all).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain import engine, verify
from tests.conftest import RecordingDispatcher, auth
from tests.fifth_game import CARDS, GAME_ID, PICK
from tests.json_walk import strings_in
from tests.service.helpers import assert_problem


@pytest.fixture(autouse=True)
def pick_registered() -> Iterator[None]:
    """Pick is known for this test only."""
    engine.register(PICK)
    yield
    engine.unregister(GAME_ID)


def get_json(client: FlaskClient, path: str, token: str | None = None) -> Any:
    response = client.get(path, headers=auth(token) if token else {})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def create_pick(client: FlaskClient, **extra: Any) -> tuple[str, str]:
    """A game of Pick between a person (seat 0) and a greedy house bot (seat 1): its id and the person's token."""
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "greedy"}]
    response = client.post("/v1/games", json={"game": GAME_ID, "seats": seats, **extra})
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    return created["id"], created["seats"][0]["token"]


def play_person_and_bot(client: FlaskClient, dispatcher: RecordingDispatcher, game_id: str, token: str) -> int:
    """The person picks the last free slot whenever it is their turn, the bot plays through the queue; checks
    C-6 on every view on the way (the person sees the cards they picked, and no other). Returns the picks sent."""
    for picks in range(len(CARDS) + 1):
        dispatcher.drain()
        view = get_json(client, f"/v1/games/{game_id}", token)
        if view["status"] == "finished":
            return picks
        mine = view["you"]["hand"]
        assert strings_in(view) & set(CARDS) == set(mine), "C-6: a seat's view shows only the cards it holds"
        assert strings_in(get_json(client, f"/v1/games/{game_id}")) & set(CARDS) == set(), "C-6: a spectator"
        assert view["to_act"] == [0] and view["actions"] == ["pick"]
        action = {**view["you"]["legal"][-1], "expected_version": view["version"]}
        response = client.post(f"/v1/games/{game_id}/actions", json=action, headers=auth(token))
        assert response.status_code == 200, response.get_data(as_text=True)
    raise AssertionError("the game did not end")


def test_the_catalog_lists_a_registered_game_with_its_own_action_and_c9_max_events(client: FlaskClient) -> None:
    games = {game["id"]: game for game in get_json(client, "/v1/catalog")["games"]}
    assert games[GAME_ID]["actions"] == ["pick"]
    assert [option["name"] for option in games[GAME_ID]["options"]] == ["max_events"]


def test_a_fifth_game_is_played_to_its_end_over_http_replayed_audited_and_verified(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    game_id, token = create_pick(client)
    dispatcher.drain()  # the bot, after the dealer, picks first
    url = f"/v1/games/{game_id}/actions"
    not_a_number = client.post(url, json={"type": "pick", "slot": "two"}, headers=auth(token))
    assert_problem(not_a_number, 400, "invalid_request")
    no_such_slot = client.post(url, json={"type": "pick", "slot": 9}, headers=auth(token))
    assert_problem(no_such_slot, 422, "slot_taken", rule="P-3")

    picks = play_person_and_bot(client, dispatcher, game_id, token)

    assert picks == len(CARDS) // 2
    view = get_json(client, f"/v1/games/{game_id}", token)
    assert view["status"] == "finished" and view["result"]["winners"], view
    record = get_json(client, f"/v1/games/{game_id}/record")
    types = [event["type"] for event in record["events"]]
    assert types.count("CardPicked") == len(CARDS) and types[-2:] == ["GameEnded", "SeedRevealed"]
    assert [e["actor"] for e in record["events"] if e["type"] == "CardPicked"] == [1, 0] * (len(CARDS) // 2)
    replay = get_json(client, f"/v1/games/{game_id}/replay")
    assert sorted(slot["card"] for slot in replay["table"]["slots"]) == sorted(CARDS), "the end shows every card"
    audit = get_json(client, f"/v1/games/{game_id}/audit")
    assert audit["chain_ok"] and audit["replay_ok"] and audit["complete"] and audit["first_bad_seq"] is None
    offline = verify.verify(record)
    assert offline.ok and offline.complete, offline


def test_c9_a_fifth_game_out_of_events_ends_with_the_engine_s_event_limit(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """C-9: `max_events` bounds a game whose module never mentions it."""
    game_id, token = create_pick(client, options={"max_events": 10})
    play_person_and_bot(client, dispatcher, game_id, token)
    record = get_json(client, f"/v1/games/{game_id}/record")
    assert 10 - engine.ACTION_EVENTS_MAX < len(record["events"]) <= 10
    assert record["events"][-2]["data"]["reason"] == "event_limit"
    assert verify.verify(record).ok
