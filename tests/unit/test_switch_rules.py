"""Switch rules S-1 ... S-11 one by one, on stacked decks (C-5) built by switch_helpers.build_deck.

Four players unless said otherwise; round 1's dealer is seat 0, so seat 1 (left of the
dealer) is the first player and play runs 1, 2, 3, 0 (C-2). Every expected card, score
and seat below is worked out by hand from the rule text.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from domain import engine
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event
from domain.options import MAX_EVENTS_DEFAULT
from domain.shuffle import shuffle
from domain.switch import card_value, hand_value
from tests.unit.switch_helpers import Table, build_deck, canonical, cards_everywhere, play_until

HEARTS = ["3H", "4H", "5H", "6H", "7H", "9H", "10H"]
SPADES = ["3S", "4S", "5S", "6S", "7S", "9S", "10S"]
DIAMONDS = ["3D", "4D", "5D", "6D", "7D", "9D", "10D"]
CLUBS = ["3C", "4C", "5C", "6C", "7C", "9C", "10C"]
PLAIN = {0: DIAMONDS, 1: HEARTS, 2: SPADES, 3: CLUBS}
UNPLAYABLE_ON_HEARTS = ["QS", "QC", "QD", "AS", "AC", "AD"]
DRAW: dict[str, Any] = {"type": "draw"}
VALUES = {"JK": 50, "2": 20, "A": 15, "10": 10, "J": 10, "Q": 10, "K": 10, **{str(v): 5 for v in range(3, 10)}}


def with_hands(**changes: list[str]) -> dict[int, list[str]]:
    """PLAIN hands with some seats replaced: with_hands(s1=[...])."""
    hands = {seat: list(cards) for seat, cards in PLAIN.items()}
    for key, cards in changes.items():
        hands[int(key[1:])] = cards
    return hands


def refusal(table: Table, seat: int, action: dict[str, Any]) -> tuple[str, str | None]:
    """(code, rule) of a RuleViolation."""
    error = table.refused(seat, action, RuleViolation)
    return error.code, error.rule


def play(*cards: str, suit: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "play", "cards": list(cards)}
    if suit is not None:
        body["suit"] = suit
    return body


def value_by_hand(cards: list[str]) -> int:
    """S-10, computed here from the rule text."""
    return sum(VALUES["JK" if c == "JK" else c[:-1]] for c in cards)


# ================================================================ S-1 players, cards, options


@pytest.mark.parametrize("players", [4, 5, 7, 10])
def test_s1_four_to_ten_players_are_accepted(players: int) -> None:
    """S-1: 4-10 players, each dealt 7 cards (S-2)."""
    table = Table(players)
    assert table.table["hand_sizes"] == [7] * players


@pytest.mark.parametrize("players", [0, 1, 2, 3, 11, 16])
def test_s1_other_player_counts_are_refused(players: int) -> None:
    """S-1: fewer than four or more than ten players are refused."""
    with pytest.raises(RuleViolation) as info:
        engine.make_config("switch", players, {}, "seed")
    assert (info.value.code, info.value.rule) == ("bad_player_count", "S-1")


def test_s1_four_decks_and_eight_jokers_make_216_cards() -> None:
    """S-1: four 52-card decks plus 8 jokers, every card in one place after the deal."""
    table = Table(4)
    assert len(canonical()) == 216
    assert cards_everywhere(table.snap) == Counter(canonical())
    assert table.table["stock_size"] == 216 - 28 - 1


def test_s1_options_default() -> None:
    """S-1, S-2, S-4, S-11 (and C-9's max_events): the defaults."""
    config = engine.make_config("switch", 4, {}, "seed")
    assert dict(config.options) == {
        "hand_size": 7,
        "match_rank": False,
        "extra_jokers": 0,
        "extra_twos": 0,
        "target": 500,
        "max_events": MAX_EVENTS_DEFAULT,
    }


def test_s1_extra_jokers_then_extra_twos_in_suit_order_follow_the_canonical_deck() -> None:
    """S-1 / C-3: extra jokers are appended, then twos S H D C repeating."""
    game = engine.get_game("switch")
    deck = list(game.canonical_deck(4, {"extra_jokers": 3, "extra_twos": 6}))
    assert deck == canonical(3, 6)
    assert deck[:3] == ["AS", "2S", "3S"] and deck[52] == "AS"
    assert deck[208:] == ["JK"] * 11 + ["2S", "2H", "2D", "2C", "2S", "2H"]
    table = Table(5, {"extra_jokers": 3, "extra_twos": 6})
    assert cards_everywhere(table.snap) == Counter(deck)


def test_s1_stacked_deck_must_match_the_options() -> None:
    """C-5 / S-1: a 216-card deck is refused when the options ask for extra cards; the right one is taken."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("switch", 4, {"extra_twos": 1}, "seed", [canonical()])
    assert info.value.code == "invalid_deck"
    engine.make_config("switch", 4, {"extra_twos": 1}, "seed", [list(reversed(canonical(0, 1)))])
    with pytest.raises(InvalidInput) as info:
        engine.make_config("switch", 4, {}, "seed", [[*canonical()[:-1], "XX"]])
    assert info.value.code == "unknown_card"


@pytest.mark.parametrize(
    "options",
    [
        {"hand_size": 6},
        {"hand_size": 16},
        {"extra_jokers": -1},
        {"extra_jokers": 9},
        {"extra_twos": 9},
        {"target": 0},
        {"target": "500"},
        {"match_rank": 1},
        {"match_rank": "on"},
        {"match_rank": None},
        {"decks": 2},
    ],
)
def test_s1_options_out_of_range_are_refused(options: dict[str, Any]) -> None:
    """S-1 / S-2 / S-4 / S-11: option ranges; match_rank is true or false."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("switch", 4, options, "seed")
    assert info.value.code == "invalid_option"


# ================================================================ S-2 deal


def test_s2_deal_one_at_a_time_clockwise_from_left_of_the_dealer() -> None:
    """S-2: seat 1 gets deck cards 0, 4, 8, ...; then the start card; the rest is the stock."""
    deck = canonical()
    table = Table(4, decks=[deck])
    assert table.hand(1) == ["AS", "5S", "9S", "KS", "4H", "8H", "QH"]
    assert table.hand(2) == ["2S", "6S", "10S", "AH", "5H", "9H", "KH"]
    assert table.hand(3) == ["3S", "7S", "JS", "2H", "6H", "10H", "AD"]
    assert table.hand(0) == ["4S", "8S", "QS", "3H", "7H", "JH", "2D"]
    assert table.table["top_card"] == "3D" and table.table["discard"] == ["3D"]
    assert table.stock() == deck[29:]
    assert (table.table["dealer"], table.turn, table.table["suit"]) == (0, 1, "D")


def test_s2_hand_size_option() -> None:
    """S-2: `hand_size` cards each; with 10 cards and 4 players the start card is deck card 40."""
    table = Table(4, {"hand_size": 10}, decks=[canonical()])
    assert table.table["hand_sizes"] == [10] * 4
    assert table.table["top_card"] == canonical()[40] == "2C"
    assert Table(10, {"hand_size": 15}).table["stock_size"] == 216 - 150 - 1


def test_s2_dealer_rotates_and_deals_from_their_left() -> None:
    """S-2 / C-2: round 2 is dealt by seat 1, starting with seat 2, who plays first."""
    table = Table.stacked(hands=PLAIN, start="5H", later_decks=[canonical()])
    table.set_hands({1: ["9H"]})
    table.play(1, "9H")
    assert table.view()["round"] == 2
    assert (table.table["dealer"], table.turn) == (1, 2)
    assert table.hand(2) == ["AS", "5S", "9S", "KS", "4H", "8H", "QH"]
    assert [e.data()["dealer"] for e in table.of_type("RoundStarted")] == [0, 1]


def test_s2_later_rounds_use_the_c4_shuffle() -> None:
    """C-4: round 2 of a game stacked for round 1 is shuffle(canonical, "round/2")."""
    table = Table.stacked(hands=PLAIN, start="5H", seed="later")
    table.set_hands({1: ["9H"]})
    table.play(1, "9H")
    expected = shuffle(canonical(), "later", "round/2")
    assert table.table["top_card"] == expected[28]
    assert Counter(table.hand(2)) == Counter(expected[0:28:4])


# ================================================================ S-3 the start card


def test_s3_king_reverses_so_the_player_right_of_the_dealer_starts() -> None:
    """S-3: a K start card: seat 3 (right of dealer 0) plays first, then play runs 2, 1, 0."""
    table = Table.stacked(hands=PLAIN, start="KC")
    assert table.to_act == (3,)
    assert table.table["direction"] == "counterclockwise"
    assert refusal(table, 1, play("5H")) == ("not_your_turn", "C-2")
    table.play(3, "5C")
    assert table.to_act == (2,)


def test_s3_eight_skips_the_player_left_of_the_dealer() -> None:
    """S-3: an 8 start card: seat 1 is skipped, seat 2 plays first; clockwise."""
    table = Table.stacked(hands=PLAIN, start="8S")
    assert table.to_act == (2,)
    assert table.table["direction"] == "clockwise"
    assert table.legal(1) == []
    table.play(2, "5S")
    assert table.to_act == (3,)


def test_s3_jack_lets_the_first_player_choose_the_suit_then_play() -> None:
    """S-3: a J start card: seat 1 names the suit first (choose_suit), then plays a turn."""
    table = Table.stacked(hands=PLAIN, start="JS")
    assert table.view()["phase"] == "choose_suit" and table.table["suit"] is None
    assert table.legal(1) == [{"type": "choose_suit", "suit": s} for s in "SHDC"]
    assert table.view(1)["actions"] == ["choose_suit"]
    assert refusal(table, 1, play("5H")) == ("choose_suit_first", "S-3")
    assert refusal(table, 1, DRAW) == ("choose_suit_first", "S-3")
    assert refusal(table, 2, {"type": "choose_suit", "suit": "H"}) == ("not_your_turn", "C-2")
    table.choose(1, "H")
    assert (table.table["suit"], table.view()["phase"], table.to_act) == ("H", "play", (1,))
    table.play(1, "5H")
    assert table.to_act == (2,)


def test_s3_choose_suit_only_on_a_jack_start_card() -> None:
    """S-3: choose_suit at any other time is refused."""
    table = Table.stacked(hands=PLAIN, start="5H")
    assert refusal(table, 1, {"type": "choose_suit", "suit": "S"}) == ("no_suit_to_choose", "S-3")


def test_s3_two_opens_a_pending_draw_of_two() -> None:
    """S-3 / S-7: a 2 start card: seat 1 faces a pending draw of 2 and, without a 2 or joker, can only draw."""
    table = Table.stacked(hands=PLAIN, start="2D", stock=["9S", "9C"])
    assert table.table["pending_draw"] == 2
    assert table.legal(1) == [DRAW]
    table.draw(1)
    assert sorted(table.hand(1)) == sorted([*HEARTS, "9S", "9C"])
    assert (table.table["pending_draw"], table.table["suit"], table.to_act) == (0, "D", (2,))


def test_s3_joker_opens_a_pending_draw_of_five_and_sets_no_suit() -> None:
    """S-3 / S-5: a joker start card: a pending draw of 5; after it, any card may be played and sets the suit."""
    s1 = ["2S", "3H", "4H", "5H", "6H", "7H", "9H"]
    s2 = ["5C", "3S", "4S", "5S", "6S", "7S", "9S"]
    table = Table.stacked(hands=with_hands(s1=s1, s2=s2), start="JK", stock=["QS", "QC", "QD", "AS", "AC"])
    assert (table.table["pending_draw"], table.table["suit"]) == (5, None)
    assert refusal(table, 1, play("2S")) == ("joker_only_on_joker", "S-7")
    table.draw(1)
    assert len(table.hand(1)) == 12
    assert table.to_act == (2,)
    assert table.you(2)["playable"] == ["3S", "4S", "5S", "6S", "7S", "9S", "5C"]
    table.play(2, "5C")
    assert table.table["suit"] == "C"


def test_s3_any_other_start_card_just_sets_the_suit() -> None:
    """S-3: a 5 start card: suit D, seat 1 first, clockwise, nothing pending."""
    table = Table.stacked(hands=PLAIN, start="5D")
    view = table.table
    assert (view["suit"], view["turn"], view["direction"], view["pending_draw"]) == ("D", 1, "clockwise", 0)


# ================================================================ S-4 matching


def test_s4_suit_only_by_default() -> None:
    """S-4: a 5 on a 5 of another suit is refused; a card of the current suit is played."""
    s1 = ["5S", "9H", "3C", "4C", "6C", "7C", "9C"]
    table = Table.stacked(hands=with_hands(s1=s1), start="5H")
    assert refusal(table, 1, play("5S")) == ("does_not_match", "S-4")
    assert table.you(1)["playable"] == ["9H"]
    table.play(1, "9H")
    assert table.table["top_card"] == "9H"


def test_s4_match_rank_house_rule() -> None:
    """S-4: with `match_rank` a card of the top card's rank may be played, and it sets its suit."""
    s1 = ["5S", "9H", "3C", "4C", "6C", "7C", "9C"]
    table = Table.stacked({"match_rank": True}, hands=with_hands(s1=s1), start="5H")
    assert table.you(1)["playable"] == ["5S", "9H"]
    table.play(1, "5S")
    assert table.table["suit"] == "S"
    assert table.table["match_rank"] is True


def test_s4_jack_on_anything_names_the_suit() -> None:
    """S-4: a J is played on any suit and names any of the four; without a suit it is refused."""
    s1 = ["JC", "3S", "4S", "5S", "6S", "7S", "9S"]
    table = Table.stacked(hands=with_hands(s1=s1), start="5H")
    assert [a for a in table.legal(1) if a["type"] == "play"] == [play("JC", suit=s) for s in "SHDC"]
    assert refusal(table, 1, play("JC")) == ("suit_required", "S-4")
    table.play(1, "JC", suit="D")
    assert (table.table["top_card"], table.table["suit"]) == ("JC", "D")
    assert refusal(table, 2, play("3S")) == ("does_not_match", "S-4")


def test_s4_only_a_jack_names_a_suit() -> None:
    """S-4: a suit with any other card is refused."""
    table = Table.stacked(hands=PLAIN, start="5H")
    assert refusal(table, 1, play("9H", suit="S")) == ("suit_not_allowed", "S-4")


def test_s4_joker_on_anything_keeps_the_suit() -> None:
    """S-4 / S-5: a joker is played on any card; the suit stays; the next player faces 5."""
    s1 = ["JK", "3S", "4S", "5S", "6S", "7S", "9S"]
    table = Table.stacked(hands=with_hands(s1=s1), start="5H")
    assert play("JK") in table.legal(1)
    table.play(1, "JK")
    assert (table.table["suit"], table.table["pending_draw"], table.to_act) == ("H", 5, (2,))


def test_s4_a_card_not_held_is_refused_and_unknown_codes_are_bad_input() -> None:
    """S-4: only a card in the hand can be played (C-1: any copy serves); an unknown code is bad input."""
    s1 = ["5H", "5H", "3C", "4C", "6C", "7C", "9C"]
    table = Table.stacked(hands=with_hands(s1=s1), start="9H")
    assert refusal(table, 1, play("6H")) == ("card_not_in_hand", "S-4")
    assert table.you(1)["playable"] == ["5H"]
    assert [a for a in table.legal(1) if a["type"] == "play"] == [play("5H")]
    for bad in (play("5X"), play("jk"), {"type": "play", "cards": "5H"}, {"type": "play", "cards": []}):
        error = table.refused(1, bad, InvalidInput)
        assert error.code in ("unknown_card", "invalid_request")
    assert table.refused(1, play("5X"), InvalidInput).code == "unknown_card"
    assert table.refused(1, {"type": "play", "cards": ["5H", "5H", "5H"]}, InvalidInput).code == "invalid_request"
    assert table.refused(1, play("5H", suit="X"), InvalidInput).code == "invalid_request"
    table.play(1, "5H")
    assert table.hand(1).count("5H") == 1


# ================================================================ S-5 effects


def test_s5_king_reverses_the_direction() -> None:
    """S-5: seat 1 plays a K: seat 0 is next, then seat 3."""
    table = Table.stacked(hands=with_hands(s1=["KH", *HEARTS[:6]], s0=["6H", *DIAMONDS[:6]]), start="5H")
    table.play(1, "KH")
    assert (table.to_act, table.table["direction"]) == ((0,), "counterclockwise")
    table.play(0, "6H")
    assert table.to_act == (3,)


def test_s5_a_second_king_turns_back() -> None:
    """S-5: two reversals make play clockwise again."""
    table = Table.stacked(hands=with_hands(s1=["KH", *HEARTS[:6]], s0=["KH", *DIAMONDS[:6]]), start="5H")
    table.play(1, "KH")
    table.play(0, "KH")
    assert (table.to_act, table.table["direction"]) == ((1,), "clockwise")


def test_s5_eight_skips_the_next_player() -> None:
    """S-5: seat 1 plays an 8: seat 2 is skipped, seat 3 plays next."""
    table = Table.stacked(hands=with_hands(s1=["8H", *HEARTS[:6]]), start="5H")
    table.play(1, "8H")
    assert table.to_act == (3,)


def test_s5_eight_after_a_king_skips_against_the_clock() -> None:
    """S-5: after a reversal an 8 skips the next player in the new direction."""
    table = Table.stacked(hands=with_hands(s1=["KH", *HEARTS[:6]], s0=["8H", *DIAMONDS[:6]]), start="5H")
    table.play(1, "KH")
    table.play(0, "8H")
    assert table.to_act == (2,)


def test_s5_a_two_on_its_suit_starts_a_pending_draw() -> None:
    """S-5 / S-7: a 2 played on its suit: the next player faces 2; the suit is the 2's."""
    table = Table.stacked(hands=with_hands(s1=["2H", *HEARTS[:6]]), start="5H")
    table.play(1, "2H")
    assert (table.table["pending_draw"], table.table["suit"], table.to_act) == (2, "H", (2,))


# ================================================================ S-6 drawing


def test_s6_a_drawn_playable_card_may_be_played_at_once() -> None:
    """S-6: the drawn card is seen by the drawer only; they may play it (and only it) or pass."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", stock=["9H"])
    table.draw(1)
    assert table.you(1)["drawn"] == "9H"
    assert table.table["drawn_by"] == 1
    assert all(table.you(seat)["drawn"] is None for seat in (0, 2, 3))
    assert table.legal(1) == [play("9H"), {"type": "pass"}]
    assert refusal(table, 1, play("5C")) == ("must_play_drawn_card", "S-6")
    assert refusal(table, 1, DRAW) == ("already_drawn", "S-6")
    table.play(1, "9H")
    assert (table.table["top_card"], table.to_act, table.table["drawn_by"]) == ("9H", (2,), None)
    assert len(table.hand(1)) == 7


def test_s6_the_player_may_keep_the_drawn_card_and_pass() -> None:
    """S-6: pass after drawing a playable card ends the turn; the card stays in the hand."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", stock=["9H"])
    table.draw(1)
    table.pass_turn(1)
    assert table.to_act == (2,) and "9H" in table.hand(1)
    assert table.of_type("Passed")[0].actor == 1


