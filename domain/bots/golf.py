"""Golf bot policy `greedy`: a one-turn expectimax over the seat's own view (G-1 ... G-15).

The bot sees only what `engine.view(snap, seat)` shows that seat (C-6): its own
face-up cards, every other grid's face-up cards, the discard pile and its drawn
card. Face-down cards are unknown to it, as to everyone (G-5); each is valued as
a card drawn from the unseen cards: the deck less every visible card.

A grid is estimated column by column with G-13: the expected sum of its values
less the expected value of the case that all its cards share one rank. Every
legal action is valued by the estimate of the grid it leads to; drawing from
the stock is valued by averaging, over the ranks still unseen, the best thing
to do with the drawn card. An action that ends the round (G-11) costs the G-14
penalty unless the bot's score is then clearly the lowest. The lowest value
wins; ties are broken by the seeded stream.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import Policy, copy_action
from domain.bots.expert import Budget, unseen_cards, world_config
from domain.cards import RANKS, rank_of
from domain.golf import CARD_VALUES, EMPTY, SETUP, UP, GolfState, Grid
from domain.shuffle import SeededStream

UNKNOWN = "?"
"""A face-down card in a grid of ranks."""

ASSUMED_PENALTY = 10.0
"""G-14 penalty: the option is not in the view, so its default is assumed."""

END_MARGIN = 1.0
"""How far below every rival's estimate the bot must be to end a round safely."""

TOLERANCE = 1e-9
COLUMNS = 3

Cell = str | None
"""A rank, UNKNOWN for a face-down card, or None for a cleared place (G-9)."""

Ranks = tuple[Cell, ...]


@dataclasses.dataclass(frozen=True)
class Model:
    """What the bot believes: the unseen-card distribution and the round's end stakes."""

    probs: Mapping[str, float]
    mean: float
    rivals: float
    may_end: bool
    columns_seen: dict[Ranks, float] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """Column estimates already worked out under this model (a cache: the same columns recur)."""


NO_MODEL = Model(probs={}, mean=0.0, rivals=0.0, may_end=False)
"""A model for what no model changes: a column with no face-down card."""


# ---------------------------------------------------------------- the policy


def greedy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """The greedy Golf policy: one of `legal`, chosen from the seat's view only."""
    if view["phase"] == "setup":
        return _pick(legal, [0.0] * len(legal), [-_columns_touched(a) for a in legal], rng)
    grid = own_grid(view)
    model = build_model(view)
    drawn = view["you"]["drawn"]
    top = view["table"]["discard_top"]
    values = [action_value(a, grid, drawn, top, model) for a in legal]
    return _pick(legal, values, [_flip_preference(a, grid) for a in legal], rng)


def _pick(
    legal: Sequence[Mapping[str, Any]], values: Sequence[float], tiebreak: Sequence[int], rng: SeededStream
) -> dict[str, Any]:
    """A copy of the lowest-valued action; then the lowest tiebreak; then the seeded stream."""
    best = min(values)
    near = [i for i, v in enumerate(values) if v <= best + TOLERANCE]
    first = min(tiebreak[i] for i in near)
    ties = [i for i in near if tiebreak[i] == first]
    return copy_action(legal[rng.choice(ties)])


def _columns_touched(action: Mapping[str, Any]) -> int:
    """Setup (G-4): how many columns an initial reveal looks into; more is better."""
    return len({p % COLUMNS for p in action["positions"]})


def _flip_preference(action: Mapping[str, Any], grid: Ranks) -> int:
    """Among equal flips, prefer a column with fewest face-down cards (learn whether it pairs)."""
    position = _flipped(action)
    if position is None:
        return 0
    return sum(1 for p in column_of(position, len(grid)) if grid[p] == UNKNOWN)


def _flipped(action: Mapping[str, Any]) -> int | None:
    """The position an action turns face up, if it turns one."""
    if action["type"] == "flip":
        return int(action["position"])
    if action["type"] == "discard" and action.get("flip") is not None:
        return int(action["flip"])
    return None


# ---------------------------------------------------------------- valuing actions


def action_value(action: Mapping[str, Any], grid: Ranks, drawn: str | None, top: str | None, model: Model) -> float:
    """Expected own round score (penalty included) after `action`; lower is better."""
    kind = action["type"]
    if kind == "draw":
        return draw_value(grid, model)
    if kind == "swap" and drawn is not None:
        return outcome(place(grid, action["position"], rank_of(drawn)), model)
    if kind == "take_discard" and top is not None:
        return outcome(place(grid, action["position"], rank_of(top)), model)
    flipped = _flipped(action)
    if flipped is not None:
        return flip_value(grid, flipped, model)
    return outcome(grid, model)


