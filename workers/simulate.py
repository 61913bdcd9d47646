"""`python -m workers.simulate`: all-bot games in-process, no Redis, with win rates and intervals.

Seats rotate from game to game (player p sits at seat (p + i) mod n in game i)
so that no level profits from a seat; results are reported per player. With
`--duplicate` each deal (one seed) is played once per rotation of the players
through the seats, so every player plays every seat's cards, and players are
compared on the same deals: mean points per hand and the paired difference per
deal. With `--via-queue URL` the same games are played by a running service and
its RQ workers instead (workers/simulate_queue.py).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import multiprocessing
import sys
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from domain import engine
from domain.bots import choose_action, policy_for
from domain.bots.expert import Budget, default_budget
from domain.errors import DomainError
from domain.events import Event
from domain.shuffle import SeededStream
from workers.simulate_queue import ServiceError, simulate_via_queue
from workers.simulate_results import GameOutcome, duplicate_tally, progress_bar, seated, tally, wilson_interval

__all__ = ["GameOutcome", "main", "play_game", "simulate", "wilson_interval"]

MAX_ACTIONS_PER_GAME = 100_000


def play_game(
    game_id: str, levels: Sequence[str], options: dict[str, Any], seed: str, budget: Budget | None = None
) -> GameOutcome:
    """One all-bot game through the same engine and policies as the service (`budget`: the expert's; None for
    the game's default, without a clock)."""
    config = engine.make_config(game_id, len(levels), options, seed)
    snap, events = engine.start(config)
    hands = _round_points(snap.game, events)
    turns = 0
    while not snap.finished:
        seat = snap.to_act()[0]
        rng = SeededStream(f"simulate/{seed}", f"{snap.version}/{seat}")
        view = engine.view(snap, seat)
        action = choose_action(game_id, levels[seat], view, view["you"]["legal"], rng, budget)
        snap, events = engine.act(snap, seat, action)
        hands += _round_points(snap.game, events)
        turns += 1
        if turns > MAX_ACTIONS_PER_GAME:
            raise RuntimeError(f"game {seed} did not end within {MAX_ACTIONS_PER_GAME} actions")
    result = engine.view(snap, None)["result"]
    return GameOutcome(
        tuple(result["totals"]),
        tuple(result["winners"]),
        int(snap.game.public_view(snap.state)["round"]),
        turns,
        tuple(hands),
        snap.version,
        result.get("reason") == engine.EVENT_LIMIT,
    )


def _round_points(game: engine.Game[Any], events: Sequence[Event]) -> list[tuple[int, ...]]:
    return [points for event in events if (points := game.round_points(event)) is not None]


def simulate(
    game_id: str,
    levels: Sequence[str],
    games: int,
    options: dict[str, Any],
    seed: str,
    progress: bool = True,
    budget: Budget | None = None,
    jobs: int = 1,
    duplicate: bool = False,
) -> dict[str, Any]:
    """Play `games` games with seats rotating, on `jobs` processes; the summary as a JSON-ready dict.

    With `duplicate`, `games` counts deals: deal d (seed `{seed}-{d}`) is played once per rotation.
    """
    rotations = range(len(levels))
    deals = [(d, r) for d in range(games) for r in rotations] if duplicate else [(i, i) for i in range(games)]
    tasks = [(game_id, seated(levels, r), options, f"{seed}-{d}", budget) for d, r in deals]
    outcomes = []
    started = time.perf_counter()
    pool = multiprocessing.get_context("spawn").Pool(jobs) if jobs > 1 else None
    with progress_bar(progress) as bar, pool or contextlib.nullcontext():
        task = bar.add_task(f"{game_id}: {len(tasks)} games", total=len(tasks))
        for outcome in pool.imap(_play, tasks) if pool else map(_play, tasks):
            outcomes.append(outcome)
            bar.advance(task)
    elapsed = time.perf_counter() - started
    if duplicate:
        summary = duplicate_tally(game_id, levels, outcomes, elapsed, engine.get_game(game_id).lowest_wins)
    else:
        summary = tally(game_id, levels, outcomes, elapsed)
    if "expert" in levels:
        summary["expert_budget"] = budget_record(budget or default_budget(game_id))
    return summary


def budget_record(budget: Budget) -> dict[str, int | None]:
    """An expert budget as a run's JSON records it: samples a move, and the time cap a move (None: none)."""
    return {"samples": budget.samples, "think_ms": budget.think_ms if budget.clock else None}


def expert_budget(args: argparse.Namespace) -> Budget:
    """The expert's budget the command line asks for: the game's default (as the service plays it, timed by
    the clock) with the flags' changes."""
    default = default_budget(args.game)
    return dataclasses.replace(
        default,
        samples=args.samples or default.samples,
        think_ms=args.think_ms or default.think_ms,
        clock=None if args.no_time_cap else time.monotonic,
    )


def _play(task: tuple[str, list[str], dict[str, Any], str, Budget | None]) -> GameOutcome:
    return play_game(*task)


def print_table(summary: dict[str, Any], console: Console) -> None:
    """The summary as a table (a shared win counts for each winner)."""
    if summary.get("duplicate"):
        print_duplicate_tables(summary, console)
        return
    table = Table(title=f"{summary['game']}: {summary['games']} games, seats rotating")
    for column in ("player", "level", "wins", "win rate", "95% interval", "mean score"):
        table.add_column(column, justify="right")
    for seat in summary["seats"]:
        low, high = seat["ci95"]
        table.add_row(
            str(seat["seat"]),
            seat["level"],
            str(seat["wins"]),
            f"{seat['win_rate']:.1%}",
            f"{low:.1%} – {high:.1%}",
            f"{seat['mean_score']:.1f}",
        )
    console.print(table)
    console.print(
        f"rounds per game {summary['rounds_per_game']:.2f}, turns per game {summary['turns_per_game']:.1f}, "
        f"{summary['games_per_second']:.1f} games per second"
    )


def print_duplicate_tables(summary: dict[str, Any], console: Console) -> None:
    """A duplicate run's summary: points per hand and win rates by player, then the paired differences."""
    better = summary["points_per_hand_better"]
    table = Table(
        title=f"{summary['game']}: {summary['deals']} deals, each played once per seat rotation "
        f"({summary['games']} games, {summary['hands']} hands); points per hand: {better} is better"
    )
    for column in ("player", "level", "points per hand", "hand wins", "95% interval", "game wins", "95% interval"):
        table.add_column(column, justify="right")
    for seat in summary["seats"]:
        table.add_row(
            str(seat["seat"]),
            seat["level"],
            f"{seat['mean_points_per_hand']:.2f}",
            f"{seat['hand_win_rate']:.1%}",
            _percent_interval(seat["hand_ci95"]),
            f"{seat['win_rate']:.1%}",
            _percent_interval(seat["ci95"]),
        )
    console.print(table)
    pairs = Table(title=f"paired difference of points per hand, per deal ({better} is better)")
    for column in ("player", "minus player", "mean difference", "95% interval"):
        pairs.add_column(column, justify="right")
    for seat in summary["seats"]:
        for other in seat["paired_diff_ci95"]:
            interval = other["ci95"]
            shown = f"{interval[0]:+.2f} – {interval[1]:+.2f}" if interval else "(one deal)"
            pairs.add_row(
                f"{seat['seat']} {seat['level']}", f"{other['seat']} {other['level']}", f"{other['mean']:+.2f}", shown
            )
    console.print(pairs)
    console.print(f"turns per game {summary['turns_per_game']:.1f}, {summary['games_per_second']:.1f} games per second")


def _percent_interval(interval: list[float]) -> str:
    return f"{interval[0]:.1%} – {interval[1]:.1%}"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m workers.simulate", description=__doc__)
    parser.add_argument("--game", required=True, help="game id, e.g. golf")
    parser.add_argument(
        "--games", type=int, default=100, help="how many games, or deals with --duplicate (default 100)"
    )
    parser.add_argument("--seats", required=True, help="bot levels, comma-separated, e.g. greedy,random")
    parser.add_argument("--options", default="{}", help="game options as JSON")
    parser.add_argument("--seed", default="simulate", help="prefix of the games' seeds (default: simulate)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="play each deal once per rotation of the players through the seats (--games counts deals) "
        "and compare the players' points per hand deal by deal",
    )
    parser.add_argument(
        "--via-queue",
        metavar="URL",
        help="play the games through a running service (e.g. http://127.0.0.1:8000) and its RQ workers",
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="with --via-queue: games in flight at once (default 8)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="in-process: worker processes (default 1)")
    parser.add_argument(
        "--samples",
        type=int,
        help="expert: worlds sampled a move (default: the game's EXPERT_BUDGET)",
    )
    parser.add_argument(
        "--think-ms", type=int, help="expert: a time cap a move, read from the clock (default: the game's)"
    )
    parser.add_argument(
        "--no-time-cap",
        action="store_true",
        help="expert: no time cap, only the samples, so that a run repeats exactly on any machine",
    )
    return parser.parse_args(argv)


def first_problem(args: argparse.Namespace, levels: list[str]) -> str | None:
    """The first thing wrong with the command line, named by its flag; None when it can run."""
    games = [game.id for game in engine.all_games()]
    if args.game not in games:
        return f"--game: unknown game {args.game!r}; the games are {', '.join(games)}"
    if args.games < 1:
        return f"--games: at least 1, not {args.games}"
    if not levels:
        return "--seats: name at least one bot level, e.g. greedy,random"
    for level in levels:
        try:
            policy_for(args.game, level)
        except ValueError as error:
            return f"--seats: {error}"
    try:
        options = json.loads(args.options)
    except ValueError as error:
        return f"--options: not JSON ({error})"
    if not isinstance(options, dict):
        return "--options: must be a JSON object, e.g. {}"
    try:
        engine.make_config(args.game, len(levels), options, "check")
    except DomainError as error:
        flag = "--seats" if error.code == "bad_player_count" else "--options"
        return f"{flag}: {error.detail}"
    if args.no_time_cap and args.think_ms is not None:
        return "--think-ms: not with --no-time-cap; drop one of the two flags"
    if args.duplicate and args.via_queue:
        return "--duplicate: not with --via-queue (a duplicate run plays in-process only); drop one of the two flags"
    for flag in ("concurrency", "jobs", "samples", "think_ms"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            return f"--{flag.replace('_', '-')}: at least 1, not {value}"
    return None


def main(argv: Sequence[str]) -> int:
    """Run the simulation; 2 for bad arguments, 1 when the service (with --via-queue) fails."""
    args = parse_args(argv)
    levels = [level.strip() for level in args.seats.split(",") if level.strip()]
    problem = first_problem(args, levels)
    if problem is not None:
        print(f"simulate: {problem}", file=sys.stderr)
        return 2
    options = json.loads(args.options)
    try:
        budget = expert_budget(args)
        if args.via_queue:
            summary = simulate_via_queue(
                args.via_queue, args.game, levels, args.games, options, args.seed, args.concurrency, not args.json
            )
        else:
            summary = simulate(
                args.game, levels, args.games, options, args.seed, not args.json, budget, args.jobs, args.duplicate
            )
    except (ValueError, DomainError) as error:
        print(f"simulate: {getattr(error, 'detail', error)}", file=sys.stderr)
        return 2
    except ServiceError as error:
        print(f"simulate: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary, Console())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