def test_s6_an_unplayable_drawn_card_ends_the_turn() -> None:
    """S-6: a drawn card that cannot be played stays in the hand and the turn passes on."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", stock=["9S"])
    table.draw(1)
    assert table.to_act == (2,) and "9S" in table.hand(1)
    assert table.you(1)["drawn"] is None


def test_s6_a_drawn_jack_is_played_naming_a_suit() -> None:
    """S-6 / S-4: a drawn J can always be played, naming a suit."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", stock=["JD"])
    table.draw(1)
    assert table.legal(1) == [*[play("JD", suit=s) for s in "SHDC"], {"type": "pass"}]
    table.play(1, "JD", suit="C")
    assert table.table["suit"] == "C"


def test_s6_drawing_is_allowed_when_a_card_could_be_played() -> None:
    """S-6: draw instead of playing, also when a card matches."""
    table = Table.stacked(hands=PLAIN, start="5H", stock=["9S"])
    assert DRAW in table.legal(1) and play("9H") in table.legal(1)
    table.draw(1)
    assert table.to_act == (2,)


def test_s6_pass_without_a_drawn_card_is_refused() -> None:
    """S-6: pass only after drawing a playable card."""
    table = Table.stacked(hands=PLAIN, start="5H")
    assert refusal(table, 1, {"type": "pass"}) == ("nothing_drawn", "S-6")


