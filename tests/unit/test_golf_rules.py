"""Golf rules G-1 ... G-15 one by one, on stacked decks (C-5) built by golf_helpers.build_deck.

Every expected card, score and seat below is worked out by hand from the rule text.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain import engine
from domain.cards import canonical_deck
from domain.errors import InvalidInput, RuleViolation
from domain.golf import Grid, card_value, grid_score
from domain.shuffle import shuffle
from tests.json_walk import strings_in
from tests.unit.golf_helpers import DRAW, Table, build_deck, finish_round, play_until

NO_FLIPS = {"initial_flips": 0}
ONE_DECK = list(canonical_deck(1))


def refusal(table: Table, seat: int, action: dict[str, Any]) -> tuple[str, str | None]:
    """(code, rule) of a RuleViolation."""
    error = table.refused(seat, action, RuleViolation)
    return error.code, error.rule


def bad_input(table: Table, seat: int, action: dict[str, Any]) -> str:
    """Code of an InvalidInput."""
    return table.refused(seat, action, InvalidInput).code


def all_up(cards: list[str]) -> Grid:
    return Grid(tuple(cards), (True,) * len(cards))


# ================================================================ G-1 players and decks


@pytest.mark.parametrize("players", [2, 3, 7, 12])
def test_g1_two_to_twelve_players_are_accepted(players: int) -> None:
    """G-1: 2-12 players."""
    table = Table(players, NO_FLIPS)
    assert len(table.table["grids"]) == players


@pytest.mark.parametrize("players", [-1, 0, 1, 13, 20])
def test_g1_other_player_counts_are_refused(players: int) -> None:
    """G-1: fewer than 2 or more than 12 players are refused."""
    with pytest.raises(RuleViolation) as info:
        engine.make_config("golf", players, {}, "seed")
    assert (info.value.code, info.value.rule) == ("bad_player_count", "G-1")


@pytest.mark.parametrize(("players", "decks"), [(2, 1), (4, 1), (5, 2), (8, 2), (9, 3), (12, 3)])
def test_g1_default_deck_count_by_players(players: int, decks: int) -> None:
    """G-1: one 52-card deck for 2-4 players, two for 5-8, three for 9-12."""
    table = Table(players, NO_FLIPS)
    assert table.config.options["decks"] == decks
    view = table.table
    on_table = sum(len(g["slots"]) for g in view["grids"]) + len(view["discard"]) + view["stock_size"]
    assert on_table == 52 * decks


def test_g1_no_jokers() -> None:
    """G-1: no jokers, in any deck count."""
    for players in (2, 6, 10):
        table = Table(players, NO_FLIPS)
        truth = table.truth()["table"]
        cards = truth["stock"] + truth["discard"] + [s["card"] for g in truth["grids"] for s in g["slots"]]
        assert "JK" not in cards
        assert sorted(cards) == sorted(ONE_DECK * table.config.options["decks"])


def test_g1_decks_option_overrides_the_default() -> None:
    """G-1: option `decks` overrides the deck count; a stacked deck must then have 104 cards (C-5)."""
    config = engine.make_config("golf", 3, {"decks": 2}, "seed")
    assert config.options["decks"] == 2
    engine.make_config("golf", 3, {"decks": 2}, "seed", [build_deck(3, copies=2)])
    with pytest.raises(InvalidInput) as info:
        engine.make_config("golf", 3, {"decks": 2}, "seed", [ONE_DECK])
    assert info.value.code == "invalid_deck"
    assert Table(10, {"decks": 2, **NO_FLIPS}).table["stock_size"] == 104 - 60 - 1


@pytest.mark.parametrize("decks", [0, 4, "2", 1.5, True])
def test_g1_decks_option_range(decks: object) -> None:
    """G-1: `decks` is 1, 2 or 3."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("golf", 3, {"decks": decks}, "seed")
    assert info.value.code == "invalid_option"


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (9, {"decks": 1}),  # 54 grid cards + 1 discard > 52
        (6, {"decks": 1, "layout": "3x3"}),  # 54 + 1 > 52
        (12, {"decks": 2, "layout": "3x3"}),  # 108 + 1 > 104
    ],
)
def test_g1_too_few_cards_are_refused(players: int, options: dict[str, Any]) -> None:
    """G-1: a deck count that cannot deal every grid and the first discard is refused."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("golf", players, options, "seed")
    assert info.value.code == "invalid_option"


def test_g1_just_enough_cards_are_accepted() -> None:
    """G-1: 8 players in 2x3 on one deck need 49 cards and leave a stock of 3."""
    table = Table(8, {"decks": 1, **NO_FLIPS})
    assert table.table["stock_size"] == 3
    assert len(table.table["discard"]) == 1


def test_c5_stacked_deck_must_be_a_permutation_of_the_canonical_deck() -> None:
    """C-5 / C-1: a duplicate, a missing card or a joker makes the deck invalid; a non-code is an unknown card."""
    broken = [ONE_DECK[:-1] + ["AS"], ONE_DECK[:-1], [*ONE_DECK[:-1], "JK"], [*ONE_DECK, "JK"]]
    for deck in broken:
        with pytest.raises(InvalidInput) as info:
            engine.make_config("golf", 2, {}, "seed", [deck])
        assert info.value.code == "invalid_deck"
    for unknown in ([*ONE_DECK[:-1], "XX"], [*ONE_DECK[:-1], "kc"]):
        with pytest.raises(InvalidInput) as info:
            engine.make_config("golf", 2, {}, "seed", [unknown])
        assert info.value.code == "unknown_card"
    table = Table(2, decks=[list(reversed(ONE_DECK))])
    assert table.events[0].type_name() == "GameCreated"
    assert table.events[0].data()["stacked"] is True
    assert Table(2).events[0].data()["stacked"] is False


# ================================================================ G-2 layout


def test_g2_default_layout_is_two_rows_of_three() -> None:
    """G-2: by default every grid has 6 face-down places, and so does the owner's hand."""
    table = Table(3, NO_FLIPS)
    assert table.table["layout"] == "2x3"
    for seat in range(3):
        assert [s["state"] for s in table.slots(seat)] == ["down"] * 6
        assert len(table.view(seat)["you"]["hand"]) == 6


