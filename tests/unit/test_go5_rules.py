"""Go5 rules V-1 ... V-16 one by one, on stacked decks (C-5) built by go5_helpers.build_deck.

Every expected card, score and seat below is worked out by hand from the rule text.
With dealer seat 0, two players play seat 1, 0, 1, ...; three players 1, 2, 0, 1, ...
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from domain import engine
from domain.errors import InvalidInput, RuleViolation
from domain.go5 import GO5, card_value, winners_of
from domain.options import MAX_EVENTS_DEFAULT
from domain.shuffle import shuffle
from tests.json_walk import strings_in
from tests.unit.go5_helpers import (
    CANONICAL,
    COLOURS,
    JOKER,
    JUNK,
    N3,
    NUMBER_CARDS,
    PATTERNS,
    STOCK,
    STOP,
    Table,
    build_deck,
    card,
    claim_table,
    deal_index,
    expected_deal,
    five_round,
    ordered,
    sets_table,
    swap_meld,
    with_colour,
)


def value(code: str, pattern_values: list[int] | None = None, joker: int = -10) -> int:
    """V-4 from the text: the pattern's value, doubled on black; a joker `joker`; a stop 0."""
    if code == JOKER:
        return joker
    if code == STOP:
        return 0
    _, pattern, colour = code.split("-")
    base = (pattern_values or list(range(1, 8)))[PATTERNS.index(pattern)]
    return 2 * base if colour == "black" else base


def refusal(table: Table, seat: int, action: dict[str, Any]) -> tuple[str, str | None]:
    """(code, rule) of a RuleViolation."""
    error = table.refused(seat, action, RuleViolation)
    return error.code, error.rule


def bad_input(table: Table, seat: int, action: dict[str, Any]) -> str:
    """Code of an InvalidInput."""
    return table.refused(seat, action, InvalidInput).code


def go5_action(set_id: int) -> dict[str, Any]:
    return {"type": "go5", "set": set_id}


# ================================================================ V-1 deck


def test_v1_deck_has_49_number_cards_3_jokers_and_3_stops() -> None:
    """V-1: 55 cards."""
    deck = GO5.canonical_deck(2, engine.make_config("go5", 2, {}, "s").options)
    counts = Counter(deck)
    assert len(deck) == 55
    assert (counts[JOKER], counts[STOP]) == (3, 3)
    assert len([c for c in deck if c not in (JOKER, STOP)]) == 49 == len(set(deck) - {JOKER, STOP})


def test_v1_each_number_pattern_and_colour_is_on_seven_cards() -> None:
    """V-1: the Latin square: every number, pattern and colour exactly 7 times."""
    parts = [code.split("-") for code in CANONICAL if code not in (JOKER, STOP)]
    for index, names in ((0, [str(n) for n in range(1, 8)]), (1, PATTERNS), (2, COLOURS)):
        assert Counter(p[index] for p in parts) == dict.fromkeys(names, 7)


def test_v1_two_different_cards_share_at_most_one_feature() -> None:
    """V-1: colour (n - 1 + p) mod 7 makes any two number cards share at most one feature."""
    parts = [code.split("-") for code in NUMBER_CARDS]
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            assert sum(x == y for x, y in zip(a, b, strict=True)) <= 1, (a, b)


def test_v1_colours_follow_the_formula() -> None:
    """V-1 / V-2: the rule's own example and a few hand-computed cards."""
    deck = set(GO5.canonical_deck(2, {}))
    for code in ("3-waves-blue", "1-dots-red", "7-dots-black", "1-rings-black", "2-rings-red", "4-stars-orange"):
        assert code in deck
    assert "3-waves-red" not in deck


# ================================================================ V-2 codes


def test_v2_the_55_codes_are_cards_and_nothing_else() -> None:
    """V-2: number cards `<n>-<pattern>-<colour>`, `joker`, `stop`; anything else is unknown."""
    assert all(GO5.is_card(code) for code in CANONICAL)
    for code in ("3-waves-red", "JK", "Joker", "STOP", "3-Waves-blue", "8-dots-red", "0-dots-black", "", "AS", 3, None):
        assert not GO5.is_card(code), code


def test_v2_unknown_card_in_an_action_is_invalid_input() -> None:
    """V-2 / C-1: an unknown code is a client error (400 `unknown_card`), not a rule refusal."""
    table = Table.stacked(2)
    table.draw(1)
    assert bad_input(table, 1, {"type": "discard", "card": "3-waves-red"}) == "unknown_card"
    assert bad_input(table, 1, {"type": "meld", "cards": ["JK", N3[0], N3[1]]}) == "unknown_card"
    assert bad_input(table, 1, {"type": "lay_off", "set": 1, "card": "AS"}) == "unknown_card"


# ================================================================ V-3 order, C-4, C-5


def test_v3_canonical_order() -> None:
    """V-3: numbers 1-7, within a number by pattern; then 3 jokers; then 3 stop cards."""
    deck = list(GO5.canonical_deck(3, {}))
    assert deck == CANONICAL
    assert deck[:8] == ["1-dots-red", "1-stripes-orange", "1-waves-yellow", "1-checks-green"] + [
        "1-zigzag-blue",
        "1-stars-violet",
        "1-rings-black",
        "2-dots-orange",
    ]
    assert deck[49:] == [JOKER] * 3 + [STOP] * 3


def test_c5_stacked_deck_must_be_a_permutation_of_the_55_cards() -> None:
    """C-5: a missing stop card or an extra copy is refused; an unknown code is an unknown card."""
    for broken in ([*CANONICAL[:-1], JOKER], CANONICAL[:-1], [*CANONICAL, STOP]):
        with pytest.raises(InvalidInput) as info:
            engine.make_config("go5", 2, {}, "seed", [broken])
        assert info.value.code == "invalid_deck"
    with pytest.raises(InvalidInput) as info:
        engine.make_config("go5", 2, {}, "seed", [[*CANONICAL[:-1], "JK"]])
    assert info.value.code == "unknown_card"
    table = Table(2, decks=[list(reversed(CANONICAL))])
    assert table.events[0].data()["stacked"] is True


