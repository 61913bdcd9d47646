"""Rommé through the HTTP API on fakeredis: the rules by id on stacked decks (C-5), every refusal
a 422 problem with its code and rule, the views (C-6), bots through the dispatcher, and the record
of a finished game passing the audit."""

from __future__ import annotations

from collections import Counter
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from domain import romme_melds as rm
from tests.conftest import RecordingDispatcher, auth
from tests.json_walk import strings_in
from tests.service.helpers import all_events, assert_problem, check_chain
from tests.unit.romme_helpers import DECK, build_deck, run_hand

JUNK0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "6H", "8H", "10H", "7D", "QD", "4D"]
JUNK1 = ["2S", "4S", "6S", "8S", "10S", "AH", "3H", "5H", "7H", "9H", "JH", "3C", "5C", "7C", "9C"]
SEVENS0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "6H", "8H", "10H", "7D", "7C", "4D"]
OUT_RUNS = run_hand("AH 2H 3H", "4D 5D 6D", "7C 8C 9C", "10C JC QC", "JS QS KS")
OUT_MELDS = [OUT_RUNS[i : i + 3] for i in range(0, 15, 3)]
OUT_POINTS = 210
TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]
CUT = 60


class Game:
    """One Rommé game driven over HTTP."""

    def __init__(self, client: FlaskClient, created: dict[str, Any]) -> None:
        self.client = client
        self.id = created["id"]
        self.created = created
        self.tokens = {s["seat"]: s["token"] for s in created["seats"] if "token" in s}

    def post(self, seat: int, body: dict[str, Any]) -> Any:
        return self.client.post(f"/v1/games/{self.id}/actions", json=body, headers=auth(self.tokens[seat]))

    def act(self, seat: int, body: dict[str, Any]) -> dict[str, Any]:
        response = self.post(seat, body)
        assert response.status_code == 200, response.get_data(as_text=True)
        answer: dict[str, Any] = response.get_json()
        return answer

    def refused(
        self, seat: int, body: dict[str, Any], status: int, code: str, rule: str | bool | None
    ) -> dict[str, Any]:
        before = self.view(None)["version"]
        body_out = assert_problem(self.post(seat, body), status, code, rule=rule)
        assert self.view(None)["version"] == before, "a refused action changes nothing"
        return body_out

    def view(self, seat: int | None) -> dict[str, Any]:
        headers = auth(self.tokens[seat]) if seat is not None else {}
        response = self.client.get(f"/v1/games/{self.id}", headers=headers)
        assert response.status_code == 200
        view: dict[str, Any] = response.get_json()
        return view

    def events(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = all_events(self.client, self.id)
        return events

    def hand(self, seat: int) -> list[str]:
        hand: list[str] = self.view(seat)["you"]["hand"]
        return hand

    def draw_and_discard_drawn(self, seat: int) -> str:
        before = Counter(self.hand(seat))
        drawn_state = self.act(seat, {"type": "draw"})["state"]
        (drawn,) = list((Counter(drawn_state["you"]["hand"]) - before).elements())
        self.act(seat, {"type": "discard", "card": drawn})
        return drawn


def new_game(
    client: FlaskClient,
    hands: dict[int, list[str]] | None = None,
    stock: list[str] | None = None,
    *,
    players: int = 2,
    seats: list[dict[str, Any]] | None = None,
    options: dict[str, Any] | None = None,
    cut: int | None = CUT,
    grab: list[str] | None = None,
    stock_bottom: list[str] | None = None,
) -> Game:
    """A game with a stacked first deck (dealer seat 0); cut at once unless `cut` is None."""
    deck = build_deck(players, hands, stock or [], cut=cut or CUT, grab=grab or [], stock_bottom=stock_bottom or [])
    body = {"game": "romme", "seats": seats or TWO_HUMANS[:players], "decks": [deck], "options": options or {}}
    if players > 2 and seats is None:
        body["seats"] = [{"kind": "human"} for _ in range(players)]
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    game = Game(client, response.get_json())
    if cut is not None:
        game.act(players - 1, {"type": "cut", "position": cut})
    return game


# ---------------------------------------------------------------- catalog and creation


def test_the_catalog_lists_romme_with_its_options_and_actions(client: FlaskClient) -> None:
    games = {g["id"]: g for g in client.get("/v1/catalog").get_json()["games"]}
    romme = games["romme"]
    assert romme["players"] == {"min": 2, "max": 4}
    options = {o["name"]: o for o in romme["options"]}
    assert options["target"]["default"] == 1000
    assert options["hand_aus_doubles"]["default"] is False and options["strict_1000"]["default"] is False
    assert set(romme["actions"]) == {"cut", "draw", "take_discard", "meld", "lay_off", "swap_joker", "discard"}
    assert {"random", "greedy"} <= set(romme["bot_levels"])


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"seats": [{"kind": "human"}]}, 422, "bad_player_count"),
        ({"seats": [{"kind": "human"}] * 5}, 422, "bad_player_count"),
        ({"options": {"target": 0}}, 400, "invalid_option"),
        ({"options": {"strict_1000": "on"}}, 400, "invalid_option"),
        ({"decks": [["AS"] * 110]}, 400, "invalid_deck"),
    ],
)
def test_creation_refusals(client: FlaskClient, body: dict[str, Any], status: int, code: str) -> None:
    response = client.post("/v1/games", json={"game": "romme", "seats": TWO_HUMANS, **body})
    problem = assert_problem(response, status, code)
    if code == "bad_player_count":
        assert problem["rule"] == "R-1"