def test_g2_3x3_layout_has_nine_places() -> None:
    """G-2: option layout 3x3 gives 9 places, positions 0-8."""
    table = Table(2, {"layout": "3x3", **NO_FLIPS})
    assert table.table["layout"] == "3x3"
    assert [len(g["slots"]) for g in table.table["grids"]] == [9, 9]
    table.flip(1, 8)
    assert table.slots(1)[8]["state"] == "up"


def test_g2_unknown_layout_is_refused() -> None:
    """G-2: layouts are 2x3 and 3x3 only."""
    with pytest.raises(InvalidInput) as info:
        engine.make_config("golf", 2, {"layout": "4x4"}, "seed")
    assert info.value.code == "invalid_option"


@pytest.mark.parametrize(
    ("layout", "action"),
    [
        ("2x3", {"type": "flip", "position": 6}),
        ("2x3", {"type": "flip", "position": -1}),
        ("2x3", {"type": "take_discard", "position": 6}),
        ("3x3", {"type": "flip", "position": 9}),
        ("3x3", {"type": "take_discard", "position": -3}),
    ],
)
def test_g2_positions_outside_the_grid_are_refused(layout: str, action: dict[str, Any]) -> None:
    """G-2: positions are 0-5 (2x3) or 0-8 (3x3)."""
    table = Table(2, {"layout": layout, **NO_FLIPS})
    assert refusal(table, 1, action) == ("invalid_position", "G-2")


def test_g2_swap_and_discard_positions_outside_the_grid_are_refused() -> None:
    """G-2: after a draw too, a position outside the grid is refused."""
    table = Table(2, NO_FLIPS)
    table.draw(1)
    assert refusal(table, 1, {"type": "swap", "position": 6}) == ("invalid_position", "G-2")
    assert refusal(table, 1, {"type": "discard", "flip": 7}) == ("invalid_position", "G-2")


def test_g2_g13_a_column_is_c_and_c_plus_3_not_a_row() -> None:
    """G-2 with G-13: positions 0-2 top row, 3-5 bottom row; only c and c+3 form a column."""
    # column 0 = 5S, 5H: 0; column 1 = AS, 2S: 1 - 2; column 2 = KS, 3S: 0 + 3
    assert grid_score(("5S", "AS", "KS", "5H", "2S", "3S")) == 2
    # 5S and 5H side by side in the top row are no column: 5 + 5 + 1 - 2 + 0 + 3
    assert grid_score(("5S", "5H", "KS", "AS", "2S", "3S")) == 12


def test_g2_g13_3x3_columns_are_c_c_plus_3_c_plus_6() -> None:
    """G-2 with G-13: in 3x3 a column is c, c+3, c+6 (positions row by row)."""
    # column 0 = 7S 7H 7D: 0; column 1 = 2S 2H 2D: 0; column 2 = KS QS JS: 0 + 10 + 10
    assert grid_score(("7S", "2S", "KS", "7H", "2H", "QS", "7D", "2D", "JS")) == 20
    # two equal and one other in a column all count: 5 + 5 + 6, then 1 + 3 + 4 and 0 + 0 + 0
    assert grid_score(("5S", "AS", "KS", "5H", "3S", "KH", "6D", "4S", "KD")) == 24


# ================================================================ G-3 deal

# A deck in canonical order (C-3), dealt to 3 players by dealer 0: one card at a time,
# starting with seat 1 (left of the dealer), the k-th card to position k.
ROUND1_CANONICAL = {
    1: ["AS", "4S", "7S", "10S", "KS", "3H"],
    2: ["2S", "5S", "8S", "JS", "AH", "4H"],
    0: ["3S", "6S", "9S", "QS", "2H", "5H"],
}
# The same deck dealt by dealer 1 (round 2): seat 2 gets the first card.
ROUND2_CANONICAL = {
    2: ["AS", "4S", "7S", "10S", "KS", "3H"],
    0: ["2S", "5S", "8S", "JS", "AH", "4H"],
    1: ["3S", "6S", "9S", "QS", "2H", "5H"],
}


def test_g3_deal_one_at_a_time_clockwise_from_left_of_dealer() -> None:
    """G-3: the k-th card a player receives goes to position k; then the discard; the rest is the stock."""
    table = Table(3, NO_FLIPS, decks=[ONE_DECK])
    for seat, cards in ROUND1_CANONICAL.items():
        assert table.dealt(seat) == cards
    truth = table.truth()["table"]
    assert truth["discard"] == ["6H"]
    assert truth["stock"] == ONE_DECK[19:]
    assert table.table["stock_size"] == 33
    assert table.table["dealer"] == 0


def test_g3_first_turn_is_left_of_the_dealer_and_draws_the_stock_top() -> None:
    """G-3 / G-6: the player left of the dealer starts; the first draw is the card after the discard."""
    table = Table(3, NO_FLIPS, decks=[ONE_DECK])
    assert table.turn == 1
    assert table.snap.to_act() == (1,)
    table.draw(1)
    assert table.view(1)["you"]["drawn"] == "7H"


def test_g3_dealer_rotates_between_rounds() -> None:
    """G-3 / C-2: round r's dealer is seat (r-1) mod n, who deals from their left; their left starts."""
    table = Table(3, {"rounds": 2, **NO_FLIPS}, decks=[ONE_DECK, ONE_DECK])
    finish_round(table)
    assert table.view()["round"] == 2
    assert table.table["dealer"] == 1
    assert table.turn == 2
    for seat, cards in ROUND2_CANONICAL.items():
        assert table.dealt(seat) == cards


def test_g3_dealers_of_four_rounds_with_three_players() -> None:
    """C-2: dealers 0, 1, 2, 0 in rounds 1-4 of a 3-player game."""
    table = Table(3, {"rounds": 4, **NO_FLIPS})
    play_until(table, lambda t: t.snap.finished)
    started = [e.data() for e in table.of_type("RoundStarted")]
    assert [(s["round"], s["dealer"]) for s in started] == [(1, 0), (2, 1), (3, 2), (4, 0)]