@pytest.mark.parametrize(("players", "seed"), [(2, "demo"), (3, "table-3"), (4, "go5-seed")])
def test_c4_round_one_deals_the_seeded_shuffle(players: int, seed: str) -> None:
    """C-4: the round deck is shuffle(canonical deck, "round/1"), dealt per V-5 and V-6."""
    table = Table(players, seed=seed)
    hands, stops, start, stock = expected_deal(list(shuffle(CANONICAL, seed, "round/1")), players, 0)
    truth = table.truth()["table"]
    assert truth["hands"] == [ordered(h) for h in hands]
    assert [p["stops"] for p in truth["players"]] == stops
    assert (truth["discard"], truth["stock"]) == ([start], stock)


# ================================================================ V-4 values and options


def test_v4_card_values_by_pattern_doubled_on_black() -> None:
    """V-4: dots 1 ... rings 7, doubled on black; a joker -10; a stop 0."""
    options = engine.make_config("go5", 2, {}, "s").options
    assert [card_value(card(1, p), options) for p in PATTERNS] == [1, 2, 3, 4, 5, 6, 14]  # 1-rings is black
    assert card_value("7-dots-black", options) == 2
    assert card_value("3-zigzag-black", options) == 10
    assert (card_value(JOKER, options), card_value(STOP, options)) == (-10, 0)
    for code in NUMBER_CARDS:
        assert card_value(code, options) == value(code)


def test_v4_options_change_the_values() -> None:
    """V-4: `pattern_values` (dots ... rings) and `joker_value`."""
    options = engine.make_config("go5", 2, {"pattern_values": [7, 6, 5, 4, 3, 2, 1], "joker_value": -25}, "s").options
    assert card_value("1-dots-red", options) == 7
    assert card_value("7-dots-black", options) == 14
    assert card_value(JOKER, options) == -25


def test_v4_v16_option_defaults() -> None:
    """V-4 / V-16: defaults pattern values 1-7, joker -10, target 500 (and C-9's max_events)."""
    options = engine.make_config("go5", 3, {}, "s").options
    assert options == {
        "pattern_values": [1, 2, 3, 4, 5, 6, 7],
        "joker_value": -10,
        "target": 500,
        "max_events": MAX_EVENTS_DEFAULT,
    }