# ---------------------------------------------------------------- R-3 ... R-5 through the API


def test_r3_to_r5_the_cut_the_lucky_grab_and_the_deal(client: FlaskClient) -> None:
    game = new_game(client, players=3, cut=None, grab=["QS", "JK"])
    view = game.view(2)
    assert view["phase"] == "cut" and view["to_act"] == [2] and view["actions"] == ["cut"]
    assert view["stacked"] is True and view["you"]["hand"] == []
    assert game.view(0)["actions"] == [] and game.view(None)["table"]["cutter"] == 2
    game.refused(0, {"type": "cut", "position": CUT}, 422, "not_your_turn", "R-3")
    game.refused(2, {"type": "draw"}, 422, "cut_first", "R-3")
    game.refused(2, {"type": "cut", "position": 110}, 422, "invalid_cut_position", "R-3")
    game.refused(2, {"type": "cut", "position": "ten"}, 400, "invalid_request", None)
    answer = game.act(2, {"type": "cut", "position": CUT})
    assert [e["type"] for e in answer["events"]] == ["DeckCut", "LuckyGrab", "HandsDealt"]
    assert answer["events"][0]["data"] == {"position": CUT} and answer["events"][0]["actor"] == 2
    assert answer["events"][1]["data"] == {"seat": 2, "cards": ["QS", "JK"]}
    assert answer["events"][1]["actor"] == "system" and answer["events"][2]["data"] == {"stock_size": 65}
    table = answer["state"]["table"]
    assert table["cut"] == {"by": 2, "position": CUT, "grabbed": ["QS", "JK"]}
    assert table["hand_sizes"] == [15, 15, 15] and table["stock_size"] == 65 and table["discard"] == []
    assert answer["state"]["to_act"] == [1], "R-2: left of the dealer plays first"
    hand = Counter(answer["state"]["you"]["hand"])
    assert hand["QS"] >= 1 and hand["JK"] >= 1 and sum(hand.values()) == 15
    game.refused(2, {"type": "cut", "position": 5}, 422, "wrong_phase", "R-3")


# ---------------------------------------------------------------- refusals: codes and rules


