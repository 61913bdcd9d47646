"""Level `expert`, for every game: determinized Monte Carlo search from the seat's own view.

The bot knows what its seat may see (C-6) and nothing else. For each sample it
deals every card the seat cannot see at random, consistently with the view
(the game's `sample_world`), so the sampled game looks exactly like the real
one from this seat. In that world it tries each candidate action and plays on
with the `greedy` policy for every seat until the round is scored; the
action with the best mean result over all samples is played. Every candidate
is tried in the same worlds with the same rollout streams (common random
numbers), so the comparison between actions is not drowned in deal luck.

The search is deterministic for a given stream of its own: it plays the budget's
samples, more for a close call (EXTEND); a time budget, where the caller gives it
a clock (the domain reads none), only cuts that short on a slow machine. Each game's
bot module names its default budget (`EXPERT_BUDGET`): the one docs/strength.md
measured against greedy, which the service, `simulate` and the docs all use.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain import engine
from domain.bots import bot_module, copy_action
from domain.shuffle import SeededStream, shuffle

WorldSampler = Callable[[Mapping[str, Any], SeededStream], engine.Snapshot[Any]]
Candidates = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], int], list[int]]
Estimate = Callable[[engine.Snapshot[Any]], Sequence[float]]
Rollout = Callable[[engine.Snapshot[Any], int, Mapping[str, Any], str, int], float]

RACE_EVERY = 6
"""Samples between checks that drop the actions already clearly worse than greedy's choice."""

EXTEND = 3
"""A close call (an action ahead of greedy's choice, but not clearly) gets up to this many times
the budget's samples, so that the search's time goes where the decision is in doubt."""

WIN_VALUE = 1000.0
"""What winning the game is worth in a rollout that reaches its end, in points: more than any lead.

Once the game is over only who won counts; the lead is left in as a tiebreak between equal ends.
"""


@dataclasses.dataclass(frozen=True)
class Budget:
    """How hard the expert thinks: samples per move, a time cap (with a clock) and the search's bounds."""

    samples: int = 24
    think_ms: int = 300
    clock: Callable[[], float] | None = None  # seconds; None: no time cap, only the samples
    max_candidates: int = 8
    horizon: int = 400
    confidence: float = 1.5


DEFAULT_BUDGET = Budget()
"""The budget of a game whose bot module names none."""

THINK_MS_RANGE = (10, 10_000)
"""The time budgets a seat may ask for, in milliseconds a move."""


def sub_seed(rng: SeededStream) -> str:
    """A fresh seed drawn from `rng`, for a stream or a shuffle of the bot's own."""
    return f"{rng.u32():08x}{rng.u32():08x}{rng.u32():08x}{rng.u32():08x}"


def world_config(view: Mapping[str, Any], rng: SeededStream) -> engine.GameConfig:
    """The config of a sampled world: the game's public settings, its rules version and a seed of the
    bot's own."""
    return engine.GameConfig(
        game=view["game"],
        players=len(view["scores"]),
        options=dict(view["options"]),
        seed=sub_seed(rng),
        rules_version=int(view["rules_version"]),
    )


def unseen_cards(deck: Sequence[str], visible: Sequence[str], rng: SeededStream) -> list[str]:
    """The deck less every card the seat can see (as multisets), in a random order of the bot's own."""
    left = list(deck)
    for card in visible:
        left.remove(card)
    return list(shuffle(sorted(left), sub_seed(rng), "unseen"))


def _hooks(game_id: str) -> Any:
    """The game's bot module (`Game.bots`), where its expert hooks are."""
    return bot_module(game_id)


def candidate_indexes(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], limit: int, greedy_pick: Mapping[str, Any]
) -> list[int]:
    """Which legal actions to search: the game's own shortlist, or all of them up to `limit`.

    The greedy choice is always among them, so the expert never searches a worse set.
    """
    shortlist: Candidates | None = getattr(_hooks(view["game"]), "expert_candidates", None)
    chosen = shortlist(view, legal, limit) if shortlist else list(range(min(limit, len(legal))))
    greedy_index = legal.index(greedy_pick)
    return chosen if greedy_index in chosen else [greedy_index, *chosen[: limit - 1]]