def test_s6_drawn_card_is_never_in_an_event() -> None:
    """S-6 / C-6: the draw event holds no card."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", stock=["9H"])
    events = table.draw(1)
    assert [e.type_name() for e in events] == ["CardDrawn"]
    assert events[0].data() == {"count": 1}


# ================================================================ S-7 pending draw


def test_s7_onto_a_two_a_two_of_any_suit_or_a_joker_one_or_two_cards() -> None:
    """S-7: every one- or two-card addition onto a 2 is listed; a joker may follow a 2 but not lead one."""
    s1 = ["2S", "2C", "JK", "JK", "3H", "4H", "5H"]
    table = Table.stacked(hands=with_hands(s1=s1), start="2D")
    stacks = [a["cards"] for a in table.legal(1) if a["type"] == "play"]
    assert stacks == [["2S"], ["2S", "2C"], ["2S", "JK"], ["2C"], ["2C", "2S"], ["2C", "JK"], ["JK"], ["JK", "JK"]]
    assert table.legal(1)[-1] == DRAW
    assert refusal(table, 1, play("JK", "2S")) == ("joker_only_on_joker", "S-7")
    assert refusal(table, 1, play("3H")) == ("pending_draw", "S-7")
    assert refusal(table, 1, play("2S", "3H")) == ("pending_draw", "S-7")


def test_s7_a_jack_does_not_answer_a_pending_draw() -> None:
    """S-7: a J is no answer to a pending draw."""
    table = Table.stacked(hands=with_hands(s1=["JH", *HEARTS[:6]]), start="2H")
    assert refusal(table, 1, play("JH", suit="S")) == ("pending_draw", "S-7")


def test_s7_onto_a_joker_only_a_joker() -> None:
    """S-7: onto a joker only jokers: one or two."""
    s1 = ["2S", "JK", "JK", "3H", "4H", "5H", "6H"]
    table = Table.stacked(hands=with_hands(s1=s1), start="JK")
    assert [a["cards"] for a in table.legal(1) if a["type"] == "play"] == [["JK"], ["JK", "JK"]]
    assert refusal(table, 1, play("2S")) == ("joker_only_on_joker", "S-7")
    assert refusal(table, 1, play("JK", "2S")) == ("joker_only_on_joker", "S-7")
    table.play(1, "JK", "JK")
    assert table.table["pending_draw"] == 15


def test_s7_two_per_two_five_per_joker_and_the_draw_takes_them_all() -> None:
    """S-7: 2 (start) + 2 + 5 = 9, + 5 = 14; seat 3 takes 14 cards and the turn ends."""
    s1 = ["2S", "JK", "3H", "4H", "5H", "6H", "7H"]
    s2 = ["JK", "3S", "4S", "5S", "6S", "7S", "9S"]
    table = Table.stacked(hands=with_hands(s1=s1, s2=s2), start="2H")
    table.play(1, "2S", "JK")
    assert (table.table["pending_draw"], table.to_act) == (9, (2,))
    table.play(2, "JK")
    assert (table.table["pending_draw"], table.to_act) == (14, (3,))
    stock = table.stock()
    events = table.draw(3)
    assert [e.data() for e in events] == [{"pending": 14, "count": 14}]
    assert sorted(table.hand(3)) == sorted(CLUBS + stock[:14])
    assert (table.table["pending_draw"], table.to_act) == (0, (0,))


def test_s7_after_the_draw_a_joker_on_top_leaves_the_suit_before_it() -> None:
    """S-7: 2H start, 2S, joker: after the draw the suit is S, the suit of the last 2."""
    s1 = ["2S", "JK", "3H", "4H", "5H", "6H", "7H"]
    s3 = ["5S", "3C", "4C", "5C", "6C", "7C", "9C"]
    table = Table.stacked(hands=with_hands(s1=s1, s3=s3), start="2H")
    table.play(1, "2S", "JK")
    table.draw(2)
    assert (table.table["top_card"], table.table["suit"]) == ("JK", "S")
    assert table.you(3)["playable"] == ["5S"]


def test_s7_after_the_draw_the_suit_is_the_top_twos() -> None:
    """S-7: 2H start, 2C added: after the draw the suit is C."""
    table = Table.stacked(hands=with_hands(s1=["2C", *HEARTS[:6]]), start="2H")
    table.play(1, "2C")
    table.draw(2)
    assert table.table["suit"] == "C"
    assert table.you(3)["playable"] == CLUBS


def test_s7_two_cards_only_onto_a_pending_draw() -> None:
    """S-7: two cards at once only when adding to a pending draw."""
    table = Table.stacked(hands=with_hands(s1=["2H", "2H", *HEARTS[:5]]), start="5H")
    assert refusal(table, 1, play("2H", "2H")) == ("one_card_only", "S-7")
    assert refusal(table, 1, play("9H", "9H")) == ("card_not_in_hand", "S-4")


# ================================================================ S-8 empty stock


def move_stock_under_the_pile(table: Table) -> list[str]:
    """The stock goes under the discard pile (the top stays): the next draw must reshuffle."""
    state = table.snap.state
    pile = state.stock + state.discard
    table.with_state(stock=(), discard=pile)
    return list(pile)


def test_s8_the_pile_but_its_top_is_reshuffled_when_the_stock_runs_out() -> None:
    """S-8 / C-4: the new stock is shuffle(pile bottom first less the top, "round/1/reshuffle/1")."""
    table = Table.stacked(hands=with_hands(s1=CLUBS), start="5H", seed="re")
    pile = move_stock_under_the_pile(table)
    events = table.draw(1)
    assert [(e.type_name(), e.actor) for e in events] == [("StockReshuffled", "system"), ("CardDrawn", 1)]
    assert events[0].data() == {"reshuffle": 1}
    fresh = shuffle(pile[:-1], "re", "round/1/reshuffle/1")
    assert table.table["discard"] == ["5H"]
    assert Counter(table.hand(1)) == Counter([*CLUBS, fresh[0]])
    assert table.stock() == list(fresh[1:])
    assert cards_everywhere(table.snap) == Counter(canonical())


def test_s8_a_pending_draw_takes_the_rest_of_the_stock_then_the_reshuffled_pile() -> None:
    """S-8: 3 cards left, a pending draw of 5: the 3, then the first 2 of the reshuffle."""
    table = Table.stacked(hands=with_hands(s1=["JK", *HEARTS[:6]]), start="5H", seed="re2")
    table.play(1, "JK")
    state = table.snap.state
    rest, under = state.stock[:3], state.stock[3:]
    table.with_state(stock=rest, discard=under + state.discard)
    events = table.draw(2)
    assert [e.type_name() for e in events] == ["StockReshuffled", "PendingDrawTaken"]
    fresh = shuffle(list(under + state.discard[:-1]), "re2", "round/1/reshuffle/1")
    assert Counter(table.hand(2)) == Counter([*SPADES, *rest, *fresh[:2]])
    assert table.stock() == list(fresh[2:])
    assert table.table["discard"] == ["JK"]


def test_s8_without_enough_cards_the_player_draws_what_there_is() -> None:
    """S-8 (choice): one card in the stock and one under the top: a pending draw of 5 takes 2."""
    table = Table.stacked(hands=with_hands(s1=["JK", *HEARTS[:6]]), start="5H")
    table.play(1, "JK")
    table.set_hands({0: [*DIAMONDS, *table.snap.state.stock[1:]]})
    assert (table.table["stock_size"], table.table["discard"]) == (1, ["5H", "JK"])
    events = table.draw(2)
    assert events[-1].data() == {"pending": 5, "count": 2}
    assert (len(table.hand(2)), table.table["stock_size"], table.to_act) == (9, 0, (3,))
    assert cards_everywhere(table.snap) == Counter(canonical())


def empty_everything(table: Table) -> None:
    """No stock and a pile of one card: seat 0 takes every other card into its hand."""
    table.set_hands({0: [*DIAMONDS, *table.snap.state.stock]})
    assert table.table["stock_size"] == 0 and len(table.table["discard"]) == 1


def test_s8_no_card_to_draw_ends_the_turn() -> None:
    """S-8: with no card at all, a draw takes none and the turn ends."""
    table = Table.stacked(hands=PLAIN, start="5H")
    empty_everything(table)
    events = table.draw(1)
    assert [(e.type_name(), e.data()) for e in events] == [("CardDrawn", {"count": 0})]
    assert table.to_act == (2,) and len(table.hand(1)) == 7


def test_s8_every_holder_drawing_nothing_in_a_row_blocks_the_hand() -> None:
    """S-8 (choice): four empty draws in a row end the hand; nobody went out; everyone adds their hand."""
    table = Table.stacked({"target": 10000}, hands=PLAIN, start="5H")
    empty_everything(table)
    hands = {seat: table.hand(seat) for seat in range(4)}
    for seat in (1, 2, 3):
        table.draw(seat)
        assert not table.of_type("RoundScored")
    table.draw(0)
    scored = table.of_type("RoundScored")[0].data()
    assert scored["reason"] == "blocked" and scored["went_out"] == []
    assert scored["scores"] == [value_by_hand(hands[seat]) for seat in range(4)]
    assert table.view()["round"] == 2


def test_s8_a_play_between_empty_draws_does_not_block() -> None:
    """S-8: only empty draws one after the other by every holder block; a play or a pass resets the count."""
    table = Table.stacked({"target": 10000}, hands=PLAIN, start="5H")
    empty_everything(table)
    for seat in (1, 2, 3):
        table.draw(seat)
    table.play(0, "3H")  # seat 0 took the stock's hearts
    events = table.draw(1)  # the pile below 3H is the start card 5H, reshuffled and drawn
    assert [e.type_name() for e in events] == ["StockReshuffled", "CardDrawn"]
    assert table.you(1)["drawn"] == "5H"
    table.pass_turn(1)
    for seat in (2, 3, 0):
        table.draw(seat)
    assert not table.of_type("RoundScored")
    table.draw(1)
    assert table.of_type("RoundScored")[0].data()["reason"] == "blocked"


def test_s8_a_pending_draw_from_an_empty_stock_is_an_empty_turn() -> None:
    """S-8: a pending draw with no card at all takes nothing; the turn ends and the pending draw is gone."""
    table = Table.stacked(hands=PLAIN, start="JK")
    empty_everything(table)
    events = table.draw(1)
    assert [(e.type_name(), e.data()) for e in events] == [("PendingDrawTaken", {"pending": 5, "count": 0})]
    assert (table.table["pending_draw"], table.table["suit"], table.to_act) == (0, None, (2,))


# ================================================================ S-9 ending a hand


SEAT1_OUT = ["3H", "4H", "5H", "6H", "7H", "9H", "10H"]


def seat1_sheds_hearts(table: Table, cards: list[str]) -> None:
    """Seat 1 plays these hearts in order; seats 2, 3 and 0 draw an unplayable card each turn."""
    for card in cards:
        table.play(1, card)
        for seat in (2, 3, 0):
            table.draw(seat)


def test_s9_s10_s11_the_last_card_ends_the_hand_scores_and_the_game() -> None:
    """S-9: seat 1's seventh card ends the hand; S-10: the others add their hands; S-11: 115 >= 100 ends it."""
    table = Table.stacked({"target": 100}, hands=with_hands(s1=SEAT1_OUT), start="QH", stock=UNPLAYABLE_ON_HEARTS * 3)
    seat1_sheds_hearts(table, SEAT1_OUT[:6])
    assert table.hand(1) == ["10H"]
    table.play(1, "10H")
    scored = table.of_type("RoundScored")[0].data()
    # seats 2, 3, 0: 3-7 and 9 (6 x 5) + 10 (10) = 40, plus drawn Q, A, Q, A, Q, A = 75
    assert scored == {"round": 1, "scores": [115, 0, 115, 115], "went_out": [1], "reason": "went_out"}
    ended = table.of_type("GameEnded")[0].data()
    assert ended == {"totals": [115, 0, 115, 115], "winners": [1]}
    assert table.view()["result"] == ended
    assert table.snap.finished and table.view()["status"] == "finished"
    assert refusal(table, 2, DRAW) == ("game_finished", "S-11")


