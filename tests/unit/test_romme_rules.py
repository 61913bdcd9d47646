"""Rommé rules by id (R-1 ... R-23) on stacked decks (C-5), through domain.engine.

Unless a test says otherwise: two players, round 1, dealer seat 0, so seat 1 cuts
(right of the dealer) and plays first (left of the dealer). Hands are given in full
where the test depends on them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from domain import engine
from domain import romme_melds as rm
from domain.cards import canonical_deck
from domain.errors import InvalidInput, RuleViolation
from domain.romme import MELD_CAP, RommeState, all_cards
from domain.shuffle import shuffle
from tests.unit.romme_helpers import (
    DECK,
    Table,
    build_deck,
    deal_order,
    draw_and_discard_drawn,
    run_hand,
)

# Hands that hold no meld: no rank three times, no three cards in a row of one suit.
JUNK0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "6H", "8H", "10H", "7D", "QD", "4D"]
JUNK1 = ["2S", "4S", "6S", "8S", "10S", "AH", "3H", "5H", "7H", "9H", "JH", "3C", "5C", "7C", "9C"]
# Five runs of three: the first player melds them all after the draw and goes out.
OUT_RUNS = run_hand("AH 2H 3H", "4D 5D 6D", "7C 8C 9C", "10C JC QC", "JS QS KS")
OUT_MELDS = [OUT_RUNS[i : i + 3] for i in range(0, 15, 3)]
OUT_POINTS = 30 + 15 + 15 + 30 + 120  # A = 20, 2-9 = 5, 10 J Q K = 10, QS = 100


def state_of(table: Table) -> RommeState:
    state: RommeState = table.snap.state
    return state


def rehand(table: Table, seat: int, cards: list[str]) -> None:
    """Give `seat` exactly `cards`, trading with the stock so that every card stays in one place (R-17)."""
    state = state_of(table)
    pool = Counter(state.stock) + Counter(state.hands[seat])
    pool.subtract(cards)
    assert all(n >= 0 for n in pool.values()), "the stock and the hand do not hold these cards"
    stock = []
    for card in state.stock:
        if pool[card] > 0:
            stock.append(card)
            pool[card] -= 1
    stock += list(pool.elements())
    hands = list(state.hands)
    hands[seat] = rm.sort_cards(cards)
    table.with_state(stock=tuple(stock), hands=tuple(hands))
    assert all_cards(state_of(table)) == Counter(DECK)


def go_out(table: Table, seat: int, melds: list[list[str]]) -> None:
    """Draw, lay every meld, discard the last card."""
    table.draw(seat)
    for cards in melds:
        table.meld(seat, "run", cards)
    (last,) = table.hand(seat)
    table.discard(seat, last)


def quick_round(players: int = 2, options: dict[str, Any] | None = None, **extra: Any) -> Table:
    """Seat 1 (first to play) holds OUT_RUNS; everyone else a junk hand."""
    hands = {1: OUT_RUNS, 0: JUNK0}
    if players > 2:
        hands[2] = JUNK1
    return Table.dealt(players, hands, stock=["2C"], options=options, **extra)


# ---------------------------------------------------------------- R-1 players and cards


@pytest.mark.parametrize("players", [1, 5])
def test_r1_two_to_four_players(players: int) -> None:
    with pytest.raises(RuleViolation) as info:
        engine.make_config("romme", players, {}, "s")
    assert info.value.code == "bad_player_count" and info.value.rule == "R-1"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_r1_every_player_count_from_two_to_four_starts(players: int) -> None:
    table = Table(players)
    assert table.view(None)["phase"] == "cut"


def test_r1_the_deck_is_two_decks_and_six_jokers_in_c3_order() -> None:
    game = engine.get_game("romme")
    deck = game.canonical_deck(2, {})
    assert len(deck) == 110 and deck == tuple(canonical_deck(1)) * 2 + ("JK",) * 6
    assert deck[:3] == ("AS", "2S", "3S") and deck[51] == "KC" and deck[52] == "AS"


def test_r1_the_round_deck_is_the_c4_shuffle_of_the_110_cards() -> None:
    """C-4 test vector: seed `demo`, the first eight cards of the Rommé deck."""
    table = Table(2, seed="demo")
    assert state_of(table).deck[:8] == ("4S", "JK", "8C", "3D", "9S", "3C", "3D", "AC")
    assert state_of(table).deck == shuffle(DECK, "demo", "round/1")


def test_r1_a_stacked_deck_must_be_a_permutation_of_the_110_cards() -> None:
    deck = list(DECK)
    deck[-1] = "AS"  # one joker short, a third AS
    with pytest.raises(InvalidInput) as info:
        engine.make_config("romme", 2, {}, "s", [deck])
    assert info.value.code == "invalid_deck"
    with pytest.raises(InvalidInput) as info:
        engine.make_config("romme", 2, {}, "s", [list(DECK[:-1])])
    assert info.value.code == "invalid_deck"


# ---------------------------------------------------------------- R-2 dealer and first player


def test_r2_dealer_rotates_and_the_player_left_of_the_dealer_plays_first() -> None:
    table = quick_round(3, options={"target": 10_000})
    assert table.table["dealer"] == 0 and table.to_act == (1,)
    go_out(table, 1, OUT_MELDS)
    assert table.last("RoundStarted") == {"round": 2, "dealer": 1, "cutter": 0}
    assert table.to_act == (0,), "round 2: seat 0, right of dealer 1, cuts"
    table.cut(0, 50)
    assert table.table["dealer"] == 1 and table.table["turn"] == 2 and table.to_act == (2,)


# ---------------------------------------------------------------- R-3 the cut


def test_r3_the_player_right_of_the_dealer_cuts_and_nothing_else_can_happen_before() -> None:
    table = Table(3)
    assert table.view(None)["phase"] == "cut"
    assert table.to_act == (2,) and table.table["cutter"] == 2
    for seat in (0, 1):
        error = table.refused(seat, {"type": "cut", "position": 5}, RuleViolation)
        assert (error.code, error.rule) == ("not_your_turn", "R-3")
        assert table.legal(seat) == [] and table.view(seat)["actions"] == []
    for action in ({"type": "draw"}, {"type": "discard", "card": "AS"}, {"type": "meld", "kind": "set", "cards": []}):
        error = table.refused(2, action, RuleViolation)
        assert (error.code, error.rule) == ("cut_first", "R-3")
    assert table.view(2)["actions"] == ["cut"]
    assert table.legal(2) == [{"type": "cut", "position": p} for p in range(1, 110)]
    assert table.view(2)["you"]["hand"] == [], "nothing is dealt before the cut"


@pytest.mark.parametrize("position", [0, 110, -3, 500])
def test_r3_the_cut_position_is_from_1_to_109(position: int) -> None:
    table = Table(2)
    error = table.refused(1, {"type": "cut", "position": position}, RuleViolation)
    assert (error.code, error.rule) == ("invalid_cut_position", "R-3")


@pytest.mark.parametrize("position", [1, 2, 55, 108, 109])
def test_r3_every_position_from_1_to_109_cuts_and_deals(position: int) -> None:
    table = Table(2, seed="cut-me")
    events = table.cut(1, position)
    assert events[0].type_name() == "DeckCut" and events[0].data() == {"position": position}
    assert events[-1].type_name() == "HandsDealt"
    assert table.view(None)["phase"] == "play"
    assert table.table["cut"]["position"] == position and table.table["cut"]["by"] == 1
    assert all_cards(state_of(table)) == Counter(DECK)


def test_r3_the_cut_is_made_once() -> None:
    table = Table.dealt(2)
    error = table.refused(1, {"type": "cut", "position": 5}, RuleViolation)
    assert (error.code, error.rule) == ("wrong_phase", "R-3")


# ---------------------------------------------------------------- R-4 lucky grab


def test_r4_the_series_of_qs_and_jokers_at_the_cut_goes_to_the_cutter() -> None:
    table = Table.dealt(3, grab=["JK", "QS", "JK"], cut=40)
    grab = table.of_type("LuckyGrab")
    assert len(grab) == 1 and grab[0].data() == {"seat": 2, "cards": ["JK", "QS", "JK"]}
    assert grab[0].actor == "system"
    assert table.table["cut"] == {"by": 2, "position": 40, "grabbed": ["JK", "QS", "JK"]}
    hand = Counter(table.hand(2))
    assert hand["JK"] >= 2 and hand["QS"] >= 1 and len(table.hand(2)) == 15


def test_r4_the_first_other_card_ends_the_series_and_stays_in_the_packet() -> None:
    """Lifted packet ... 5H QS | lower: the QS is grabbed, the 5H above it stays and is dealt last."""
    deck = [c for c in DECK]
    deck.remove("QS")
    deck.remove("5H")
    deck.remove("JK")
    # positions 0..29 lifted: index 28 = 5H, index 29 = QS (the card at the cut); lower starts with JK
    deck = deck[:28] + ["5H", "QS"] + ["JK"] + deck[28:]
    table = Table(2, decks=[deck])
    table.cut(1, 30)
    assert table.last("LuckyGrab") == {"seat": 1, "cards": ["QS"]}
    stock = table.truth()["table"]["stock"]
    assert stock[-1] == "5H", "the card that ended the series is the bottom of the dealing stack"
    assert deck[30] == "JK" and table.truth()["table"]["hands"][1][-1] == "JK", "the lower packet's top is dealt"


def test_r4_no_grab_when_the_card_at_the_cut_is_another_card() -> None:
    deck = [c for c in DECK if c != "JK"] + ["JK"] * 6
    deck.remove("QS")
    deck.insert(0, "QS")  # QS on top of the deck, far from the cut
    table = Table(2, decks=[deck])
    table.cut(1, 50)
    assert table.of_type("LuckyGrab") == []
    assert table.table["cut"]["grabbed"] == []


def test_r4_a_cut_of_one_card_that_is_a_joker_grabs_it() -> None:
    deck = ["JK", *[c for c in DECK if c != "JK"], *["JK"] * 5]
    table = Table(2, decks=[deck])
    table.cut(1, 1)
    assert table.last("LuckyGrab") == {"seat": 1, "cards": ["JK"]}
    assert all(len(h) == 15 for h in table.truth()["table"]["hands"])


# ---------------------------------------------------------------- R-5 the deal


@pytest.mark.parametrize(("players", "stock"), [(2, 80), (3, 65), (4, 50)])
def test_r5_everyone_gets_15_and_the_rest_is_the_stock(players: int, stock: int) -> None:
    table = Table(players, seed=f"deal-{players}")
    table.cut((0 - 1) % players, 37)
    truth = table.truth()["table"]
    assert [len(h) for h in truth["hands"]] == [15] * players
    assert table.table["stock_size"] == stock and table.table["discard"] == [] and table.table["discard_top"] is None
    assert table.table["hand_sizes"] == [15] * players


def test_r5_the_dealing_stack_is_the_lower_packet_over_the_lifted_one_dealt_clockwise_from_left() -> None:
    deck = list(shuffle(DECK, "r5", "round/1"))
    p = next(p for p in range(40, 100) if deck[p - 1] not in ("QS", "JK"))
    table = Table(3, decks=[deck])
    table.cut(2, p)
    stack = deck[p:] + deck[:p]
    truth = table.truth()["table"]
    for seat in range(3):
        expected = [stack[i] for i in range(45) if (i + 1) % 3 == seat]  # seat 1 first, then 2, then 0
        assert Counter(truth["hands"][seat]) == Counter(expected), seat
    assert truth["stock"] == stack[45:]


def test_r5_the_deal_passes_over_a_hand_that_holds_15() -> None:
    """Three players, the cutter (seat 2) grabbed two cards: it is full after 13 rounds of dealing."""
    deck = build_deck(3, grab=["JK", "JK"], cut=44)
    table = Table(3, decks=[deck])
    table.cut(2, 44)
    order = deal_order(3, 0, [0, 0, 2])
    assert order[:3] == [1, 2, 0] and order.count(2) == 13 and order[-4:] == [1, 0, 1, 0]
    lifted, lower = deck[:44], deck[44:]
    stack = lower + lifted[:-2]
    truth = table.truth()["table"]
    for seat in range(3):
        dealt = [stack[i] for i, s in enumerate(order) if s == seat]
        extra = ["JK", "JK"] if seat == 2 else []
        assert Counter(truth["hands"][seat]) == Counter(dealt + extra)
    assert truth["stock"] == stack[len(order) :] and len(truth["stock"]) == 110 - 45


# ---------------------------------------------------------------- R-6 draw


def test_r6_draw_takes_the_top_of_the_stock_and_the_event_does_not_name_it() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1}, stock=["KD", "QD"])
    events = table.draw(1)
    assert [e.type_name() for e in events] == ["CardDrawn"] and events[0].data() == {}
    assert "KD" in table.hand(1) and len(table.hand(1)) == 16
    assert table.table["stock_size"] == 79 and table.table["drawn"] is True
    error = table.refused(1, {"type": "draw"}, RuleViolation)
    assert (error.code, error.rule) == ("already_drawn", "R-6")


@pytest.mark.parametrize(
    "action",
    [
        {"type": "meld", "kind": "run", "cards": ["AH", "2H", "3H"]},
        {"type": "lay_off", "meld": 1, "card": "AH"},
        {"type": "swap_joker", "meld": 1, "card": "AH"},
        {"type": "discard", "card": "AH"},
    ],
)
def test_r6_draw_comes_first(action: dict[str, Any]) -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1})
    error = table.refused(1, action, RuleViolation)
    assert (error.code, error.rule) == ("must_draw_first", "R-6")
    assert table.view(1)["actions"] == ["draw"], "the pile is empty at the start: only the draw"


def test_not_your_turn() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1})
    error = table.refused(0, {"type": "draw"}, RuleViolation)
    assert error.code == "not_your_turn"
    assert table.legal(0) == [] and table.view(0)["actions"] == []


# ---------------------------------------------------------------- taking the discard pile

HAND0_SEVENS = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "6H", "8H", "10H", "7D", "7C", "4D"]


def pile_of_three() -> Table:
    """Seat 1 discards 5H, seat 0 discards KH, seat 1 discards 7H: the pile is 5H KH 7H."""
    table = Table.dealt(2, {0: HAND0_SEVENS, 1: JUNK1}, stock=["QD", "9D", "KD"])
    table.draw(1)
    table.discard(1, "5H")
    table.draw(0)
    table.discard(0, "KH")
    table.draw(1)
    table.discard(1, "7H")
    assert table.table["discard"] == ["5H", "KH", "7H"] and table.table["discard_top"] == "7H"
    return table


def test_r7_take_the_top_discard_into_a_new_meld_and_the_rest_of_the_pile() -> None:
    table = pile_of_three()
    before = Counter(table.hand(0))
    events = table.take(0, "set", ["7D", "7H", "7C"])
    assert [e.type_name() for e in events] == ["DiscardTaken"]
    assert events[0].data() == {"meld": 1, "kind": "set", "cards": ["7D", "7H", "7C"], "card": "7H", "merged": False}
    assert table.melds(0)[0]["cards"] == ["7D", "7H", "7C"] and table.melds(0)[0]["id"] == 1
    after = Counter(table.hand(0))
    assert after == before - Counter(["7D", "7C"]) + Counter(["5H", "KH"])
    assert table.table["discard"] == [] and table.table["drawn"] is True
    error = table.refused(0, {"type": "draw"}, RuleViolation)
    assert (error.code, error.rule) == ("already_drawn", "R-6")
    assert all_cards(state_of(table)) == Counter(DECK)


def test_r7_the_legal_list_offers_the_take_and_the_draw() -> None:
    table = pile_of_three()
    legal = table.legal(0)
    assert {"type": "draw"} in legal
    assert {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7D", "7C"]}} in legal
    assert {"type": "take_discard", "meld": {"kind": "run", "cards": ["6H", "7H", "8H"]}} in legal
    assert all("7H" in a["meld"]["cards"] for a in legal if a["type"] == "take_discard")
    assert table.view(0)["actions"] == ["draw", "take_discard"]


def test_r7_a_run_in_order_with_the_top_card_in_the_middle() -> None:
    table = Table.dealt(2, {0: HAND0_SEVENS, 1: JUNK1}, stock=["QD"])
    table.draw(1)
    table.discard(1, "9H")  # seat 0 holds 8H 10H
    table.take(0, "run", ["8H", "9H", "10H"])
    assert table.melds(0)[0]["cards"] == ["8H", "9H", "10H"]


@pytest.mark.parametrize(
    ("meld", "code", "rule"),
    [
        ({"kind": "set", "cards": ["7D", "7C", "7S"]}, "top_card_not_in_meld", "R-7"),
        ({"kind": "set", "cards": ["7H"]}, "illegal_meld", "R-12"),  # laying it off alone is no new meld
        ({"kind": "set", "cards": ["7H", "7D"]}, "illegal_meld", "R-12"),
        ({"kind": "set", "cards": ["7H", "7D", "7S"]}, "card_not_in_hand", "R-7"),
        ({"kind": "set", "cards": ["7H", "7H", "7D"]}, "card_not_in_hand", "R-7"),
        ({"kind": "run", "cards": ["7D", "7H", "7C"]}, "illegal_meld", "R-13"),
        ({"kind": "run", "cards": ["7H", "8H", "9H"]}, "card_not_in_hand", "R-7"),
    ],
)
def test_r7_refusals(meld: dict[str, Any], code: str, rule: str) -> None:
    table = pile_of_three()
    error = table.refused(0, {"type": "take_discard", "meld": meld}, RuleViolation)
    assert (error.code, error.rule) == (code, rule)


def test_r7_laying_the_top_discard_off_on_an_existing_meld_does_not_count() -> None:
    """Seat 0 has a set of 7s; the 7H on the pile may only join it through a new set of three."""
    table = pile_of_three()
    table.take(0, "set", ["7D", "7H", "7C"])
    table.discard(0, "KH")
    table.draw(1)
    table.discard(1, "7C")  # seat 1's own 7C
    error = table.refused(0, {"type": "take_discard", "meld": {"kind": "set", "cards": ["7C"]}}, RuleViolation)
    assert error.code == "illegal_meld"
    assert not [a for a in table.legal(0) if a["type"] == "take_discard"]
    error = table.refused(0, {"type": "lay_off", "meld": 1, "card": "7C"}, RuleViolation)
    assert error.code == "must_draw_first"


def test_r7_the_pile_must_not_be_empty_and_the_take_replaces_the_draw() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1})
    action = {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7C", "7D"]}}
    error = table.refused(1, action, RuleViolation)
    assert (error.code, error.rule) == ("discard_pile_empty", "R-7")
    table = pile_of_three()
    table.draw(0)
    error = table.refused(0, {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7C", "7D"]}})
    assert (error.code, error.rule) == ("already_drawn", "R-7")


@pytest.mark.parametrize(
    "meld",
    [
        "not an object",
        {"kind": "set"},
        {"kind": "pair", "cards": ["7H", "7C", "7D"]},
        {"kind": "set", "cards": "7H 7C 7D"},
        {"kind": "set", "cards": ["7H", "7C", "7D"], "extra": 1},
    ],
)
def test_r7_a_malformed_meld_is_invalid_input(meld: Any) -> None:
    table = pile_of_three()
    error = table.refused(0, {"type": "take_discard", "meld": meld}, InvalidInput)
    assert error.code == "invalid_request"


def test_r7_an_unknown_card_code_in_the_meld_is_unknown_card() -> None:
    table = pile_of_three()
    error = table.refused(
        0, {"type": "take_discard", "meld": {"kind": "set", "cards": ["7H", "7c", "7D"]}}, InvalidInput
    )
    assert error.code == "unknown_card"


def test_r8_the_meld_may_not_empty_the_hand_even_though_the_pile_would_refill_it() -> None:
    table = pile_of_three()
    rehand(table, 0, ["7D", "7C"])
    action = {"type": "take_discard", "meld": {"kind": "set", "cards": ["7D", "7H", "7C"]}}
    error = table.refused(0, action, RuleViolation)
    assert (error.code, error.rule) == ("hand_would_be_empty", "R-8")
    assert table.legal(0) == [{"type": "draw"}]
    rehand(table, 0, ["7D", "7C", "2S"])
    table.act(0, action)
    assert Counter(table.hand(0)) == Counter(["2S", "5H", "KH"])


# ---------------------------------------------------------------- R-9 own melds only, any order


def two_melds_each() -> Table:
    """Seat 1 lays run 1 (5H 6H 7H), seat 0 lays set 2 (8S 8H 8D)."""
    hand1 = ["2S", "4S", "6S", "8C", "2C", "AH", "3H", "5H", "6H", "7H", "JH", "3C", "4C", "5C", "JK"]
    hand0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "QH", "8H", "10H", "8D", "7C", "4D"]
    table = Table.dealt(2, {0: hand0, 1: hand1}, stock=["KD", "KC", "QD", "QC"])
    table.draw(1)
    table.meld(1, "run", ["5H", "6H", "7H"])
    table.discard(1, "KD")
    table.draw(0)
    table.meld(0, "set", ["8S", "8H", "8D"])
    table.discard(0, "KC")
    table.draw(1)
    return table


@pytest.mark.parametrize(
    "action",
    [{"type": "lay_off", "meld": 2, "card": "8C"}, {"type": "swap_joker", "meld": 2, "card": "8C"}],
)
def test_r9_melds_of_other_players_are_never_touched(action: dict[str, Any]) -> None:
    table = two_melds_each()
    error = table.refused(1, action, RuleViolation)
    assert (error.code, error.rule) == ("not_your_meld", "R-9")
    assert not [a for a in table.legal(1) if a.get("meld") == 2]


def test_r9_an_unknown_meld_id() -> None:
    table = two_melds_each()
    error = table.refused(1, {"type": "lay_off", "meld": 99, "card": "8C"}, RuleViolation)
    assert (error.code, error.rule) == ("unknown_meld", "R-9")


def test_r9_meld_lay_off_and_meld_again_in_one_turn_in_any_order() -> None:
    table = two_melds_each()
    table.lay_off(1, 1, "JK", "high")  # stands for 8H
    table.meld(1, "run", ["3C", "4C", "5C"])
    table.lay_off(1, 3, "2C", "low")
    assert table.meld_by_id(1)["jokers"] == [{"index": 3, "stands_for": "8H"}]
    assert table.meld_by_id(3)["cards"] == ["2C", "3C", "4C", "5C"]
    assert [m["id"] for m in table.melds()] == [1, 2, 3]


def test_r9_a_card_not_in_the_hand_is_card_not_in_hand() -> None:
    table = two_melds_each()
    for action, rule in [
        ({"type": "meld", "kind": "set", "cards": ["KS", "KH", "KD"]}, "R-9"),
        ({"type": "lay_off", "meld": 1, "card": "4H"}, "R-15"),
        ({"type": "swap_joker", "meld": 1, "card": "8H"}, "R-16"),
        ({"type": "discard", "card": "KS"}, "R-11"),
    ]:
        error = table.refused(1, action, RuleViolation)
        assert (error.code, error.rule) == ("card_not_in_hand", rule), action


# ---------------------------------------------------------------- R-10 always one card left


def test_r10_a_meld_may_not_use_the_last_card() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1}, stock=["QD"])
    rehand(table, 1, ["AH", "2H"])
    table.draw(1)  # QD: AH 2H QD
    rehand(table, 1, ["AH", "2H", "3H"])
    error = table.refused(1, {"type": "meld", "kind": "run", "cards": ["AH", "2H", "3H"]}, RuleViolation)
    assert (error.code, error.rule) == ("hand_would_be_empty", "R-10")
    assert {a["type"] for a in table.legal(1)} == {"discard"}


def test_r10_lay_off_and_swap_may_not_use_the_last_card() -> None:
    table = two_melds_each()
    table.meld(1, "run", ["3C", "JK", "5C"])
    rehand(table, 1, ["4H", "4C"])
    table.lay_off(1, 1, "4H", "low")
    assert table.hand(1) == ["4C"]
    for action in ({"type": "swap_joker", "meld": 3, "card": "4C"}, {"type": "lay_off", "meld": 1, "card": "4C"}):
        error = table.refused(1, action, RuleViolation)
        assert (error.code, error.rule) == ("hand_would_be_empty", "R-10")
    assert table.legal(1) == [{"type": "discard", "card": "4C"}]


# ---------------------------------------------------------------- R-11 discard, going out face down


def test_r11_a_discard_ends_the_turn() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1}, stock=["QD"])
    table.draw(1)
    events = table.discard(1, "QD")
    assert [e.type_name() for e in events] == ["CardDiscarded"] and events[0].data() == {"card": "QD"}
    assert table.table["discard"] == ["QD"] and table.to_act == (0,) and table.table["drawn"] is False
    assert len(table.hand(1)) == 15


def test_r11_the_last_card_goes_out_face_down_and_nobody_sees_it() -> None:
    table = quick_round()
    table.draw(1)
    for cards in OUT_MELDS:
        table.meld(1, "run", cards)
    assert table.hand(1) == ["2C"]
    events = table.discard(1, "2C")
    assert [e.type_name() for e in events][:2] == ["WentOut", "RoundScored"]
    assert events[0].data() == {} and events[0].actor == 1, "the face-down card is not in the public event"
    at_out = engine.fold(table.config, table.events[: table.events.index(events[0]) + 1])
    assert at_out.state.face_down == ("2C",) and at_out.state.hands[1] == ()
    assert engine.view(at_out, None)["table"]["face_down"] == 1
    assert at_out.state.discard == (), "the last card does not go onto the pile"
    assert all_cards(at_out.state) == Counter(DECK)
    assert table.of_type("CardDiscarded") == []


def test_r11_discard_without_a_card_is_the_way_out_only_for_the_last_card() -> None:
    table = quick_round()
    table.draw(1)
    error = table.refused(1, {"type": "discard"}, InvalidInput)
    assert error.code == "invalid_request"
    for cards in OUT_MELDS:
        table.meld(1, "run", cards)
    assert table.legal(1) == [{"type": "discard", "card": "2C"}]
    table.act(1, {"type": "discard"})
    assert table.of_type("WentOut") and table.last("RoundScored")["winner"] == 1


def test_r11_the_face_down_card_shows_in_the_full_view_of_a_finished_game() -> None:
    table = quick_round(options={"target": 100})
    go_out(table, 1, OUT_MELDS)
    assert table.snap.finished
    full = engine.get_game("romme").full_view(state_of(table))
    assert full["table"]["face_down"] == ["2C"]
    assert table.view(None)["table"]["face_down"] == 1


# ---------------------------------------------------------------- R-12 sets and one set per rank


def sets_table() -> Table:
    hand1 = ["7S", "7H", "7D", "7C", "7C", "JK", "7S", "7H", "QS", "QH", "QD", "QC", "QH", "2D", "4D"]
    return Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["9D"])


def test_r12_a_second_set_of_a_rank_joins_the_first() -> None:
    table = sets_table()
    table.draw(1)
    table.meld(1, "set", ["7S", "7H", "7D"])
    events = table.meld(1, "set", ["7C", "7C", "JK"])
    assert events[0].data() == {"meld": 1, "kind": "set", "cards": ["7C", "7C", "JK"], "merged": True}
    (sevens,) = table.melds(1)
    assert sevens["id"] == 1 and sevens["cards"] == ["7S", "7H", "7D", "7C", "7C", "JK"] and sevens["rank"] == "7"
    table.meld(1, "set", ["QS", "QH", "QD"])
    assert [m["id"] for m in table.melds(1)] == [1, 2]


def test_r12_the_joined_set_must_still_be_a_set() -> None:
    table = sets_table()
    table.draw(1)
    table.meld(1, "set", ["7S", "7H", "7D", "7S", "7H"])
    error = table.refused(1, {"type": "meld", "kind": "set", "cards": ["7D", "7C", "7C"]}, RuleViolation)
    assert error.code == "card_not_in_hand"
    table.meld(1, "set", ["7C", "7C", "JK"])  # 5 + 3 = 8 cards, no suit more than twice
    assert len(table.melds(1)[0]["cards"]) == 8


def test_r12_a_join_past_eight_cards_is_refused() -> None:
    """With two decks a join can only break R-12 by size: no suit has a third copy."""
    hand1 = ["7S", "7S", "7H", "7H", "7D", "7D", "7C", "7C", "JK", "QH", "QD", "QC", "2D", "4D", "9S"]
    table = Table.dealt(2, {0: [c for c in JUNK0 if c != "7D"] + ["KD"], 1: hand1})
    table.draw(1)
    table.meld(1, "set", ["7S", "7S", "7H", "7H", "7D", "7D"])
    error = table.refused(1, {"type": "meld", "kind": "set", "cards": ["7C", "7C", "JK"]}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_meld", "R-12")
    assert "joins" in error.detail
    assert not [a for a in table.legal(1) if a["type"] == "meld" and "7C" in a["cards"]]
    assert {"type": "lay_off", "meld": 1, "card": "7C"} in table.legal(1)
    table.lay_off(1, 1, "7C")
    table.lay_off(1, 1, "7C")
    error = table.refused(1, {"type": "lay_off", "meld": 1, "card": "JK"}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_lay_off", "R-15")


@pytest.mark.parametrize(
    "cards",
    [["QH", "QH", "QH"], ["QH", "QD"], ["QH", "QD", "KC"], ["QH", "QD", "QC", "QH", "QD", "QS", "QC", "JK", "JK"]],
)
def test_r12_what_is_no_set(cards: list[str]) -> None:
    problem = rm.set_problem(cards)
    assert problem is not None and problem.rule == "R-12"


# ---------------------------------------------------------------- runs and jokers


def runs_table() -> Table:
    hand1 = ["QH", "KH", "AH", "2H", "JK", "5S", "6S", "7S", "8S", "9S", "JK", "10D", "JD", "KD", "4C"]
    return Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["9D"])


def test_r13_runs_go_round_the_corner_in_the_order_given() -> None:
    table = runs_table()
    table.draw(1)
    table.meld(1, "run", ["QH", "KH", "AH", "2H"])
    meld = table.melds(1)[0]
    assert meld["cards"] == ["QH", "KH", "AH", "2H"] and meld["low"] == "QH" and meld["high"] == "2H"
    assert meld["suit"] == "H" and meld["points"] == 10 + 10 + 20 + 5


@pytest.mark.parametrize(
    "cards",
    [["9S", "8S", "7S"], ["5S", "7S", "8S"], ["5S", "6S", "8S"], ["10D", "JD", "KD"], ["KD", "JD", "10D"]],
)
def test_r13_out_of_order_or_with_gaps_is_no_run(cards: list[str]) -> None:
    table = runs_table()
    table.draw(1)
    error = table.refused(1, {"type": "meld", "kind": "run", "cards": cards}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_meld", "R-13")


def test_r13_the_order_fixes_what_each_joker_stands_for() -> None:
    table = runs_table()
    table.draw(1)
    table.meld(1, "run", ["JD", "JK", "KD"])
    table.meld(1, "run", ["JK", "5S", "6S"])
    ten, five = table.melds(1)
    assert ten["jokers"] == [{"index": 1, "stands_for": "QD"}] and ten["stands_for"] == ["JD", "QD", "KD"]
    assert five["jokers"] == [{"index": 0, "stands_for": "4S"}] and five["low"] == "4S"


def test_r13_at_most_13_cards_no_rank_twice() -> None:
    run13 = [f"{r}H" for r in rm.RANKS]
    assert rm.run_problem(run13) is None
    assert rm.run_problem([*run13, "JK"]) is not None
    assert rm.run_problem(["KH", "AH", "2H", *[f"{r}H" for r in rm.RANKS[2:]]]) is not None


def test_r14_a_meld_needs_a_natural_card() -> None:
    hand1 = ["JK", "JK", "JK", "5S", "6S", "7S", "8S", "9S", "10D", "JD", "KD", "4C", "2D", "3D", "4D"]
    table = Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["9D"])
    table.draw(1)
    for kind in ("set", "run"):
        error = table.refused(1, {"type": "meld", "kind": kind, "cards": ["JK", "JK", "JK"]}, RuleViolation)
        assert (error.code, error.rule) == ("illegal_meld", "R-14")


def test_r14_a_joker_never_breaks_the_suit_rule_up_to_eight_cards() -> None:
    assert rm.set_problem(["QS", "QS", "QH", "QH", "QD", "QD", "QC", "JK"]) is None
    assert rm.set_problem(["QS", "QS", "QH", "QH", "QD", "QD", "JK", "JK"]) is None
    assert rm.set_problem(["QS", "QS", "QH", "QH", "QD", "QD", "QC", "JK", "JK"]) is not None


# ---------------------------------------------------------------- R-15 lay-off


def lay_off_table() -> Table:
    hand1 = ["5H", "6H", "7H", "4H", "8H", "9H", "JK", "JK", "KS", "AS", "2S", "QS", "9D", "9C", "9S"]
    table = Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["3C"])
    table.draw(1)
    table.meld(1, "run", ["5H", "6H", "7H"])
    table.meld(1, "run", ["KS", "AS", "2S"])
    table.meld(1, "set", ["9D", "9C", "9S"])
    return table


def test_r15_a_run_takes_cards_at_either_end_only() -> None:
    table = lay_off_table()
    table.lay_off(1, 1, "4H", "low")
    table.lay_off(1, 1, "8H", "high")
    assert table.meld_by_id(1)["cards"] == ["4H", "5H", "6H", "7H", "8H"]
    error = table.refused(1, {"type": "lay_off", "meld": 1, "card": "9H", "end": "low"}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_lay_off", "R-15")
    table.lay_off(1, 1, "9H")  # no end given: the end it fits
    assert table.meld_by_id(1)["high"] == "9H"


def test_r15_round_the_corner_and_jokers_at_the_ends() -> None:
    table = lay_off_table()
    table.lay_off(1, 2, "QS", "low")
    table.lay_off(1, 2, "JK", "high")
    meld = table.meld_by_id(2)
    assert meld["cards"] == ["QS", "KS", "AS", "2S", "JK"] and meld["jokers"] == [{"index": 4, "stands_for": "3S"}]
    table.lay_off(1, 2, "JK", "low")
    assert table.meld_by_id(2)["low"] == "JS"


def test_r15_a_card_that_fits_no_end_is_refused() -> None:
    table = lay_off_table()
    for card, end in [("4H", "high"), ("8H", "low"), ("9H", None), ("3C", None)]:
        action = {"type": "lay_off", "meld": 1, "card": card, **({"end": end} if end else {})}
        error = table.refused(1, action, RuleViolation)
        assert (error.code, error.rule) == ("illegal_lay_off", "R-15")


def test_r15_a_set_takes_a_card_that_keeps_it_a_set() -> None:
    table = lay_off_table()
    table.lay_off(1, 3, "JK")
    assert table.meld_by_id(3)["cards"] == ["9D", "9C", "9S", "JK"]
    error = table.refused(1, {"type": "lay_off", "meld": 3, "card": "JK", "end": "high"}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_lay_off", "R-15")
    table.lay_off(1, 3, "9H")
    assert table.meld_by_id(3)["cards"] == ["9D", "9C", "9S", "JK", "9H"]
    table.lay_off(1, 1, "8H")
    table.lay_off(1, 1, "4H")
    error = table.refused(1, {"type": "lay_off", "meld": 3, "card": "QS"}, RuleViolation)
    assert (error.code, error.rule) == ("illegal_lay_off", "R-15")


def test_r15_the_legal_lay_offs_are_exactly_those_that_fit() -> None:
    table = lay_off_table()
    lay_offs = [a for a in table.legal(1) if a["type"] == "lay_off"]
    expected = [
        {"type": "lay_off", "meld": 1, "card": "4H", "end": "low"},
        {"type": "lay_off", "meld": 1, "card": "8H", "end": "high"},
        {"type": "lay_off", "meld": 1, "card": "JK", "end": "low"},
        {"type": "lay_off", "meld": 1, "card": "JK", "end": "high"},
        {"type": "lay_off", "meld": 2, "card": "QS", "end": "low"},
        {"type": "lay_off", "meld": 2, "card": "JK", "end": "low"},
        {"type": "lay_off", "meld": 2, "card": "JK", "end": "high"},
        {"type": "lay_off", "meld": 3, "card": "9H"},
        {"type": "lay_off", "meld": 3, "card": "JK"},
    ]
    assert sorted(map(str, lay_offs)) == sorted(map(str, expected))


def test_r15_a_full_run_of_13_takes_nothing() -> None:
    run13 = tuple(f"{r}H" for r in rm.RANKS)
    assert rm.lay_off_ends("run", run13, "JK") == ()
    assert rm.lay_off_ends("run", run13[1:], "AH") == ("low", "high")


# ---------------------------------------------------------------- R-16 joker swap


def swap_table() -> Table:
    hand1 = ["7H", "JK", "9H", "QH", "QD", "JK", "8H", "QC", "QH", "QS", "2S", "4S", "6S", "8C", "10C"]
    table = Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["3C"])
    table.draw(1)
    table.meld(1, "run", ["7H", "JK", "9H"])
    table.meld(1, "set", ["QH", "QD", "JK"])
    return table


def test_r16_the_swapped_joker_leaves_the_game() -> None:
    table = swap_table()
    hand_before = Counter(table.hand(1))
    events = table.swap(1, 1, "8H")
    assert events[0].data() == {"meld": 1, "card": "8H", "index": 1}
    assert table.meld_by_id(1)["cards"] == ["7H", "8H", "9H"] and table.meld_by_id(1)["jokers"] == []
    assert Counter(table.hand(1)) == hand_before - Counter(["8H"]), "the joker does not go to the hand"
    assert table.table["out_of_game"] == ["JK"]
    assert all_cards(state_of(table)) == Counter(DECK)


def test_r16_in_a_set_any_card_of_its_rank_that_keeps_the_suit_rule() -> None:
    table = swap_table()
    assert {"type": "swap_joker", "meld": 2, "card": "QC"} in table.legal(1)
    assert {"type": "swap_joker", "meld": 2, "card": "QS"} in table.legal(1)
    assert {"type": "swap_joker", "meld": 2, "card": "QH"} in table.legal(1)
    table.swap(1, 2, "QS")
    assert table.meld_by_id(2)["cards"] == ["QH", "QD", "QS"] and table.meld_by_id(2)["points"] == 120


def test_r16_a_card_the_joker_does_not_stand_for_is_refused() -> None:
    table = swap_table()
    for meld, card in [(1, "10C"), (1, "QH"), (2, "8H")]:
        error = table.refused(1, {"type": "swap_joker", "meld": meld, "card": card}, RuleViolation)
        assert (error.code, error.rule) == ("illegal_swap", "R-16")
    table.swap(1, 1, "8H")
    error = table.refused(1, {"type": "swap_joker", "meld": 1, "card": "QC"}, RuleViolation)
    assert (error.code, error.rule) == ("no_joker_in_meld", "R-16")


def test_r16_a_set_swap_may_not_break_the_suit_rule() -> None:
    """Two decks hold two QH, so a third cannot come up in play; the rule function still says no."""
    assert rm.swap_index("set", ("QH", "QH", "QD", "JK"), "QH") is None
    assert rm.swap_index("set", ("QH", "QH", "QD", "JK"), "QC") == 3
    assert rm.swap_index("set", ("QH", "QH", "QD", "JK"), "KC") is None
    assert rm.swap_index("set", ("QH", "QH", "QD", "JK"), "JK") is None


# ---------------------------------------------------------------- R-17 card conservation


def test_r17_every_card_is_in_one_place_after_every_event() -> None:
    table = swap_table()
    config = table.config
    snap = engine.fold(config, table.events[:1])
    seen_places = 0
    for event in table.events[1:]:
        snap = engine.advance(snap, event)
        if snap.state.round:
            assert all_cards(snap.state) == Counter(DECK), event
            seen_places += 1
    assert seen_places > 5
    table.swap(1, 1, "8H")
    table.lay_off(1, 2, "QC")
    table.discard(1, "2S")
    assert all_cards(state_of(table)) == Counter(DECK)


# ---------------------------------------------------------------- values and going out


@pytest.mark.parametrize(
    ("card", "value"),
    [("2H", 5), ("9C", 5), ("10D", 10), ("JS", 10), ("QH", 10), ("KC", 10), ("AS", 20), ("JK", 20), ("QS", 100)],
)
def test_r18_card_values(card: str, value: int) -> None:
    assert rm.card_value(card) == value


def test_r19_the_winner_scores_the_melds_the_others_melds_minus_hand_with_the_qs_at_100() -> None:
    hand0 = [*JUNK0[:-1], "QS"]  # QS instead of 4D
    table = Table.dealt(2, {1: OUT_RUNS, 0: hand0}, stock=["2C"])
    go_out(table, 1, OUT_MELDS)
    scored = table.last("RoundScored")
    hand_points = rm.points(hand0)
    assert scored == {
        "round": 1,
        "winner": 1,
        "reason": "went_out",
        "doubled": False,
        "meld_points": [0, OUT_POINTS],
        "hand_points": [hand_points, 0],
        "scores": [-hand_points, OUT_POINTS],
    }
    assert hand_points == rm.points(JUNK0[:-1]) + 100
    assert table.view(None)["scores"] == [-hand_points, OUT_POINTS]
    assert table.table["round_scores"] == [[-hand_points, OUT_POINTS]]
    assert table.table["last_round"]["winner"] == 1


def test_r19_a_loser_with_melds_scores_melds_minus_hand() -> None:
    table = Table.dealt(2, {1: OUT_RUNS, 0: HAND0_SEVENS}, stock=["2C", "7S"])
    table.draw(1)
    table.meld(1, "run", OUT_MELDS[0])
    table.discard(1, "2C")
    table.draw(0)  # 7S
    table.meld(0, "set", ["7S", "7D", "7C"])
    table.discard(0, "KH")
    table.draw(1)
    for cards in OUT_MELDS[1:]:
        table.meld(1, "run", cards)
    (last,) = table.hand(1)
    table.discard(1, last)
    scored = table.last("RoundScored")
    left = [c for c in HAND0_SEVENS if c not in ("7D", "7C", "KH")]
    assert scored["meld_points"] == [15, OUT_POINTS] and scored["scores"] == [15 - rm.points(left), OUT_POINTS]


# ---------------------------------------------------------------- R-20 hand aus


def test_r20_hand_aus_doubles_every_score_when_the_house_rule_is_on() -> None:
    table = quick_round(options={"hand_aus_doubles": True})
    go_out(table, 1, OUT_MELDS)
    scored = table.last("RoundScored")
    assert scored["doubled"] is True
    assert scored["scores"] == [-2 * rm.points(JUNK0), 2 * OUT_POINTS]


def test_r20_off_by_default() -> None:
    table = quick_round()
    go_out(table, 1, OUT_MELDS)
    assert table.last("RoundScored")["doubled"] is False
    assert table.table["hand_aus_doubles"] is False


def test_r20_not_when_the_winner_had_melded_in_an_earlier_turn() -> None:
    table = Table.dealt(2, {1: OUT_RUNS, 0: JUNK0}, stock=["2C", "KD"], options={"hand_aus_doubles": True})
    table.draw(1)
    table.meld(1, "run", OUT_MELDS[0])
    table.discard(1, "2C")
    table.draw(0)
    table.discard(0, "KD")
    table.draw(1)
    for cards in OUT_MELDS[1:]:
        table.meld(1, "run", cards)
    (last,) = table.hand(1)
    table.discard(1, last)
    assert table.last("RoundScored")["doubled"] is False


# ---------------------------------------------------------------- R-21 the stock runs out


def empty_the_stock(last: str, options: dict[str, Any] | None = None) -> Table:
    """Draw and discard the drawn card, 80 times; the last stock card is `last`, seat 1 is then to play."""
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1}, stock_bottom=[last], options=options)
    seat = 1
    for _ in range(79):
        draw_and_discard_drawn(table, seat)
        seat = 1 - seat
    assert table.table["stock_size"] == 1 and seat == 0
    table.draw(0)
    assert last in table.hand(0)
    table.discard(0, last)
    return table


def test_r21_an_empty_stock_with_no_way_to_take_the_pile_ends_the_round_with_no_winner() -> None:
    table = empty_the_stock("KD", options={"hand_aus_doubles": True})
    scored = table.last("RoundScored")
    assert scored["winner"] is None and scored["reason"] == "stock_empty" and scored["doubled"] is False
    assert scored["scores"] == [-rm.points(JUNK0), -rm.points(JUNK1)]
    assert table.last("RoundStarted")["round"] == 2
    assert table.of_type("CardDiscarded")[-1].data() == {"card": "KD"}
    assert table.of_type("RoundScored")[0].actor == "system"


def test_r21_an_empty_stock_means_taking_the_pile_when_it_can_be_taken() -> None:
    table = empty_the_stock("7D")  # seat 1 holds 7H 7C
    assert table.table["stock_size"] == 0 and table.to_act == (1,)
    error = table.refused(1, {"type": "draw"}, RuleViolation)
    assert (error.code, error.rule) == ("stock_empty", "R-21")
    legal = table.legal(1)
    assert legal and {a["type"] for a in legal} == {"take_discard"}
    assert table.view(1)["actions"] == ["take_discard"]
    table.take(1, "set", ["7H", "7D", "7C"])
    assert table.table["discard"] == []
    table.discard(1, "9C")  # seat 0 can make nothing of it: the round ends
    scored = table.last("RoundScored")
    assert scored["reason"] == "stock_empty" and scored["meld_points"] == [0, 15]


def test_r21_nothing_is_added_to_the_stock_and_the_pile_is_never_reshuffled() -> None:
    table = empty_the_stock("KD")
    assert not [e for e in table.events if "shuffle" in e.type_name().lower()]
    assert table.of_type("RoundScored")[0].data()["reason"] == "stock_empty"


# ---------------------------------------------------------------- the end of the game


def test_r22_the_game_ends_at_the_target_and_the_most_points_win() -> None:
    table = quick_round(options={"target": OUT_POINTS})
    go_out(table, 1, OUT_MELDS)
    assert table.snap.finished
    ended = table.last("GameEnded")
    assert ended == {"totals": [-rm.points(JUNK0), OUT_POINTS], "winners": [1]}
    assert table.view(None)["result"] == {"totals": ended["totals"], "winners": [1]}
    assert table.events[-1].type_name() == "SeedRevealed"


def test_r22_strict_1000_needs_more_than_the_mark() -> None:
    table = quick_round(options={"target": OUT_POINTS, "strict_1000": True})
    go_out(table, 1, OUT_MELDS)
    assert not table.snap.finished and table.last("RoundStarted")["round"] == 2
    table = quick_round(options={"target": OUT_POINTS - 1, "strict_1000": True})
    go_out(table, 1, OUT_MELDS)
    assert table.snap.finished


def test_r22_below_the_target_the_game_goes_on() -> None:
    table = quick_round(options={"target": OUT_POINTS + 1})
    go_out(table, 1, OUT_MELDS)
    assert not table.snap.finished and table.view(None)["phase"] == "cut"
    assert table.table["melds"] == [] and table.table["mark_reached"] is False


def test_r22_the_default_target_is_1000_and_options_are_checked() -> None:
    assert Table(2).table["target"] == 1000
    for options in ({"target": 0}, {"target": "high"}, {"strict_1000": "yes"}, {"hand_aus_doubles": 1}, {"goal": 5}):
        with pytest.raises(InvalidInput) as info:
            engine.make_config("romme", 2, options, "s")
        assert info.value.code == "invalid_option"


def test_r23_a_tie_at_the_top_means_another_round_for_everyone_until_one_leads_alone() -> None:
    junk_points = rm.points(JUNK0)
    round2 = build_deck(3, {0: OUT_RUNS, 2: JUNK0, 1: JUNK1}, stock=["2C"], dealer=1, cut=30)
    table = quick_round(3, options={"target": 1000}, later_decks=[round2])
    # before round 1 ends: seat 0 at 1010 + its hand, seat 1 at 1010 - OUT_POINTS: level after the round
    table.with_state(totals=(1010 + junk_points, 1010 - OUT_POINTS, 0))
    go_out(table, 1, OUT_MELDS)
    assert table.view(None)["scores"][:2] == [1010, 1010]
    assert not table.snap.finished and table.table["mark_reached"] is True
    assert table.last("RoundStarted") == {"round": 2, "dealer": 1, "cutter": 0}
    table.cut(0, 30)
    assert table.to_act == (2,), "all players play the tie round (seat 2 is left of dealer 1)"
    table.draw(2)
    table.discard(2, "2C")
    go_out(table, 0, OUT_MELDS)
    ended = table.last("GameEnded")
    assert ended["winners"] == [0] and ended["totals"][0] == 1010 + OUT_POINTS


def test_r23_after_a_tie_the_game_ends_once_one_leads_alone_even_below_the_mark() -> None:
    """R-23: seats 0 and 1 tie at 1010 after round 1 (the mark, 1000, is reached); in the tie round seat 2
    goes out and both tied seats lose their hands' points, falling below the mark. Seat 1 now leads alone,
    so the game ends at once with seat 1 the winner, though no total is at the mark any more."""
    round2 = build_deck(3, {2: OUT_RUNS, 0: JUNK0, 1: JUNK1}, stock=["2C"], dealer=1, cut=30)
    table = quick_round(3, options={"target": 1000}, later_decks=[round2])
    table.with_state(totals=(1010 + rm.points(JUNK0), 1010 - OUT_POINTS, 0))
    go_out(table, 1, OUT_MELDS)
    assert table.view(None)["scores"][:2] == [1010, 1010] and not table.snap.finished
    table.cut(0, 30)
    go_out(table, 2, OUT_MELDS)
    totals = table.view(None)["scores"]
    assert totals[:2] == [1010 - rm.points(JUNK0), 1010 - rm.points(JUNK1)]
    assert max(totals) < 1000 and rm.points(JUNK1) < rm.points(JUNK0)
    assert table.snap.finished and table.last("GameEnded") == {"totals": totals, "winners": [1]}


def test_r23_the_tie_rounds_go_on_while_the_top_is_shared() -> None:
    table = quick_round(options={"target": 1000})
    table.with_state(totals=(1000 + rm.points(JUNK0), 1000 - OUT_POINTS))
    go_out(table, 1, OUT_MELDS)
    state = state_of(table)
    assert state.mark_reached and not table.snap.finished
    # a later round in which the totals stay level (both score 0) still ends nothing
    table.with_state(phase="between_rounds", totals=(990, 990))
    assert table.snap.game.automatic(state_of(table)).type_name() == "RoundStarted"
    table.with_state(totals=(990, 989))
    assert table.snap.game.automatic(state_of(table)).type_name() == "GameEnded"


# ---------------------------------------------------------------- legal actions, ids, fold


def test_meld_ids_are_unique_within_a_round_and_start_again_each_round() -> None:
    table = quick_round(options={"target": 10_000})
    table.draw(1)
    ids = []
    for cards in OUT_MELDS:
        ids.append(table.meld(1, "run", cards)[0].data()["meld"])
    assert ids == [1, 2, 3, 4, 5]
    table.discard(1, table.hand(1)[0])
    table.cut(0, 30)
    assert table.table["melds"] == []
    assert state_of(table).next_meld == 1


def test_decide_accepts_a_valid_meld_that_the_legal_list_does_not_name() -> None:
    hand1 = ["5H", "6H", "7H", "8H", "9H", "JK", "2S", "4S", "6S", "8C", "10C", "3D", "5D", "7D", "9D"]
    table = Table.dealt(2, {0: JUNK0, 1: hand1}, stock=["KC"])
    table.draw(1)
    odd = {"type": "meld", "kind": "run", "cards": ["5H", "JK", "7H", "8H"]}  # a joker where the 6H could be
    assert odd not in table.legal(1)
    table.act(1, odd)
    assert table.melds(1)[0]["stands_for"] == ["5H", "6H", "7H", "8H"]


def test_the_legal_list_after_the_draw_has_every_discard_and_capped_melds() -> None:
    table = runs_table()
    table.draw(1)
    legal = table.legal(1)
    discards = [a["card"] for a in legal if a["type"] == "discard"]
    assert discards == list(rm.sort_cards(set(table.hand(1))))
    melds = [a for a in legal if a["type"] == "meld"]
    assert 0 < len(melds) <= MELD_CAP
    assert {"type": "meld", "kind": "run", "cards": ["QH", "KH", "AH", "2H"]} in melds
    assert {"type": "meld", "kind": "run", "cards": ["5S", "6S", "7S", "8S", "9S"]} in melds
    for action in melds:
        assert rm.is_valid_meld(action["kind"], action["cards"])
    assert table.view(1)["actions"] == ["discard", "meld"]


def test_every_legal_action_is_accepted() -> None:
    table = lay_off_table()
    for action in table.legal(1):
        snap, _ = engine.act(table.snap, 1, action)
        assert snap.version > table.snap.version


def test_a_fold_of_the_same_events_is_the_same_game() -> None:
    table = swap_table()
    table.swap(1, 1, "8H")
    first = engine.fold(table.config, table.events)
    second = engine.fold(table.config, table.events)
    assert first == second and first.state == table.snap.state
    assert dataclasses.asdict(first.state) == dataclasses.asdict(table.snap.state)
