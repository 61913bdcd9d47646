"""Hands and per-seat tuples: the small edits every game's fold makes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def remove_cards(hand: Sequence[str], cards: Iterable[str]) -> tuple[str, ...] | None:
    """The hand without `cards` (as a multiset), or None when it does not hold them all."""
    left = list(hand)
    for card in cards:
        if card not in left:
            return None
        left.remove(card)
    return tuple(left)