@pytest.mark.parametrize(
    "options",
    [
        {"pattern_values": [1, 2, 3]},
        {"pattern_values": [1, 2, 3, 4, 5, 6, -7]},
        {"pattern_values": [1, 2, 3, 4, 5, 6, "7"]},
        {"pattern_values": [1, 2, 3, 4, 5, 6, True]},
        {"pattern_values": "1234567"},
        {"pattern_values": None},
        {"joker_value": 5},
        {"joker_value": -101},
        {"target": 0},
        {"target": "500"},
        {"rounds": 3},
    ],
)
def test_v4_v16_bad_options_are_refused(options: dict[str, Any]) -> None:
    """V-4 / V-16: options out of their range are refused as `invalid_option`."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("go5", 2, options, "s")
    assert info.value.code == "invalid_option"


# ================================================================ V-5 setup


@pytest.mark.parametrize("players", [2, 3, 4])
def test_v5_two_to_four_players(players: int) -> None:
    """V-5: 2-4 players, 7 cards each."""
    table = Table(players)
    assert [p["hand_size"] for p in table.table["players"]] == [7] * players


@pytest.mark.parametrize("players", [0, 1, 5, 8])
def test_v5_other_player_counts_are_refused(players: int) -> None:
    """V-5: fewer than 2 or more than 4 players are refused."""
    with pytest.raises(RuleViolation) as info:
        engine.make_config("go5", players, {}, "s")
    assert (info.value.code, info.value.rule) == ("bad_player_count", "V-5")


def test_v5_deal_one_at_a_time_clockwise_from_left_of_the_dealer() -> None:
    """V-5: deck index 0 to seat 1 (left of dealer 0), 1 to seat 2, 2 to seat 0, ...; seat 1 starts."""
    deck = build_deck(3)
    table = Table(3, decks=[deck])
    for seat in range(3):
        assert table.hand(seat) == ordered([deck[deal_index(3, 0, seat, k)] for k in range(7)])
    assert deck[0] in table.hand(1) and deck[1] in table.hand(2) and deck[2] in table.hand(0)
    assert table.table["turn"] == 1 and table.view(None)["to_act"] == [1]
    assert table.table["discard_top"] == deck[21]
    assert table.table["stock_size"] == 55 - 21 - 1
    assert table.stock() == deck[22:]


def test_v5_a_joker_or_stop_start_card_goes_under_the_stock() -> None:
    """V-5: the turned card must be a number card; jokers and stops go to the bottom of the stock."""
    deck = build_deck(2, stock=[STOP, JOKER, "6-dots-violet"], discard=JOKER)
    table = Table(2, decks=[deck])
    assert table.table["discard_top"] == "6-dots-violet"
    assert table.stock()[-3:] == [JOKER, STOP, JOKER]
    assert table.table["stock_size"] == 55 - 14 - 1
    assert table.table["players"][0]["stops"] == table.table["players"][1]["stops"] == 0


def test_v5_c2_the_dealer_rotates_each_round() -> None:
    """C-2 / V-5: round 2 is dealt by seat 1; with 3 players seat 2 starts it."""
    table = five_round(3)
    assert table.view(None)["round"] == 2
    assert (table.table["dealer"], table.table["turn"]) == (1, 2)


# ================================================================ V-6 stop cards


def test_v6_a_stop_card_dealt_is_laid_out_and_replaced_at_once() -> None:
    """V-6: a stop dealt to seat 1 lies in front of it, and seat 1 gets the next card instead."""
    numbers = [c for c in NUMBER_CARDS]
    deck = [STOP, *numbers[:15], JOKER, JOKER, JOKER, STOP, STOP, *numbers[15:]]
    table = Table(2, decks=[deck])
    assert table.hand(1) == ordered(numbers[0:14:2])  # deck[1], deck[3], ...: the stop was skipped for seat 1
    assert table.hand(0) == ordered(numbers[1:14:2])
    assert [p["stops"] for p in table.table["players"]] == [0, 1]
    assert table.view(1)["you"]["stops"] == 1
    assert table.table["discard_top"] == numbers[14]
    assert STOP not in table.hand(1)


def test_v6_a_stop_card_drawn_is_laid_out_and_the_next_card_received() -> None:
    """V-6: drawing a stop lays it out and gives the next stock card; no event names a card."""
    table = Table.stacked(2, stock=[STOP, "6-dots-violet"])
    new = table.draw(1)
    assert [e.type_name() for e in new] == ["CardsDrawn", "StopCardLaid", "StockCardReceived"]
    assert "6-dots-violet" in table.hand(1) and STOP not in table.hand(1)
    assert table.table["players"][1]["stops"] == 1 and table.table["players"][1]["hand_size"] == 8
    assert not strings_in([e.data() for e in new]) & set(CANONICAL)


def test_v6_a_stop_card_is_never_in_the_hand() -> None:
    """V-6: `stop` cannot be discarded, melded or given: it is never in a hand."""
    table = Table.stacked(2, hands={1: N3[:3]}, stock=[STOP, "6-dots-violet"])
    table.draw(1)
    assert refusal(table, 1, {"type": "discard", "card": STOP}) == ("stop_never_in_hand", "V-6")
    assert refusal(table, 1, {"type": "meld", "cards": [STOP, N3[0], N3[1]]}) == ("stop_never_in_hand", "V-6")
    for action in table.legal(1):
        assert action == {"type": "stop"} or STOP not in strings_in({k: v for k, v in action.items() if k != "type"})
    assert {"type": "discard", "card": STOP} not in table.legal(1)


# ================================================================ V-7 draw


def test_v7_draw_from_the_stock() -> None:
    """V-7: the top stock card goes to the hand; the event does not name it."""
    table = Table.stacked(2, stock=["6-dots-violet"])
    new = table.draw(1)
    assert [e.type_name() for e in new] == ["CardsDrawn", "StockCardReceived"]
    assert new[0].data() == {"source": "stock", "taken": None}
    assert "6-dots-violet" in table.hand(1)
    assert table.table["stock_size"] == 55 - 14 - 1 - 1
    assert table.view(None)["phase"] == "play"


def test_v7_draw_the_top_discard_together_with_a_stock_card() -> None:
    """V-7: from the discard pile the player takes its top card and the top stock card in one action."""
    table = Table.stacked(2, discard="5-dots-blue", stock=["6-dots-violet"])
    new = table.draw(1, "discard")
    assert new[0].data() == {"source": "discard", "taken": "5-dots-blue"}
    assert {"5-dots-blue", "6-dots-violet"} <= set(table.hand(1))
    assert len(table.hand(1)) == 9
    assert (table.table["discard_size"], table.table["discard_top"]) == (0, None)


def test_v7_draw_refusals() -> None:
    """V-7: one draw per turn, before any play or discard; only the turn player draws (C-2)."""
    table = Table.stacked(2, hands={1: N3[:3]})
    assert refusal(table, 0, {"type": "draw", "from": "stock"}) == ("not_your_turn", "C-2")
    assert refusal(table, 1, {"type": "discard", "card": N3[0]}) == ("draw_first", "V-7")
    assert refusal(table, 1, {"type": "meld", "cards": N3[:3]}) == ("draw_first", "V-7")
    assert refusal(table, 1, {"type": "lay_off", "set": 1, "card": N3[0]}) == ("draw_first", "V-7")
    table.draw(1)
    assert refusal(table, 1, {"type": "draw", "from": "stock"}) == ("already_drawn", "V-7")
    assert refusal(table, 1, {"type": "draw", "from": "discard"}) == ("already_drawn", "V-7")
    table.with_state(phase="draw", discard=())
    assert refusal(table, 1, {"type": "draw", "from": "discard"}) == ("discard_empty", "V-7")
    assert {"type": "draw", "from": "discard"} not in table.legal(1)


# ================================================================ V-8 play


def test_v8_a_new_set_of_three_from_the_hand() -> None:
    """V-8 (a): three cards leave the hand and lie as set 1, public, with feature and value."""
    table = Table.stacked(2, hands={1: N3[:3]})
    table.draw(1)
    new = table.meld(1, [N3[2], N3[0], N3[1]])
    assert new[0].data() == {"set": 1, "by": "number", "cards": N3[:3]}
    assert new[0].to_action() == {"type": "meld", "cards": N3[:3], "by": "number"}
    assert table.sets(1) == [{"id": 1, "owner": 1, "feature": "number", "value": 3, "cards": N3[:3], "joker": False}]
    assert len(table.hand(1)) == 5 and not set(N3[:3]) & set(table.hand(1))


def test_v8_at_most_one_play_per_turn() -> None:
    """V-8: after a meld, no lay-off, meld or swap in the same turn; a discard ends it."""
    table = sets_table()
    table.draw(0)
    table.act(0, swap_meld())
    assert refusal(table, 0, {"type": "meld", "cards": N3[:3]}) == ("already_played", "V-8")
    assert refusal(table, 0, {"type": "lay_off", "set": 3, "card": JOKER}) == ("already_played", "V-8")
    assert not {a["type"] for a in table.legal(0)} & {"meld", "lay_off", "swap"}
    table.discard(0, JUNK[2])
    assert table.table["turn"] == 1


def test_v8_a_new_set_has_exactly_three_cards_from_the_hand() -> None:
    """V-8 (a): 2 or 4 cards are refused, and so are cards not in the hand."""
    table = Table.stacked(2, hands={1: N3[:4]})
    table.draw(1)
    assert refusal(table, 1, {"type": "meld", "cards": N3[:2]}) == ("wrong_set_size", "V-8")
    assert refusal(table, 1, {"type": "meld", "cards": N3[:4]}) == ("wrong_set_size", "V-8")
    assert refusal(table, 1, {"type": "meld", "cards": [N3[0], N3[1], N3[5]]}) == ("card_not_in_hand", "V-8")
    assert refusal(table, 1, {"type": "meld", "cards": [N3[0], N3[0], N3[1]]}) == ("card_not_in_hand", "V-8")


def test_v8_lay_off_onto_an_own_set() -> None:
    """V-8 (b): one hand card joins one of the player's own sets."""
    table = Table.stacked(2, hands={1: N3[:4], 0: JUNK[:7]})
    table.draw(1)
    table.meld(1, N3[:3])
    table.discard(1, table.hand(1)[0])
    table.turn(0, JUNK[0])
    table.draw(1)
    new = table.lay_off(1, 1, N3[3])
    assert new[0].to_action() == {"type": "lay_off", "set": 1, "card": N3[3]}
    assert table.sets(1)[0]["cards"] == N3[:4]


