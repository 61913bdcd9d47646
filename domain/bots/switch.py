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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots.expert import unseen_cards, world_config
from domain.cards import JOKER, rank_of, suit_of
from domain.shuffle import SeededStream
from domain.switch import CLOCKWISE, COUNTERCLOCKWISE, SwitchState, card_value, matches

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


def copy_action(action: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a legal action that shares nothing with it (its values are str, None or lists of str)."""
    return {key: list(value) if isinstance(value, list) else value for key, value in action.items()}


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


PolicyFn = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], SeededStream], dict[str, Any]]
POLICIES: dict[str, PolicyFn] = {"greedy": greedy}
"""Switch's own policies by level."""


# ---------------------------------------------------------------- expert hooks


def expert_rollout(
    world: engine.Snapshot[Any], seat: int, action: Mapping[str, Any], stream: str, horizon: int
) -> float:
    """The expert's rollout of a Switch hand: the fast one of domain/bots/switch_rollout.py."""
    from domain.bots import switch_rollout

    return switch_rollout.play_out(world, seat, action, stream, horizon)


def sample_world(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
    """A whole Switch game that looks exactly like `view` to its seat: unseen cards dealt at random.

    The seat sees its own hand and the whole discard pile; the other hands and the
    stock (C-6) are the deck less those cards, shuffled and dealt by the public hand
    sizes. A card another player has drawn and may still play (S-6) is one of the
    unseen cards that match the suit, put in that player's hand.
    """
    config = world_config(view, rng)
    table, seat = view["table"], view["you"]["seat"]
    game = engine.get_game("switch")
    deck = game.canonical_deck(config.players, config.options)
    unseen = unseen_cards(deck, [*view["you"]["hand"], *table["discard"]], rng)
    state = SwitchState(
        config=config,
        round=view["round"],
        dealer=table["dealer"],
        phase=view["phase"],
        discard=tuple(table["discard"]),
        turn=table["turn"] if table["turn"] is not None else 0,
        direction=CLOCKWISE if table["direction"] == "clockwise" else COUNTERCLOCKWISE,
        suit=table["suit"],
        pending=table["pending_draw"],
        round_scores=tuple(tuple(r) for r in table["round_scores"]),
        totals=tuple(view["scores"]),
    )
    drawn_by = table["drawn_by"]
    drawn = view["you"]["drawn"] if drawn_by == seat else _drawn_elsewhere(state, drawn_by, unseen)
    hands = [_world_hand(view, s, unseen, drawn if s == drawn_by else None) for s in range(config.players)]
    state = dataclasses.replace(state, hands=tuple(hands), stock=tuple(unseen), drawn=drawn)
    return engine.Snapshot(game, config, state, version=view["version"])


def _drawn_elsewhere(state: SwitchState, drawn_by: int | None, unseen: list[str]) -> str | None:
    """The card another player drew and may play (S-6): one of the unseen cards that match."""
    if drawn_by is None:
        return None
    index = next(i for i in range(len(unseen) - 1, -1, -1) if matches(state, unseen[i]))
    return unseen.pop(index)


def _world_hand(view: Mapping[str, Any], seat: int, unseen: list[str], drawn: str | None) -> tuple[str, ...]:
    """The seat's own hand, or another seat's: as many unseen cards as it holds (with its drawn card)."""
    if seat == view["you"]["seat"]:
        return tuple(view["you"]["hand"])
    size = view["table"]["hand_sizes"][seat] - (drawn is not None)
    dealt = [unseen.pop() for _ in range(size)]
    return (*dealt, drawn) if drawn is not None else tuple(dealt)


SUITS_SEARCHED = 2
"""How many of the suits a J may name the expert searches (any J plays alike): greedy's best ones."""

SEARCHED_TIERS = {
    ANSWER: (ANSWER,),
    ORDINARY: (ORDINARY,),
    JACK: (JACK, JOKER_PLAY),
    JOKER_PLAY: (JOKER_PLAY, DRAW),
    PLAY_DRAWN: (PLAY_DRAWN, PASS),
}
"""Which tiers the expert searches, by the tier of greedy's best action; going out is never searched.

Measured with many full rollouts: drawing when a card can be played, or a J or a joker
when an ordinary card fits, loses about 6 to 12 points in the hand on average.
"""

PLAIN_RANKS = frozenset({"A", "3", "4", "5", "6", "7", "9", "10", "Q"})
"""Ranks without an effect (S-5): such cards of one suit and value play alike unless `match_rank` is on."""


def expert_candidates(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], limit: int) -> list[int]:
    """Switch's shortlist for the expert: greedy's best actions in the tiers where the call is close.

    Of actions that play alike only the first is kept; a J is searched with its best suits only.
    """
    you = view["you"]
    held = Held.of(you["hand"])
    values = [action_value(a, held, int(view["table"]["pending_draw"]), you["drawn"]) for a in legal]
    ranked = sorted(range(len(legal)), key=lambda i: values[i], reverse=True)
    tiers = SEARCHED_TIERS.get(int(values[ranked[0]][0]), ())
    seen: set[tuple[Any, ...]] = set()
    suits_named = 0
    shortlist = []
    for i in ranked:
        key = _play_alike_key(legal[i], values[i], bool(view["options"]["match_rank"]))
        if values[i][0] not in tiers or key in seen:
            continue
        seen.add(key)
        if legal[i]["type"] == "play" and legal[i].get("suit"):
            suits_named += 1
            if suits_named > SUITS_SEARCHED:
                continue
        shortlist.append(i)
    return shortlist[:limit]


def _play_alike_key(action: Mapping[str, Any], value: Value, match_rank: bool) -> tuple[Any, ...]:
    """Actions with the same key have the same effect on the game and the same greedy value.

    A J names the suit and a joker keeps it (S-4, S-5), so their own suit does not matter.
    """
    return action["type"], action.get("suit"), value, tuple(_effect(c, match_rank) for c in action.get("cards") or ())


def _effect(card: str, match_rank: bool) -> str | None:
    """What of `card` matters once played: J or joker by rank, a plain card by suit, else the card."""
    rank = rank_of(card)
    if rank in ("J", JOKER):
        return rank
    return suit_of(card) if rank in PLAIN_RANKS and not match_rank else card