def test_g3_rounds_after_the_stacked_ones_use_the_c4_shuffle() -> None:
    """C-5 / C-4: round 2 of a game stacked for round 1 is shuffle(canonical, "round/2")."""
    table = Table(2, {"rounds": 2, **NO_FLIPS}, decks=[ONE_DECK], seed="after-stack")
    finish_round(table)
    deck = shuffle(ONE_DECK, "after-stack", "round/2")
    # dealer 1 deals: seat 0 gets cards 0, 2, 4, ...; seat 1 gets 1, 3, 5, ...
    assert table.dealt(0) == list(deck[0:12:2])
    assert table.dealt(1) == list(deck[1:12:2])
    assert table.truth()["table"]["discard"] == [deck[12]]
    assert table.truth()["table"]["stock"] == list(deck[13:])


def test_g3_unstacked_round_one_is_the_c4_shuffle() -> None:
    """C-4 / G-3: without stacked decks round 1 is shuffle(canonical, "round/1") with the secret seed."""
    table = Table(2, NO_FLIPS, seed="demo")
    deck = shuffle(ONE_DECK, "demo", "round/1")
    # C-4 vector: 9S 6C 10S 8C 10D 5D 4C 2D ...; seat 1 (left of dealer 0) gets cards 0, 2, 4, ...
    assert table.dealt(1)[:4] == ["9S", "10S", "10D", "4C"]
    assert table.dealt(0)[:4] == ["6C", "8C", "5D", "2D"]
    assert table.dealt(1) == list(deck[0:12:2])


# ================================================================ G-4 initial flips


def test_g4_every_player_turns_up_two_before_the_first_turn() -> None:
    """G-4: default initial_flips 2; all seats are to act in the setup phase."""
    table = Table(3)
    view = table.view()
    assert view["phase"] == "setup"
    assert view["to_act"] == [0, 1, 2]
    assert table.turn is None
    assert all(s["state"] == "down" for g in view["table"]["grids"] for s in g["slots"])


def test_g4_any_order_and_the_first_turn_starts_when_all_have_flipped() -> None:
    """G-4: players flip in any order; the first turn (left of the dealer) starts after the last flip."""
    table = Table(3)
    table.reveal(2, 0, 5)
    assert table.view()["to_act"] == [0, 1]
    table.reveal(0, 3, 4)
    assert table.view()["phase"] == "setup"
    assert table.view()["to_act"] == [1]
    table.reveal(1, 1, 2)
    assert table.view()["phase"] == "play"
    assert table.view()["to_act"] == [1]
    assert table.turn == 1
    assert [s["state"] for s in table.slots(2)] == ["up", "down", "down", "down", "down", "up"]
    assert [s["card"] is not None for s in table.slots(0)] == [False, False, False, True, True, False]


def test_g4_reveal_shows_the_chosen_cards() -> None:
    """G-4: the flipped cards lie face up for all to see."""
    table = Table.stacked(2, {}, grids={0: ["AS", "2S", "3S", "4S", "5S", "6S"]})
    events = table.reveal(0, 4, 1)
    assert events[0].data()["cards"] == ["5S", "2S"]
    for viewer in (None, 0, 1):
        slots = table.slots(0, viewer)
        assert (slots[4]["card"], slots[1]["card"]) == ("5S", "2S")


@pytest.mark.parametrize("positions", [[0], [0, 1, 2], [3, 3], []])
def test_g4_exactly_the_option_count_of_different_cards(positions: list[int]) -> None:
    """G-4: turn up exactly initial_flips different cards."""
    table = Table(2)
    assert refusal(table, 0, {"type": "reveal", "positions": positions}) == ("wrong_flip_count", "G-4")


def test_g4_reveal_positions_must_be_in_the_grid() -> None:
    """G-4 / G-2: a reveal position outside the grid is refused."""
    table = Table(2)
    assert refusal(table, 0, {"type": "reveal", "positions": [0, 6]}) == ("invalid_position", "G-2")


def test_g4_a_seat_reveals_only_once() -> None:
    """G-4: a seat that has flipped cannot flip again in the setup."""
    table = Table(3)
    table.reveal(0, 0, 1)
    assert refusal(table, 0, {"type": "reveal", "positions": [2, 3]}) == ("already_revealed", "G-4")


def test_g4_no_turn_before_every_seat_has_flipped() -> None:
    """G-4: the first turn starts only when all have flipped."""
    table = Table(2)
    table.reveal(0, 0, 1)
    for seat in (0, 1):
        assert refusal(table, seat, DRAW) == ("setup_not_done", "G-4")
        assert refusal(table, seat, {"type": "flip", "position": 3}) == ("setup_not_done", "G-4")


def test_g4_initial_flips_option() -> None:
    """G-4: option initial_flips sets the count; 0 starts play at once; it must leave a face-down card."""
    table = Table(2, {"initial_flips": 3})
    assert refusal(table, 0, {"type": "reveal", "positions": [0, 1]}) == ("wrong_flip_count", "G-4")
    table.reveal(0, 0, 1, 2)
    assert [s["state"] for s in table.slots(0)] == ["up"] * 3 + ["down"] * 3
    zero = Table(2, NO_FLIPS)
    assert zero.view()["phase"] == "play"
    assert refusal(zero, 1, {"type": "reveal", "positions": []}) == ("wrong_phase", "G-4")
    Table(2, {"initial_flips": 8, "layout": "3x3"})
    for options in ({"initial_flips": 6}, {"initial_flips": 9, "layout": "3x3"}, {"initial_flips": -1}):
        with pytest.raises(InvalidInput) as info:
            engine.make_config("golf", 2, options, "seed")
        assert info.value.code == "invalid_option"


def test_g4_reveal_after_the_setup_is_the_wrong_phase() -> None:
    """G-4: initial flips happen only before the first turn."""
    table = Table(2)
    table.reveal(0, 0, 1)
    table.reveal(1, 0, 1)
    assert refusal(table, 0, {"type": "reveal", "positions": [2, 3]}) == ("wrong_phase", "G-4")


# ================================================================ G-5 hidden cards

HIDDEN_GRIDS = {0: ["AS", "2S", "3S", "4S", "5S", "6S"], 1: ["7S", "8S", "9S", "10S", "JS", "QS"]}


