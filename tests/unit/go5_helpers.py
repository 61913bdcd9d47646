"""Shared helpers for the Go5 tests: card codes, stacked decks (C-5) and a small table driver.

Card codes, the canonical order and the deal arithmetic are written from the rule text
(V-1 ... V-6), not imported from domain/go5.py: a number card is `<n>-<pattern>-<colour>`
with colour index `(n - 1 + pattern index) mod 7`; the deck is numbers 1-7, within a
number by pattern, then 3 jokers, then 3 stop cards. Cards are dealt one at a time from
the top, clockwise from the left of the dealer, 7 each: deck index `i < 7n` goes to seat
`(dealer + 1 + i) mod n` (when no stop card is among them, V-6). Index `7n` is turned up
to start the discard pile (when it is a number card, V-5); the rest is the stock, top first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from domain.events import Event
from tests.engine_table import EngineTable

PATTERNS = ["dots", "stripes", "waves", "checks", "zigzag", "stars", "rings"]
COLOURS = ["red", "orange", "yellow", "green", "blue", "violet", "black"]
JOKER = "joker"
STOP = "stop"
HAND = 7


def card(number: int, pattern: str) -> str:
    """V-1 / V-2: the code of the card with this number and pattern."""
    p = PATTERNS.index(pattern)
    return f"{number}-{pattern}-{COLOURS[(number - 1 + p) % 7]}"


def with_colour(number: int, colour: str) -> str:
    """V-1: the one card with this number and colour."""
    for pattern in PATTERNS:
        if card(number, pattern).endswith("-" + colour):
            return card(number, pattern)
    raise AssertionError("every number has every colour once")


CANONICAL: list[str] = [card(n, p) for n in range(1, 8) for p in PATTERNS] + [JOKER] * 3 + [STOP] * 3
NUMBER_CARDS: list[str] = CANONICAL[:49]


def ordered(cards: Iterable[str]) -> list[str]:
    """Cards in canonical order (V-3), as hands are shown."""
    return sorted(cards, key=CANONICAL.index)


def deal_index(players: int, dealer: int, seat: int, position: int) -> int:
    """V-5: the deck index of the `position`-th card `seat` receives (no stop cards dealt)."""
    return position * players + (seat - dealer - 1) % players


def build_deck(
    players: int,
    hands: Mapping[int, Sequence[str]] | None = None,
    discard: str | None = None,
    stock: Sequence[str] = (),
    *,
    dealer: int = 0,
) -> list[str]:
    """A permutation of the 55 cards that deals the wanted hands, start card and stock top.

    Every other place gets the remaining cards in canonical order (number cards first, so the
    deal and the start card hold no joker or stop card unless asked for).
    """
    wanted: list[str | None] = [None] * len(CANONICAL)
    for seat, cards in (hands or {}).items():
        assert len(cards) <= HAND
        for position, code in enumerate(cards):
            wanted[deal_index(players, dealer, seat, position)] = code
    base = players * HAND
    if discard is not None:
        wanted[base] = discard
    for offset, code in enumerate(stock):
        wanted[base + 1 + offset] = code
    left = Counter(CANONICAL)
    left.subtract(c for c in wanted if c is not None)
    if any(n < 0 for n in left.values()):
        raise ValueError(f"more copies wanted than the deck has: {sorted(c for c, n in left.items() if n < 0)}")
    filler = iter([c for c in dict.fromkeys(CANONICAL) for _ in range(left[c])])
    return [c if c is not None else next(filler) for c in wanted]


def expected_deal(deck: list[str], players: int, dealer: int) -> tuple[list[list[str]], list[int], str, list[str]]:
    """V-5 / V-6 from the text: hands, stops laid out, the start card and the stock."""
    hands: list[list[str]] = [[] for _ in range(players)]
    stops = [0] * players
    cards = iter(deck)
    for k in range(7 * players):
        seat = (dealer + 1 + k) % players
        code = next(cards)
        while code == STOP:
            stops[seat] += 1
            code = next(cards)
        hands[seat].append(code)
    rest = list(cards)
    while rest[0] in (JOKER, STOP):
        rest.append(rest.pop(0))
    return hands, stops, rest[0], rest[1:]


class Table(EngineTable):
    """One Go5 game driven through domain.engine, with its event log."""

    GAME = "go5"

    @classmethod
    def stacked(
        cls,
        players: int = 2,
        hands: Mapping[int, Sequence[str]] | None = None,
        discard: str | None = None,
        stock: Sequence[str] = (),
        options: Mapping[str, Any] | None = None,
        *,
        later_decks: Sequence[Sequence[str]] = (),
        seed: str = "go5-test",
        rules_version: int | None = None,
    ) -> Table:
        """A game whose first round (dealer: seat 0) deals exactly these cards."""
        deck = build_deck(players, hands, discard, stock)
        return cls(players, options, decks=[deck, *later_decks], seed=seed, rules_version=rules_version)

    # ---- actions

    def draw(self, seat: int, source: str = "stock") -> list[Event]:
        return self.act(seat, {"type": "draw", "from": source})

    def meld(self, seat: int, cards: Sequence[str], by: str | None = None) -> list[Event]:
        action: dict[str, Any] = {"type": "meld", "cards": list(cards)}
        if by is not None:
            action["by"] = by
        return self.act(seat, action)

    def lay_off(self, seat: int, set_id: int, code: str) -> list[Event]:
        return self.act(seat, {"type": "lay_off", "set": set_id, "card": code})

    def discard(self, seat: int, code: str) -> list[Event]:
        return self.act(seat, {"type": "discard", "card": code})

    def stop(self, seat: int) -> list[Event]:
        return self.act(seat, {"type": "stop"})

    def go5(self, seat: int, set_id: int) -> list[Event]:
        return self.act(seat, {"type": "go5", "set": set_id})

    def turn(self, seat: int, discard: str, source: str = "stock") -> list[Event]:
        """A plain turn: draw, then discard."""
        return self.draw(seat, source) + self.discard(seat, discard)

    # ---- what can be seen

    def hand(self, seat: int) -> list[str]:
        hand: list[str] = self.view(seat)["you"]["hand"]
        return hand

    def sets(self, seat: int) -> list[dict[str, Any]]:
        sets: list[dict[str, Any]] = self.table["players"][seat]["sets"]
        return sets

    def stock(self) -> list[str]:
        stock: list[str] = self.truth()["table"]["stock"]
        return stock


def plain_move(table: Table, seat: int) -> dict[str, Any]:
    """A policy that never plays: draw from the stock, discard the first card of the hand."""
    legal = table.legal(seat)
    for action in legal:
        if action["type"] == "draw" and action["from"] == "stock":
            return action
    discards = [a for a in legal if a["type"] == "discard"]
    return discards[0] if discards else legal[0]


def play_until(table: Table, done: Callable[[Table], bool], limit: int = 2000) -> None:
    """Play `plain_move` for the turn player until `done(table)` holds."""
    for _ in range(limit):
        if done(table):
            return
        seat = table.snap.state.turn
        table.act(seat, plain_move(table, seat))
    raise AssertionError("the condition did not hold within the step limit")


# ---------------------------------------------------------------- scenarios (worked out by hand)

N3 = [card(3, p) for p in PATTERNS]  # 3-dots-yellow 3-stripes-green 3-waves-blue 3-checks-violet 3-zigzag-black ...
ZIG = [card(n, "zigzag") for n in (1, 2, 4, 5)]  # a zigzag set that 3-zigzag-black completes
JUNK = [
    card(4, "stars"),  # 4-stars-orange
    card(7, "stripes"),  # 7-stripes-red
    card(4, "rings"),  # 4-rings-yellow
    card(6, "checks"),  # 6-checks-orange
    card(7, "zigzag"),  # 7-zigzag-green
    card(1, "stars"),  # 1-stars-violet
    card(2, "rings"),  # 2-rings-red
    card(6, "stripes"),  # 6-stripes-black
    card(7, "waves"),  # 7-waves-orange
    card(2, "stripes"),  # 2-stripes-yellow
    card(5, "checks"),  # 5-checks-red
    card(6, "stars"),  # 6-stars-green
    card(1, "checks"),  # 1-checks-green
    card(5, "stars"),  # 5-stars-yellow
    card(7, "rings"),  # 7-rings-violet
    card(1, "stripes"),  # 1-stripes-orange
    card(4, "checks"),  # 4-checks-black
    card(6, "rings"),  # 6-rings-blue
]


def sets_table(rules_version: int | None = None) -> Table:
    """Two players; seat 1 lays its first set (3s by number), then a second set with a joker (dots).

    Returns the table at seat 0's second turn, before its draw. Seat 1 keeps the joker it drew.
    """
    hands = {
        1: [N3[0], N3[1], N3[2], JOKER, "5-dots-blue", "6-dots-violet", JUNK[0]],
        0: [N3[5], "1-zigzag-blue", "2-checks-blue", "7-dots-black", JOKER, JUNK[1], JUNK[2]],
    }
    stock = [JOKER, JUNK[3], JUNK[4], JUNK[5], JUNK[6], JUNK[7], JUNK[8], JUNK[9]]
    table = Table.stacked(2, hands, discard=JUNK[10], stock=stock, rules_version=rules_version)
    table.draw(1)  # the third joker
    table.meld(1, N3[:3])
    table.discard(1, JUNK[0])
    table.turn(0, JUNK[1])  # draws JUNK[3]
    table.draw(1)  # JUNK[4]
    table.meld(1, [JOKER, "5-dots-blue", "6-dots-violet"], by="pattern")
    table.discard(1, JUNK[4])
    return table


def swap_meld() -> dict[str, Any]:
    """Seat 0 takes 3-waves-blue from seat 1's set 1, gives 3-stars-red, and melds a blue set with it."""
    return {
        "type": "swap",
        "from_seat": 1,
        "set": 1,
        "take": N3[2],
        "give": N3[5],
        "then": {"meld": {"cards": ["1-zigzag-blue", "2-checks-blue", N3[2]]}},
    }