def test_s9_a_last_two_keeps_the_hand_alive_until_the_pending_draw_is_taken() -> None:
    """S-9: seat 1 goes out on a 2; 2C, joker, joker are added; seat 1 is passed over; seat 2 takes 14."""
    s1 = ["3H", "4H", "5H", "6H", "7H", "9H", "2H"]
    table = Table.stacked(
        {"target": 1000},
        hands=with_hands(s1=s1, s2=["2C", *SPADES[:6]], s3=["JK", *CLUBS[:6]], s0=["JK", *DIAMONDS[:6]]),
        start="QH",
        stock=UNPLAYABLE_ON_HEARTS * 3,
    )
    seat1_sheds_hearts(table, SEAT1_OUT[:6])
    table.play(1, "2H")
    assert table.table["out"] == [1] and not table.of_type("RoundScored")
    table.play(2, "2C")
    table.play(3, "JK")
    table.play(0, "JK")
    assert (table.to_act, table.table["pending_draw"]) == ((2,), 14)
    assert table.legal(1) == []
    table.draw(2)
    scored = table.of_type("RoundScored")[0].data()
    assert scored["reason"] == "draw_taken" and scored["went_out"] == [1]
    assert scored["scores"][1] == 0
    hands_after = table.of_type("PendingDrawTaken")[0].data()
    assert hands_after == {"pending": 14, "count": 14}
    assert table.view()["round"] == 2