def draw_value(grid: Ranks, model: Model) -> float:
    """G-6: the average, over unseen ranks, of the best use of the drawn card.

    The same as taking the best `outcome(place(grid, p, rank))`, worked out column by column:
    a card placed changes only its own column's estimate (the rollouts of the expert's search
    spend most of their time here).
    """
    toss = discard_value(grid, model)
    cols = COLUMN_POSITIONS[len(grid)]
    values = [column_value(tuple(grid[q] for q in col), model) for col in cols]
    unknown = grid.count(UNKNOWN)
    places = [
        (p, p % COLUMNS, cols[p % COLUMNS], unknown - (cell == UNKNOWN))
        for p, cell in enumerate(grid)
        if cell is not None
    ]
    total = 0.0
    for rank, prob in model.probs.items():
        best = toss
        for p, c, col, left in places:
            placed = values.copy()
            placed[c] = column_value(tuple(rank if q == p else grid[q] for q in col), model)
            best = min(best, _penalised(sum_columns(placed), left, model))
        total += prob * best
    return total


def discard_value(grid: Ranks, model: Model) -> float:
    """G-6 (b): discard the drawn card and turn up the best face-down card."""
    downs = [p for p, cell in enumerate(grid) if cell == UNKNOWN]
    return min((flip_value(grid, p, model) for p in downs), default=outcome(grid, model))


def flip_value(grid: Ranks, position: int, model: Model) -> float:
    """Turning a card up changes no expectation, unless it is the last one and ends the round."""
    if grid.count(UNKNOWN) > 1:
        return outcome(grid, model)
    return sum(prob * outcome(place(grid, position, rank), model) for rank, prob in model.probs.items())


def outcome(grid: Ranks, model: Model) -> float:
    """A grid's estimated score, plus the G-14 penalty when it ends the round unsafely."""
    return _penalised(estimate(grid, model), grid.count(UNKNOWN), model)


def _penalised(score: float, unknown: int, model: Model) -> float:
    """G-14: a grid with no face-down card left ends the round; unsafe unless clearly lowest."""
    if model.may_end and unknown == 0 and score > model.rivals - END_MARGIN:
        return score + ASSUMED_PENALTY
    return score


def place(grid: Ranks, position: int, rank: str) -> Ranks:
    """The grid with `rank` face up at `position`."""
    return grid[:position] + (rank,) + grid[position + 1 :]


# ---------------------------------------------------------------- estimating grids


def column_of(position: int, size: int) -> tuple[int, ...]:
    """G-2: the positions of the column holding `position`."""
    return tuple(range(position % COLUMNS, size, COLUMNS))


def columns(size: int) -> list[tuple[int, ...]]:
    """G-2: positions c, c+3 (, c+6) for each column c."""
    return [column_of(c, size) for c in range(COLUMNS)]


def estimate(grid: Ranks, model: Model) -> float:
    """Expected G-13 score of a grid whose face-down cards are independent unseen cards."""
    return sum_columns([column_value(tuple(grid[p] for p in col), model) for col in COLUMN_POSITIONS[len(grid)]])


def sum_columns(values: Sequence[float]) -> float:
    """A grid's estimate from its columns', added left to right."""
    total = 0.0
    for value in values:
        total += value
    return total


def column_value(cells: Ranks, model: Model) -> float:
    """`column_estimate`, worked out once per column under a model (once for good if no card is face down)."""
    value = model.columns_seen.get(cells)
    if value is None:
        known = UNKNOWN not in cells
        value = model.columns_seen[cells] = _known_column(cells) if known else column_estimate(cells, model)
    return value


@functools.lru_cache(maxsize=4096)
def _known_column(cells: Ranks) -> float:
    """`column_estimate` of a column with no face-down card, which no model changes (at most 14^3 of them)."""
    return column_estimate(cells, NO_MODEL)


COLUMN_POSITIONS = {size: columns(size) for size in (6, 9)}
"""G-2: the columns of a 2x3 and a 3x3 grid."""


def column_estimate(cells: Ranks, model: Model) -> float:
    """Expected score of one column: its expected sum less the expected all-one-rank sum (G-13)."""
    if any(cell is None for cell in cells):
        return sum(_value(c, model) for c in cells if c is not None)
    known = {c for c in cells if c is not None and c != UNKNOWN}
    unknown = cells.count(UNKNOWN)
    base = sum(_value(c, model) for c in cells)
    if len(known) > 1:
        return base
    candidates = sorted(known) if known else list(model.probs)
    same = sum(model.probs.get(r, 0.0) ** unknown * len(cells) * CARD_VALUES[r] for r in candidates)
    return base - same


def _value(cell: Cell, model: Model) -> float:
    """A known card's G-12 value, or the mean unseen value for a face-down card."""
    if cell is None:
        return 0.0
    return model.mean if cell == UNKNOWN else float(CARD_VALUES[cell])


# ---------------------------------------------------------------- reading the view


def ranks_of(slots: Sequence[Mapping[str, Any]]) -> Ranks:
    """A view's grid slots as ranks, UNKNOWN and None."""
    cells: list[Cell] = []
    for slot in slots:
        if slot["state"] == "empty":
            cells.append(None)
        elif slot["state"] == "down" or slot.get("card") is None:
            cells.append(UNKNOWN)
        else:
            cells.append(rank_of(slot["card"]))
    return tuple(cells)


def own_grid(view: Mapping[str, Any]) -> Ranks:
    """The acting seat's grid."""
    return ranks_of(view["you"]["hand"])


