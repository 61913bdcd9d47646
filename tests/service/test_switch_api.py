"""Switch through the HTTP API on fakeredis: the catalog, creation, refusals as problems, a whole game."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import flask
from flask.testing import FlaskClient

from domain import engine
from domain.shuffle import shuffle
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import Transcript, all_events, assert_problem, assert_unchanged, check_chain, stream_entries
from tests.unit.switch_helpers import build_deck, canonical

HUMANS = [{"kind": "human", "name": name} for name in ("Ana", "Ben", "Cem", "Dia")]
HUMAN_AND_BOTS = [{"kind": "human", "name": "Ana"}] + [{"kind": "bot", "level": "greedy"} for _ in range(3)]
HEARTS = ["3H", "4H", "5H", "6H", "7H", "9H", "10H"]
PLAIN = {0: ["3D", "4D", "5D", "6D", "7D", "9D", "10D"], 1: HEARTS, 2: ["3S", "4S", "5S", "6S", "7S", "9S", "10S"]}


def create(client: FlaskClient, seats: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/games", json={"game": "switch", "seats": seats, **extra})
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def tokens_of(created: dict[str, Any]) -> dict[int, str]:
    return {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}


def post(client: FlaskClient, game_id: str, token: str, body: dict[str, Any]) -> Any:
    return client.post(f"/v1/games/{game_id}/actions", json=body, headers=auth(token))


def stacked_game(client: FlaskClient, s1: list[str], start: str, stock: list[str] | None = None) -> dict[str, Any]:
    """Four humans; seat 1 (first to act) holds `s1`; the start card and stock top as given (C-5)."""
    hands = {**PLAIN, 1: s1, 3: ["3C", "4C", "5C", "6C", "7C", "9C", "10C"]}
    return create(client, HUMANS, decks=[build_deck(4, hands, start, stock or [])], seed="stacked")


# ---------------------------------------------------------------- catalog and creation


def test_catalog_lists_switch(client: FlaskClient) -> None:
    games = {game["id"]: game for game in client.get("/v1/catalog").get_json()["games"]}
    switch = games["switch"]
    assert switch["name"] == "Switch" and switch["players"] == {"min": 4, "max": 10}
    assert set(switch["actions"]) == {"play", "choose_suit", "draw", "pass"}
    options = {option["name"]: option for option in switch["options"]}
    assert (options["hand_size"]["default"], options["hand_size"]["minimum"], options["hand_size"]["maximum"]) == (
        7,
        7,
        15,
    )
    assert options["match_rank"]["default"] is False
    assert (options["extra_jokers"]["maximum"], options["extra_twos"]["maximum"]) == (8, 8)
    assert options["target"]["default"] == 500
    assert {"random", "greedy"} <= set(switch["bot_levels"])


def test_create_deals_by_c4_and_bots_play_until_the_human_is_to_act(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """S-2 / C-4: the seeded deal; seat 1 (a bot) starts, the bots play through the job queue."""
    created = create(client, HUMAN_AND_BOTS, seed="switch-api")
    game_id, token = created["id"], tokens_of(created)[0]
    deck = shuffle(canonical(), "switch-api", "round/1")
    first = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    assert first["game"] == "switch" and first["stacked"] is False
    assert Counter(first["you"]["hand"]) == Counter(deck[3:28:4])
    assert first["table"]["discard"][0] == deck[28]
    assert first["table"]["hand_sizes"] == [7, 7, 7, 7], "no bot has acted before the queue runs"
    dispatcher.drain()
    view = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    assert view["to_act"] == [0]
    assert view["actions"] and set(view["actions"]) <= {"play", "draw", "pass", "choose_suit"}
    assert view["you"]["legal"] and {a["type"] for a in view["you"]["legal"]} == set(view["actions"])
    assert "hands" not in view["table"] and "stock" not in view["table"]
    spectator = client.get(f"/v1/games/{game_id}").get_json()
    assert "you" not in spectator and spectator["actions"] == []


def test_bad_player_count_and_option_are_refused(client: FlaskClient) -> None:
    response = client.post("/v1/games", json={"game": "switch", "seats": HUMANS[:3]})
    assert_problem(response, 422, "bad_player_count", rule="S-1")
    response = client.post("/v1/games", json={"game": "switch", "seats": HUMANS, "options": {"match_rank": "yes"}})
    assert_problem(response, 400, "invalid_option", rule=False)


# ---------------------------------------------------------------- refusals


def test_rule_refusals_are_422_problems_with_code_and_rule(client: FlaskClient, fake_redis: Any) -> None:
    created = stacked_game(client, ["JC", "5S", "9H", "2H", "3C", "4C", "6C"], "5H")
    game_id, tokens = created["id"], tokens_of(created)
    before = stream_entries(fake_redis, game_id)
    cases: list[tuple[int, dict[str, Any], str, str]] = [
        (2, {"type": "draw"}, "not_your_turn", "C-2"),
        (1, {"type": "play", "cards": ["5S"]}, "does_not_match", "S-4"),
        (1, {"type": "play", "cards": ["JC"]}, "suit_required", "S-4"),
        (1, {"type": "play", "cards": ["9H"], "suit": "S"}, "suit_not_allowed", "S-4"),
        (1, {"type": "play", "cards": ["KH"]}, "card_not_in_hand", "S-4"),
        (1, {"type": "play", "cards": ["9H", "2H"]}, "one_card_only", "S-7"),
        (1, {"type": "pass"}, "nothing_drawn", "S-6"),
        (1, {"type": "choose_suit", "suit": "S"}, "no_suit_to_choose", "S-3"),
    ]
    for seat, body, code, rule in cases:
        assert_problem(post(client, game_id, tokens[seat], body), 422, code, rule=rule)
    assert_problem(post(client, game_id, tokens[1], {"type": "play", "cards": ["ZZ"]}), 400, "unknown_card")
    assert_problem(post(client, game_id, tokens[1], {"type": "play", "cards": ["5h"]}), 400, "unknown_card")
    assert_problem(post(client, game_id, tokens[1], {"type": "play", "cards": "9H"}), 400, "invalid_request")
    assert_problem(post(client, game_id, tokens[1], {"type": "play", "cards": []}), 400, "invalid_request")
    assert_problem(post(client, game_id, tokens[1], {"type": "draw", "cards": ["9H"]}), 400, "invalid_request")
    assert_unchanged(client, fake_redis, game_id, before)


def test_pending_draw_and_start_card_refusals(client: FlaskClient) -> None:
    created = stacked_game(client, ["2S", "JK", "9H", "3H", "4H", "5H", "6H"], "JK", ["QC", "QD", "QS", "AC", "AD"])
    game_id, tokens = created["id"], tokens_of(created)
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"type": "play", "cards": ["9H"]}, "pending_draw", "S-7"),
        ({"type": "play", "cards": ["2S"]}, "joker_only_on_joker", "S-7"),
        ({"type": "play", "cards": ["JK", "2S"]}, "joker_only_on_joker", "S-7"),
    ]
    for body, code, rule in cases:
        assert_problem(post(client, game_id, tokens[1], body), 422, code, rule=rule)
    answer = post(client, game_id, tokens[1], {"type": "play", "cards": ["JK"]})
    assert answer.status_code == 200
    assert answer.get_json()["state"]["table"]["pending_draw"] == 10

    jack = stacked_game(client, HEARTS, "JD")
    assert_problem(post(client, jack["id"], tokens_of(jack)[1], {"type": "draw"}), 422, "choose_suit_first", rule="S-3")
    chosen = post(client, jack["id"], tokens_of(jack)[1], {"type": "choose_suit", "suit": "H"})
    assert chosen.status_code == 200 and chosen.get_json()["state"]["table"]["suit"] == "H"


def test_draw_then_pass_and_the_drawn_card_is_seen_by_the_drawer_only(client: FlaskClient) -> None:
    """S-6 / C-6: the drawer's view shows the drawn card; others and the event do not."""
    created = stacked_game(client, ["3C", "4C", "5C", "6C", "7C", "9C", "10C"], "5H", ["KH"])
    game_id, tokens = created["id"], tokens_of(created)
    drawn = post(client, game_id, tokens[1], {"type": "draw"}).get_json()
    assert [e["type"] for e in drawn["events"]] == ["CardDrawn"] and "KH" not in json.dumps(drawn["events"])
    assert drawn["state"]["you"]["drawn"] == "KH"
    assert drawn["state"]["you"]["legal"] == [{"type": "play", "cards": ["KH"]}, {"type": "pass"}]
    other = client.get(f"/v1/games/{game_id}", headers=auth(tokens[2])).get_json()
    assert other["you"]["drawn"] is None and other["table"]["drawn_by"] == 1
    assert_problem(post(client, game_id, tokens[1], {"type": "play", "cards": ["3C"]}), 422, "must_play_drawn_card")
    passed = post(client, game_id, tokens[1], {"type": "pass"}).get_json()
    assert passed["state"]["to_act"] == [2] and "KH" in passed["state"]["you"]["hand"]


