"""Golf (`golf`): six- or nine-card grids, lowest total after the rounds wins (G-1 ... G-15)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

from domain import engine
from domain.cards import canonical_deck, rank_of
from domain.common_events import RoundStarted, StockReshuffled
from domain.engine import Game, GameConfig, GameEnded, register, replaced
from domain.errors import InvalidInput, RuleViolation
from domain.events import Event
from domain.hands import replaced_at
from domain.options import INT, INT_LIST, TEXT, Action, ActionSpec, FieldSpec, OptionSpec
from domain.scores import lowest_totals as winners_of

UP, DOWN, EMPTY = "up", "down", "empty"
COLUMNS = 3
CARD_VALUES = {"A": 1, "2": -2, "J": 10, "Q": 10, "K": 0} | {str(v): v for v in range(3, 11)}
SETUP, PLAY, BETWEEN_ROUNDS = "setup", "play", "between_rounds"
FINISHED = engine.FINISHED


# ---------------------------------------------------------------- state


@dataclasses.dataclass(frozen=True)
class Grid:
    """One player's cards by position; `cards[p]` is None where a column was cleared (G-9)."""

    cards: tuple[str | None, ...]
    face_up: tuple[bool, ...]

    def slot_state(self, position: int) -> str:
        """ "up", "down" or "empty"."""
        if self.cards[position] is None:
            return EMPTY
        return UP if self.face_up[position] else DOWN

    def face_down(self) -> tuple[int, ...]:
        """Positions of face-down cards."""
        return tuple(p for p in range(len(self.cards)) if self.slot_state(p) == DOWN)

    def occupied(self) -> tuple[int, ...]:
        """Positions that hold a card."""
        return tuple(p for p, card in enumerate(self.cards) if card is not None)

    def place(self, position: int, card: str | None, face_up: bool = True) -> Grid:
        """The grid with `card` at `position`."""
        cards = list(self.cards)
        ups = list(self.face_up)
        cards[position], ups[position] = card, face_up
        return Grid(tuple(cards), tuple(ups))

    def turn_up(self, *positions: int) -> Grid:
        """The grid with these positions face up."""
        ups = list(self.face_up)
        for p in positions:
            ups[p] = True
        return Grid(self.cards, tuple(ups))

    def columns(self) -> list[tuple[int, ...]]:
        """Positions of each column, top to bottom (G-2)."""
        rows = len(self.cards) // COLUMNS
        return [tuple(c + COLUMNS * r for r in range(rows)) for c in range(COLUMNS)]


@dataclasses.dataclass(frozen=True)
class GolfState:
    """A Golf game between events."""

    config: GameConfig
    round: int = 0
    dealer: int = 0
    phase: str = BETWEEN_ROUNDS
    stock: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    grids: tuple[Grid, ...] = ()
    revealed: frozenset[int] = frozenset()
    turn: int = 0
    drawn: str | None = None
    ender: int | None = None
    final_turns: int = 0
    reshuffles: int = 0
    round_scores: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def grid_size(self) -> int:
        return 9 if self.config.options["layout"] == "3x3" else 6


# ---------------------------------------------------------------- events


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardsRevealed(Event):
    """G-4: a player's initial flips."""

    positions: tuple[int, ...]
    cards: tuple[str, ...]

    def to_action(self) -> dict[str, Any]:
        return {"type": "reveal", "positions": list(self.positions)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """G-6: the top of the stock went to the drawer's hand, seen by the drawer only."""

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw", "from": "stock"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class DrawnCardSwapped(Event):
    """G-6 (a): the drawn card took a grid place; the replaced card was discarded."""

    position: int
    card: str
    replaced: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "swap", "position": self.position}


@dataclasses.dataclass(frozen=True, kw_only=True)
class DrawnCardDiscarded(Event):
    """G-6 (b): the drawn card was discarded and a face-down card turned up."""

    card: str
    flipped: int | None
    revealed: str | None

    def to_action(self) -> dict[str, Any]:
        return {"type": "discard", "flip": self.flipped}


@dataclasses.dataclass(frozen=True, kw_only=True)
class DiscardTaken(Event):
    """G-7: the top discard took a grid place; the replaced card was discarded."""

    position: int
    card: str
    replaced: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "take_discard", "position": self.position}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardFlipped(Event):
    """G-8: a face-down card was turned up instead of drawing."""

    position: int
    card: str

    def to_action(self) -> dict[str, Any]:
        return {"type": "flip", "position": self.position}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ColumnDiscarded(Event):
    """G-9: a column of three equal ranks went onto the discard pile."""

    seat: int
    column: int
    cards: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundScored(Event):
    """G-11 ... G-14: every card turned up and the round's scores, penalty included."""

    round: int
    scores: tuple[int, ...]
    penalized: int | None