def test_s9_a_last_joker_goes_out_too() -> None:
    """S-9: going out on a joker: the next player faces 5; when taken the hand ends."""
    table = Table.stacked(hands=PLAIN, start="5H")
    table.set_hands({1: ["JK"]})
    table.play(1, "JK")
    assert (table.to_act, table.table["pending_draw"], table.table["out"]) == ((2,), 5, [1])
    table.draw(2)
    assert table.of_type("RoundScored")[0].data()["reason"] == "draw_taken"


def one_left(rules_version: int | None = None) -> Table:
    """Seats 1, 2, 3 hold only 2H, 2C and a joker; seat 0 holds DIAMONDS; seat 1 is to play."""
    table = Table.stacked(hands=PLAIN, start="5H", rules_version=rules_version)
    table.set_hands({1: ["2H"], 2: ["2C"], 3: ["JK"]})
    return table


def go_out_on_2_2_joker(table: Table) -> list[Event]:
    """Seats 1, 2, 3 go out in turn; returns the events of the last play."""
    table.play(1, "2H")
    table.play(2, "2C")
    return table.play(3, "JK")


def test_s9_rules_version_1_one_player_left_the_hand_ends_without_the_pending_draw() -> None:
    """S-9 as games of rules version 1 read it: seats 1, 2, 3 go out on 2, 2, joker; seat 0 alone holds
    cards and the hand ends at once, the pending draw of 9 untaken: seat 0 scores its own 7 cards."""
    table = one_left(rules_version=1)
    events = go_out_on_2_2_joker(table)
    assert [e.type_name() for e in events][:3] == ["CardsPlayed", "RoundScored", "RoundStarted"]
    scored = table.of_type("RoundScored")[0].data()
    assert scored["reason"] == "one_left" and scored["went_out"] == [1, 2, 3]
    assert scored["scores"] == [value_by_hand(DIAMONDS), 0, 0, 0]


