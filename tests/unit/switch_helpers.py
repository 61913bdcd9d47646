"""Shared helpers for the Switch tests: stacked decks (C-5) and a small table driver.

The deal arithmetic is read from the rule text (S-2), not from domain/switch.py:
cards are dealt one at a time from the top, clockwise, starting left of the dealer,
so deck index `i` goes to seat `(dealer + 1 + i) mod n` as that seat's `i // n`-th
card; after the hands the next card is the start card (S-2), the rest is the stock,
index 0 on top. The canonical deck is built here from S-1 and C-3 as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.cards import RANKS, SUITS
from domain.events import Event
from tests.engine_table import EngineTable

SPECIAL_RANKS = frozenset({"2", "8", "J", "K", "JK"})
"""Ranks with an effect (S-3, S-5); filler cards avoid them."""


def canonical(extra_jokers: int = 0, extra_twos: int = 0) -> list[str]:
    """S-1 / C-3: four decks S H D C with ranks A..K, 8 + extra jokers, then extra twos S H D C repeating."""
    one = [rank + suit for suit in SUITS for rank in RANKS]
    return one * 4 + ["JK"] * (8 + extra_jokers) + ["2" + SUITS[i % 4] for i in range(extra_twos)]


def rank(card: str) -> str:
    return "JK" if card == "JK" else card[:-1]


def deal_index(players: int, dealer: int, seat: int, position: int) -> int:
    """S-2: the deck index of the card `seat` receives as its `position`-th card."""
    return position * players + (seat - dealer - 1) % players


def build_deck(
    players: int,
    hands: Mapping[int, Sequence[str]] | None = None,
    start: str | None = None,
    stock: Sequence[str] = (),
    *,
    dealer: int = 0,
    hand_size: int = 7,
    extra_jokers: int = 0,
    extra_twos: int = 0,
) -> list[str]:
    """A permutation of the canonical deck that deals these hands, this start card and stock top.

    Every other place gets the remaining cards: plain ones (no 2, 8, J, K or joker) first,
    in C-3 order, then the special ones, so a place left open holds no card with an effect.
    """
    full = canonical(extra_jokers, extra_twos)
    base = players * hand_size
    wanted: list[str | None] = [None] * len(full)
    for seat, cards in (hands or {}).items():
        assert len(cards) <= hand_size, "more cards than the hand size"
        for position, card in enumerate(cards):
            wanted[deal_index(players, dealer, seat, position)] = card
    if start is not None:
        wanted[base] = start
    for offset, card in enumerate(stock):
        wanted[base + 1 + offset] = card
    left = Counter(full)
    left.subtract(card for card in wanted if card is not None)
    if any(count < 0 for count in left.values()):
        raise ValueError(f"more copies wanted than the deck has: {sorted(c for c, n in left.items() if n < 0)}")
    plain = [c for c in full if rank(c) not in SPECIAL_RANKS]
    special = [c for c in full if rank(c) in SPECIAL_RANKS]
    filler: list[str] = []
    for card in plain + special:
        if left[card] > 0:
            filler.append(card)
            left[card] -= 1
    fill = iter(filler)
    return [card if card is not None else next(fill) for card in wanted]


class Table(EngineTable):
    """One Switch game driven through domain.engine, with its event log."""

    GAME = "switch"
    PLAYERS = 4

    @classmethod
    def stacked(
        cls,
        options: Mapping[str, Any] | None = None,
        *,
        players: int = 4,
        hands: Mapping[int, Sequence[str]] | None = None,
        start: str | None = None,
        stock: Sequence[str] = (),
        later_decks: Sequence[Sequence[str]] = (),
        seed: str = "switch-test",
        rules_version: int | None = None,
    ) -> Table:
        """A game whose first hand deals exactly these cards (round 1's dealer is seat 0, seat 1 is first)."""
        opts = dict(options or {})
        deck = build_deck(
            players,
            hands,
            start,
            stock,
            hand_size=opts.get("hand_size", 7),
            extra_jokers=opts.get("extra_jokers", 0),
            extra_twos=opts.get("extra_twos", 0),
        )
        return cls(players, opts, decks=[deck, *later_decks], seed=seed, rules_version=rules_version)

    # ---- actions

    def play(self, seat: int, *cards: str, suit: str | None = None) -> list[Event]:
        action: dict[str, Any] = {"type": "play", "cards": list(cards)}
        if suit is not None:
            action["suit"] = suit
        return self.act(seat, action)

    def draw(self, seat: int) -> list[Event]:
        return self.act(seat, {"type": "draw"})

    def pass_turn(self, seat: int) -> list[Event]:
        return self.act(seat, {"type": "pass"})

    def choose(self, seat: int, suit: str) -> list[Event]:
        return self.act(seat, {"type": "choose_suit", "suit": suit})

    # ---- what can be seen

    def you(self, seat: int) -> dict[str, Any]:
        you: dict[str, Any] = self.view(seat)["you"]
        return you

    def hand(self, seat: int) -> list[str]:
        """A seat's hand, sorted (C-3 order)."""
        return list(self.truth()["table"]["hands"][seat])

    def stock(self) -> list[str]:
        return list(self.truth()["table"]["stock"])

    @property
    def turn(self) -> int | None:
        turn: int | None = self.table["turn"]
        return turn

    @property
    def to_act(self) -> tuple[int, ...]:
        return self.snap.to_act()

    def set_hands(self, hands: Mapping[int, Sequence[str]]) -> None:
        """Give seats these exact hands, taking the cards from the other hands and the stock.

        The cards given up go to the top of the stock, the others keep their order;
        every card stays in exactly one place. For positions deep in a hand (S-8, S-9).
        """
        state = self.snap.state
        pool = Counter[str]()
        for seat in hands:
            pool.update(state.hands[seat])
        pool.update(state.stock)
        for seat, cards in hands.items():
            need = Counter(cards)
            assert not need - pool, f"not enough copies for seat {seat}: {need - pool}"
            pool.subtract(need)
        freed = [card for seat in hands for card in state.hands[seat]]
        stock = _take_out(freed + list(state.stock), Counter(c for cards in hands.values() for c in cards))
        new_hands = tuple(tuple(hands[s]) if s in hands else state.hands[s] for s in range(len(state.hands)))
        self.with_state(hands=new_hands, stock=tuple(stock))


def _take_out(cards: Iterable[str], wanted: Counter[str]) -> list[str]:
    """`cards` less one copy of each wanted card, in order."""
    left = Counter(wanted)
    out = []
    for card in cards:
        if left[card] > 0:
            left[card] -= 1
        else:
            out.append(card)
    return out


def cards_everywhere(snap: engine.Snapshot[Any]) -> Counter[str]:
    """Every card of the game by where it can be: hands, stock and discard pile."""
    state = snap.state
    cards = Counter(state.stock) + Counter(state.discard)
    for hand in state.hands:
        cards.update(hand)
    return cards


def plain_move(table: Table, seat: int) -> dict[str, Any]:
    """A simple policy: take a pending draw; else play the first card that is not a J; else a J
    naming the suit the hand holds most of; else draw."""
    legal = table.legal(seat)
    if table.table["pending_draw"] or not legal:
        return {"type": "draw"}
    suits = Counter(card[-1] for card in table.hand(seat) if card != "JK" and rank(card) != "J")
    best = max("SHDC", key=lambda suit: suits[suit])
    plays = [a for a in legal if a["type"] == "play" and rank(a["cards"][0]) != "J"]
    jacks = [a for a in legal if a.get("suit") == best]
    return dict((plays or jacks or legal)[0])


def play_until(table: Table, done: Any, limit: int = 20_000) -> None:
    """Play `plain_move` for whoever is to act until `done(table)` holds."""
    for _ in range(limit):
        if done(table):
            return
        to_act = table.to_act
        assert to_act, "nobody is to act but the condition does not hold"
        table.act(to_act[0], plain_move(table, to_act[0]))
    raise AssertionError("the condition did not hold within the step limit")