TURN_EVENTS = (DrawnCardSwapped, DrawnCardDiscarded, DiscardTaken, CardFlipped)


# ---------------------------------------------------------------- scoring


def card_value(card: str) -> int:
    """G-12."""
    return CARD_VALUES[rank_of(card)]


def grid_score(cards: tuple[str | None, ...]) -> int:
    """G-13: a column of one rank scores 0, other cards their value; empty places 0."""
    total = 0
    for column in Grid(cards, (True,) * len(cards)).columns():
        present = [card for card in (cards[p] for p in column) if card is not None]
        if len(present) == len(column) and len({rank_of(c) for c in present}) == 1:
            continue
        total += sum(card_value(c) for c in present)
    return total


def round_scores(state: GolfState) -> tuple[tuple[int, ...], int | None]:
    """Scores of the round with G-14's penalty, and who got it."""
    scores = [grid_score(grid.cards) for grid in state.grids]
    ender = state.ender
    if ender is not None and any(s < scores[ender] for i, s in enumerate(scores) if i != ender):
        scores[ender] += state.config.options["penalty"]
        return tuple(scores), ender
    return tuple(scores), None


# ---------------------------------------------------------------- the game


class Golf(Game[GolfState]):
    """Golf as pure functions."""

    id = "golf"
    name = "Golf"
    min_players = 2
    max_players = 12
    players_rule = "G-1"
    end_rule = "G-15"
    rules_version = 2  # 2: C-9, a game ends when it has room for no more than its closing events (max_events)
    event_limit_since = 2
    bots = "domain.bots.golf"
    round_scored = RoundScored
    options = (
        OptionSpec("layout", "grid of 2x3 or 3x3 cards (G-2)", "2x3", choices=("2x3", "3x3")),
        OptionSpec("initial_flips", "cards each player turns up before the first turn (G-4)", 2, 0, 8),
        OptionSpec("penalty", "points added to a round-ender who is not lowest (G-14)", 10, 0, 100),
        OptionSpec("rounds", "rounds in a game (G-15)", 9, 1, 18),
        OptionSpec(
            "decks", "52-card decks; default by players: 1 up to 4, 2 up to 8, 3 (G-1)", None, 1, 3, derived=True
        ),
    )
    actions = (
        ActionSpec("reveal", (FieldSpec("positions", INT_LIST),)),
        ActionSpec("draw", (FieldSpec("from", TEXT, choices=("stock",)),)),
        ActionSpec("swap", (FieldSpec("position", INT),)),
        ActionSpec("discard", (FieldSpec("flip", INT, required=False, nullable=True),)),
        ActionSpec("take_discard", (FieldSpec("position", INT),)),
        ActionSpec("flip", (FieldSpec("position", INT),)),
    )
    events = (
        RoundStarted,
        CardsRevealed,
        StockReshuffled,
        CardDrawn,
        DrawnCardSwapped,
        DrawnCardDiscarded,
        DiscardTaken,
        CardFlipped,
        ColumnDiscarded,
        RoundScored,
        GameEnded,
    )

    # ---- setup

    def resolve_options(self, players: int, given: Mapping[str, Any]) -> dict[str, Any]:
        options = super().resolve_options(players, given)
        if options["decks"] is None:
            options["decks"] = 1 if players <= 4 else 2 if players <= 8 else 3
        size = 9 if options["layout"] == "3x3" else 6
        if options["initial_flips"] >= size:
            raise InvalidInput(
                "invalid_option", f"option 'initial_flips' must be below {size} for layout {options['layout']}"
            )
        needed = players * size + 1
        if needed > 52 * options["decks"]:
            raise InvalidInput(
                "invalid_option",
                f"{players} players with layout {options['layout']} need {needed} cards; "
                f"{options['decks']} deck(s) have {52 * options['decks']} (G-1)",
            )
        return options

    def canonical_deck(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...]:
        return canonical_deck(copies=options["decks"])

    def initial_state(self, config: GameConfig) -> GolfState:
        return GolfState(config=config, totals=(0,) * config.players)

    # ---- whose turn

    def to_act(self, state: GolfState) -> tuple[int, ...]:
        if state.phase == SETUP:
            return tuple(s for s in range(state.players) if s not in state.revealed)
        if state.phase == PLAY:
            return (state.turn,)
        return ()

    def is_finished(self, state: GolfState) -> bool:
        return state.phase == FINISHED

    # ---- decide

    def decide(self, state: GolfState, seat: int, action: Action) -> list[Event]:
        if action.type == "reveal":
            return [self._decide_reveal(state, seat, action["positions"])]
        _check_turn(state, seat)
        if action.type == "draw":
            return _decide_draw(state, seat)
        if action.type == "swap":
            return [_decide_swap(state, seat, action["position"])]
        if action.type == "discard":
            return [_decide_discard(state, seat, action["flip"])]
        if action.type == "take_discard":
            return [_decide_take_discard(state, seat, action["position"])]
        return [_decide_flip(state, seat, action["position"])]

    def _decide_reveal(self, state: GolfState, seat: int, positions: tuple[int, ...]) -> Event:
        if state.phase != SETUP:
            raise RuleViolation("wrong_phase", "initial flips happen only before the first turn", "G-4")
        if seat in state.revealed:
            raise RuleViolation("already_revealed", "this seat has turned up its initial cards", "G-4")
        wanted = state.config.options["initial_flips"]
        if len(positions) != wanted or len(set(positions)) != wanted:
            raise RuleViolation("wrong_flip_count", f"turn up exactly {wanted} different cards", "G-4")
        grid = state.grids[seat]
        for p in positions:
            _check_position(state, p)
        return CardsRevealed(actor=seat, positions=positions, cards=tuple(_card_at(grid, p) for p in positions))

    # ---- system steps

    def automatic(self, state: GolfState) -> Event | None:
        if state.phase == BETWEEN_ROUNDS:
            if state.round < state.config.options["rounds"]:
                next_round = state.round + 1
                return RoundStarted(round=next_round, dealer=(next_round - 1) % state.players)
            return GameEnded(totals=state.totals, winners=winners_of(state.totals))
        if state.phase in (SETUP, PLAY):
            cleared = _full_column(state)
            if cleared is not None:
                return cleared
        if state.phase == PLAY and state.ender is not None and state.final_turns == 0:
            scores, penalized = round_scores(state)
            return RoundScored(round=state.round, scores=scores, penalized=penalized)
        return None

    # ---- evolve

    def evolve(self, state: GolfState, event: Event) -> GolfState:
        if isinstance(event, RoundStarted):
            return _deal(state, event)
        if isinstance(event, CardsRevealed):
            return _apply_reveal(state, event)
        if isinstance(event, StockReshuffled):
            return _apply_reshuffle(state, event)
        if isinstance(event, CardDrawn):
            assert state.drawn is None and state.stock, "draw without a stock or with a card in hand"
            return replaced(state, drawn=state.stock[0], stock=state.stock[1:])
        if isinstance(event, TURN_EVENTS):
            return _end_turn(_apply_turn(state, event))
        if isinstance(event, ColumnDiscarded):
            return _apply_column(state, event)
        if isinstance(event, RoundScored):
            return _apply_round_scored(state, event)
        raise AssertionError(f"golf cannot apply {event.type_name()}")

    # ---- what a seat may do

    def legal_actions(self, state: GolfState, seat: int) -> list[dict[str, Any]]:
        if seat not in self.to_act(state):
            return []
        grid = state.grids[seat]
        if state.phase == SETUP:
            wanted = state.config.options["initial_flips"]
            return [
                {"type": "reveal", "positions": list(c)} for c in itertools.combinations(range(state.grid_size), wanted)
            ]
        if state.drawn is not None:
            swaps = [{"type": "swap", "position": p} for p in grid.occupied()]
            flips = [{"type": "discard", "flip": p} for p in grid.face_down()] or [{"type": "discard", "flip": None}]
            return swaps + flips
        actions: list[dict[str, Any]] = []
        if _can_draw(state):
            actions.append({"type": "draw", "from": "stock"})
        actions += [{"type": "take_discard", "position": p} for p in grid.occupied()]
        actions += [{"type": "flip", "position": p} for p in grid.face_down()]
        return actions

    # ---- views

    def public_view(self, state: GolfState) -> dict[str, Any]:
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": _table(state, reveal_all=False),
            "result": _result(state),
        }

    def seat_view(self, state: GolfState, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "hand": _slots(state.grids[seat], reveal_all=False) if state.grids else [],
            "drawn": state.drawn if state.turn == seat else None,
        }

    def full_view(self, state: GolfState) -> dict[str, Any]:
        table = _table(state, reveal_all=True)
        table["stock"] = list(state.stock)
        table["drawn"] = state.drawn
        return {
            "round": state.round,
            "phase": state.phase,
            "scores": list(state.totals),
            "table": table,
            "result": _result(state),
        }


