"""Switch bot policy `greedy`: a fixed order of preferences over the seat's legal actions (S-1 ... S-11).

The bot reads only the seat's view (`engine.view(snap, seat)`: its own hand, the
table's public part) and the legal actions; it never sees another hand or the
stock (C-6). Each legal action gets a value, a tuple compared left to right; the
highest wins and the seeded stream breaks exact ties. In order of preference:

1. a play that empties the hand (S-9);
2. facing a pending draw, answer it (S-7) with one card, a 2 before a joker, so the
   rest stays in hand for the next pending draw; two only when that empties the hand;
3. an ordinary card (not J, not joker): the highest value first (S-10), a 2 or an 8
   counted as a bonus for the harm they do, then the card that leaves most cards of
   the suit it sets;
4. a J, naming the suit the bot holds most of (then the suit worth most);
5. a joker on an ordinary turn (it keeps the suit, so it helps little);
6. after a draw, playing the drawn card before passing (S-6);
7. drawing (S-6), or taking the pending draw (S-7).
Jacks and jokers are so kept for the turns when nothing else can be played.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from domain.bots import copy_action
from domain.cards import JOKER, rank_of, suit_of
from domain.shuffle import SeededStream
from domain.switch import card_value

Value = tuple[float, ...]

GO_OUT, ANSWER, ORDINARY, JACK, JOKER_PLAY, PLAY_DRAWN, PASS, DRAW = 90, 80, 70, 60, 50, 40, 20, 10
"""Preference tiers, highest first."""

ATTACK_BONUS = {"2": 5, "8": 2}
"""What a 2 (a pending draw for the next player) or an 8 (a skip) is worth beyond its value."""


def greedy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """The greedy Switch policy: one of `legal`, chosen from the seat's view only."""
    you = view["you"]
    held = Held.of(you["hand"])
    drawn = you.get("drawn")
    pending = int(view["table"]["pending_draw"])
    values = [action_value(action, held, pending, drawn) for action in legal]
    best = max(values)
    ties = [i for i, value in enumerate(values) if value == best]
    return copy_action(legal[ties[0] if len(ties) == 1 else rng.choice(ties)])


@dataclasses.dataclass(frozen=True)
class Held:
    """The hand as greedy values it: its size and, per suit, (cards held, their value), J and jokers aside."""

    size: int
    suits: Mapping[str, tuple[int, int]]

    @classmethod
    def of(cls, hand: Sequence[str]) -> Held:
        """Count the hand once, for every action valued from it."""
        suits: dict[str, tuple[int, int]] = {}
        for card in hand:
            suit, points = _card_info(card)
            if suit is not None:
                count, value = suits.get(suit, (0, 0))
                suits[suit] = (count + 1, value + points)
        return cls(len(hand), suits)

    def strength_after(self, cards: Sequence[str], suit: str) -> tuple[int, int]:
        """(count, value) of `suit` in the hand once `cards` (held cards) are played."""
        count, value = self.suits.get(suit, (0, 0))
        for card in cards:
            plain_suit, points = _card_info(card)
            if plain_suit == suit:
                count, value = count - 1, value - points
        return count, value


@functools.cache
def _card_info(card: str) -> tuple[str | None, int]:
    """The suit `card` counts for in a suit's strength (None for a J or a joker), and its value."""
    return (None if card == JOKER or rank_of(card) == "J" else suit_of(card)), card_value(card)


def action_value(action: Mapping[str, Any], held: Held, pending: int, drawn: str | None) -> Value:
    """How much the bot likes an action; compared as a tuple, higher is better."""
    kind = action["type"]
    if kind == "choose_suit":
        return (JACK, *held.strength_after((), action["suit"]))
    if kind == "draw":
        return (DRAW, -pending)
    if kind == "pass":
        return (PASS,)
    return play_value(action["cards"], action.get("suit"), held, pending, drawn)


def play_value(cards: Sequence[str], suit: str | None, held: Held, pending: int, drawn: str | None) -> Value:
    """The value of playing `cards` (held cards; naming `suit` with a J)."""
    if len(cards) >= held.size:
        return (GO_OUT,)
    if pending:
        jokers = sum(1 for card in cards if card == JOKER)
        return (ANSWER, -len(cards), -jokers)
    card = cards[0]
    rank = rank_of(card)
    if drawn is not None:
        return (PLAY_DRAWN, *held.strength_after(cards, suit or suit_of(card) or ""))
    if rank == JOKER:
        return (JOKER_PLAY,)
    if rank == "J":
        assert suit is not None
        return (JACK, *held.strength_after(cards, suit))
    played_suit = suit_of(card)
    assert played_suit is not None
    return (ORDINARY, card_value(card) + ATTACK_BONUS.get(rank, 0), *held.strength_after(cards, played_suit))