def test_g5_face_down_cards_are_hidden_from_everyone_owner_included() -> None:
    """G-5 / C-6: no view, not even the owner's `you.hand`, shows a face-down card."""
    table = Table.stacked(2, {}, grids=HIDDEN_GRIDS, discard="KS", stock=["AH"])
    hidden = set(HIDDEN_GRIDS[0] + HIDDEN_GRIDS[1])
    for viewer in (None, 0, 1):
        view = table.view(viewer)
        assert not hidden & strings_in(view), viewer
        if viewer is not None:
            assert view["you"]["hand"] == [{"state": "down", "card": None}] * 6
    table.reveal(0, 0, 4)
    for viewer in (None, 0, 1):
        seen = strings_in(table.view(viewer))
        assert {"AS", "5S"} <= seen
        assert not (hidden - {"AS", "5S"}) & seen, viewer
    hand = table.view(0)["you"]["hand"]
    assert [slot["card"] for slot in hand] == ["AS", None, None, None, "5S", None]


def test_g5_drawn_card_is_seen_by_the_drawer_only() -> None:
    """G-6 / C-6: the drawn card is in the drawer's view only, not in any event record of the draw."""
    table = Table.stacked(2, NO_FLIPS, grids=HIDDEN_GRIDS, discard="KS", stock=["AH", "2H"])
    events = table.draw(1)
    assert table.view(1)["you"]["drawn"] == "AH"
    assert table.view(0)["you"]["drawn"] is None
    for viewer in (None, 0):
        assert "AH" not in strings_in(table.view(viewer))
    assert table.table["drawn_by"] == 1
    assert not strings_in([e.data() for e in events]) & set(ONE_DECK)


def test_g5_the_deal_record_and_views_never_show_the_stock() -> None:
    """C-6: the stock order is shown to no one; only its size is public."""
    table = Table.stacked(2, NO_FLIPS, grids=HIDDEN_GRIDS, discard="KS", stock=["AH", "2H", "3H"])
    for viewer in (None, 0, 1):
        view = table.view(viewer)
        assert "stock" not in view["table"]
        assert view["table"]["stock_size"] == 39
        assert not {"AH", "2H", "3H"} & strings_in(view)
    dealt = [e.data() for e in table.of_type("RoundStarted")]
    assert not strings_in(dealt) & set(ONE_DECK)


# ================================================================ G-6 draw from the stock


def g6_table(**options: Any) -> Table:
    return Table.stacked(2, {**NO_FLIPS, **options}, grids=HIDDEN_GRIDS, discard="KS", stock=["AH", "2H", "3H"])


def test_g6a_swap_drawn_card_with_a_face_down_card() -> None:
    """G-6 (a): the drawn card lies face up in the place; the replaced card goes face up onto the pile."""
    table = g6_table()
    table.draw(1)
    table.swap(1, 2)
    assert table.slots(1)[2] == {"state": "up", "card": "AH"}
    assert [s["state"] for s in table.slots(1)] == ["down", "down", "up", "down", "down", "down"]
    assert table.table["discard"] == ["KS", "9S"]
    assert table.table["discard_top"] == "9S"
    assert table.table["stock_size"] == 38
    assert table.turn == 0
    assert table.view(1)["you"]["drawn"] is None


def test_g6a_swap_drawn_card_with_a_face_up_card() -> None:
    """G-6 (a): a face-up card may be replaced too."""
    table = g6_table()
    table.flip(1, 0)
    table.flip(0, 0)
    table.draw(1)
    table.swap(1, 0)
    assert table.slots(1)[0] == {"state": "up", "card": "AH"}
    assert table.table["discard"] == ["KS", "7S"]


def test_g6b_discard_drawn_card_and_turn_one_up() -> None:
    """G-6 (b): the drawn card goes onto the pile and a face-down card of the drawer's choice turns up."""
    table = g6_table()
    table.draw(1)
    table.discard(1, 3)
    assert table.table["discard"] == ["KS", "AH"]
    assert table.slots(1)[3] == {"state": "up", "card": "10S"}
    assert sum(s["state"] == "up" for s in table.slots(1)) == 1
    assert table.turn == 0


def test_g6b_flip_is_required_while_face_down_cards_remain() -> None:
    """G-6 (b): discarding without turning a card up is refused while the drawer has a face-down card."""
    table = g6_table()
    table.draw(1)
    assert refusal(table, 1, {"type": "discard", "flip": None}) == ("flip_required", "G-6")
    assert refusal(table, 1, {"type": "discard"}) == ("flip_required", "G-6")
    assert {"type": "discard", "flip": None} not in engine.legal_actions(table.snap, 1)


def test_g6b_the_flip_must_be_a_face_down_card() -> None:
    """G-6 (b): the card turned up must be face down."""
    table = g6_table()
    table.flip(1, 0)
    table.flip(0, 0)
    table.draw(1)
    assert refusal(table, 1, {"type": "discard", "flip": 0}) == ("not_face_down", "G-6")


def test_g6b_nothing_is_turned_when_no_face_down_card_is_left() -> None:
    """G-6 (b): with no face-down card left, discarding turns nothing (flip null).

    Ordinary play never reaches this (G-11 ends the round first), so the state is set directly.
    """
    table = g6_table()
    table.draw(1)
    grids = (table.snap.state.grids[0], all_up(HIDDEN_GRIDS[1]))
    table.with_state(grids=grids)
    legal = engine.legal_actions(table.snap, 1)
    assert [a for a in legal if a["type"] == "discard"] == [{"type": "discard", "flip": None}]
    events = table.discard(1, None)
    assert events[0].data()["flipped"] is None
    assert table.table["discard"] == ["KS", "AH"]
    assert [s["card"] for s in table.slots(1)] == HIDDEN_GRIDS[1]


def test_g6_swap_and_discard_need_a_drawn_card() -> None:
    """G-6: swap and discard come after a draw."""
    table = g6_table()
    assert refusal(table, 1, {"type": "swap", "position": 0}) == ("nothing_drawn", "G-6")
    assert refusal(table, 1, {"type": "discard", "flip": 0}) == ("nothing_drawn", "G-6")