GOLF = register(Golf())


# ---------------------------------------------------------------- decide helpers


def _check_turn(state: GolfState, seat: int) -> None:
    if state.phase == SETUP:
        raise RuleViolation("setup_not_done", "every player must first turn up their initial cards", "G-4")
    if seat != state.turn:
        raise RuleViolation("not_your_turn", f"it is seat {state.turn}'s turn", "C-2")


def _check_position(state: GolfState, position: int) -> None:
    if not 0 <= position < state.grid_size:
        raise RuleViolation("invalid_position", f"positions are 0 to {state.grid_size - 1}", "G-2")


def _check_occupied(state: GolfState, grid: Grid, position: int) -> None:
    _check_position(state, position)
    if grid.cards[position] is None:
        raise RuleViolation("empty_position", f"position {position} was cleared and holds no card", "G-9")


def _check_face_down(state: GolfState, grid: Grid, position: int, rule: str) -> None:
    _check_occupied(state, grid, position)
    if grid.face_up[position]:
        raise RuleViolation("not_face_down", f"the card at position {position} is already face up", rule)


def _check_nothing_drawn(state: GolfState) -> None:
    if state.drawn is not None:
        raise RuleViolation("already_drawn", "swap the drawn card or discard it first", "G-6")


def _card_at(grid: Grid, position: int) -> str:
    card = grid.cards[position]
    assert card is not None
    return card