def test_turn_order_and_the_draw_first(client: FlaskClient) -> None:
    game = new_game(client, {0: JUNK0, 1: JUNK1}, ["KD"])
    game.refused(0, {"type": "draw"}, 422, "not_your_turn", "C-2")
    game.refused(1, {"type": "discard", "card": "2S"}, 422, "must_draw_first", "R-6")
    game.refused(1, {"type": "meld", "kind": "run", "cards": ["AH", "2H", "3H"]}, 422, "must_draw_first", "R-6")
    take = {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7C", "7D"]}}
    game.refused(1, take, 422, "discard_pile_empty", "R-7")
    answer = game.act(1, {"type": "draw"})
    assert answer["events"][0]["type"] == "CardDrawn" and answer["events"][0]["data"] == {}
    assert "KD" in answer["state"]["you"]["hand"] and answer["state"]["table"]["drawn"] is True
    game.refused(1, {"type": "draw"}, 422, "already_drawn", "R-6")
    game.refused(1, {"type": "discard", "card": "KS"}, 422, "card_not_in_hand", "R-11")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"type": "discard", "card": "1S"}, 400, "unknown_card"),
        ({"type": "discard", "card": "jk"}, 400, "unknown_card"),
        ({"type": "meld", "kind": "set", "cards": ["7H", "7C", "X"]}, 400, "unknown_card"),
        ({"type": "meld", "kind": "pair", "cards": ["7H", "7C"]}, 400, "invalid_request"),
        ({"type": "meld", "kind": "set"}, 400, "invalid_request"),
        ({"type": "lay_off", "meld": "one", "card": "7H"}, 400, "invalid_request"),
        ({"type": "lay_off", "meld": 1, "card": "7H", "end": "middle"}, 400, "invalid_request"),
        ({"type": "take_discard", "meld": {"kind": "set", "cards": ["7H"], "x": 1}}, 400, "invalid_request"),
        ({"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "ZZ"]}}, 400, "unknown_card"),
        ({"type": "draw", "from": "stock"}, 400, "invalid_request"),
        ({"type": "fly"}, 400, "unknown_action"),
        ({"type": "discard"}, 400, "invalid_request"),
    ],
)
def test_malformed_actions_are_400(client: FlaskClient, body: dict[str, Any], status: int, code: str) -> None:
    game = new_game(client, {0: JUNK0, 1: JUNK1}, ["KD"])
    game.act(1, {"type": "draw"})
    game.refused(1, body, status, code, False)


def pile_of_three(client: FlaskClient) -> Game:
    """Seat 1 discards 5H, seat 0 KH, seat 1 7H: the pile is 5H KH 7H and seat 0 holds 7D 7C."""
    game = new_game(client, {0: SEVENS0, 1: JUNK1}, ["QD", "9D", "KD"])
    for seat, card in ((1, "5H"), (0, "KH"), (1, "7H")):
        game.act(seat, {"type": "draw"})
        game.act(seat, {"type": "discard", "card": card})
    return game


def test_r7_take_the_discard_pile_with_a_new_meld(client: FlaskClient) -> None:
    game = pile_of_three(client)
    view = game.view(0)
    assert view["table"]["discard"] == ["5H", "KH", "7H"] and view["table"]["discard_top"] == "7H"
    assert view["actions"] == ["draw", "take_discard"]
    take = {"type": "take_discard", "meld": {"kind": "set", "cards": ["7D", "7H", "7C"]}}
    answer = game.act(0, take)
    (event,) = answer["events"]
    assert event["type"] == "DiscardTaken" and event["actor"] == 0
    assert event["data"] == {"meld": 1, "kind": "set", "cards": ["7D", "7H", "7C"], "card": "7H", "merged": False}
    state = answer["state"]
    assert state["table"]["discard"] == [] and "5H" in state["you"]["hand"] and "KH" in state["you"]["hand"]
    assert "7D" not in state["you"]["hand"] and len(state["you"]["hand"]) == 15
    (meld,) = state["table"]["melds"]
    assert meld == {
        "id": 1,
        "seat": 0,
        "kind": "set",
        "cards": ["7D", "7H", "7C"],
        "stands_for": ["7D", "7H", "7C"],
        "jokers": [],
        "points": 15,
        "rank": "7",
    }


@pytest.mark.parametrize(
    ("cards", "kind", "code", "rule"),
    [
        (["7D", "7C", "7S"], "set", "top_card_not_in_meld", "R-7"),
        (["7H"], "set", "illegal_meld", "R-12"),
        (["7H", "7D", "7S"], "set", "card_not_in_hand", "R-7"),
        (["7D", "7H", "7C"], "run", "illegal_meld", "R-13"),
    ],
)
def test_r7_refusals_over_the_api(client: FlaskClient, cards: list[str], kind: str, code: str, rule: str) -> None:
    game = pile_of_three(client)
    game.refused(0, {"type": "take_discard", "meld": {"kind": kind, "cards": cards}}, 422, code, rule)