def test_g6_a_turn_is_exactly_one_draw() -> None:
    """G-6: after a draw the player may not draw again, take the discard or just flip."""
    table = g6_table()
    table.draw(1)
    assert refusal(table, 1, DRAW) == ("already_drawn", "G-6")
    assert refusal(table, 1, {"type": "take_discard", "position": 0}) == ("already_drawn", "G-6")
    assert refusal(table, 1, {"type": "flip", "position": 0}) == ("already_drawn", "G-6")
    assert {a["type"] for a in engine.legal_actions(table.snap, 1)} == {"swap", "discard"}


# ================================================================ G-7 take the top discard


def test_g7_take_discard_swaps_it_into_the_grid() -> None:
    """G-7: the top discard takes a grid place; the replaced card goes face up onto the pile."""
    table = g6_table()
    table.take(1, 4)
    assert table.slots(1)[4] == {"state": "up", "card": "KS"}
    assert table.table["discard"] == ["JS"]
    assert table.table["stock_size"] == 39
    assert table.turn == 0


def test_g7_take_discard_onto_a_face_up_card() -> None:
    """G-7: face up or face down: a face-up card may be replaced."""
    table = g6_table()
    table.flip(1, 5)
    table.flip(0, 0)
    table.take(1, 5)
    assert table.slots(1)[5] == {"state": "up", "card": "KS"}
    assert table.table["discard"] == ["QS"]


def test_g7_the_taken_card_must_be_swapped() -> None:
    """G-7: there is no taking without a place; the taken card cannot go back onto the pile."""
    table = g6_table()
    assert bad_input(table, 1, {"type": "take_discard"}) == "invalid_request"
    assert bad_input(table, 1, {"type": "take_discard", "position": None}) == "invalid_request"
    takes = [a for a in engine.legal_actions(table.snap, 1) if a["type"] == "take_discard"]
    assert sorted(a["position"] for a in takes) == [0, 1, 2, 3, 4, 5]
    table.take(1, 0)
    assert "KS" not in table.table["discard"]
    assert table.view(1)["you"]["drawn"] is None


# ================================================================ G-8 turn up a card


def test_g8_flip_turns_one_card_up_and_ends_the_turn() -> None:
    """G-8: draw nothing and turn one face-down card face up."""
    table = g6_table()
    table.flip(1, 5)
    assert table.slots(1)[5] == {"state": "up", "card": "QS"}
    assert table.table["discard"] == ["KS"]
    assert table.table["stock_size"] == 39
    assert table.turn == 0


def test_g8_flipping_a_face_up_card_is_refused() -> None:
    """G-8: only a face-down card can be turned up."""
    table = g6_table()
    table.flip(1, 5)
    table.flip(0, 0)
    assert refusal(table, 1, {"type": "flip", "position": 5}) == ("not_face_down", "G-8")


def test_g8_not_allowed_without_face_down_cards() -> None:
    """G-8: a player without face-down cards cannot turn a card up (state set directly)."""
    table = g6_table()
    table.with_state(grids=(table.snap.state.grids[0], all_up(HIDDEN_GRIDS[1])))
    for position in range(6):
        assert refusal(table, 1, {"type": "flip", "position": position}) == ("not_face_down", "G-8")
    assert "flip" not in {a["type"] for a in engine.legal_actions(table.snap, 1)}


# ================================================================ G-9 three equal in a column (3x3)

# 3x3 grids: seat 1 has 7S and 7H at positions 0 and 3 (column 0), 2C at position 6.
G9_SEAT1 = ["7S", "AS", "5D", "7H", "3S", "6D", "2C", "4S", "KD"]
G9_SEAT0 = ["AH", "2H", "3H", "4H", "5H", "6H", "8H", "9H", "10H"]


def g9_table(discard: str = "QC", stock: tuple[str, ...] = ("7C",), **options: Any) -> Table:
    grids = {0: G9_SEAT0, 1: G9_SEAT1}
    opts = {"layout": "3x3", "rounds": 1, "penalty": 0, **NO_FLIPS, **options}
    return Table.stacked(2, opts, grids=grids, discard=discard, stock=list(stock))


def test_g9_three_equal_in_column_are_discarded_replaced_card_first() -> None:
    """G-9: the card just replaced goes onto the pile first, then the three; the places stay empty."""
    table = g9_table()
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    table.flip(0, 1)
    table.draw(1)  # 7C
    table.swap(1, 6)  # replaces the face-down 2C
    discard = table.table["discard"]
    assert discard[:2] == ["QC", "2C"]
    assert sorted(discard[2:]) == ["7C", "7H", "7S"]
    for position in (0, 3, 6):
        assert table.slots(1)[position] == {"state": "empty", "card": None}
    cleared = table.of_type("ColumnDiscarded")
    assert len(cleared) == 1
    assert cleared[0].data()["seat"] == 1 and cleared[0].data()["column"] == 0


def test_g9_take_discard_completing_a_column() -> None:
    """G-9 with G-7: the replaced card first, then the three."""
    table = g9_table(discard="7C", stock=())
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    table.flip(0, 1)
    table.take(1, 6)
    discard = table.table["discard"]
    assert discard[0] == "2C"
    assert sorted(discard[1:]) == ["7C", "7H", "7S"]
    assert [table.slots(1)[p]["state"] for p in (0, 3, 6)] == ["empty"] * 3


def test_g9_flip_completing_a_column_and_face_down_cards_do_not_count() -> None:
    """G-9 with G-8: a face-down third card does not clear; turning it up does (no replaced card)."""
    grids = {0: G9_SEAT0, 1: ["7S", "AS", "5D", "7H", "3S", "6D", "7D", "4S", "KD"]}
    table = Table.stacked(2, {"layout": "3x3", **NO_FLIPS}, grids=grids, discard="QC")
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    assert [table.slots(1)[p]["state"] for p in (0, 3, 6)] == ["up", "up", "down"]
    assert table.of_type("ColumnDiscarded") == []
    table.flip(0, 1)
    table.flip(1, 6)
    assert table.table["discard"][0] == "QC"
    assert sorted(table.table["discard"][1:]) == ["7D", "7H", "7S"]
    assert [table.slots(1)[p]["state"] for p in (0, 3, 6)] == ["empty"] * 3