def test_s9_one_player_left_takes_the_pending_draw_then_the_hand_ends() -> None:
    """S-9 (rules version 2 and later): seats 1, 2, 3 go out on 2, 2, joker; seat 0, alone holding cards,
    first takes the pending draw of 9 from the stock, then the hand ends and seat 0 adds its whole hand."""
    table = one_left()
    assert table.config.rules_version >= 2
    drawn = table.stock()[:9]
    events = go_out_on_2_2_joker(table)
    assert [(e.type_name(), e.data()) for e in events][:2] == [
        ("CardsPlayed", {"cards": ["JK"], "suit": None}),
        ("LastHolderDrew", {"seat": 0, "pending": 9, "count": 9}),
    ]
    assert events[1].actor == "system"
    scored = table.of_type("RoundScored")[0].data()
    assert scored["reason"] == "one_left" and scored["went_out"] == [1, 2, 3]
    assert scored["scores"] == [value_by_hand(DIAMONDS + drawn), 0, 0, 0]


def test_s9_s8_the_last_players_draw_reshuffles_a_short_stock_first() -> None:
    """S-9 / S-8 (rules version 2): the stock holds 3 cards for a draw of 9: the pile but its top card is
    reshuffled under it (C-4 reshuffle label), then seat 0 takes the 3 and 6 of the reshuffled cards."""
    table = one_left()
    stock = table.snap.state.stock
    table.with_state(stock=stock[:3], discard=stock[3:] + table.snap.state.discard)
    table.play(1, "2H")
    table.play(2, "2C")
    pile = list(table.snap.state.discard)  # bottom first; the joker goes on top of it
    events = table.play(3, "JK")
    assert [(e.type_name(), e.data()) for e in events][1:3] == [
        ("StockReshuffled", {"reshuffle": 1}),
        ("LastHolderDrew", {"seat": 0, "pending": 9, "count": 9}),
    ]
    drawn = [*stock[:3], *shuffle(pile, "switch-test", "round/1/reshuffle/1")[:6]]
    assert table.of_type("RoundScored")[0].data()["scores"] == [value_by_hand(DIAMONDS + drawn), 0, 0, 0]