def meld_table(client: FlaskClient) -> Game:
    """Seat 1 lays run 1 (7H JK 9H), set 2 (QH QD JK) and run 3 (KS AS 2S); seat 0 lays set 4 (8S 8H 8D)."""
    hand1 = ["7H", "JK", "9H", "QH", "QD", "JK", "8H", "QC", "QS", "KS", "AS", "2S", "3S", "5C", "10C"]
    hand0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "QH", "8H", "10H", "8D", "7C", "4D"]
    game = new_game(client, {0: hand0, 1: hand1}, ["KD", "KC", "6D"])
    game.act(1, {"type": "draw"})
    for kind, cards in (("run", ["7H", "JK", "9H"]), ("set", ["QH", "QD", "JK"]), ("run", ["KS", "AS", "2S"])):
        game.act(1, {"type": "meld", "kind": kind, "cards": cards})
    game.act(1, {"type": "discard", "card": "KD"})
    game.act(0, {"type": "draw"})
    game.act(0, {"type": "meld", "kind": "set", "cards": ["8S", "8H", "8D"]})
    game.act(0, {"type": "discard", "card": "KC"})
    game.act(1, {"type": "draw"})
    return game


def test_melds_show_ids_order_and_what_each_joker_stands_for(client: FlaskClient) -> None:
    game = meld_table(client)
    melds = game.view(None)["table"]["melds"]
    assert [(m["id"], m["seat"], m["kind"]) for m in melds] == [
        (1, 1, "run"),
        (2, 1, "set"),
        (3, 1, "run"),
        (4, 0, "set"),
    ]
    assert melds[0]["jokers"] == [{"index": 1, "stands_for": "8H"}] and melds[0]["low"] == "7H"
    assert melds[1]["jokers"] == [{"index": 2, "stands_for": "Q"}] and melds[1]["rank"] == "Q"
    assert melds[2]["cards"] == ["KS", "AS", "2S"] and melds[2]["high"] == "2S"
    assert game.view(None)["table"]["meld_points"] == [15, 30 + 40 + 35]


def test_r9_r15_r16_lay_off_swap_and_their_refusals(client: FlaskClient) -> None:
    game = meld_table(client)
    game.refused(1, {"type": "lay_off", "meld": 4, "card": "8H"}, 422, "not_your_meld", "R-9")
    game.refused(1, {"type": "swap_joker", "meld": 4, "card": "8H"}, 422, "not_your_meld", "R-9")
    game.refused(1, {"type": "lay_off", "meld": 9, "card": "8H"}, 422, "unknown_meld", "R-9")
    game.refused(1, {"type": "lay_off", "meld": 3, "card": "3S", "end": "low"}, 422, "illegal_lay_off", "R-15")
    game.refused(1, {"type": "lay_off", "meld": 2, "card": "QC", "end": "low"}, 422, "illegal_lay_off", "R-15")
    game.refused(1, {"type": "swap_joker", "meld": 1, "card": "QC"}, 422, "illegal_swap", "R-16")
    game.refused(1, {"type": "swap_joker", "meld": 3, "card": "3S"}, 422, "no_joker_in_meld", "R-16")
    game.refused(1, {"type": "lay_off", "meld": 1, "card": "6H"}, 422, "card_not_in_hand", "R-15")
    answer = game.act(1, {"type": "lay_off", "meld": 3, "card": "3S", "end": "high"})
    assert answer["events"][0]["data"] == {"meld": 3, "card": "3S", "end": "high"}
    answer = game.act(1, {"type": "swap_joker", "meld": 1, "card": "8H"})
    assert answer["events"][0]["data"] == {"meld": 1, "card": "8H", "index": 1}
    table = answer["state"]["table"]
    assert table["out_of_game"] == ["JK"] and "JK" not in answer["state"]["you"]["hand"]
    assert table["melds"][0]["cards"] == ["7H", "8H", "9H"]
    answer = game.act(1, {"type": "swap_joker", "meld": 2, "card": "QS"})
    assert answer["state"]["table"]["melds"][1]["points"] == 120 and answer["state"]["table"]["out_of_game"] == [
        "JK",
        "JK",
    ]
    answer = game.act(1, {"type": "lay_off", "meld": 2, "card": "QC"})
    assert answer["events"][0]["data"]["end"] is None