def test_v8_lay_off_only_onto_an_own_existing_set() -> None:
    """V-8 (b): not onto another player's set, not onto a set that does not exist, only hand cards."""
    table = sets_table()
    table.draw(0)
    assert refusal(table, 0, {"type": "lay_off", "set": 1, "card": N3[5]}) == ("not_your_set", "V-8")
    assert refusal(table, 0, {"type": "lay_off", "set": 9, "card": N3[5]}) == ("unknown_set", "V-8")
    table.act(0, swap_meld())
    table.discard(0, JUNK[2])
    table.draw(1)
    assert refusal(table, 1, {"type": "lay_off", "set": 1, "card": N3[4]}) == ("card_not_in_hand", "V-8")


def test_v8_swap_and_meld_the_taken_card() -> None:
    """V-8 (c): the taken card leaves the victim's set, the given card takes its place, the taken card
    is used at once in a new set."""
    table = sets_table()
    table.draw(0)
    before = len(table.hand(0))
    new = table.act(0, swap_meld())
    assert [e.type_name() for e in new] == ["CardSwapped"]
    assert table.sets(1)[0]["cards"] == [N3[0], N3[1], N3[5]]
    assert table.sets(0) == [
        {
            "id": 3,
            "owner": 0,
            "feature": "colour",
            "value": "blue",
            "cards": ["1-zigzag-blue", "2-checks-blue", N3[2]],
            "joker": False,
        }
    ]
    assert len(table.hand(0)) == before - 3
    action = new[0].to_action()
    assert action == {
        **swap_meld(),
        "then": {"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", N3[2]], "by": "colour"}},
    }


def test_v8_swap_and_lay_off_the_taken_card() -> None:
    """V-8 (c): the taken card may instead join one of the player's own sets."""
    table = sets_table()
    table.draw(0)
    table.act(0, swap_meld())
    table.discard(0, JUNK[2])
    table.turn(1, table.hand(1)[-1])
    table.draw(0)
    action = {
        "type": "swap",
        "from_seat": 1,
        "set": 2,
        "take": "5-dots-blue",
        "give": "7-dots-black",
        "then": {"lay_off": {"set": 3}},
    }
    new = table.act(0, action)
    assert new[0].to_action() == action
    assert table.sets(1)[1]["cards"] == ["7-dots-black", "6-dots-violet", JOKER]  # in place of 5-dots-blue
    assert table.sets(0)[0]["cards"] == ["1-zigzag-blue", "2-checks-blue", N3[2], "5-dots-blue"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"from_seat": 0}, "own_set"),
        ({"set": 9}, "unknown_set"),
        ({"from_seat": 1, "set": 3}, "unknown_set"),
        ({"take": N3[3]}, "card_not_in_set"),
        ({"set": 2, "take": JOKER}, "joker_not_swappable"),
        ({"give": "7-dots-black"}, "swap_breaks_set"),  # not a 3
        ({"set": 2, "take": "5-dots-blue", "give": JOKER}, "swap_breaks_set"),  # a second joker
        ({"give": N3[4]}, "card_not_in_hand"),
        ({"then": {"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", "7-dots-black"]}}}, "taken_card_unused"),
        ({"then": {"meld": {"cards": ["1-zigzag-blue", N3[2]]}}}, "wrong_set_size"),
        ({"then": {"meld": {"cards": ["1-zigzag-blue", JUNK[2], N3[2]]}}}, "no_common_feature"),
        ({"then": {"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", N3[2]], "by": "number"}}}, "wrong_feature"),
        ({"then": {"meld": {"cards": ["1-zigzag-blue", N3[5], N3[2]]}}}, "card_not_in_hand"),  # given away
        ({"then": {"lay_off": {"set": 2}}}, "not_your_set"),
    ],
)
def test_v8_swap_refusals(change: dict[str, Any], expected: str) -> None:
    """V-8 (c) / V-9: from another player's set, a non-joker card, the victim's set stays valid, the
    taken card is used at once in a valid new set or lay-off."""
    table = sets_table()
    table.draw(0)
    code, rule = refusal(table, 0, {**swap_meld(), **change})
    assert code == expected
    assert rule == ("V-9" if expected in ("no_common_feature", "wrong_feature") else "V-8")