def test_s9_players_out_are_passed_over_against_the_clock_too() -> None:
    """S-9 / S-5: after a K, seat 0 goes out on a 2; seat 3 then seat 2 face the growing draw."""
    table = Table.stacked(hands=with_hands(s1=["KH", "JK", *HEARTS[:5]]), start="5H")
    table.set_hands({0: ["2H"], 3: ["2D", "3C"], 2: ["JK", "3S"]})
    table.play(1, "KH")
    table.play(0, "2H")
    assert table.to_act == (3,)
    table.play(3, "2D")
    assert table.to_act == (2,)
    table.play(2, "JK")
    assert (table.to_act, table.table["pending_draw"]) == ((1,), 9)
    table.play(1, "JK")
    assert (table.to_act, table.table["pending_draw"], table.table["out"]) == ((3,), 14, [0])


# ================================================================ S-10 values


@pytest.mark.parametrize(
    ("card", "value"),
    [("JK", 50), ("2S", 20), ("AH", 15), ("10D", 10), ("JC", 10), ("QS", 10), ("KH", 10)]
    + [(f"{v}D", 5) for v in range(3, 10)],
)
def test_s10_card_values(card: str, value: int) -> None:
    """S-10: joker 50, 2 20, A 15, 10 J Q K 10, 3-9 5."""
    assert card_value(card) == value