# ---------------------------------------------------------------- a whole game


def scripted(view: dict[str, Any], turn: int) -> dict[str, Any]:
    """A plain human: answer a pending draw with its first option; else play a non-J card; else a J; else draw.

    Every third turn it draws instead, and keeps a drawn card every other time, so that every
    action type is sent.
    """
    legal: list[dict[str, Any]] = view["you"]["legal"]
    plays = [a for a in legal if a["type"] == "play"]
    if view["you"]["drawn"] is not None:
        return plays[0] if turn % 2 else {"type": "pass"}
    if legal[0]["type"] == "choose_suit":
        return legal[turn % 4]
    if turn % 3 == 2 and not view["table"]["pending_draw"]:
        return {"type": "draw"}
    plain = [a for a in plays if "suit" not in a]
    return (plain or plays or [{"type": "draw"}])[0]


def test_whole_game_scripted_human_and_greedy_bots(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: Any
) -> None:
    transcript = Transcript()
    created = create(client, HUMAN_AND_BOTS, seed="whole-switch", options={"target": 100})
    game_id, token = created["id"], tokens_of(created)[0]
    service = app.extensions["games"]
    sent: Counter[str] = Counter()
    for turn in range(3000):
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        if loaded.snap.finished:
            break
        assert loaded.snap.to_act() == (0,), "only the human can be waited for"
        view = transcript.add(client.get(f"/v1/games/{game_id}", headers=auth(token)))
        assert view["you"]["legal"] == engine.legal_actions(loaded.snap, 0)
        assert Counter(view["you"]["hand"]) == Counter(loaded.snap.state.hands[0])
        assert not {"hands", "stock"} & set(view["table"])
        action = scripted(view, turn)
        response = client.post(
            f"/v1/games/{game_id}/actions", json={**action, "expected_version": view["version"]}, headers=auth(token)
        )
        assert response.status_code == 200, (action, response.get_data(as_text=True))
        result = transcript.add(response)
        check_chain(result["events"], loaded.last_hash, loaded.version + 1)
        sent[action["type"]] += 1
    else:
        raise AssertionError("the game did not end")
    assert {"play", "draw", "pass"} <= set(sent), sent

    final = transcript.add(client.get(f"/v1/games/{game_id}", headers=auth(token)))
    assert final["status"] == "finished" and final["actions"] == [] and final["to_act"] == []
    totals = final["result"]["totals"]
    assert max(totals) >= 100
    assert final["result"]["winners"] == [seat for seat, total in enumerate(totals) if total == min(totals)]
    assert [seat["score"] for seat in final["seats"]] == totals
    events = all_events(client, game_id)
    check_chain(events, created["seed_commitment"])
    types = [e["type"] for e in events]
    assert types[-2:] == ["GameEnded", "SeedRevealed"] and {e["actor"] for e in events} >= {0, 1, 2, 3}
    audit = client.get(f"/v1/games/{game_id}/audit").get_json()
    assert audit["chain_ok"] and audit["replay_ok"] and audit["first_bad_seq"] is None, audit
    replay = client.get(f"/v1/games/{game_id}/replay").get_json()
    assert len(replay["table"]["hands"]) == 4, "a finished game's replay shows every hand"
    before = stream_entries(fake_redis, game_id)
    assert_problem(post(client, game_id, token, {"type": "draw"}), 422, "game_finished", rule="S-11")
    assert_unchanged(client, fake_redis, game_id, before)
