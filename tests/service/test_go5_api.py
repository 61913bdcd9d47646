"""Go5 through the HTTP API on fakeredis: catalog, creation, refusals as problems, Go5 calls by people
and bots (and their race with the next draw), and whole games with a scripted person and greedy bots."""

from __future__ import annotations

import threading
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from domain.shuffle import shuffle
from tests.conftest import RecordingDispatcher, auth
from tests.json_walk import strings_in
from tests.service.helpers import Transcript, all_events, assert_problem, assert_unchanged, check_chain, stream_entries
from tests.unit.go5_helpers import CANONICAL, JUNK, N3, NUMBER_CARDS, build_deck, claim_table, expected_deal, ordered

HUMANS = [{"kind": "human", "name": name} for name in ("Ana", "Ben", "Cem")]
NUMBERS = set(NUMBER_CARDS)


def create(client: FlaskClient, seats: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/games", json={"game": "go5", "seats": seats, **extra})
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def tokens_of(created: dict[str, Any]) -> dict[int, str]:
    return {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}


def post(client: FlaskClient, game_id: str, token: str, body: dict[str, Any]) -> Any:
    return client.post(f"/v1/games/{game_id}/actions", json=body, headers=auth(token))


def view_of(client: FlaskClient, game_id: str, token: str | None = None) -> dict[str, Any]:
    response = client.get(f"/v1/games/{game_id}", headers=auth(token) if token else {})
    assert response.status_code == 200, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def hidden_from(app: flask.Flask, game_id: str, viewer: int | None) -> set[str]:
    """Number cards `viewer` may not see now: other hands and the stock (C-6)."""
    snap = app.extensions["games"].repository.load(game_id).snap
    table = snap.game.full_view(snap.state)["table"]
    hidden = set(table["stock"])
    for seat, hand in enumerate(table["hands"]):
        if seat != viewer:
            hidden |= set(hand)
    return hidden & NUMBERS


def claim_game(client: FlaskClient, last: str) -> tuple[dict[str, Any], dict[int, str]]:
    """The claim_table scenario (go5_helpers) played through the API by three people."""
    table = claim_table(last)
    created = create(client, HUMANS, decks=[list(table.config.decks[0])], seed="claims")
    tokens = tokens_of(created)
    for event in table.events:
        action = event.to_action()
        if action is not None:
            response = post(client, created["id"], tokens[int(event.actor)], action)
            assert response.status_code == 200, (action, response.get_json())
    return created, tokens


# ---------------------------------------------------------------- catalog and creation


def test_catalog_lists_go5(client: FlaskClient) -> None:
    games = {game["id"]: game for game in client.get("/v1/catalog").get_json()["games"]}
    go5 = games["go5"]
    assert go5["name"] == "Go5" and go5["players"] == {"min": 2, "max": 4}
    assert set(go5["actions"]) == {"draw", "meld", "lay_off", "swap", "stop", "discard", "go5"}
    options = {option["name"]: option for option in go5["options"]}
    assert options["pattern_values"]["default"] == [1, 2, 3, 4, 5, 6, 7]
    assert (options["joker_value"]["default"], options["joker_value"]["maximum"]) == (-10, 0)
    assert (options["target"]["default"], options["target"]["minimum"]) == (500, 1)
    assert {"random", "greedy"} <= set(go5["bot_levels"])


def test_create_go5_and_the_views(client: FlaskClient, app: flask.Flask) -> None:
    """C-6: own hand, every player's sets, stop cards and hand sizes, the top discard, whose turn."""
    created = create(client, [HUMANS[0], {"kind": "bot"}, {"kind": "bot", "level": "random"}], options={"target": 50})
    game_id, token = created["id"], created["seats"][0]["token"]
    assert created["game"] == "go5" and created["stacked"] is False
    own = view_of(client, game_id, token)
    assert own["game"] == "go5" and own["round"] == 1 and own["table"]["target"] == 50
    assert len(own["you"]["hand"]) == 7 and own["you"]["go5"] == [] and "stops" in own["you"]
    players = own["table"]["players"]
    assert [p["seat"] for p in players] == [0, 1, 2] and all(p["sets"] == [] for p in players)
    assert own["table"]["discard_top"] in NUMBERS and own["table"]["turn"] == 1
    assert not strings_in(own) & hidden_from(app, game_id, 0)
    spectator = view_of(client, game_id)
    assert "you" not in spectator and spectator["actions"] == []
    assert not strings_in(spectator) & hidden_from(app, game_id, None)
    assert "stock" not in spectator["table"] and "hands" not in spectator["table"]


def test_bad_go5_setups_are_refused(client: FlaskClient) -> None:
    too_many = client.post("/v1/games", json={"game": "go5", "seats": HUMANS + HUMANS})
    assert_problem(too_many, 422, "bad_player_count", rule="V-5")
    option = client.post("/v1/games", json={"game": "go5", "seats": HUMANS, "options": {"pattern_values": [1, 2]}})
    assert_problem(option, 400, "invalid_option", rule=False)
    deck = build_deck(3)
    deck[-1] = "JK"
    unknown = client.post("/v1/games", json={"game": "go5", "seats": HUMANS, "decks": [deck]})
    assert_problem(unknown, 400, "unknown_card")


# ---------------------------------------------------------------- refusals


def test_refusals_are_422_problems_with_the_rule(client: FlaskClient, fake_redis: Any) -> None:
    """Every rule refusal is a 422 problem naming its rule; an unknown card is a 400; nothing is written."""
    deck = build_deck(3, {1: [*N3[:3], *JUNK[:4]], 2: [N3[4], *JUNK[4:10]]})
    created = create(client, HUMANS, decks=[deck], seed="refusals")
    game_id, tokens = created["id"], tokens_of(created)
    before = stream_entries(fake_redis, game_id)
    cases: list[tuple[int, dict[str, Any], str, str]] = [
        (0, {"type": "draw", "from": "stock"}, "not_your_turn", "C-2"),
        (1, {"type": "discard", "card": JUNK[0]}, "draw_first", "V-7"),
        (1, {"type": "stop"}, "draw_first", "V-10"),
        (2, {"type": "go5", "set": 1}, "no_go5_window", "V-13"),
    ]
    for seat, body, code, rule in cases:
        assert_problem(post(client, game_id, tokens[seat], body), 422, code, rule=rule)
    assert_unchanged(client, fake_redis, game_id, before)
    assert post(client, game_id, tokens[1], {"type": "draw", "from": "stock"}).status_code == 200
    cases = [
        (1, {"type": "draw", "from": "discard"}, "already_drawn", "V-7"),
        (1, {"type": "meld", "cards": [N3[0], N3[1], JUNK[0]]}, "no_common_feature", "V-9"),
        (1, {"type": "meld", "cards": N3[:3], "by": "colour"}, "wrong_feature", "V-9"),
        (1, {"type": "meld", "cards": N3[:2]}, "wrong_set_size", "V-8"),
        (1, {"type": "lay_off", "set": 4, "card": N3[0]}, "unknown_set", "V-8"),
        (1, {"type": "stop"}, "no_stop_card", "V-10"),
        (1, {"type": "discard", "card": "stop"}, "stop_never_in_hand", "V-6"),
        (1, {"type": "discard", "card": N3[5]}, "card_not_in_hand", "V-11"),
    ]
    before = stream_entries(fake_redis, game_id)
    for seat, body, code, rule in cases:
        assert_problem(post(client, game_id, tokens[seat], body), 422, code, rule=rule)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"type": "discard", "card": "3-waves-red"}, "unknown_card"),
        ({"type": "meld", "cards": ["JK", N3[0], N3[1]]}, "unknown_card"),
        ({"type": "draw", "from": "hand"}, "invalid_request"),
        ({"type": "swap", "from_seat": 0, "set": 1, "take": N3[0], "give": N3[1], "then": {}}, "invalid_request"),
        ({"type": "go5"}, "invalid_request"),
        ({"type": "meld", "cards": N3[:3], "set": 1}, "invalid_request"),
    ]
    for body, code in bad:
        assert_problem(post(client, game_id, tokens[1], body), 400, code, rule=False)
    assert_unchanged(client, fake_redis, game_id, before)