def _can_draw(state: GolfState) -> bool:
    return bool(state.stock) or len(state.discard) > 1


def _decide_draw(state: GolfState, seat: int) -> list[Event]:
    _check_nothing_drawn(state)
    if state.stock:
        return [CardDrawn(actor=seat)]
    if not _can_draw(state):
        raise RuleViolation("stock_empty", "the stock is empty and the discard pile has no card to reshuffle", "G-10")
    return [StockReshuffled(reshuffle=state.reshuffles + 1), CardDrawn(actor=seat)]


def _decide_swap(state: GolfState, seat: int, position: int) -> Event:
    if state.drawn is None:
        raise RuleViolation("nothing_drawn", "draw from the stock before swapping", "G-6")
    grid = state.grids[seat]
    _check_occupied(state, grid, position)
    return DrawnCardSwapped(actor=seat, position=position, card=state.drawn, replaced=_card_at(grid, position))


def _decide_discard(state: GolfState, seat: int, flip: int | None) -> Event:
    if state.drawn is None:
        raise RuleViolation("nothing_drawn", "draw from the stock before discarding", "G-6")
    grid = state.grids[seat]
    if flip is None:
        if grid.face_down():
            raise RuleViolation("flip_required", "after discarding the drawn card, turn up a face-down card", "G-6")
        return DrawnCardDiscarded(actor=seat, card=state.drawn, flipped=None, revealed=None)
    _check_face_down(state, grid, flip, "G-6")
    return DrawnCardDiscarded(actor=seat, card=state.drawn, flipped=flip, revealed=_card_at(grid, flip))


def _decide_take_discard(state: GolfState, seat: int, position: int) -> Event:
    _check_nothing_drawn(state)
    grid = state.grids[seat]
    _check_occupied(state, grid, position)
    return DiscardTaken(actor=seat, position=position, card=state.discard[-1], replaced=_card_at(grid, position))


def _decide_flip(state: GolfState, seat: int, position: int) -> Event:
    _check_nothing_drawn(state)
    _check_face_down(state, state.grids[seat], position, "G-8")
    return CardFlipped(actor=seat, position=position, card=_card_at(state.grids[seat], position))


def _full_column(state: GolfState) -> ColumnDiscarded | None:
    """G-9: the first column of three face-up equal ranks, if any."""
    for seat, grid in enumerate(state.grids):
        if len(grid.cards) < 9:
            continue
        for index, column in enumerate(grid.columns()):
            cards = [grid.cards[p] for p in column]
            if all(grid.slot_state(p) == UP for p in column) and len({rank_of(c) for c in cards if c}) == 1:
                return ColumnDiscarded(seat=seat, column=index, cards=tuple(c for c in cards if c))
    return None


# ---------------------------------------------------------------- evolve helpers


def _deal(state: GolfState, event: RoundStarted) -> GolfState:
    """G-3: one card at a time from the top, clockwise from left of the dealer."""
    config = state.config
    deck = config.round_deck(event.round, canonical_deck(copies=config.options["decks"]))
    n, size = config.players, state.grid_size
    hands: list[list[str]] = [[] for _ in range(n)]
    for i in range(n * size):
        hands[(event.dealer + 1 + i) % n].append(deck[i])
    flips = config.options["initial_flips"]
    return replaced(
        state,
        round=event.round,
        dealer=event.dealer,
        phase=SETUP if flips else PLAY,
        grids=tuple(Grid(tuple(hand), (False,) * size) for hand in hands),
        discard=(deck[n * size],),
        stock=deck[n * size + 1 :],
        revealed=frozenset(),
        turn=(event.dealer + 1) % n,
        drawn=None,
        ender=None,
        final_turns=0,
        reshuffles=0,
    )