@pytest.mark.parametrize(
    ("then", "code"),
    [
        ({}, "invalid_request"),
        ({"meld": {"cards": [N3[2]]}, "lay_off": {"set": 1}}, "invalid_request"),
        ({"discard": {}}, "invalid_request"),
        ({"meld": [N3[2]]}, "invalid_request"),
        ({"meld": {"cards": ["1-zigzag-blue", "XX", N3[2]]}}, "unknown_card"),
        ({"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", N3[2]], "by": "suit"}}, "invalid_request"),
        ({"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", N3[2]], "extra": 1}}, "invalid_request"),
        ({"lay_off": {"set": "3"}}, "invalid_request"),
        ({"lay_off": {"set": True}}, "invalid_request"),
    ],
)
def test_v8_a_malformed_swap_then_is_invalid_input(then: dict[str, Any], code: str) -> None:
    """API.md: `then` is {"meld": {cards, by?}} or {"lay_off": {set}}; anything else is a 400."""
    table = sets_table()
    table.draw(0)
    assert bad_input(table, 0, {**swap_meld(), "then": then}) == code


# ================================================================ V-9 sets


@pytest.mark.parametrize(
    ("cards", "by", "val"),
    [
        (N3[:3], "number", 3),
        (["1-dots-red", "2-dots-orange", "4-dots-green"], "pattern", "dots"),
        ([with_colour(1, "green"), with_colour(2, "green"), with_colour(5, "green")], "colour", "green"),
    ],
)
def test_v9_a_set_shares_one_feature(cards: list[str], by: str, val: Any) -> None:
    """V-9: same number, same pattern or same colour; `by` may be given or left out."""
    for given in (None, by):
        table = Table.stacked(2, hands={1: cards})
        table.draw(1)
        table.meld(1, cards, by=given)
        assert (table.sets(1)[0]["feature"], table.sets(1)[0]["value"]) == (by, val)


def test_v9_refused_sets() -> None:
    """V-9: no common feature, a wrong `by`, two jokers, a joker in the first set."""
    hand = [N3[0], N3[1], "1-dots-red", "6-checks-orange", JOKER, JOKER, N3[2]]
    table = Table.stacked(2, hands={1: hand})
    table.draw(1)
    assert refusal(table, 1, {"type": "meld", "cards": [N3[0], "1-dots-red", "6-checks-orange"]}) == (
        "no_common_feature",
        "V-9",
    )
    assert refusal(table, 1, {"type": "meld", "cards": N3[:3], "by": "colour"}) == ("wrong_feature", "V-9")
    assert refusal(table, 1, {"type": "meld", "cards": [N3[0], JOKER, JOKER]}) == ("too_many_jokers", "V-9")
    assert refusal(table, 1, {"type": "meld", "cards": [N3[0], N3[1], JOKER]}) == ("joker_in_first_set", "V-9")
    assert all(JOKER not in a.get("cards", []) for a in table.legal(1) if a["type"] == "meld")


def test_v9_a_joker_in_a_later_set_stands_for_any_card_that_fits() -> None:
    """V-9: seat 1's second set holds a joker; the set is built on the pattern of its two number cards."""
    table = sets_table()
    second = table.sets(1)[1]
    assert (second["id"], second["feature"], second["value"], second["joker"]) == (2, "pattern", "dots", True)


def lay_off_table(rules_version: int | None = None) -> Table:
    """sets_table at seat 1's next play: it holds a joker and JUNK[6]; its first set is the 3s (set 1)."""
    table = sets_table(rules_version)
    table.turn(0, JUNK[2])  # draws JUNK[5]
    table.draw(1)  # JUNK[6]
    return table


@pytest.mark.parametrize("rules_version", [1, 2])
def test_v9_lay_off_must_share_the_feature_and_a_set_holds_one_joker(rules_version: int) -> None:
    """V-9 (both rules versions): a lay-off shares the set's feature; no second joker joins a set."""
    table = lay_off_table(rules_version)
    assert refusal(table, 1, {"type": "lay_off", "set": 1, "card": JUNK[6]}) == ("card_does_not_fit", "V-9")
    assert refusal(table, 1, {"type": "lay_off", "set": 2, "card": JOKER}) == ("too_many_jokers", "V-9")


def test_v9_rules_version_1_no_joker_joins_a_first_set_by_lay_off() -> None:
    """V-9 as games of rules version 1 read it: the first set never holds a joker, nor is one offered."""
    table = lay_off_table(rules_version=1)
    assert refusal(table, 1, {"type": "lay_off", "set": 1, "card": JOKER}) == ("joker_in_first_set", "V-9")
    assert [a for a in table.legal(1) if a["type"] == "lay_off"] == []


def test_v9_a_joker_may_join_a_first_set_on_the_table_by_lay_off() -> None:
    """V-9 (rules version 2 and later): the first set holds no joker when laid; once on the table a joker
    may be laid off onto it, and the lay-off is offered among the legal actions."""
    table = lay_off_table()
    assert table.config.rules_version >= 2
    lay_off = {"type": "lay_off", "set": 1, "card": JOKER}
    assert [a for a in table.legal(1) if a["type"] == "lay_off"] == [lay_off]
    table.act(1, lay_off)
    assert table.sets(1)[0]["cards"] == [*N3[:3], JOKER] and table.sets(1)[0]["joker"] is True


def test_v9_rules_version_1_no_joker_is_given_into_a_first_set_by_a_swap() -> None:
    """V-9 / V-8 (c), rules version 1: a swap may not give a joker into the victim's first set."""
    table = sets_table(rules_version=1)
    table.draw(0)
    assert refusal(table, 0, {**swap_meld(), "give": JOKER}) == ("swap_breaks_set", "V-8")
    assert not [a for a in table.legal(0) if a["type"] == "swap" and a["set"] == 1 and a["give"] == JOKER]