# ---------------------------------------------------------------- Go5 calls


def test_a_person_calls_go5_out_of_turn(client: FlaskClient) -> None:
    """V-13: after seat 2's discard, seat 1 (whose turn it is not) sees its claim and calls Go5."""
    created, tokens = claim_game(client, N3[5])
    game_id = created["id"]
    caller = view_of(client, game_id, tokens[1])
    assert caller["to_act"] == [1, 0] and caller["actions"] == ["go5"] and caller["you"]["go5"] == [1]
    assert view_of(client, game_id, tokens[0])["you"]["go5"] == []
    assert "you" not in view_of(client, game_id)
    response = post(client, game_id, tokens[1], {"type": "go5", "set": 1})
    assert response.status_code == 200, response.get_json()
    types = [e["type"] for e in response.get_json()["events"]]
    assert types[:3] == ["Go5Called", "RoundScored", "RoundStarted"]
    assert response.get_json()["state"]["round"] == 2


def test_the_first_valid_call_wins_later_ones_get_422(client: FlaskClient) -> None:
    """V-13: 3-zigzag-black completes the sets of seats 0 and 1; seat 0 calls first."""
    created, tokens = claim_game(client, N3[4])
    game_id = created["id"]
    assert view_of(client, game_id)["to_act"] == [0, 1]
    assert post(client, game_id, tokens[0], {"type": "go5", "set": 2}).status_code == 200
    assert_problem(post(client, game_id, tokens[1], {"type": "go5", "set": 1}), 422, "no_go5_window", rule="V-13")