EXTRA = ["1-dots-red", "2-dots-orange", "4-dots-green", "1-rings-black", "2-zigzag-violet", JUNK[17]]
STOCK = [
    card(5, "dots"),  # 5-dots-blue 1
    card(6, "zigzag"),  # 6-zigzag-yellow 5
    card(7, "checks"),  # 7-checks-yellow 4
    card(2, "waves"),  # 2-waves-green 3
    card(1, "waves"),  # 1-waves-yellow 3
    card(4, "zigzag"),  # 4-zigzag-red 5
    card(5, "waves"),  # 5-waves-black 6
    card(7, "dots"),  # 7-dots-black 2
    card(2, "checks"),  # 2-checks-blue 4
    card(4, "waves"),  # 4-waves-violet 3
]


def five_round(
    players: int = 2, options: dict[str, Any] | None = None, joker_for_seat0: bool = False, finish: bool = True
) -> Table:
    """Seat 1 melds three 3s, lays off a fourth, then a fifth: round 1 ends at seat 1's third turn.

    The other seats only draw and discard their first two cards. Stock draws in turn order:
    STOCK[0], STOCK[1], ... Without `finish`, it stops after seat 1's last draw.
    """
    others = [s for s in range(players) if s != 1]
    hands: dict[int, list[str]] = {1: [*N3[:5], JUNK[0], JUNK[1]]}
    for index, seat in enumerate(others):
        hands[seat] = JUNK[2 + 5 * index : 7 + 5 * index] + EXTRA[2 * index : 2 * index + 2]
    if joker_for_seat0:
        hands[0][-1] = JOKER
    table = Table.stacked(players, hands, discard="6-dots-violet", stock=STOCK, options=options)
    order = [(1 + k) % players for k in range(players)]
    discards = {1: [JUNK[0], JUNK[1]], **{seat: list(hands[seat][:2]) for seat in others}}
    for turn in range(2):
        for seat in order:
            table.draw(seat)
            if seat == 1:
                if turn == 0:
                    table.meld(1, N3[:3])
                else:
                    table.lay_off(1, 1, N3[3])
            table.discard(seat, discards[seat][turn])
    table.draw(1)
    if finish:
        table.lay_off(1, 1, N3[4])
    return table