def test_v9_a_swap_may_give_a_joker_into_another_players_first_set() -> None:
    """V-9 / V-8 (c), rules version 2: seat 0 takes 3-waves-blue from seat 1's first set and gives its
    joker in its place; the swap is offered and accepted, and seat 1's first set now holds the joker."""
    table = sets_table()
    table.draw(0)
    swap = {**swap_meld(), "give": JOKER}
    offered = [a for a in table.legal(0) if a["type"] == "swap" and a["set"] == 1 and a["give"] == JOKER]
    assert {**swap, "then": {"meld": {**swap["then"]["meld"], "by": "colour"}}} in offered
    table.act(0, swap)
    assert table.sets(1)[0]["cards"] == [N3[0], N3[1], JOKER]
    assert table.sets(0)[0]["cards"] == ["1-zigzag-blue", "2-checks-blue", N3[2]]


def test_v9_rules_version_1_a_joker_does_not_complete_a_first_set_by_a_go5_call() -> None:
    """V-9 / V-13, rules version 1: a discarded joker completes no 4-card first set; nobody may call."""
    table = claim_table(JOKER, rules_version=1)
    assert table.snap.out_of_turn() == () and table.view(1)["you"]["go5"] == []
    assert refusal(table, 1, go5_action(1)) == ("does_not_complete", "V-13")


def test_v9_a_go5_call_may_complete_a_first_set_with_a_joker() -> None:
    """V-9 / V-13, rules version 2: seat 2 discards a joker; both 4-card first sets may take it; seat 1's
    call puts the joker in its set as the fifth card and ends the round."""
    table = claim_table(JOKER)
    assert table.snap.out_of_turn() == (0, 1)
    assert table.view(1)["you"]["go5"] == [1] and go5_action(2) in table.legal(0)
    table.go5(1, 1)
    assert table.of_type("Go5Called")[0].data() == {"set": 1, "card": JOKER}
    assert table.of_type("RoundScored")[0].data()["reason"] == "go5"


# ================================================================ V-10 stop


def test_v10_a_stop_card_skips_the_next_player() -> None:
    """V-10: seat 1 plays a stop after drawing; after its discard seat 2 is skipped and seat 0 draws."""
    table = Table.stacked(3, hands={1: JUNK[:7]}, stock=[STOP, "6-dots-violet"])
    table.draw(1)
    assert {"type": "stop"} in table.legal(1)
    new = table.stop(1)
    assert new[0].to_action() == {"type": "stop"}
    assert table.table["players"][1]["stops"] == 0 and table.table["stops_out"] == 1
    assert {"type": "stop"} not in table.legal(1)
    table.discard(1, JUNK[0])
    assert table.table["turn"] == 0 and table.view(None)["to_act"] == [0]
    assert refusal(table, 2, {"type": "draw", "from": "stock"}) == ("not_your_turn", "C-2")


def test_v10_with_two_players_the_stop_gives_another_turn() -> None:
    """V-10: skipping the only other player: the same player draws again."""
    table = Table.stacked(2, hands={1: JUNK[:7]}, stock=[STOP, "6-dots-violet"])
    table.draw(1)
    table.stop(1)
    table.discard(1, JUNK[0])
    assert table.table["turn"] == 1


def test_v10_stop_refusals() -> None:
    """V-10: only with a stop in front, once a turn, after the draw and before the discard."""
    table = Table.stacked(2, hands={1: JUNK[:7], 0: JUNK[7:14]}, stock=[STOP, STOP, "6-dots-violet"])
    table.draw(1)
    assert table.table["players"][1]["stops"] == 2
    table.stop(1)
    assert refusal(table, 1, {"type": "stop"}) == ("stop_already_played", "V-10")
    table.discard(1, JUNK[0])  # seat 0 is skipped: seat 1 again
    assert refusal(table, 1, {"type": "stop"}) == ("draw_first", "V-10")
    table.turn(1, JUNK[1])
    table.draw(0)
    assert refusal(table, 0, {"type": "stop"}) == ("no_stop_card", "V-10")
    assert {"type": "stop"} not in table.legal(0)


# ================================================================ V-11 discard


def test_v11_a_discard_ends_the_turn() -> None:
    """V-11: the card lies face up on the discard pile; the next player draws."""
    table = Table.stacked(3, hands={1: JUNK[:7]})
    table.draw(1)
    new = table.discard(1, JUNK[3])
    assert new[0].to_action() == {"type": "discard", "card": JUNK[3]}
    assert table.table["discard_top"] == JUNK[3] and table.table["discard_size"] == 2
    assert JUNK[3] not in table.hand(1) and len(table.hand(1)) == 7
    assert table.table["turn"] == 2
    table.draw(2)
    assert refusal(table, 2, {"type": "discard", "card": JUNK[3]}) == ("card_not_in_hand", "V-11")


def test_v11_an_empty_hand_ends_the_turn_without_a_discard() -> None:
    """V-11: a play that empties the hand ends the turn at once; no discard, no Go5 window."""
    table = Table.stacked(2, hands={1: N3[:3]}, stock=[N3[3]])
    table.with_state(hands=((JUNK[0],), (N3[0], N3[1])))
    table.draw(1)
    table.meld(1, [N3[0], N3[1], N3[3]])
    assert table.hand(1) == [] and table.table["turn"] == 0 and table.view(None)["phase"] == "draw"
    assert table.table["discard_size"] == 1 and table.table["go5_open"] is False


# ================================================================ V-12 a five ends the round


def test_v12_a_five_ends_the_round_at_once() -> None:
    """V-12: the lay-off that makes five cards ends the round before any discard; it is scored."""
    table = five_round(2)
    names = [e.type_name() for e in table.events]
    at = names.index("RoundScored")
    assert names[at - 1] == "CardLaidOff" and names[at + 1] == "RoundStarted"
    scored = table.events[at].data()
    assert (scored["reason"], scored["closer"], scored["round"]) == ("five", 1, 1)
    assert table.view(None)["round"] == 2 and table.sets(1) == []


# ================================================================ V-13 Go5


