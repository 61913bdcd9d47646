"""Shared helpers for the Golf tests: stacked decks (C-5) and a small table driver.

The deal arithmetic here is read from the rule text (G-3), not from domain/golf.py:
cards are dealt one at a time from the top, clockwise, starting left of the dealer,
and the k-th card a player receives goes to grid position k. So deck index `i` goes
to seat `(dealer + 1 + i) mod n` as that seat's `i // n`-th card; after the grids
the next card starts the discard pile and the rest is the stock, index 0 on top.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.cards import canonical_deck
from domain.events import Event
from tests.engine_table import EngineTable

DRAW: dict[str, Any] = {"type": "draw", "from": "stock"}


def grid_size(layout: str) -> int:
    """G-2: 6 places in the 2x3 layout, 9 in the 3x3 layout."""
    return 9 if layout == "3x3" else 6


def deal_index(players: int, dealer: int, seat: int, position: int) -> int:
    """G-3: the deck index of the card that `seat` receives as its `position`-th card."""
    return position * players + (seat - dealer - 1) % players


def build_deck(
    players: int,
    grids: Mapping[int, Sequence[str | None]] | None = None,
    discard: str | None = None,
    stock: Sequence[str] = (),
    *,
    dealer: int = 0,
    layout: str = "2x3",
    copies: int = 1,
) -> list[str]:
    """A permutation of the canonical deck that deals the wanted cards (None: any card).

    `grids` maps a seat to its cards by position; `discard` is the card that starts the
    discard pile; `stock` the top cards of the stock, top first. Every other place gets the
    remaining canonical cards in C-3 order.
    """
    full = list(canonical_deck(copies))
    base = players * grid_size(layout)
    wanted: list[str | None] = [None] * len(full)
    for seat, cards in (grids or {}).items():
        assert len(cards) <= grid_size(layout), "more cards than grid places"
        for position, card in enumerate(cards):
            if card is not None:
                wanted[deal_index(players, dealer, seat, position)] = card
    if discard is not None:
        wanted[base] = discard
    for offset, card in enumerate(stock):
        wanted[base + 1 + offset] = card
    left = Counter(full)
    left.subtract(card for card in wanted if card is not None)
    if any(count < 0 for count in left.values()):
        raise ValueError(f"more copies wanted than the deck has: {sorted(c for c, n in left.items() if n < 0)}")
    filler: list[str] = []
    for card in full:
        if left[card] > 0:
            filler.append(card)
            left[card] -= 1
    fill = iter(filler)
    return [card if card is not None else next(fill) for card in wanted]


class Table(EngineTable):
    """One Golf game driven through domain.engine, with its event log."""

    GAME = "golf"

    @classmethod
    def stacked(
        cls,
        players: int = 2,
        options: Mapping[str, Any] | None = None,
        grids: Mapping[int, Sequence[str | None]] | None = None,
        discard: str | None = None,
        stock: Sequence[str] = (),
        *,
        later_decks: Sequence[Sequence[str]] = (),
        seed: str = "golf-test",
    ) -> Table:
        """A game whose first round deals exactly these cards (round 1's dealer is seat 0)."""
        opts = dict(options or {})
        layout = opts.get("layout", "2x3")
        copies = opts.get("decks") or (1 if players <= 4 else 2 if players <= 8 else 3)
        deck = build_deck(players, grids, discard, stock, dealer=0, layout=layout, copies=copies)
        return cls(players, opts, decks=[deck, *later_decks], seed=seed)

    # ---- actions

    def reveal(self, seat: int, *positions: int) -> list[Event]:
        return self.act(seat, {"type": "reveal", "positions": list(positions)})

    def draw(self, seat: int) -> list[Event]:
        return self.act(seat, DRAW)

    def swap(self, seat: int, position: int) -> list[Event]:
        return self.act(seat, {"type": "swap", "position": position})

    def discard(self, seat: int, flip: int | None) -> list[Event]:
        return self.act(seat, {"type": "discard", "flip": flip})

    def take(self, seat: int, position: int) -> list[Event]:
        return self.act(seat, {"type": "take_discard", "position": position})

    def flip(self, seat: int, position: int) -> list[Event]:
        return self.act(seat, {"type": "flip", "position": position})

    # ---- what can be seen

    def slots(self, seat: int, viewer: int | None = None) -> list[dict[str, Any]]:
        return list(self.view(viewer)["table"]["grids"][seat]["slots"])

    def dealt(self, seat: int) -> list[str | None]:
        """The cards in a seat's grid right now, face down included."""
        return [slot["card"] for slot in self.truth()["table"]["grids"][seat]["slots"]]

    @property
    def turn(self) -> int | None:
        turn: int | None = self.table["turn"]
        return turn


def simple_move(table: Table, seat: int) -> dict[str, Any]:
    """A plain policy: turn up the first face-down card when possible, else the first legal action."""
    legal = engine.legal_actions(table.snap, seat)
    assert legal, f"seat {seat} is to act but has no legal action"
    for preferred in ("reveal", "flip", "discard"):
        for action in legal:
            if action["type"] == preferred and action.get("flip", 0) is not None:
                return action
    return legal[0]


def play_until(table: Table, done: Any, limit: int = 2000) -> None:
    """Play `simple_move` for whoever is to act until `done(table)` holds."""
    for _ in range(limit):
        if done(table):
            return
        to_act = table.snap.to_act()
        assert to_act, "nobody is to act but the condition does not hold"
        table.act(to_act[0], simple_move(table, to_act[0]))
    raise AssertionError("the condition did not hold within the step limit")


def finish_round(table: Table) -> None:
    """Play the current round to its end (the next round dealt or the game over)."""
    scored = len(table.of_type("RoundScored"))
    play_until(table, lambda t: len(t.of_type("RoundScored")) > scored)