def test_g9_never_in_the_2x3_layout() -> None:
    """G-9: in 2x3 a column of two equal face-up cards stays."""
    grids = {1: ["7S", "AS", "5D", "7H", "3S", "6D"]}
    table = Table.stacked(2, NO_FLIPS, grids=grids, discard="QC")
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    assert [table.slots(1)[p] for p in (0, 3)] == [{"state": "up", "card": "7S"}, {"state": "up", "card": "7H"}]
    assert table.table["discard"] == ["QC"]
    assert table.of_type("ColumnDiscarded") == []


def test_g9_cannot_swap_take_or_flip_into_an_empty_place() -> None:
    """G-9: a cleared place holds no card; nothing can be put there or turned up."""
    table = g9_table(stock=("7C", "8C"))
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    table.flip(0, 1)
    table.draw(1)
    table.swap(1, 6)
    table.flip(0, 2)
    for position in (0, 3, 6):
        assert refusal(table, 1, {"type": "take_discard", "position": position}) == ("empty_position", "G-9")
        assert refusal(table, 1, {"type": "flip", "position": position}) == ("empty_position", "G-9")
    table.draw(1)
    for position in (0, 3, 6):
        assert refusal(table, 1, {"type": "swap", "position": position}) == ("empty_position", "G-9")
    legal = engine.legal_actions(table.snap, 1)
    assert {a.get("position") for a in legal if a["type"] == "swap"} == {1, 2, 4, 5, 7, 8}


def test_g9_empty_places_score_zero() -> None:
    """G-9 / G-13: the cleared column scores 0; the others score their values."""
    assert grid_score((None, "AS", "5D", None, "3S", "6D", None, "4S", "KD")) == 19
    table = g9_table()
    table.flip(1, 0)
    table.flip(0, 0)
    table.flip(1, 3)
    table.flip(0, 1)
    table.draw(1)
    table.swap(1, 6)
    finish_round(table)
    # seat 1 keeps AS 3S 4S (8) and 5D 6D KD (11); seat 0: 1 - 2 + 3 + 4 + 5 + 6 + 8 + 9 + 10
    assert table.view()["table"]["round_scores"] == [[44, 19]]


# ================================================================ G-10 empty stock


def run_down_the_stock(table: Table) -> None:
    """Draw and swap into face-up place 0 until the stock is empty (no card is turned up)."""
    while table.table["stock_size"] > 0:
        seat = table.turn
        assert seat is not None
        table.draw(seat)
        table.swap(seat, 0)


def test_g10_empty_stock_reshuffles_the_pile_but_its_top() -> None:
    """G-10 / C-4: the pile but its top, bottom first, shuffled with label round/1/reshuffle/1."""
    table = Table(2, {"rounds": 1}, seed="g10 seed")
    table.reveal(0, 0, 1)
    table.reveal(1, 0, 1)
    run_down_the_stock(table)
    pile = table.table["discard"]
    assert len(pile) == 40 and table.of_type("StockReshuffled") == []
    seat = table.turn
    assert seat is not None
    events = table.draw(seat)
    assert [e.type_name() for e in events] == ["StockReshuffled", "CardDrawn"]
    assert events[0].data() == {"reshuffle": 1}
    expected = shuffle(pile[:-1], "g10 seed", "round/1/reshuffle/1")
    assert table.view(seat)["you"]["drawn"] == expected[0]
    assert table.truth()["table"]["stock"] == list(expected[1:])
    assert table.table["discard"] == [pile[-1]]
    assert table.table["stock_size"] == 38


def test_g10_second_reshuffle_and_next_round_use_their_own_labels() -> None:
    """G-10 / C-4: the k-th reshuffle of round r uses round/<r>/reshuffle/<k>; k starts at 1 each round."""
    seed = "labels"
    table = Table(2, {"rounds": 2}, seed=seed)
    for round_no, ks in ((1, (1, 2)), (2, (1,))):
        table.reveal(0, 0, 1)
        table.reveal(1, 0, 1)
        for k in ks:
            run_down_the_stock(table)
            pile = table.table["discard"]
            seat = table.turn
            assert seat is not None
            table.draw(seat)
            expected = shuffle(pile[:-1], seed, f"round/{round_no}/reshuffle/{k}")
            assert table.view(seat)["you"]["drawn"] == expected[0]
            assert table.truth()["table"]["stock"] == list(expected[1:])
            assert table.of_type("StockReshuffled")[-1].data() == {"reshuffle": k}
            table.swap(seat, 0)
        if round_no == 1:
            finish_round(table)
    assert len(table.of_type("StockReshuffled")) == 3


def test_g10_no_reshuffle_without_a_draw() -> None:
    """G-10: only a draw from the empty stock reshuffles; taking the discard or flipping does not."""
    table = Table(2, {"rounds": 1}, seed="lazy")
    table.reveal(0, 0, 1)
    table.reveal(1, 0, 1)
    run_down_the_stock(table)
    pile = table.table["discard"]
    seat = table.turn
    assert seat is not None
    table.take(seat, 1)
    table.flip(1 - seat, 2)
    assert table.table["stock_size"] == 0
    assert len(table.table["discard"]) == len(pile)
    assert table.of_type("StockReshuffled") == []


def test_g10_nothing_to_draw_when_stock_is_empty_and_pile_has_one_card() -> None:
    """G-10: with an empty stock and only the top discard, drawing is refused (state set directly)."""
    table = g6_table()
    table.with_state(stock=(), discard=("KS",))
    assert refusal(table, 1, DRAW) == ("stock_empty", "G-10")
    assert "draw" not in {a["type"] for a in engine.legal_actions(table.snap, 1)}


# ================================================================ G-11 ending a round


def g11_table(players: int = 3, **options: Any) -> Table:
    grids = {
        0: ["AS", "2S", "3S", "4S", "5S", "6S"],
        1: ["7S", "8S", "9S", "10S", "JS", "QS"],
        2: ["AH", "2H", "3H", "4H", "5H", "6H"],
    }
    opts = {"initial_flips": 5, "rounds": 1, **options}
    table = Table.stacked(players, opts, grids=grids, discard="KS", stock=["7H", "8H"])
    for seat in range(players):
        table.reveal(seat, 0, 1, 2, 3, 4)
    return table