@pytest.mark.parametrize("first", ["call", "draw"])
def test_a_call_and_the_next_draw_one_after_the_other(client: FlaskClient, first: str) -> None:
    """V-13: whichever comes first wins; the other is a 422 with its rule."""
    created, tokens = claim_game(client, N3[5])
    game_id = created["id"]
    call: tuple[int, dict[str, Any]] = (1, {"type": "go5", "set": 1})
    draw: tuple[int, dict[str, Any]] = (0, {"type": "draw", "from": "stock"})
    winner, loser = (call, draw) if first == "call" else (draw, call)
    assert post(client, game_id, tokens[winner[0]], winner[1]).status_code == 200
    refused = post(client, game_id, tokens[loser[0]], loser[1])
    if first == "call":  # round 2: dealer 1, seat 2 starts
        assert_problem(refused, 422, "not_your_turn", rule="C-2")
    else:
        assert_problem(refused, 422, "no_go5_window", rule="V-13")


def test_a_call_racing_the_next_draw_exactly_one_wins(client: FlaskClient) -> None:
    """V-13 / API.md: both sent at the same version at the same time: one 200, one 409."""
    created, tokens = claim_game(client, N3[5])
    game_id = created["id"]
    version = view_of(client, game_id)["version"]
    barrier = threading.Barrier(2)
    results: dict[str, int] = {}

    def send(name: str, seat: int, body: dict[str, Any]) -> None:
        barrier.wait()
        response = post(client, game_id, tokens[seat], {**body, "expected_version": version})
        results[name] = response.status_code

    threads = [
        threading.Thread(target=send, args=("call", 1, {"type": "go5", "set": 1})),
        threading.Thread(target=send, args=("draw", 0, {"type": "draw", "from": "stock"})),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results.values()) == [200, 409], results
    events = client.get(f"/v1/games/{game_id}/events?after={version}").get_json()["events"]
    winner = "call" if results["call"] == 200 else "draw"
    assert events[0]["type"] == ("Go5Called" if winner == "call" else "CardsDrawn")
    check_chain(events, all_events(client, game_id)[version - 1]["hash"], version + 1)


def play_people(
    client: FlaskClient,
    dispatcher: RecordingDispatcher,
    game_id: str,
    tokens: dict[int, str],
    stop_when: Any,
    limit: int = 300,
) -> dict[str, Any]:
    """People draw from the stock and discard their first card that is no 3; bots play by the queue."""
    for _ in range(limit):
        dispatcher.drain()
        view = view_of(client, game_id)
        if stop_when(view):
            return view
        seat = view["table"]["turn"]
        assert seat in tokens, view["to_act"]
        own = view_of(client, game_id, tokens[seat])
        if own["phase"] == "draw":
            body: dict[str, Any] = {"type": "draw", "from": "stock"}
        else:
            body = {"type": "discard", "card": next(c for c in own["you"]["hand"] if not c.startswith("3-"))}
        assert post(client, game_id, tokens[seat], body).status_code == 200
    raise AssertionError("the position was not reached")


def four_set_of(view: dict[str, Any], seat: int) -> bool:
    return any(len(s["cards"]) == 4 for s in view["table"]["players"][seat]["sets"])