def _apply_reveal(state: GolfState, event: CardsRevealed) -> GolfState:
    seat = int(event.actor)
    grid = state.grids[seat].turn_up(*event.positions)
    revealed = state.revealed | {seat}
    phase = PLAY if len(revealed) == state.players else SETUP
    return replaced(state, grids=replaced_at(state.grids, seat, grid), revealed=revealed, phase=phase)


def _apply_reshuffle(state: GolfState, event: StockReshuffled) -> GolfState:
    assert not state.stock and event.reshuffle == state.reshuffles + 1
    stock = state.config.reshuffle(state.round, event.reshuffle, state.discard[:-1])
    return replaced(state, stock=stock, discard=state.discard[-1:], reshuffles=event.reshuffle)


def _apply_turn(state: GolfState, event: Event) -> GolfState:
    seat = int(event.actor)
    grid = state.grids[seat]
    if isinstance(event, DrawnCardSwapped):
        assert state.drawn == event.card
        return _with(state, seat, grid.place(event.position, event.card), state.discard + (event.replaced,))
    if isinstance(event, DiscardTaken):
        assert state.discard[-1] == event.card
        return _with(state, seat, grid.place(event.position, event.card), state.discard[:-1] + (event.replaced,))
    if isinstance(event, DrawnCardDiscarded):
        assert state.drawn == event.card
        flipped = grid.turn_up(event.flipped) if event.flipped is not None else grid
        return _with(state, seat, flipped, state.discard + (event.card,))
    assert isinstance(event, CardFlipped)
    return _with(state, seat, grid.turn_up(event.position), state.discard)


def _with(state: GolfState, seat: int, grid: Grid, discard: tuple[str, ...]) -> GolfState:
    return replaced(state, grids=replaced_at(state.grids, seat, grid), discard=discard, drawn=None)


def _end_turn(state: GolfState) -> GolfState:
    """G-11: a player without face-down cards ends the round; the others get one more turn."""
    seat = state.turn
    ender, final_turns = state.ender, state.final_turns
    if ender is None and not state.grids[seat].face_down():
        ender, final_turns = seat, state.players - 1
    elif ender is not None:
        final_turns -= 1
    return replaced(state, turn=(seat + 1) % state.players, ender=ender, final_turns=final_turns)


def _apply_column(state: GolfState, event: ColumnDiscarded) -> GolfState:
    grid = state.grids[event.seat]
    for position in grid.columns()[event.column]:
        grid = grid.place(position, None)
    return replaced(state, grids=replaced_at(state.grids, event.seat, grid), discard=state.discard + event.cards)


def _apply_round_scored(state: GolfState, event: RoundScored) -> GolfState:
    grids = tuple(g.turn_up(*range(len(g.cards))) for g in state.grids)
    totals = tuple(t + s for t, s in zip(state.totals, event.scores, strict=True))
    return replaced(
        state, grids=grids, totals=totals, round_scores=state.round_scores + (event.scores,), phase=BETWEEN_ROUNDS
    )


# ---------------------------------------------------------------- view helpers


def _slots(grid: Grid, reveal_all: bool) -> list[dict[str, Any]]:
    out = []
    for p, card in enumerate(grid.cards):
        status = grid.slot_state(p)
        shown = card if status == UP or (reveal_all and status == DOWN) else None
        out.append({"state": status, "card": shown})
    return out


def _table(state: GolfState, reveal_all: bool) -> dict[str, Any]:
    return {
        "layout": state.config.options["layout"],
        "rounds": state.config.options["rounds"],
        "dealer": state.dealer,
        "turn": state.turn if state.phase == PLAY else None,
        "grids": [{"seat": s, "slots": _slots(g, reveal_all)} for s, g in enumerate(state.grids)],
        "stock_size": len(state.stock),
        "discard": list(state.discard),
        "discard_top": state.discard[-1] if state.discard else None,
        "drawn_by": state.turn if state.drawn is not None else None,
        "ended_by": state.ender,
        "round_scores": [list(r) for r in state.round_scores],
    }


def _result(state: GolfState) -> dict[str, Any] | None:
    if state.phase != FINISHED:
        return None
    return {"totals": list(state.totals), "winners": list(state.winners)}