def test_r12_a_second_set_of_a_rank_joins_the_first(client: FlaskClient) -> None:
    hand1 = ["7S", "7H", "7D", "7C", "7C", "JK", "QH", "QD", "QC", "2S", "4S", "6S", "8C", "10C", "KD"]
    game = new_game(client, {0: JUNK0, 1: hand1}, ["9D"])
    game.act(1, {"type": "draw"})
    game.act(1, {"type": "meld", "kind": "set", "cards": ["7S", "7H", "7D"]})
    answer = game.act(1, {"type": "meld", "kind": "set", "cards": ["7C", "7C", "JK"]})
    assert answer["events"][0]["data"]["merged"] is True and answer["events"][0]["data"]["meld"] == 1
    (sevens,) = answer["state"]["table"]["melds"]
    assert sevens["cards"] == ["7S", "7H", "7D", "7C", "7C", "JK"]
    game.refused(1, {"type": "meld", "kind": "set", "cards": ["QH", "QD", "KD"]}, 422, "illegal_meld", "R-12")
    game.refused(1, {"type": "meld", "kind": "run", "cards": ["6S", "4S", "2S"]}, 422, "illegal_meld", "R-13")


def test_r10_the_last_card_can_only_be_discarded(client: FlaskClient) -> None:
    game = new_game(client, {1: OUT_RUNS, 0: JUNK0}, ["KC"])
    game.act(1, {"type": "draw"})
    for cards in OUT_MELDS[:4]:
        game.act(1, {"type": "meld", "kind": "run", "cards": cards})
    game.act(1, {"type": "lay_off", "meld": 4, "card": "KC", "end": "high"})
    assert sorted(game.hand(1)) == sorted(["JS", "QS", "KS"])
    game.refused(1, {"type": "meld", "kind": "run", "cards": ["JS", "QS", "KS"]}, 422, "hand_would_be_empty", "R-10")


# ---------------------------------------------------------------- going out, scoring, the end


def test_r11_r19_going_out_face_down_scores_and_r22_ends_the_game(client: FlaskClient) -> None:
    hand0 = [*JUNK0[:-1], "QS"]
    game = new_game(client, {1: OUT_RUNS, 0: hand0}, ["2C"], options={"target": 200})
    game.act(1, {"type": "draw"})
    for cards in OUT_MELDS:
        game.act(1, {"type": "meld", "kind": "run", "cards": cards})
    answer = game.act(1, {"type": "discard", "card": "2C"})
    types = [e["type"] for e in answer["events"]]
    assert types == ["WentOut", "RoundScored", "GameEnded", "SeedRevealed"]
    assert answer["events"][0]["data"] == {} and answer["events"][0]["actor"] == 1
    scored = answer["events"][1]["data"]
    assert scored["winner"] == 1 and scored["meld_points"] == [0, OUT_POINTS]
    assert scored["hand_points"] == [rm.points(hand0), 0] and scored["scores"] == [-rm.points(hand0), OUT_POINTS]
    state = answer["state"]
    assert state["status"] == "finished" and state["result"] == {"totals": scored["scores"], "winners": [1]}
    assert [s["score"] for s in state["seats"]] == scored["scores"]
    assert state["table"]["face_down"] == 1 and state["table"]["went_out"] == 1
    game.refused(0, {"type": "draw"}, 422, "game_finished", "R-22")
    record = client.get(f"/v1/games/{game.id}/record").get_json()
    assert record["seed"] and record["events"][-1]["type"] == "SeedRevealed"
    audit = client.get(f"/v1/games/{game.id}/audit").get_json()
    assert audit["chain_ok"] and audit["replay_ok"], audit
    at_out = next(e["seq"] for e in record["events"] if e["type"] == "WentOut")
    full = client.get(f"/v1/games/{game.id}/replay?at={at_out}").get_json()
    assert full["table"]["face_down"] == ["2C"], "the face-down card shows once the game is over"


def test_r20_hand_aus_doubles_over_the_api(client: FlaskClient) -> None:
    game = new_game(client, {1: OUT_RUNS, 0: JUNK0}, ["2C"], options={"hand_aus_doubles": True})
    game.act(1, {"type": "draw"})
    for cards in OUT_MELDS:
        game.act(1, {"type": "meld", "kind": "run", "cards": cards})
    answer = game.act(1, {"type": "discard"})  # the last card needs no name
    scored = next(e["data"] for e in answer["events"] if e["type"] == "RoundScored")
    assert scored["doubled"] is True and scored["scores"] == [-2 * rm.points(JUNK0), 2 * OUT_POINTS]
    assert answer["state"]["phase"] == "cut" and answer["state"]["round"] == 2
    assert answer["state"]["table"]["round_scores"] == [scored["scores"]]
    assert answer["state"]["table"]["last_round"]["doubled"] is True