def utility(snap: engine.Snapshot[Any], seat: int) -> float:
    """How good `snap` is for `seat`: its lead over the other seats' mean total and, once the
    game is over, its placings.

    The end counts the seat's place against each other seat (`placing_value`): it is centred on
    a fair chance, so a game that goes on with even chances sits between winning and losing and
    ending it while behind is as bad as it really is. While the round runs, a game's
    `expert_estimate(snap)` (if it has one) adds what each seat is expected to score in it, so
    that a rollout may stop before the round is scored.
    """
    _, totals = snap.game.standing(snap.state)
    points = [float(t) for t in totals]
    estimate: Estimate | None = getattr(_hooks(snap.config.game), "expert_estimate", None)
    if estimate is not None and not snap.finished:
        points = [p + e for p, e in zip(points, estimate(snap), strict=True)]
    winners = engine.view(snap, None)["result"]["winners"] if snap.finished else None
    return standing_value(points, winners, seat, snap.game.lowest_wins)


def standing_value(points: Sequence[float], winners: Sequence[int] | None, seat: int, lowest_wins: bool) -> float:
    """`utility` from the seats' points and, once the game is over, its winners (None before)."""
    others = [p for s, p in enumerate(points) if s != seat]
    lead = points[seat] - sum(others) / len(others)
    value = -lead if lowest_wins else lead
    if winners is not None:
        value += placing_value(points, winners, seat, lowest_wins)
    return value


def placing_value(points: Sequence[float], winners: Sequence[int], seat: int, lowest_wins: bool) -> float:
    """What the finished game's placings are worth to `seat`: WIN_VALUE shared out over the other seats,
    each one it finished ahead of adding its share and each one ahead of it taking a share away.

    A winner (C-7, a shared win too) is ahead of every other seat and gets WIN_VALUE; among the seats that
    did not win, the better total is ahead and an equal one is neither. At two seats that is winning or
    losing the game, as before; at more it also tells second place from last, which a win alone does not,
    and second place is what a seat can still play for in most deals with three others.
    """
    share = WIN_VALUE / (len(points) - 1)
    return share * sum(
        _ahead(points, winners, seat, other, lowest_wins) for other in range(len(points)) if other != seat
    )


def _ahead(points: Sequence[float], winners: Sequence[int], seat: int, other: int, lowest_wins: bool) -> int:
    """1 if `seat` finished ahead of `other`, -1 if behind, 0 if neither (see `placing_value`)."""
    if seat in winners:
        return 1
    if other in winners:
        return -1
    better = points[other] - points[seat] if lowest_wins else points[seat] - points[other]
    return (better > 0) - (better < 0)


def rollout(world: engine.Snapshot[Any], seat: int, action: Mapping[str, Any], stream: str, horizon: int) -> float:
    """Play `action` in `world`, then `greedy` for everyone until the round is scored.

    A game with `expert_estimate` stops earlier, after its `EXPERT_PLIES` per seat.
    """
    from domain.bots import choose_action

    hooks = _hooks(world.config.game)
    if hasattr(hooks, "expert_estimate"):
        horizon = min(horizon, hooks.EXPERT_PLIES * world.config.players)
    snap, _ = engine.act(world, seat, action)
    start_round, _ = world.game.standing(world.state)
    for step in range(horizon):
        if snap.finished or snap.game.standing(snap.state)[0] != start_round:
            break
        mover = snap.to_act()[0]
        rng = SeededStream(stream, str(step))
        seen = engine.view(snap, mover)
        move = choose_action(world.config.game, "greedy", seen, seen["you"]["legal"], rng)
        snap, _ = engine.act(snap, mover, move)
    return utility(snap, seat)


