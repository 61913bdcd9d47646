"""Hands and per-seat tuples: the small edits every game's fold makes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def remove_cards(hand: Sequence[str], cards: Iterable[str]) -> tuple[str, ...] | None:
    """The hand without `cards` (as a multiset), or None when it does not hold them all."""
    left = list(hand)
    for card in cards:
        if card not in left:
            return None
        left.remove(card)
    return tuple(left)


def without(hand: Sequence[str], cards: Iterable[str]) -> tuple[str, ...]:
    """The hand less one copy of each of `cards` (C-1: any copy serves), in the hand's order: the fold of a
    recorded event, which trusts the event and only asserts that the hand held them."""
    left = remove_cards(hand, cards)
    assert left is not None, "the event removes a card the hand does not hold"
    return left


def replaced_at(items: tuple[T, ...], index: int, item: T) -> tuple[T, ...]:
    """`items` with the one at `index` (a seat's hand, grid or count) replaced by `item`."""
    return items[:index] + (item,) + items[index + 1 :]