def test_r21_an_empty_stock_ends_the_round_with_no_winner(client: FlaskClient) -> None:
    game = new_game(client, {0: JUNK0, 1: JUNK1}, stock_bottom=["7D"])
    seat = 1
    for _ in range(79):
        game.draw_and_discard_drawn(seat)
        seat = 1 - seat
    game.act(0, {"type": "draw"})
    game.act(0, {"type": "discard", "card": "7D"})
    view = game.view(1)
    assert view["table"]["stock_size"] == 0 and view["actions"] == ["take_discard"]
    game.refused(1, {"type": "draw"}, 422, "stock_empty", "R-21")
    game.act(1, {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7D", "7C"]}})
    answer = game.act(1, {"type": "discard", "card": "9C"})
    scored = next(e for e in answer["events"] if e["type"] == "RoundScored")
    assert scored["actor"] == "system"
    assert scored["data"]["winner"] is None and scored["data"]["reason"] == "stock_empty"
    data = scored["data"]
    assert data["meld_points"] == [0, 15] and data["hand_points"][0] == rm.points(JUNK0)
    assert data["hand_points"][1] > rm.points(JUNK1), "the rest of the pile (79 cards) went to seat 1's hand"
    assert data["scores"] == [m - h for m, h in zip(data["meld_points"], data["hand_points"], strict=True)]
    assert answer["state"]["round"] == 2


# ---------------------------------------------------------------- views (C-6)


def test_no_view_shows_another_hand_or_the_stock(client: FlaskClient) -> None:
    """Two games that differ only in seat 1's hand and the stock show seat 0 and spectators the same."""
    first = new_game(client, {0: JUNK0, 1: JUNK1}, ["KD"])
    other1 = ["2D", "4C", "6C", "8C", "10D", "AD", "3D", "5D", "7D", "9D", "JD", "3S", "5H", "7S", "9S"]
    second = new_game(client, {0: JUNK0, 1: other1}, ["KD"])
    for viewer in (0, None):
        one, two = first.view(viewer), second.view(viewer)
        for view in (one, two):
            del view["id"]
        assert one == two
        assert "stock" not in one["table"] and "hands" not in one["table"]
    mine = first.view(1)
    assert sorted(mine["you"]["hand"]) == sorted(JUNK1) and mine["you"]["hand_points"] == rm.points(JUNK1)
    assert "you" not in first.view(None)
    draw = first.act(1, {"type": "draw"})
    assert draw["events"][0]["data"] == {}
    codes = set(DECK)
    for event in first.events():
        if event["type"] in ("RoundStarted", "HandsDealt", "CardDrawn"):
            assert not strings_in(event["data"]) & codes, event


# ---------------------------------------------------------------- bots through the dispatcher


def scripted_move(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A simple human: cut in the middle, draw, lay the first meld offered, else discard its first card."""
    types = {a["type"] for a in legal}
    if "cut" in types:
        return {"type": "cut", "position": 55}
    if "draw" in types:
        return {"type": "draw"}
    if "take_discard" in types:
        return next(a for a in legal if a["type"] == "take_discard")
    for wanted in ("meld", "lay_off"):
        for action in legal:
            if action["type"] == wanted:
                return action
    return {"type": "discard", "card": view["you"]["hand"][0]}


def test_a_human_against_greedy_and_random_bots_plays_to_the_end(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}]
    response = client.post(
        "/v1/games", json={"game": "romme", "seats": seats, "seed": "api-bots", "options": {"target": 200}}
    )
    assert response.status_code == 201
    game = Game(client, response.get_json())
    service = app.extensions["games"]
    for _ in range(3000):
        dispatcher.drain()
        loaded = service.repository.load(game.id)
        if loaded.snap.finished:
            break
        assert loaded.snap.to_act() == (0,), "only the human can be waited for"
        view = game.view(0)
        legal = engine.legal_actions(loaded.snap, 0)
        assert view["actions"] == sorted({a["type"] for a in legal})
        action = scripted_move(view, legal)
        game.act(0, {**action, "expected_version": view["version"]})
    else:
        raise AssertionError("the game did not end")
    view = game.view(0)
    assert view["status"] == "finished" and len(view["result"]["winners"]) == 1
    events = game.events()
    check_chain(events, game.created["seed_commitment"])
    assert {e["actor"] for e in events} >= {0, 1, 2, "system"}
    audit = client.get(f"/v1/games/{game.id}/audit").get_json()
    assert audit["chain_ok"] and audit["replay_ok"], audit
