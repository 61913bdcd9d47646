"""The meld module (R-12 ... R-16): validity edge cases, and the enumeration of every meld,
lay-off and swap a hand can make, checked against brute force and for speed."""

from __future__ import annotations

import itertools
import time
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain import romme_melds as rm
from domain.romme import (
    MELD_CAP,
    can_take_discard,
    iter_legal_melds,
    iter_legal_takes,
    lay_offs,
    meld_candidates,
    swaps,
    take_candidates,
)
from tests.unit.romme_helpers import DECK, Table

SMALL_HANDS = st.lists(st.sampled_from(DECK), min_size=3, max_size=6).filter(
    lambda cards: all(n <= (6 if c == "JK" else 2) for c, n in Counter(cards).items())
)
HANDS = st.lists(st.sampled_from(DECK), min_size=3, max_size=22).filter(
    lambda cards: all(n <= (6 if c == "JK" else 2) for c, n in Counter(cards).items())
)
BIG_HAND = [f"{r}H" for r in rm.RANKS] + ["5S", "5D", "5C", "KS", "KD"] + ["JK"] * 6


def normal(meld: rm.Meld) -> rm.Meld:
    """A set's cards in canonical order (a set has no order); a run as given."""
    kind, cards = meld
    return (kind, rm.sort_cards(cards)) if kind == "set" else meld


def brute_force(hand: list[str]) -> set[rm.Meld]:
    """Every meld of the hand, by trying every ordered selection of its cards."""
    found: set[rm.Meld] = set()
    for size in range(3, len(hand) + 1):
        for cards in set(itertools.permutations(hand, size)):
            if rm.is_valid_meld("run", cards):
                found.add(("run", cards))
            if rm.is_valid_meld("set", cards):
                found.add(("set", rm.sort_cards(cards)))
    return found


@settings(max_examples=120, deadline=None)
@given(SMALL_HANDS)
def test_iter_melds_is_exactly_every_meld_of_the_hand(hand: list[str]) -> None:
    melds = list(rm.iter_melds(hand))
    assert len(melds) == len(set(melds)), "each meld once"
    assert {normal(m) for m in melds} == brute_force(hand)
    for _, cards in melds:
        assert rm.contains(Counter(hand), cards)


@settings(max_examples=150, deadline=None)
@given(HANDS)
def test_a_meld_with_a_card_means_a_three_card_meld_with_it(hand: list[str]) -> None:
    """What `can_take_discard` and the legal list rely on: for every card in any meld of the hand,
    some three-card meld of the hand holds that card too."""
    minimal = rm.minimal_melds(hand)
    with_card = {c for _, cards in minimal for c in cards}
    for _, cards in itertools.islice(rm.iter_melds(hand), 3000):
        assert set(cards) <= with_card
    assert all(len(cards) == 3 and rm.is_valid_meld(kind, cards) for kind, cards in minimal)


@settings(max_examples=100, deadline=None)
@given(HANDS)
def test_candidates_are_valid_melds_of_the_hand_and_hold_every_three_card_meld(hand: list[str]) -> None:
    candidates = rm.candidate_melds(hand, cap=10_000)
    assert len(candidates) == len(set(candidates))
    for kind, cards in candidates:
        assert rm.is_valid_meld(kind, cards) and rm.contains(Counter(hand), cards)
    assert set(rm.minimal_melds(hand)) <= set(candidates)
    for _, cards in rm.natural_melds(hand):
        assert cards[0] != "JK" and cards[-1] != "JK"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["set", "run"]),
    st.lists(st.sampled_from(DECK), min_size=3, max_size=9),
    st.sampled_from(sorted(set(DECK))),
)
def test_lay_off_and_swap_agree_with_validity(kind: str, cards: list[str], card: str) -> None:
    if not rm.is_valid_meld(kind, cards):
        return
    ends = rm.lay_off_ends(kind, cards, card)
    if kind == "set":
        assert ends == ((None,) if rm.is_valid_meld("set", [*cards, card]) else ())
    else:
        assert ("low" in ends) == rm.is_valid_meld("run", [card, *cards])
        assert ("high" in ends) == rm.is_valid_meld("run", [*cards, card])
    index = rm.swap_index(kind, cards, card)
    if index is not None:
        assert cards[index] == "JK" and card != "JK"
        after = rm.swapped(cards, index, card)
        assert rm.is_valid_meld(kind, after)
        if kind == "run":
            assert rm.represented("run", after) == rm.represented("run", cards), "a swap changes no place"


def test_card_values_and_points() -> None:
    assert rm.points(["QS", "QH", "JK", "AS", "2C", "10D"]) == 100 + 10 + 20 + 20 + 5 + 10
    assert rm.sort_cards(["JK", "2C", "AS", "KH", "AH"]) == ("AS", "AH", "KH", "2C", "JK")