def test_s10_hand_value_and_own_view() -> None:
    """S-10: a hand's value is the sum; the seat sees its own."""
    assert hand_value(["JK", "2S", "AH", "KD", "5C"]) == 100
    table = Table.stacked(hands=PLAIN, start="5H")
    assert table.you(3)["hand_value"] == 6 * 5 + 10


# ================================================================ S-11 end of the game


def short_hand_game(target: int, totals: tuple[int, ...]) -> Table:
    """Seat 1 goes out on its only card; the others hold PLAIN hands worth 40; totals preset."""
    table = Table.stacked({"target": target}, hands=PLAIN, start="5H")
    table.set_hands({1: ["9H"]})
    table.with_state(totals=totals)
    table.play(1, "9H")
    return table


def test_s11_a_total_of_exactly_the_target_ends_the_game() -> None:
    """S-11: 460 + 40 = 500 >= 500 ends the game; the lowest total wins."""
    table = short_hand_game(500, (460, 0, 10, 10))
    assert table.snap.finished
    assert table.of_type("GameEnded")[0].data() == {"totals": [500, 0, 50, 50], "winners": [1]}


def test_s11_below_the_target_another_hand_is_dealt() -> None:
    """S-11: 459 + 40 = 499 < 500: round 2 is dealt."""
    table = short_hand_game(500, (459, 0, 10, 10))
    assert not table.snap.finished
    assert table.view()["round"] == 2 and table.view()["scores"] == [499, 0, 50, 50]


def test_s11_equal_lowest_totals_share_the_win() -> None:
    """S-11 / C-7: seats 1 and 3 both at 40 share the win."""
    table = short_hand_game(100, (60, 40, 60, 0))
    assert table.of_type("GameEnded")[0].data() == {"totals": [100, 40, 100, 40], "winners": [1, 3]}


def test_s11_a_game_with_a_low_target_plays_to_its_end() -> None:
    """S-11: a whole game with a plain policy ends, with SeedRevealed last."""
    table = Table(6, {"target": 60}, seed="whole")
    play_until(table, lambda t: t.snap.finished)
    names = [e.type_name() for e in table.events]
    assert names[-2:] == ["GameEnded", "SeedRevealed"]
    totals = table.of_type("GameEnded")[0].data()["totals"]
    assert max(totals) >= 60
    rounds = [e.data()["scores"] for e in table.of_type("RoundScored")]
    assert totals == [sum(column) for column in zip(*rounds, strict=True)]


# ================================================================ C-2, C-6 and the view


def test_c2_only_the_seat_to_act_may_act() -> None:
    """C-2: others are refused and have no legal action."""
    table = Table.stacked(hands=PLAIN, start="5H")
    for seat in (0, 2, 3):
        assert refusal(table, seat, DRAW) == ("not_your_turn", "C-2")
        assert table.legal(seat) == []
        assert table.view(seat)["actions"] == []


def test_c6_the_view_shows_own_hand_sizes_top_suit_direction_pending_turn_and_scores() -> None:
    """C-6: the seat view has its hand and what it may play; the table only sizes and public cards."""
    table = Table.stacked(hands=PLAIN, start="5H")
    view = table.view(1)
    assert view["you"]["hand"] == HEARTS
    assert view["you"]["playable"] == HEARTS
    assert view["you"]["legal"] == table.legal(1)
    assert view["actions"] == ["draw", "play"]
    public = view["table"]
    assert public["hand_sizes"] == [7, 7, 7, 7]
    assert (public["top_card"], public["suit"]) == ("5H", "H")
    assert (public["direction"], public["pending_draw"]) == ("clockwise", 0)
    assert (public["turn"], view["to_act"], view["scores"]) == (1, [1], [0, 0, 0, 0])
    assert "hands" not in public and "stock" not in public
    spectator = table.view()
    assert "you" not in spectator and spectator["actions"] == []
    assert table.view(2)["you"]["hand"] == SPADES and table.view(2)["you"]["playable"] == []


def test_deck_helper_is_a_permutation() -> None:
    """The test helper itself: a stacked deck is a permutation of the canonical deck."""
    deck = build_deck(4, PLAIN, "5H", ["9H"])
    assert Counter(deck) == Counter(canonical())
    assert deck[28:30] == ["5H", "9H"]