def test_v13_a_player_whose_4_set_the_discard_completes_may_call_go5() -> None:
    """V-13: seat 1 (not the discarder, not next to draw) is to act first, sees its claim, calls Go5."""
    table = claim_table(N3[5])
    assert table.view(None)["to_act"] == [1, 0]
    assert table.snap.out_of_turn() == (1,), "seat 1 acts out of turn; seat 0 is the turn player"
    assert table.view(1)["you"]["go5"] == [1] and table.view(1)["actions"] == ["go5"]
    assert table.legal(1) == [go5_action(1)]
    assert table.view(0)["you"]["go5"] == [] and table.view(2)["you"]["go5"] == []
    assert "you" not in table.view(None)
    assert table.table["go5_open"] is True and table.table["discarded_by"] == 2
    new = table.go5(1, 1)
    assert [e.type_name() for e in new][:2] == ["Go5Called", "RoundScored"]
    assert new[0].data() == {"set": 1, "card": N3[5]} and new[0].to_action() == go5_action(1)
    assert (new[1].data()["reason"], new[1].data()["closer"]) == ("go5", 1)
    five = N3[:4] + [N3[5]]
    assert new[1].data()["scores"][1] == sum(value(c) for c in five) - sum(value(c) for c in table_hand_before(1))


def table_hand_before(seat: int) -> list[str]:
    """Seat 1's hand in claim_table when the call comes: its three draws JUNK[11], JUNK[14], JUNK[17]."""
    assert seat == 1
    return [JUNK[11], JUNK[14], JUNK[17]]


def test_v13_the_next_player_may_call_go5_instead_of_drawing() -> None:
    """V-13: seat 0 is to draw and also holds a claim (3-zigzag-black completes its zigzag set)."""
    table = claim_table(N3[4])
    assert table.view(None)["to_act"] == [0, 1]
    assert table.snap.out_of_turn() == (0, 1), "both may call, clockwise from the discarder"
    assert go5_action(2) in table.legal(0) and {"type": "draw", "from": "stock"} in table.legal(0)
    table.go5(0, 2)
    assert table.of_type("Go5Called")[0].data() == {"set": 2, "card": N3[4]}


def test_v13_the_first_valid_call_counts() -> None:
    """V-13: two claimants; the first call ends the round, the second is refused."""
    table = claim_table(N3[4])
    table.go5(1, 1)
    assert refusal(table, 0, go5_action(2)) == ("no_go5_window", "V-13")
    assert len(table.of_type("Go5Called")) == 1


def test_v13_call_refusals() -> None:
    """V-13: not the discarder, only an own 4-card set, only a card that completes it, only in the window."""
    table = claim_table(JUNK[7])
    assert refusal(table, 2, go5_action(1)) == ("own_discard", "V-13")
    assert refusal(table, 1, go5_action(1)) == ("does_not_complete", "V-13")
    assert refusal(table, 1, go5_action(2)) == ("not_your_set", "V-13")
    assert refusal(table, 1, go5_action(7)) == ("unknown_set", "V-13")
    assert table.view(None)["to_act"] == [0]
    assert table.snap.out_of_turn() == (), "a discard nobody can call leaves no one acting out of turn"
    early = Table.stacked(3, {1: [*N3[:3], *JUNK[:4]], 2: [N3[4], *JUNK[4:10]]})
    early.draw(1)
    early.meld(1, N3[:3])
    early.discard(1, JUNK[0])
    early.draw(2)
    early.discard(2, N3[4])
    assert refusal(early, 1, go5_action(1)) == ("not_four_cards", "V-13")
    assert refusal(early, 1, {"type": "draw", "from": "stock"}) == ("not_your_turn", "C-2")


def test_v13_the_window_closes_with_the_next_draw() -> None:
    """V-13: once the next player draws, the discard can no longer be called."""
    table = claim_table(N3[5])
    table.draw(0)
    assert refusal(table, 1, go5_action(1)) == ("no_go5_window", "V-13")
    assert table.view(1)["you"]["go5"] == [] and table.view(None)["to_act"] == [0]


def test_v13_no_call_on_an_old_discard_after_a_turn_without_a_discard() -> None:
    """V-13 / V-11: seat 0 draws and empties its hand with a meld, so its turn ends without a discard;
    3-stars-red still lies on top, but the window closed with seat 0's draw."""
    table = claim_table(N3[5])
    hands = table.snap.state.hands
    table.with_state(hands=(("5-dots-blue", "7-dots-black"), hands[1], hands[2]))
    table.draw(0)  # 2-dots-orange
    table.meld(0, ["2-dots-orange", "5-dots-blue", "7-dots-black"])
    assert table.hand(0) == [] and table.table["turn"] == 1 and table.table["discard_top"] == N3[5]
    assert table.table["go5_open"] is False and table.view(1)["you"]["go5"] == []
    assert table.view(None)["to_act"] == [1]
    assert refusal(table, 1, go5_action(1)) == ("no_go5_window", "V-13")


@pytest.mark.parametrize("first", ["call", "draw"])
def test_v13_a_call_racing_the_next_draw_exactly_one_wins(first: str) -> None:
    """V-13: from the same position, Go5 by seat 1 and the draw of seat 0: whichever comes first wins."""
    table = claim_table(N3[5])
    call, draw = (1, go5_action(1)), (0, {"type": "draw", "from": "stock"})
    winner, loser = (call, draw) if first == "call" else (draw, call)
    table.act(*winner)
    code, rule = refusal(table, *loser)
    if first == "call":  # round 2: dealer 1, seat 2 starts
        assert (code, rule) == ("not_your_turn", "C-2")
    else:
        assert (code, rule) == ("no_go5_window", "V-13")
    assert len(table.of_type("Go5Called")) == (1 if first == "call" else 0)


# ================================================================ V-14 empty stock


