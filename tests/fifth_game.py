"""Pick, a tiny game that only the tests register: it proves that a game needs no line outside its own module.

Rules (ids P-n, for this file only): P-1 two players; P-2 the six cards A-6 of spades are dealt face down
into six slots (C-4 shuffle, or a stacked deck, C-5), the seat after the dealer picks first; P-3 in turn,
each player picks a free slot (`{"type": "pick", "slot": 2}`: `slot` is a field no other game has) and sees
the card in it, which nobody else sees until the end; P-4 once every slot is picked, each player scores the
ranks of their cards (A = 1) and the lowest total wins (C-7).

Nothing registers it on import: a test registers it (`engine.register(PICK)`) and unregisters it after.
Its `greedy` policy is found through the game's own `bots` (this module).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import Policy, copy_action
from domain.cards import rank_of
from domain.common_events import RoundStarted
from domain.errors import RuleViolation
from domain.events import Event
from domain.hands import replaced_at
from domain.options import INT, Action, ActionSpec, FieldSpec
from domain.scores import lowest_totals
from domain.shuffle import SeededStream

GAME_ID = "pick"
CARDS = tuple(card for card in engine.CARD_CODES if card in {"AS", "2S", "3S", "4S", "5S", "6S"})
BETWEEN_ROUNDS, PLAY = "between_rounds", "play"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardPicked(Event):
    """P-3: the seat took the card in `slot`, seen by that seat only."""

    slot: int

    def to_action(self) -> dict[str, Any]:
        return {"type": "pick", "slot": self.slot}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundScored(Event):
    """P-4: each seat's points, the ranks of its cards."""

    round: int
    scores: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class PickState:
    config: engine.GameConfig
    round: int = 0
    phase: str = BETWEEN_ROUNDS
    slots: tuple[str, ...] = ()
    owners: tuple[int | None, ...] = ()
    turn: int = 0
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()


class Pick(engine.Game[PickState]):
    id = GAME_ID
    name = "Pick"
    min_players = max_players = 2
    players_rule = "P-1"
    end_rule = "P-4"
    event_limit_since = 1
    bots = __name__
    round_scored = RoundScored
    options = ()
    actions = (ActionSpec("pick", (FieldSpec("slot", INT),)),)
    events = (RoundStarted, CardPicked, RoundScored)

    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        return CARDS

    def initial_state(self, config: engine.GameConfig) -> PickState:
        return PickState(config=config, totals=(0,) * config.players)

    def decide(self, state: PickState, seat: int, action: Action) -> list[Event]:
        if state.phase != PLAY or seat != state.turn:
            raise RuleViolation("not_your_turn", "the other player picks now", "P-3")
        slot = action["slot"]
        if not 0 <= slot < len(state.slots) or state.owners[slot] is not None:
            raise RuleViolation("slot_taken", f"slot {slot} is not a free slot", "P-3")
        return [CardPicked(actor=seat, slot=slot)]

    def automatic(self, state: PickState) -> Event | None:
        if state.phase == BETWEEN_ROUNDS:
            if state.round == 0:
                return RoundStarted(round=1, dealer=0)
            return engine.GameEnded(totals=state.totals, winners=lowest_totals(state.totals))
        if None not in state.owners:
            return RoundScored(round=state.round, scores=tuple(points(state, seat) for seat in (0, 1)))
        return None

    def evolve(self, state: PickState, event: Event) -> PickState:
        if isinstance(event, RoundStarted):
            deck = state.config.round_deck(event.round, CARDS)
            return engine.replaced(
                state, round=event.round, phase=PLAY, slots=deck, owners=(None,) * len(deck), turn=1 - event.dealer
            )
        if isinstance(event, CardPicked):
            owners = replaced_at(state.owners, event.slot, int(event.actor))
            return engine.replaced(state, owners=owners, turn=1 - state.turn)
        assert isinstance(event, RoundScored)
        totals = tuple(total + score for total, score in zip(state.totals, event.scores, strict=True))
        return engine.replaced(state, totals=totals, phase=BETWEEN_ROUNDS)

    def to_act(self, state: PickState) -> tuple[int, ...]:
        return (state.turn,) if state.phase == PLAY and None in state.owners else ()

    def is_finished(self, state: PickState) -> bool:
        return state.phase == engine.FINISHED

    def legal_actions(self, state: PickState, seat: int) -> list[dict[str, Any]]:
        if seat not in self.to_act(state):
            return []
        return [{"type": "pick", "slot": slot} for slot, owner in enumerate(state.owners) if owner is None]

    def public_view(self, state: PickState) -> dict[str, Any]:
        return self._view(state, {"slots": [{"owner": owner} for owner in state.owners]})

    def seat_view(self, state: PickState, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        return {"hand": hand(state, seat)}

    def full_view(self, state: PickState) -> dict[str, Any]:
        slots = [{"owner": owner, "card": card} for owner, card in zip(state.owners, state.slots, strict=True)]
        return self._view(state, {"slots": slots})

    def _view(self, state: PickState, table: dict[str, Any]) -> dict[str, Any]:
        finished = self.is_finished(state)
        result = {"totals": list(state.totals), "winners": list(state.winners)} if finished else None
        scores = list(state.totals)
        return {"round": state.round, "phase": state.phase, "scores": scores, "table": table, "result": result}


def hand(state: PickState, seat: int) -> list[str]:
    """The cards `seat` has picked."""
    return [card for card, owner in zip(state.slots, state.owners, strict=True) if owner == seat]


def points(state: PickState, seat: int) -> int:
    """P-4: the ranks of the seat's cards, A = 1."""
    return sum("A23456".index(rank_of(card)) + 1 for card in hand(state, seat))


def greedy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """Picks the first free slot: every slot is face down, so any is as good."""
    return copy_action(legal[0])


POLICIES: dict[str, Policy] = {"greedy": greedy}
PICK = Pick()