def test_a_bot_with_a_claim_calls_go5_at_once(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    """V-13: the greedy bot at seat 1 builds a 4-set of 3s; when seat 2 discards a 3, the queue makes the
    bot call at once, before seat 0 (a person, next to draw) can draw."""
    deck = build_deck(3, {1: [*N3[:4], *JUNK[:3]], 2: [N3[4], N3[5], *JUNK[3:8]], 0: [N3[6], *JUNK[8:14]]})
    seats = [HUMANS[0], {"kind": "bot", "level": "greedy"}, HUMANS[2]]
    created = create(client, seats, decks=[deck], seed="bot-claims")
    game_id, tokens = created["id"], tokens_of(created)
    play_people(client, dispatcher, game_id, tokens, lambda v: four_set_of(v, 1) and v["table"]["turn"] == 2)
    assert post(client, game_id, tokens[2], {"type": "draw", "from": "stock"}).status_code == 200
    discarded = post(client, game_id, tokens[2], {"type": "discard", "card": N3[5]})
    version = discarded.get_json()["version"]
    assert discarded.get_json()["state"]["to_act"] == [1, 0]
    assert (game_id, version) in dispatcher.jobs, "the discard must queue the bot's claim"
    dispatcher.drain()
    events = client.get(f"/v1/games/{game_id}/events?after={version}").get_json()["events"]
    assert (events[0]["type"], events[0]["actor"], events[0]["data"]["card"]) == ("Go5Called", 1, N3[5])


@pytest.mark.parametrize("person_first", [True, False])
def test_a_persons_claim_lasts_until_the_bot_after_them_draws(
    client: FlaskClient, dispatcher: RecordingDispatcher, person_first: bool
) -> None:
    """V-13: seat 1 (a person) may call until seat 0 (a greedy bot, next to draw) draws; the bot's job is
    queued at the discard and draws when it runs."""
    deck = build_deck(3, {1: [*N3[:4], *JUNK[:3]], 2: [N3[4], N3[5], N3[6], *JUNK[3:7]], 0: JUNK[7:14]})
    seats = [{"kind": "bot", "level": "greedy"}, HUMANS[1], HUMANS[2]]
    created = create(client, seats, decks=[deck], seed="person-claims")
    game_id, tokens = created["id"], tokens_of(created)
    plays: list[tuple[dict[str, Any], str]] = [
        ({"type": "meld", "cards": N3[:3]}, JUNK[0]),
        ({"type": "lay_off", "set": 1, "card": N3[3]}, JUNK[1]),
    ]
    for play, junk in plays:
        play_people(client, dispatcher, game_id, tokens, lambda v: v["table"]["turn"] == 1 and v["phase"] == "draw")
        for body in ({"type": "draw", "from": "stock"}, play, {"type": "discard", "card": junk}):
            assert post(client, game_id, tokens[1], body).status_code == 200, body
    play_people(client, dispatcher, game_id, tokens, lambda v: v["table"]["turn"] == 2 and v["phase"] == "draw")
    assert post(client, game_id, tokens[2], {"type": "draw", "from": "stock"}).status_code == 200
    discarded = post(client, game_id, tokens[2], {"type": "discard", "card": N3[5]}).get_json()
    assert discarded["state"]["to_act"] == [1, 0] and (game_id, discarded["version"]) in dispatcher.jobs
    if person_first:
        assert post(client, game_id, tokens[1], {"type": "go5", "set": 1}).status_code == 200
        dispatcher.drain()
        assert view_of(client, game_id)["round"] == 2
    else:
        dispatcher.drain()  # the bot draws (and plays its turn on: it may discard again)
        after = client.get(f"/v1/games/{game_id}/events?after={discarded['version']}").get_json()["events"]
        assert (after[0]["type"], after[0]["actor"]) == ("CardsDrawn", 0)
        refused = post(client, game_id, tokens[1], {"type": "go5", "set": 1})
        assert_problem(refused, 422, ("no_go5_window", "does_not_complete"), rule="V-13")
        assert "Go5Called" not in [e["type"] for e in after]


# ---------------------------------------------------------------- whole games


def scripted(legal: list[dict[str, Any]], turn_no: int) -> dict[str, Any]:
    """A person who calls Go5, draws from the discard every third turn, plays the first play, plays a
    stop every other turn, and discards the first card."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in legal:
        by_type.setdefault(action["type"], []).append(action)
    if "go5" in by_type:
        return by_type["go5"][0]
    if "draw" in by_type:
        draws = by_type["draw"]
        return draws[-1] if turn_no % 3 == 2 else draws[0]
    for kind in ("meld", "lay_off", "swap"):
        if kind in by_type:
            return by_type[kind][0]
    if "stop" in by_type and turn_no % 2:
        return by_type["stop"][0]
    return by_type["discard"][0]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_game_with_a_scripted_person_and_greedy_bots(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, players: int
) -> None:
    seats = [HUMANS[0]] + [{"kind": "bot", "level": "greedy"} for _ in range(players - 1)]
    transcript = Transcript()
    created = create(client, seats, options={"target": 40}, seed=f"whole-{players}")
    game_id, token = created["id"], created["seats"][0]["token"]
    service = app.extensions["games"]
    sent: dict[str, int] = {}
    for turn_no in range(2000):
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        if loaded.snap.finished:
            break
        assert 0 in loaded.snap.to_act(), "only the person can be waited for"
        view = transcript.add(client.get(f"/v1/games/{game_id}", headers=auth(token)))
        legal = engine.legal_actions(loaded.snap, 0)
        assert set(view["actions"]) == {a["type"] for a in legal}
        assert not strings_in(view) & hidden_from(app, game_id, 0)
        action = scripted(legal, turn_no)
        response = post(client, game_id, token, {**action, "expected_version": loaded.version})
        assert response.status_code == 200, (action, response.get_json())
        result = transcript.add(response)
        check_chain(result["events"], loaded.last_hash, loaded.version + 1)
        assert not strings_in(result["state"]) & hidden_from(app, game_id, 0)
        sent[action["type"]] = sent.get(action["type"], 0) + 1
    else:
        raise AssertionError("the game did not end")
    assert {"draw", "discard"} <= set(sent), sent
    final = view_of(client, game_id)
    assert final["status"] == "finished" and final["to_act"] == [] and final["actions"] == []
    totals = final["result"]["totals"]
    assert max(totals) >= 40 and final["result"]["winners"] == [s for s, t in enumerate(totals) if t == max(totals)]
    assert [seat["score"] for seat in final["seats"]] == totals
    events = all_events(client, game_id)
    check_chain(events, created["seed_commitment"])
    assert [e["type"] for e in events][-2:] == ["GameEnded", "SeedRevealed"]
    assert {e["actor"] for e in events} >= set(range(players)) | {"system"}
    audit = client.get(f"/v1/games/{game_id}/audit").get_json()
    assert audit["chain_ok"] and audit["replay_ok"], audit


# ---------------------------------------------------------------- every round's deal, from the record


def check_go5_deal(client: FlaskClient, game_id: str, record: dict[str, Any]) -> int:
    """V-5 / V-6 / C-4 after every RoundStarted of a finished game: hands, stop cards laid out, the start
    card and the stock are the round's deck (stacked, or the C-4 shuffle of the revealed seed) dealt.
    Returns the number of rounds checked. (Signature of test_history_api.DEAL_CHECKERS.)"""
    players = len(record["seats"])
    rounds = 0
    for event in record["events"]:
        if event["type"] != "RoundStarted":
            continue
        rounds += 1
        number, dealer = event["data"]["round"], event["data"]["dealer"]
        assert number == rounds and dealer == (number - 1) % players, "C-2: the dealer rotates"
        decks = record.get("decks") or []
        deck = (
            decks[number - 1] if number <= len(decks) else list(shuffle(CANONICAL, record["seed"], f"round/{number}"))
        )
        hands, stops, start, stock = expected_deal(deck, players, dealer)
        table = client.get(f"/v1/games/{game_id}/replay?at={event['seq']}").get_json()["table"]
        assert table["hands"] == [ordered(hand) for hand in hands], f"round {number}"
        assert [p["stops"] for p in table["players"]] == stops, f"round {number}"
        assert (table["discard"], table["stock"]) == ([start], stock), f"round {number}"
    return rounds


@pytest.mark.parametrize("stacked", [False, True])
def test_every_rounds_deal_is_the_seeded_shuffle(
    client: FlaskClient, dispatcher: RecordingDispatcher, stacked: bool
) -> None:
    """C-4 / C-5: a finished bots-only game re-deals from its record, round by round."""
    decks = [list(reversed(CANONICAL))] if stacked else []
    bots = [{"kind": "bot", "level": level} for level in ("greedy", "random", "greedy")]
    created = create(client, bots, options={"target": 60}, decks=decks, seed="deal-check")
    dispatcher.drain()
    record = client.get(f"/v1/games/{created['id']}/record").get_json()
    assert record["events"][-1]["type"] == "SeedRevealed"
    rounds = check_go5_deal(client, created["id"], record)
    assert rounds == sum(e["type"] == "RoundScored" for e in record["events"]) >= 1
