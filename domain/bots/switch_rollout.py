"""A fast rollout of a Switch hand for the expert: the same moves as `expert.rollout`, on one table.

`expert.rollout` plays every ply through the engine: a view, the legal actions, an event
and a new frozen state each time. A Switch hand runs to a hundred plies and more, so the
expert got only a handful of samples in its time budget. Here the candidate action still
goes through the engine; the rest of the hand is played on one mutable table with the same
play rules (`domain.switch.plays`, `matches`), the same `greedy` choice from the same
streams and the same effects (S-5 ... S-10), so every rollout ends exactly as the engine's
would (tests/unit/test_switch_rollout.py), about three times faster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots.expert import WIN_VALUE
from domain.bots.switch_greedy import greedy
from domain.cards import JOKER, rank_of, suit_of
from domain.engine import GameConfig
from domain.scores import lowest_totals
from domain.shuffle import SeededStream
from domain.switch import PENDING_ADDS, PLAY, SwitchState, hand_value, matches, plays

RIVALS_WEIGHT = 1.0
"""How much the points the other seats add in a hand count for the expert, against its own (1)."""


@dataclasses.dataclass
class RolloutTable:
    """A Switch hand in progress, changed in place (the fields of SwitchState that a hand's play needs)."""

    config: GameConfig
    hands: list[list[str]]
    stock: list[str]
    discard: list[str]
    turn: int
    direction: int
    suit: str | None
    pending: int
    drawn: str | None
    empty_turns: int
    reshuffles: int
    round: int
    over: bool = False

    @classmethod
    def of(cls, state: SwitchState) -> RolloutTable:
        """The table of a hand in play, with copies of its cards."""
        return cls(
            config=state.config,
            hands=[list(hand) for hand in state.hands],
            stock=list(state.stock),
            discard=list(state.discard),
            turn=state.turn,
            direction=state.direction,
            suit=state.suit,
            pending=state.pending,
            drawn=state.drawn,
            empty_turns=state.empty_turns,
            reshuffles=state.reshuffles,
            round=state.round,
        )

    @property
    def top(self) -> str:
        return self.discard[-1]

    def holders(self) -> int:
        """How many seats still hold cards."""
        return sum(1 for hand in self.hands if hand)

    def act(self, seat: int, action: Mapping[str, Any]) -> None:
        """One legal action of the seat to act, as `Switch.decide` and `evolve` would apply it."""
        kind = action["type"]
        if kind == "play":
            self._play(seat, action["cards"], action.get("suit"))
        elif kind == "pass":
            self.drawn = None
            self._end_turn(empty=False)
        elif self.pending:
            self._take_pending(seat)
        else:
            self._draw(seat)

    def _play(self, seat: int, cards: Sequence[str], named: str | None) -> None:
        """S-5 / S-7 / S-9 (`_apply_play`)."""
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
            rank = rank_of(card)
            self.pending += PENDING_ADDS.get(rank, 0)
            if rank == "J":
                self.suit = named
            elif rank != JOKER:
                self.suit = suit_of(card)
            if rank == "K":
                self.direction = -self.direction
        self.discard.extend(cards)
        self.drawn = None
        self.empty_turns = 0
        last = rank_of(cards[-1])
        if (not hand and last not in PENDING_ADDS) or self.holders() < 2:
            if self.holders() == 1 and self.pending and self.config.rules_version >= 2:
                self._take_last_draw()
            self.over = True
            return
        self.turn = self._next_holder(seat, skip=1 if last == "8" else 0)

    def _available(self, need: int) -> int:
        """S-8: the stock, with the pile but its top card reshuffled under it if it is short."""
        if len(self.stock) < need and len(self.discard) > 1:
            self.reshuffles += 1
            self.stock.extend(self.config.reshuffle(self.round, self.reshuffles, self.discard[:-1]))
            del self.discard[:-1]
        return min(need, len(self.stock))

    def _take(self, seat: int, count: int) -> None:
        self.hands[seat].extend(self.stock[:count])
        del self.stock[:count]

    def _draw(self, seat: int) -> None:
        """S-6 (`_apply_draw`): a playable drawn card waits for play or pass."""
        if not self._available(1):
            self._end_turn(empty=True)
            return
        card = self.stock[0]
        self._take(seat, 1)
        if matches(self, card):
            self.drawn = card
        else:
            self._end_turn(empty=False)

    def _take_pending(self, seat: int) -> None:
        """S-7 / S-9 (`_apply_pending_taken`)."""
        count = self._available(self.pending)
        self._take(seat, count)
        self.pending = 0
        if self.holders() < len(self.hands):
            self.over = True
        else:
            self._end_turn(empty=count == 0)

    def _take_last_draw(self) -> None:
        """S-9, rules version 2 (`_last_draw_step`): the one player left holding cards takes the pending draw."""
        (seat,) = [seat for seat, hand in enumerate(self.hands) if hand]
        self._take(seat, self._available(self.pending))
        self.pending = 0

    def _end_turn(self, empty: bool) -> None:
        """S-8 (`_end_turn`): an empty turn of every holder in a row blocks the hand."""
        self.empty_turns = self.empty_turns + 1 if empty else 0
        if self.empty_turns >= self.holders():
            self.over = True
        else:
            self.turn = self._next_holder(self.turn)

    def _next_holder(self, after: int, skip: int = 0) -> int:
        seat, players = after, len(self.hands)
        for _ in range(skip + 1):
            for _ in range(players):
                seat = (seat + self.direction) % players
                if self.hands[seat]:
                    break
        return seat

    def legal(self, seat: int) -> list[dict[str, Any]]:
        """`Switch.legal_actions` of the seat to act."""
        return [*plays(self, seat), {"type": "pass" if self.drawn is not None else "draw"}]

    def greedy_view(self, seat: int) -> dict[str, Any]:
        """What `greedy` reads of the seat's view."""
        return {"you": {"hand": self.hands[seat], "drawn": self.drawn}, "table": {"pending_draw": self.pending}}


@dataclasses.dataclass(frozen=True)
class HandEnd:
    """Where a rollout left the game: each seat's total before the hand and at its end (S-10), whether
    the hand ended (False: the horizon cut it short, and the hands count as they are) and the target."""

    before: tuple[int, ...]
    after: tuple[int, ...]
    ended: bool
    target: int

    @property
    def game_over(self) -> bool:
        """S-11: the hand ended with a total at the target."""
        return self.ended and max(self.after) >= self.target

    @property
    def added(self) -> list[int]:
        """The points each seat adds in the hand (S-10): 0 for the player who went out."""
        return [after - before for before, after in zip(self.before, self.after, strict=True)]


def hand_end(world: engine.Snapshot[Any], seat: int, action: Mapping[str, Any], stream: str, horizon: int) -> HandEnd:
    """`action` through the engine, then the hand on a RolloutTable with `greedy` for every seat."""
    before, target = world.state.totals, int(world.config.options["target"])
    snap, _ = engine.act(world, seat, action)
    if snap.finished or snap.state.round != world.state.round or snap.state.phase != PLAY:
        totals = tuple(snap.game.standing(snap.state)[1])
        return HandEnd(before, totals, True, target)
    table = RolloutTable.of(snap.state)
    for step in range(horizon):
        if table.over:
            break
        mover = table.turn
        table.act(mover, greedy(table.greedy_view(mover), table.legal(mover), SeededStream(stream, str(step))))
    totals = tuple(total + hand_value(hand) for total, hand in zip(before, table.hands, strict=True))
    return HandEnd(before, totals, table.over, target)


def points_value(end: HandEnd, seat: int) -> float:
    """How good a hand's end is for `seat`, in points: what it adds (S-10), less RIVALS_WEIGHT times
    what the others add on average, and, if the hand ends the game, the game's win (S-11).

    A won game is worth its target in points (up to WIN_VALUE): a one-hand game (`target` 1)
    is its hand's points and little else, and in a long race the win outweighs any one hand.
    A lost game takes away a fair share of that, as in `expert.standing_value`.
    """
    added = end.added
    others = [points for other, points in enumerate(added) if other != seat]
    value = -added[seat] + RIVALS_WEIGHT * sum(others) / len(others)
    if end.game_over:
        win = min(WIN_VALUE, float(end.target))
        value += win if seat in lowest_totals(end.after) else -win / len(others)
    return value


def play_out(world: engine.Snapshot[Any], seat: int, action: Mapping[str, Any], stream: str, horizon: int) -> float:
    """The expert's rollout value for Switch: the points of the hand's end (`points_value`)."""
    return points_value(hand_end(world, seat, action, stream, horizon), seat)