def test_iter_melds_stays_fast_with_many_cards_and_jokers() -> None:
    """Every meld of a 24-card hand with six jokers: over a hundred thousand, in well under a few seconds."""
    started = time.perf_counter()
    count = sum(1 for _ in rm.iter_melds(BIG_HAND))
    elapsed = time.perf_counter() - started
    assert count > 100_000
    assert elapsed < 5, elapsed
    started = time.perf_counter()
    first = list(itertools.islice(rm.iter_melds(BIG_HAND), 50))
    assert len(first) == 50 and time.perf_counter() - started < 0.05


def test_the_legal_list_stays_fast_and_capped_with_many_cards_and_jokers() -> None:
    table = Table.dealt(2)
    state = table.snap.state
    hands = list(state.hands)
    pool = Counter(DECK)
    pool.subtract(BIG_HAND)
    hands = [tuple(sorted(pool.elements())[:15]), rm.sort_cards(BIG_HAND)]
    table.with_state(hands=tuple(hands), drawn=True, discard=("7H",), stock=())
    started = time.perf_counter()
    legal = table.legal(1)
    melds = meld_candidates(table.snap.state, 1)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, elapsed
    assert 0 < len([a for a in legal if a["type"] == "meld"]) <= MELD_CAP and len(melds) <= MELD_CAP
    assert {"type": "meld", "kind": "run", "cards": [f"{r}H" for r in rm.RANKS]} in legal
    assert {"type": "discard", "card": "JK"} in legal
    table.with_state(drawn=False)
    started = time.perf_counter()
    takes = take_candidates(table.snap.state, 1)
    assert can_take_discard(table.snap.state, 1)
    assert time.perf_counter() - started < 1.0
    assert 0 < len(takes) <= MELD_CAP and all("7H" in cards for _, cards in takes)


def test_lay_offs_and_swaps_enumerate_the_legal_ones() -> None:
    table = Table.dealt(2, {1: ["5H", "JK", "7H", "QS", "QH", "JK", "6H", "4H", "QD", "8H", "AS", "2S", "3S", "9C"]})
    table.draw(1)
    table.meld(1, "run", ["5H", "JK", "7H"])
    table.meld(1, "set", ["QS", "QH", "JK"])
    state = table.snap.state
    hand = state.hands[1]
    expected_lay_offs = set()
    expected_swaps = set()
    for meld in state.own_melds(1):
        for card in set(hand):
            if meld.kind == "set":
                if rm.is_valid_meld("set", [*meld.cards, card]):
                    expected_lay_offs.add((meld.id, card, None))
            else:
                if rm.is_valid_meld("run", [card, *meld.cards]):
                    expected_lay_offs.add((meld.id, card, "low"))
                if rm.is_valid_meld("run", [*meld.cards, card]):
                    expected_lay_offs.add((meld.id, card, "high"))
            for i, placed in enumerate(meld.cards):
                if placed == "JK" and card != "JK":
                    after = (*meld.cards[:i], card, *meld.cards[i + 1 :])
                    fits = rm.is_valid_meld(meld.kind, after)
                    if meld.kind == "run":
                        fits = fits and rm.represented("run", meld.cards)[i] == card
                    if fits:
                        expected_swaps.add((meld.id, card))
    assert set(lay_offs(state, 1)) == expected_lay_offs
    assert set(swaps(state, 1)) == expected_swaps
    assert (1, "6H") in expected_swaps and (2, "QD") in expected_swaps and (1, "4H", "low") in expected_lay_offs


def test_every_legal_meld_and_take_of_a_state_is_enumerated_and_accepted() -> None:
    """`iter_legal_melds` / `iter_legal_takes` hold the capped legal list, and decide takes each one."""
    hand = ["5H", "6H", "7H", "JK", "7S", "7D", "QS", "QH", "2C", "4C", "9D", "KD", "AS", "3S"]
    table = Table.dealt(2, {1: hand, 0: ["7C", "8H", "2S"]}, stock=["KS", "AD"])
    table.draw(1)
    state = table.snap.state
    every = list(iter_legal_melds(state, 1))
    assert len(every) == len(set(every)) and set(meld_candidates(state, 1)) <= set(every)
    for kind, cards in every:
        engine.act(table.snap, 1, {"type": "meld", "kind": kind, "cards": list(cards)})
    table.discard(1, "KS")
    table.draw(0)
    table.discard(0, "7C")
    state = table.snap.state
    takes = list(iter_legal_takes(state, 1))
    assert set(take_candidates(state, 1)) <= set(takes) and takes
    assert all("7C" in cards for _, cards in takes)
    for kind, cards in takes:
        engine.act(table.snap, 1, {"type": "take_discard", "meld": {"kind": kind, "cards": list(cards)}})