def search(
    view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream, budget: Budget
) -> dict[str, Any]:
    """The expert's choice: the candidate with the best mean rollout over sampled worlds."""
    from domain.bots import choose_action

    greedy_pick = choose_action(view["game"], "greedy", view, legal, SeededStream(sub_seed(rng), "greedy"))
    if len(legal) == 1:
        return greedy_pick
    indexes = candidate_indexes(view, legal, budget.max_candidates, greedy_pick)
    if len(indexes) == 1:
        return greedy_pick
    sample_world: WorldSampler = _hooks(view["game"]).sample_world
    seat = int(view["you"]["seat"])
    greedy_k = indexes.index(legal.index(greedy_pick))
    results: list[list[float]] = [[] for _ in indexes]
    alive = list(range(len(indexes)))
    clock = budget.clock
    deadline = clock() + budget.think_ms / 1000 if clock else math.inf
    play_out: Rollout = getattr(_hooks(view["game"]), "expert_rollout", None) or rollout
    for sample in range(budget.samples * EXTEND):
        if sample and clock and clock() > deadline:
            break
        world = sample_world(view, SeededStream(sub_seed(rng), "world"))
        stream = sub_seed(rng)  # the same rollout stream for every candidate in this world
        for k in alive:
            results[k].append(play_out(world, seat, legal[indexes[k]], stream, budget.horizon))
        done = sample + 1
        if done % RACE_EVERY == 0:
            alive = [k for k in alive if k == greedy_k or not clearly_worse(results[k], results[greedy_k])]
            if alive == [greedy_k]:
                break
        if done >= budget.samples and (done % RACE_EVERY == 0 or done == budget.samples):
            baseline = results[greedy_k]
            if not any(undecided(results[k], baseline, budget.confidence) for k in alive if k != greedy_k):
                break
    gains = [clear_gain(results[k], results[greedy_k], budget.confidence) for k in alive]
    best = max(range(len(alive)), key=lambda i: (gains[i], alive[i] == greedy_k))
    return copy_action(legal[indexes[alive[best]]])


def paired(values: Sequence[float], baseline: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of an action's gain over greedy's choice in the same worlds."""
    diffs = [v - b for v, b in zip(values, baseline, strict=False)]
    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return mean, math.inf
    return mean, math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)


def clearly_worse(values: Sequence[float], baseline: Sequence[float]) -> bool:
    """An action to stop sampling: its gain over greedy's choice is below zero by a standard error."""
    mean, error = paired(values, baseline)
    return mean + error < 0


def undecided(values: Sequence[float], baseline: Sequence[float], confidence: float) -> bool:
    """An action ahead of greedy's choice on average, but not yet by `confidence` standard errors."""
    mean, error = paired(values, baseline)
    return 0 < mean <= confidence * error


def clear_gain(values: Sequence[float], baseline: Sequence[float], confidence: float) -> float:
    """The mean gain of an action over greedy's choice in the same worlds, or 0 if it is not clear.

    A gain counts only when it exceeds `confidence` standard errors of the paired differences:
    picking the best of several noisy means would otherwise often pick noise over greedy.
    """
    mean, error = paired(values, baseline)
    return mean if mean > 0 and mean > confidence * error else 0.0


def default_budget(game_id: str) -> Budget:
    """The expert's budget in `game_id` when nobody asks for another: its bot module's EXPERT_BUDGET, the
    budget docs/strength.md measured against greedy (no clock: the caller adds one); DEFAULT_BUDGET for a
    game without one."""
    budget: Budget = getattr(_hooks(game_id), "EXPERT_BUDGET", DEFAULT_BUDGET)
    return budget


def budget_for(game_id: str, think_ms: int | None, clock: Callable[[], float], cap: int | None = None) -> Budget:
    """The game's default budget timed by `clock`, with a seat's own time budget if it set one, at most `cap`."""
    default = default_budget(game_id)
    asked = think_ms or default.think_ms
    return dataclasses.replace(default, think_ms=asked if cap is None else min(asked, cap), clock=clock)


def expert_policy(budget: Budget) -> Callable[..., dict[str, Any]]:
    """An expert policy with this budget, for `choose_action`."""

    def expert(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
        return search(view, legal, rng, budget)

    return expert
