"""Shared helpers for the Rommé tests: stacked decks (C-5) and a small table driver.

The deal arithmetic here is read from the rule text (R-3 ... R-5), not from
domain/romme.py: the deck (index 0 on top) is cut at `p`, the top `p` cards being the
lifted packet; the unbroken series of QS and jokers at the bottom of the lifted packet
goes to the cutter (R-4); the dealing stack is the lower packet with the rest of the
lifted packet beneath it; cards go one at a time from its top, clockwise from left of
the dealer, passing over any hand that holds 15 (R-5); the rest is the stock, top first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from domain.cards import canonical_deck
from domain.events import Event
from tests.engine_table import EngineTable

DECK = tuple(canonical_deck(copies=2, jokers=6))
DECK_SIZE = len(DECK)
HAND = 15
LUCKY = ("QS", "JK")
DRAW: dict[str, Any] = {"type": "draw"}


def deal_order(players: int, dealer: int, start_counts: Sequence[int]) -> list[int]:
    """R-5: the seat that receives each card of the dealing stack, top first."""
    counts = list(start_counts)
    order: list[int] = []
    seat = (dealer + 1) % players
    while any(c < HAND for c in counts):
        if counts[seat] < HAND:
            order.append(seat)
            counts[seat] += 1
        seat = (seat + 1) % players
    return order


def build_deck(
    players: int,
    hands: Mapping[int, Sequence[str]] | None = None,
    stock: Sequence[str] = (),
    *,
    dealer: int = 0,
    cut: int = 60,
    grab: Sequence[str] = (),
    stock_bottom: Sequence[str] = (),
) -> list[str]:
    """A permutation of the 110-card deck that, cut at `cut`, deals the wanted cards.

    `hands` maps a seat to (some of) the cards dealt to it; `grab` is the lucky series
    the cutter takes (bottom of the lifted packet first; only QS and JK); `stock` the top
    cards of the stock, top first; `stock_bottom` its last cards. Every other place gets
    the remaining cards in C-3 order, and the card above the grab is never a QS or joker.
    """
    assert all(card in LUCKY for card in grab)
    assert len(grab) <= cut <= DECK_SIZE - 1
    cutter = (dealer - 1) % players
    start = [0] * players
    start[cutter] = len(grab)
    order = deal_order(players, dealer, start)
    stack: list[str | None] = [None] * (DECK_SIZE - len(grab))
    received = [0] * players
    wanted = {seat: list(cards) for seat, cards in (hands or {}).items()}
    for index, seat in enumerate(order):
        k = received[seat]
        received[seat] += 1
        cards = wanted.get(seat, [])
        if k < len(cards):
            stack[index] = cards[k]
    for seat, cards in wanted.items():
        assert len(cards) + (len(grab) if seat == cutter else 0) <= HAND, f"seat {seat} is given too many cards"
    dealt = len(order)
    for offset, card in enumerate(stock):
        stack[dealt + offset] = card
    for offset, card in enumerate(stock_bottom):
        stack[len(stack) - len(stock_bottom) + offset] = card
    left = Counter(DECK)
    left.subtract(card for card in stack if card is not None)
    left.subtract(grab)
    if any(count < 0 for count in left.values()):
        raise ValueError(f"more copies wanted than the deck has: {sorted(c for c, n in left.items() if n < 0)}")
    filler: list[str] = []
    for card in DECK:
        if left[card] > 0:
            filler.append(card)
            left[card] -= 1
    lifted_rest = cut - len(grab)
    if lifted_rest and stack[-1] is None:
        plain = next(card for card in filler if card not in LUCKY)
        filler.remove(plain)
        stack[-1] = plain
    fill = iter(filler)
    full = [card if card is not None else next(fill) for card in stack]
    if lifted_rest:
        assert full[-1] not in LUCKY, "the card above the lucky grab must stop the series (R-4)"
    lower = full[: len(full) - lifted_rest]
    rest_of_lifted = full[len(full) - lifted_rest :]
    deck = rest_of_lifted + list(reversed(grab)) + lower
    assert sorted(deck) == sorted(DECK)
    return deck


class Table(EngineTable):
    """One Rommé game driven through domain.engine, with its event log."""

    GAME = "romme"

    @classmethod
    def dealt(
        cls,
        players: int = 2,
        hands: Mapping[int, Sequence[str]] | None = None,
        stock: Sequence[str] = (),
        *,
        options: Mapping[str, Any] | None = None,
        cut: int = 60,
        grab: Sequence[str] = (),
        stock_bottom: Sequence[str] = (),
        later_decks: Sequence[Sequence[str]] = (),
        seed: str = "romme-test",
    ) -> Table:
        """A game whose first round (dealer seat 0) deals these cards; the cut is made."""
        deck = build_deck(players, hands, stock, dealer=0, cut=cut, grab=grab, stock_bottom=stock_bottom)
        table = cls(players, options, decks=[deck, *later_decks], seed=seed)
        table.cut(players - 1, cut)
        return table

    # ---- actions

    def cut(self, seat: int, position: int) -> list[Event]:
        return self.act(seat, {"type": "cut", "position": position})

    def draw(self, seat: int) -> list[Event]:
        return self.act(seat, DRAW)

    def take(self, seat: int, kind: str, cards: Sequence[str]) -> list[Event]:
        return self.act(seat, {"type": "take_discard", "meld": {"kind": kind, "cards": list(cards)}})

    def meld(self, seat: int, kind: str, cards: Sequence[str]) -> list[Event]:
        return self.act(seat, {"type": "meld", "kind": kind, "cards": list(cards)})

    def lay_off(self, seat: int, meld: int, card: str, end: str | None = None) -> list[Event]:
        action: dict[str, Any] = {"type": "lay_off", "meld": meld, "card": card}
        if end is not None:
            action["end"] = end
        return self.act(seat, action)

    def swap(self, seat: int, meld: int, card: str) -> list[Event]:
        return self.act(seat, {"type": "swap_joker", "meld": meld, "card": card})

    def discard(self, seat: int, card: str) -> list[Event]:
        return self.act(seat, {"type": "discard", "card": card})

    # ---- what can be seen

    def hand(self, seat: int) -> list[str]:
        hand: list[str] = self.view(seat)["you"]["hand"]
        return hand

    def melds(self, seat: int | None = None) -> list[dict[str, Any]]:
        return [m for m in self.table["melds"] if seat is None or m["seat"] == seat]

    def meld_by_id(self, meld_id: int) -> dict[str, Any]:
        return next(m for m in self.table["melds"] if m["id"] == meld_id)

    @property
    def to_act(self) -> tuple[int, ...]:
        return self.snap.to_act()

    def last(self, name: str) -> dict[str, Any]:
        return self.of_type(name)[-1].data()


def multiset(cards: Iterable[str]) -> Counter[str]:
    return Counter(cards)


def run_hand(*runs: str) -> list[str]:
    """Cards of several runs written as 'AH 2H 3H' strings."""
    return [card for run in runs for card in run.split()]


def draw_and_discard_drawn(table: Table, seat: int) -> str:
    """A plain turn: draw, then discard the card just drawn (the hand is as it was)."""
    before = Counter(table.hand(seat))
    table.draw(seat)
    (drawn,) = list((Counter(table.hand(seat)) - before).elements())
    table.discard(seat, drawn)
    return drawn