def test_v14_empty_stock_reshuffles_once_then_ends_the_round() -> None:
    """V-14 / C-4: the pile but its top card is reshuffled ("round/1/reshuffle/1"); when the stock is
    empty again the round ends at once, without Go5."""
    table = Table(2, seed="v14")
    reshuffled = False
    for _ in range(400):
        if table.of_type("RoundScored"):
            break
        seat = table.snap.state.turn
        before = table.truth()["table"]
        action = {"type": "draw", "from": "stock"} if table.view(None)["phase"] == "draw" else None
        action = action or {"type": "discard", "card": table.hand(seat)[0]}
        new = table.act(seat, action)
        if any(e.type_name() == "StockReshuffled" for e in new):
            assert before["stock"] == [] and not reshuffled
            reshuffled = True
            expected = list(shuffle(before["discard"][:-1], "v14", "round/1/reshuffle/1"))
            after = table.truth()["table"]
            assert after["discard"] == before["discard"][-1:]
            taken = len(expected) - len(after["stock"])
            assert after["stock"] == expected[taken:]
            assert [c for c in expected[:taken] if c != STOP] == [
                c for c in after["hands"][seat] if c not in before["hands"][seat]
            ]
    scored = table.of_type("RoundScored")
    assert reshuffled and len(scored) == 1
    assert (scored[0].data()["reason"], scored[0].data()["closer"]) == ("stock_empty", None)
    assert not table.of_type("Go5Called") and table.view(None)["round"] == 2


def test_v14_round_ends_when_nothing_can_be_reshuffled() -> None:
    """V-14: an empty stock and a pile of one card: the reshuffle gives nothing, the round ends."""
    table = Table.stacked(2)
    table.with_state(stock=())
    table.draw(1)
    scored = table.of_type("RoundScored")
    assert len(scored) == 1 and scored[0].data()["reason"] == "stock_empty"
    assert not table.of_type("StockReshuffled")


# ================================================================ V-15 scoring


@pytest.mark.parametrize(
    "options", [{}, {"pattern_values": [7, 6, 5, 4, 3, 2, 1], "joker_value": -25}], ids=["default", "options"]
)
def test_v15_round_scores(options: dict[str, Any]) -> None:
    """V-15: + sets, - hand cards, joker_value for every joker held; stop cards count nothing."""
    table = five_round(2, options, joker_for_seat0=True)
    pv, jv = options.get("pattern_values"), options.get("joker_value", -10)
    seat1 = sum(value(c, pv) for c in N3[:5]) - sum(value(c, pv) for c in [STOCK[0], STOCK[2], STOCK[4]])
    hand0 = [JUNK[4], JUNK[5], JUNK[6], "1-dots-red", JOKER, STOCK[1], STOCK[3]]
    seat0 = -sum(value(c, pv) for c in hand0 if c != JOKER) + jv
    scored = table.of_type("RoundScored")[0].data()["scores"]
    assert scored == [seat0, seat1]
    assert table.view(None)["scores"] == [seat0, seat1]
    assert table.table["round_scores"] == [[seat0, seat1]]


def test_v15_default_scores_by_hand() -> None:
    """V-15 with the default values, worked out card by card."""
    table = five_round(2, joker_for_seat0=True)
    # seat 1: 3-dots 1 + 3-stripes 2 + 3-waves 3 + 3-checks 4 + 3-zigzag-black 10 = 20,
    #   less 5-dots-blue 1, 7-checks-yellow 4, 1-waves-yellow 3 in its hand: 12
    # seat 0: in hand 7-zigzag-green 5, 1-stars-violet 6, 2-rings-red 7, 1-dots-red 1,
    #   6-zigzag-yellow 5, 2-waves-green 3 = -27, and a joker -10: -37
    assert table.of_type("RoundScored")[0].data()["scores"] == [-37, 12]


# ================================================================ V-16 target and game end


def test_v16_the_game_ends_when_a_player_reaches_the_target() -> None:
    """V-16: after the round, a total at or above the target ends the game; the highest total wins."""
    table = five_round(2, {"target": 12})
    names = [e.type_name() for e in table.events]
    assert names[-3:] == ["RoundScored", "GameEnded", "SeedRevealed"]
    view = table.view(None)
    assert view["status"] == "finished" and view["result"] == {"totals": [-28, 12], "winners": [1]}
    assert refusal(table, 0, {"type": "draw", "from": "stock"}) == ("game_finished", "V-16")


def test_v16_below_the_target_a_new_round_starts() -> None:
    """V-16: 12 points do not reach 13: round 2 is dealt."""
    table = five_round(2, {"target": 13})
    assert table.view(None)["status"] == "active" and table.view(None)["round"] == 2
    assert table.view(None)["scores"] == [-28, 12]


def test_v16_c7_equal_highest_totals_share_the_win() -> None:
    """C-7: everyone level at the highest total wins; the round scores -28 and 12 (see above)."""
    assert winners_of([30, 12, 30]) == (0, 2)
    assert winners_of([-5, -7]) == (0,)
    table = five_round(2, {"target": 12}, finish=False)
    table.with_state(totals=(40, 0))
    table.lay_off(1, 1, N3[4])
    ended = table.of_type("GameEnded")[0].data()
    assert ended == {"totals": [12, 12], "winners": [0, 1]}


# ================================================================ C-6 views


def test_c6_views_show_own_hand_public_sets_and_sizes_only() -> None:
    """C-6: a seat sees its hand; everyone sees sets, stop cards, hand sizes and the top discard."""
    table = claim_table(N3[5])
    truth = table.truth()["table"]
    for viewer in (None, 0, 1, 2):
        view = table.view(viewer)
        seen = strings_in(view)
        for seat in range(3):
            hidden = set(truth["hands"][seat]) - {JOKER}
            if seat == viewer:
                assert view["you"]["hand"] == truth["hands"][seat]
            else:
                assert not hidden & seen, (viewer, seat)
        assert not set(truth["stock"]) - {JOKER, STOP} & seen
        assert "stock" not in view["table"] and "hands" not in view["table"]
        assert [p["hand_size"] for p in view["table"]["players"]] == [len(h) for h in truth["hands"]]
        assert view["table"]["discard_top"] == N3[5]