def test_g11_each_other_player_has_exactly_one_more_turn() -> None:
    """G-11: seat 1 turns up its last card; seats 2 and 0 have one more turn each; then the round is over."""
    table = g11_table()
    assert table.turn == 1
    table.flip(1, 5)
    assert table.table["ended_by"] == 1
    assert table.turn == 2
    table.draw(2)
    table.swap(2, 0)  # keeps its face-down card at position 5
    assert table.view()["phase"] == "play"
    assert table.turn == 0
    assert table.of_type("RoundScored") == []
    table.flip(0, 5)  # seat 0 now has none face down too, but the round was already ended by seat 1
    assert len(table.of_type("RoundScored")) == 1
    assert table.snap.finished
    assert table.table["ended_by"] == 1


def test_g11_after_the_round_all_cards_are_turned_up() -> None:
    """G-11: when the round is over all face-down cards are turned face up."""
    table = g11_table()
    table.flip(1, 5)
    table.draw(2)
    table.swap(2, 0)
    assert table.slots(2)[5] == {"state": "down", "card": None}
    table.take(0, 0)
    assert table.slots(0)[5] == {"state": "up", "card": "6S"}
    assert table.slots(2)[5] == {"state": "up", "card": "6H"}
    assert table.slots(2)[0] == {"state": "up", "card": "7H"}


def test_g11_ending_by_swapping_the_last_face_down_card() -> None:
    """G-11: a swap into the last face-down place ends the round too."""
    table = g11_table(players=2)
    table.draw(1)
    table.swap(1, 5)
    assert table.table["ended_by"] == 1
    assert table.turn == 0
    table.flip(0, 5)
    assert table.snap.finished


def test_g11_the_ender_has_no_further_turn_in_round_order() -> None:
    """G-11: with 3 players the ender is seat 2: seats 0 then 1 play, then the next round starts."""
    table = g11_table(rounds=2)
    table.take(1, 0)  # seat 1 keeps its face-down card
    table.flip(2, 5)
    assert table.table["ended_by"] == 2
    assert table.turn == 0
    table.flip(0, 5)
    assert table.turn == 1
    table.flip(1, 5)
    assert table.view()["round"] == 2
    assert table.table["ended_by"] is None
    assert table.table["dealer"] == 1


# ================================================================ G-12 / G-13 / G-14 scoring


def scored_round(grid0: list[str], grid1: list[str], **options: Any) -> Table:
    """A 2-player, 1-round game that seat 1 ends on its first turn; seat 0 then flips its last card."""
    opts = {"initial_flips": 5, "rounds": 1, **options}
    table = Table.stacked(2, opts, grids={0: grid0, 1: grid1}, discard="8D")
    table.reveal(0, 0, 1, 2, 3, 4)
    table.reveal(1, 0, 1, 2, 3, 4)
    table.flip(1, 5)
    table.flip(0, 5)
    assert table.snap.finished
    return table


@pytest.mark.parametrize(
    ("rank", "value"),
    [("A", 1), ("2", -2), ("3", 3), ("4", 4), ("5", 5), ("6", 6), ("7", 7), ("8", 8), ("9", 9), ("10", 10)]
    + [("J", 10), ("Q", 10), ("K", 0)],
)
def test_g12_card_values(rank: str, value: int) -> None:
    """G-12: A = 1, 2 = -2, 3-10 face value, J = Q = 10, K = 0, in every suit."""
    for suit in "SHDC":
        assert card_value(rank + suit) == value


def test_g12_round_score_is_the_sum_of_values() -> None:
    """G-12: no column of equal ranks: every card scores its value."""
    # seat 0: 1 - 2 + 3 + 7 + 8 + 9 = 26; seat 1: 10 + 10 + 10 + 0 + 4 + 5 = 39
    table = scored_round(["AS", "2S", "3S", "7H", "8H", "9H"], ["10D", "JD", "QD", "KC", "4C", "5C"], penalty=0)
    assert table.table["round_scores"] == [[26, 39]]
    assert table.view()["scores"] == [26, 39]


def test_g13_equal_ranks_in_a_column_score_zero_a_pair_of_twos_too() -> None:
    """G-13: a column of one rank scores 0, a pair of 2s too (not -4)."""
    # seat 0: A/A 0, 2/2 0, K/Q 10; seat 1: 3/3 0, J/10 20, 9/4 13
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "JD", "9C", "3C", "10D", "4C"], penalty=0)
    assert table.table["round_scores"] == [[10, 33]]


def test_g14_ender_without_the_lowest_score_gets_the_penalty() -> None:
    """G-14: seat 1 ended with 33 while seat 0 has 10: 10 penalty points on top."""
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "JD", "9C", "3C", "10D", "4C"])
    assert table.table["round_scores"] == [[10, 43]]
    assert table.of_type("RoundScored")[0].data()["penalized"] == 1


def test_g14_penalty_option() -> None:
    """G-14: option `penalty` sets the points."""
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "JD", "9C", "3C", "10D", "4C"], penalty=25)
    assert table.table["round_scores"] == [[10, 58]]
    with pytest.raises(InvalidInput) as info:
        engine.make_config("golf", 2, {"penalty": -1}, "seed")
    assert info.value.code == "invalid_option"


def test_g14_no_penalty_for_a_tie_at_the_lowest() -> None:
    """G-14: only a strictly lower score of another player brings the penalty."""
    # seat 0: 0 + 0 + 10 = 10; seat 1 (ender): 3/3 0, K/K 0, 9/A 10 = 10
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "KD", "9C", "3C", "KC", "AC"])
    assert table.table["round_scores"] == [[10, 10]]
    assert table.of_type("RoundScored")[0].data()["penalized"] is None


def test_g14_no_penalty_for_the_lowest() -> None:
    """G-14: the ender with the lowest score gets nothing on top."""
    # seat 0: 26 as in G-12; seat 1: 3/3 0, K/K 0, A/2 -1
    table = scored_round(["AS", "2S", "3S", "7H", "8H", "9H"], ["3D", "KD", "AC", "3C", "KC", "2C"])
    assert table.table["round_scores"] == [[26, -1]]


# ================================================================ G-15 game end, C-7