def claim_table(
    last: str = N3[4], *, stop_for_seat2: bool = False, before_last: bool = False, rules_version: int | None = None
) -> Table:
    """Three players (order 1, 2, 0). Seat 1 builds a 4-set of 3s, seat 0 a 4-set of zigzags (each
    seat's first set); then seat 2 discards `last`. 3-zigzag-black completes both sets; 3-stars-red
    only seat 1's; a joker (seat 2 holds one in place of 3-zigzag-black) both, from rules version 2 (V-9).

    `stop_for_seat2`: seat 2's last draw meets a stop card first (V-6). `before_last`: stop after
    that draw, before seat 2's last discard.
    """
    hands = {
        1: [*N3[:4], JUNK[0], JUNK[1], JUNK[2]],
        2: [JOKER if last == JOKER else N3[4], N3[5], JUNK[3], JUNK[4], JUNK[5], JUNK[6], JUNK[7]],
        0: [*ZIG, JUNK[8], JUNK[9], JUNK[10]],
    }
    stock = JUNK[11:18] + ([STOP] if stop_for_seat2 else []) + ["1-dots-red", "2-dots-orange", "4-dots-green"]
    table = Table.stacked(3, hands, discard="6-dots-violet", stock=stock, rules_version=rules_version)
    plays = {(1, 0): ("meld", N3[:3]), (0, 0): ("meld", ZIG[:3]), (1, 1): ("lay", N3[3]), (0, 1): ("lay", ZIG[3])}
    discards = {1: [JUNK[0], JUNK[1], JUNK[2]], 2: [JUNK[3], JUNK[4], last], 0: [JUNK[8], JUNK[9]]}
    for turn in range(3):
        for seat in (1, 2, 0):
            if (seat, turn) == (0, 2):
                return table
            table.draw(seat)
            if before_last and (seat, turn) == (2, 2):
                return table
            kind, cards = plays.get((seat, turn), ("", []))
            if kind == "meld":
                table.meld(seat, cards)
            elif kind == "lay":
                table.lay_off(seat, table.sets(seat)[0]["id"], str(cards))
            table.discard(seat, discards[seat][turn])
    raise AssertionError("unreachable")