def build_model(view: Mapping[str, Any]) -> Model:
    """The unseen-card distribution, the best rival estimate and whether ending is still open."""
    probs = unseen_distribution(view)
    mean = sum(p * CARD_VALUES[r] for r, p in probs.items())
    partial = Model(probs, mean, rivals=0.0, may_end=False)
    seat = view["you"]["seat"]
    others = [estimate(ranks_of(g["slots"]), partial) for g in view["table"]["grids"] if g["seat"] != seat]
    rivals = min(others, default=float("inf"))
    return dataclasses.replace(partial, rivals=rivals, may_end=view["table"]["ended_by"] is None)


def unseen_distribution(view: Mapping[str, Any]) -> dict[str, float]:
    """Rank probabilities of an unseen card: the decks in play less every visible card."""
    table = view["table"]
    each = 4 * _decks_in_play(table)
    counts = dict.fromkeys(RANKS, each)
    for card in visible_cards(view):
        rank = rank_of(card)
        if counts.get(rank, 0) > 0:
            counts[rank] -= 1
    total = sum(counts.values())
    if total == 0:
        return {rank: 1 / len(RANKS) for rank in RANKS}
    return {rank: count / total for rank, count in counts.items() if count}


def _decks_in_play(table: Mapping[str, Any]) -> int:
    """G-1: 52-card decks, counted from every card on the table, stock and hand."""
    in_grids = sum(1 for g in table["grids"] for s in g["slots"] if s["state"] != "empty")
    in_hand = 0 if table["drawn_by"] is None else 1
    total = in_grids + table["stock_size"] + len(table["discard"]) + in_hand
    return max(1, round(int(total) / 52))


def visible_cards(view: Mapping[str, Any]) -> list[str]:
    """Every card this seat can see: discard pile, face-up grid cards and its drawn card."""
    table = view["table"]
    cards = list(table["discard"])
    cards += [s["card"] for g in table["grids"] for s in g["slots"] if s["state"] == "up" and s.get("card")]
    drawn = view["you"]["drawn"]
    return [*cards, drawn] if drawn else cards


POLICIES: dict[str, Policy] = {"greedy": greedy}
"""Golf's own policies by level."""

EXPERT_BUDGET = Budget(samples=24, think_ms=300)
"""The expert's default budget in this game (samples a move and a time cap a move, in ms, where the caller
gives it a clock): the one measured against greedy on duplicate deals in docs/strength.md (golf-expert-greedy)."""


# ---------------------------------------------------------------- the expert's worlds


def sample_world(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
    """A whole Golf game that looks exactly like `view` to its seat: unseen cards dealt at random.

    Face-down cards (G-5), the stock and a card another player has drawn are
    unknown to the seat; they are the deck less every visible card, shuffled.
    """
    config = world_config(view, rng)
    table, seat = view["table"], view["you"]["seat"]
    game = engine.get_game("golf")
    deck = game.canonical_deck(config.players, config.options)
    drawn_by, drawn = table["drawn_by"], view["you"]["drawn"]
    visible = [*table["discard"], *(s["card"] for g in table["grids"] for s in g["slots"] if s["card"])]
    unseen = unseen_cards(deck, visible + ([drawn] if drawn else []), rng)
    if drawn_by is not None and drawn_by != seat:
        drawn = unseen.pop()
    grids = tuple(_world_grid(g["slots"], unseen) for g in table["grids"])
    phase, players, ender = view["phase"], config.players, table["ended_by"]
    turn = table["turn"] if table["turn"] is not None else 0
    state = GolfState(
        config=config,
        round=view["round"],
        dealer=table["dealer"],
        phase=phase,
        stock=tuple(unseen),
        discard=tuple(table["discard"]),
        grids=grids,
        revealed=frozenset(s for s in range(players) if phase != SETUP or s not in view["to_act"]),
        turn=turn,
        drawn=drawn,
        ender=ender,
        final_turns=(ender - turn) % players if ender is not None else 0,
        round_scores=tuple(tuple(r) for r in table["round_scores"]),
        totals=tuple(view["scores"]),
    )
    return engine.Snapshot(game, config, state, version=view["version"])


def _world_grid(slots: Sequence[Mapping[str, Any]], unseen: list[str]) -> Grid:
    cards = [None if s["state"] == EMPTY else (s["card"] or unseen.pop()) for s in slots]
    return Grid(tuple(cards), tuple(s["state"] == UP for s in slots))


CLOSE_CALL = 3.0
"""How near greedy's best estimate an action must be for the expert to search it, in points."""


def expert_candidates(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], limit: int) -> list[int]:
    """Golf's shortlist for the expert: the close calls among the actions greedy values best.

    Setup flips are searched only by greedy (they change no expectation, G-5).
    """
    if view["phase"] == "setup":
        return []
    grid, model = own_grid(view), build_model(view)
    drawn, top = view["you"]["drawn"], view["table"]["discard_top"]
    values = [action_value(a, grid, drawn, top, model) for a in legal]
    ranked = sorted(range(len(legal)), key=lambda i: values[i])
    return [i for i in ranked if values[i] <= values[ranked[0]] + CLOSE_CALL][:limit]
