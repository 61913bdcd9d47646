"""Card codes (C-1) and canonical deck order (C-3) for French-suited games."""

from __future__ import annotations

from collections.abc import Iterable

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
JOKER = "JK"

STANDARD_CODES: frozenset[str] = frozenset(r + s for s in SUITS for r in RANKS) | {JOKER}


def is_card(code: object) -> bool:
    """True when `code` is an exact C-1 card code."""
    return isinstance(code, str) and code in STANDARD_CODES


def rank_of(code: str) -> str:
    """The rank part of a card code (`JK` for a joker)."""
    return JOKER if code == JOKER else code[:-1]


def suit_of(code: str) -> str | None:
    """The suit part of a card code, None for a joker."""
    return None if code == JOKER else code[-1]


def canonical_deck(copies: int = 1, jokers: int = 0, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """C-3: each copy S H D C with ranks A..K, then all jokers, then extras."""
    one_deck = [rank + suit for suit in SUITS for rank in RANKS]
    return tuple(one_deck * copies) + (JOKER,) * jokers + tuple(extra)