def test_g15_rounds_option_totals_and_lowest_total_wins() -> None:
    """G-15: two rounds; totals add up the round scores; the lowest total wins, not the last round's best."""
    round2 = build_deck(
        2,
        {0: ["KS", "KH", "KD", "KC", "QS", "QH"], 1: ["AS", "AH", "AD", "3S", "3H", "3D"]},
        discard="8D",
        dealer=1,
    )
    grids = {0: ["AS", "2S", "KS", "AH", "2H", "QS"], 1: ["3D", "JD", "9C", "3C", "10D", "4C"]}
    table = Table.stacked(2, {"initial_flips": 5, "rounds": 2}, grids=grids, discard="8D", later_decks=[round2])
    table.reveal(0, 0, 1, 2, 3, 4)
    table.reveal(1, 0, 1, 2, 3, 4)
    table.flip(1, 5)  # seat 1 ends round 1 with 33 > 10: 43
    table.flip(0, 5)
    assert table.view()["round"] == 2
    assert table.view()["scores"] == [10, 43]
    table.reveal(0, 0, 1, 2, 3, 4)
    table.reveal(1, 0, 1, 2, 3, 4)
    assert table.turn == 0  # dealer 1
    table.flip(0, 5)  # seat 0 ends round 2 with K/K 0, K/Q 10, K/Q 10 = 20 > 12: 30
    table.flip(1, 5)  # seat 1: A/3, A/3, A/3 = 12, the best of round 2
    view = table.view()
    assert view["status"] == "finished"
    assert view["table"]["round_scores"] == [[10, 43], [30, 12]]
    assert view["result"] == {"totals": [40, 55], "winners": [0]}


def test_g15_lowest_total_wins() -> None:
    """G-15: lowest total wins; the winner is the seat with the lowest sum."""
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "JD", "9C", "3C", "10D", "4C"])
    assert table.view()["result"] == {"totals": [10, 43], "winners": [0]}
    assert table.of_type("GameEnded")[0].data() == {"totals": [10, 43], "winners": [0]}


def test_c7_equal_lowest_totals_share_the_win() -> None:
    """G-15 / C-7: all players level at the best total share the win."""
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "KD", "9C", "3C", "KC", "AC"])
    assert table.view()["result"] == {"totals": [10, 10], "winners": [0, 1]}


def test_g15_default_nine_rounds_and_range() -> None:
    """G-15: 9 rounds by default; option rounds is 1-18."""
    assert engine.make_config("golf", 2, {}, "seed").options["rounds"] == 9
    assert engine.make_config("golf", 2, {"rounds": 18}, "seed").options["rounds"] == 18
    for rounds in (0, 19):
        with pytest.raises(InvalidInput) as info:
            engine.make_config("golf", 2, {"rounds": rounds}, "seed")
        assert info.value.code == "invalid_option"


def test_g15_game_plays_exactly_the_option_rounds_then_reveals_the_seed() -> None:
    """G-15 / C-4: after `rounds` rounds the game ends and its last event reveals the seed."""
    table = Table(3, {"rounds": 3, **NO_FLIPS}, seed="three rounds")
    play_until(table, lambda t: t.snap.finished)
    assert len(table.of_type("RoundStarted")) == 3
    assert len(table.of_type("RoundScored")) == 3
    names = [e.type_name() for e in table.events]
    assert names[-2:] == ["GameEnded", "SeedRevealed"]
    assert table.events[-1].data() == {"seed": "three rounds"}
    assert table.view()["status"] == "finished"
    assert table.view()["to_act"] == []


# ================================================================ refusals


def test_c2_not_your_turn() -> None:
    """C-2 / G-6: only the seat whose turn it is may act."""
    table = g6_table()
    for action in (DRAW, {"type": "flip", "position": 0}, {"type": "take_discard", "position": 0}):
        assert refusal(table, 0, action) == ("not_your_turn", "C-2")
    assert engine.legal_actions(table.snap, 0) == []
    table.draw(1)
    assert refusal(table, 0, {"type": "swap", "position": 0}) == ("not_your_turn", "C-2")


def test_g15_no_action_after_the_game_has_finished() -> None:
    """G-15: a finished game refuses every action with game_finished."""
    table = scored_round(["AS", "2S", "KS", "AH", "2H", "QS"], ["3D", "JD", "9C", "3C", "10D", "4C"])
    for seat in (0, 1):
        error = table.refused(seat, DRAW, RuleViolation)
        assert (error.code, error.rule) == ("game_finished", "G-15")
        assert engine.legal_actions(table.snap, seat) == []


@pytest.mark.parametrize("seat", [-1, 2, 99])
def test_c2_seats_outside_the_table_are_refused(seat: int) -> None:
    """C-2: seats are 0 ... n-1; another seat cannot act, not even in the setup."""
    table = Table(2)
    assert table.refused(seat, {"type": "reveal", "positions": [0, 1]}, InvalidInput).code == "invalid_seat"
    table.reveal(0, 0, 1)
    assert table.view()["to_act"] == [1]


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "pass"}, "unknown_action"),
        ({}, "unknown_action"),
        ({"type": None}, "unknown_action"),
        ({"type": "swap"}, "invalid_request"),
        ({"type": "draw"}, "invalid_request"),
        ({"type": "flip", "position": 1, "card": "AS"}, "invalid_request"),
        ({"type": "draw", "from": "stock", "position": 0}, "invalid_request"),
        ({"type": "flip", "position": "1"}, "invalid_request"),
        ({"type": "flip", "position": 1.0}, "invalid_request"),
        ({"type": "flip", "position": True}, "invalid_request"),
        ({"type": "flip", "position": None}, "invalid_request"),
        ({"type": "draw", "from": "discard"}, "invalid_request"),
        ({"type": "reveal", "positions": 1}, "invalid_request"),
        ({"type": "reveal", "positions": [0, "1"]}, "invalid_request"),
        ({"type": "discard", "flip": "0"}, "invalid_request"),
    ],
)
def test_invalid_input_is_refused_with_a_code(action: dict[str, Any], code: str) -> None:
    """C-1 / API: malformed actions are InvalidInput with a stable code, never a crash."""
    table = g6_table()
    assert bad_input(table, 1, action) == code
