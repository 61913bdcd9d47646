"""Switch's bot hooks: the `greedy` policy (domain/bots/switch_greedy.py) by level, and the expert's
sampling, shortlist and fast rollout (domain/bots/switch_rollout.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import Policy, switch_rollout
from domain.bots.expert import Budget, unseen_cards, world_config
from domain.bots.switch_greedy import (
    ANSWER,
    DRAW,
    JACK,
    JOKER_PLAY,
    ORDINARY,
    PASS,
    PLAY_DRAWN,
    Held,
    Value,
    action_value,
    greedy,
)
from domain.cards import JOKER, rank_of, suit_of
from domain.shuffle import SeededStream
from domain.switch import CLOCKWISE, COUNTERCLOCKWISE, SwitchState, matches

__all__ = ["POLICIES", "expert_candidates", "expert_rollout", "greedy", "sample_world"]


POLICIES: dict[str, Policy] = {"greedy": greedy}
"""Switch's own policies by level."""

EXPERT_BUDGET = Budget(samples=48, think_ms=100)
"""The expert's default budget in this game (samples a move and a time cap a move, in ms, where the caller
gives it a clock): the one measured against greedy on duplicate deals in docs/strength.md (switch-expert-greedy)."""


# ---------------------------------------------------------------- expert hooks


ROLLOUT_PLIES = 5
"""Plies a seat in the expert's rollouts before the hand is valued as it stands (its hands' points)."""


def expert_rollout(
    world: engine.Snapshot[Any], seat: int, action: Mapping[str, Any], stream: str, horizon: int
) -> float:
    """The expert's rollout of a Switch hand: the fast one of domain/bots/switch_rollout.py, cut
    after ROLLOUT_PLIES plies a seat."""
    plies = min(horizon, ROLLOUT_PLIES * world.config.players)
    return switch_rollout.play_out(world, seat, action, stream, plies)


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

CLOSE_TO_OUT = 2
"""An opponent who holds at most this many cards may go out on any turn: then the expert also
searches shedding a J or a joker (S-10: 10 and 50 points in hand) where greedy keeps them."""

SHEDDING_TIERS = (JACK, JOKER_PLAY)
"""The tiers searched beside greedy's own when an opponent is close to going out."""

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
    tiers = searched_tiers(int(values[ranked[0]][0]), view)
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


def searched_tiers(best_tier: int, view: Mapping[str, Any]) -> tuple[int, ...]:
    """The tiers searched when greedy's best action is in `best_tier`; with an ordinary card to play
    and an opponent close to going out, also the J and joker plays (SHEDDING_TIERS)."""
    tiers = SEARCHED_TIERS.get(best_tier, ())
    seat, sizes = view["you"]["seat"], view["table"]["hand_sizes"]
    close = any(0 < size <= CLOSE_TO_OUT for other, size in enumerate(sizes) if other != seat)
    return (*tiers, *SHEDDING_TIERS) if best_tier == ORDINARY and close else tiers


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
