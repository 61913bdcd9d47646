"""`python -m workers.simulate`: all-bot games in-process, no Redis, with win rates and intervals.

Seats rotate from game to game (player p sits at seat (p + i) mod n in game i)
so that no level profits from a seat; results are reported per player.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from domain import engine
from domain.bots import choose_action, policy_for
from domain.errors import DomainError
from domain.shuffle import SeededStream

MAX_ACTIONS_PER_GAME = 100_000


@dataclasses.dataclass
class PlayerStats:
    """One player's (level's) results over the run."""

    level: str
    wins: int = 0
    score_sum: int = 0


@dataclasses.dataclass(frozen=True)
class GameOutcome:
    """One finished game, by player."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    rounds: int
    turns: int


def play_game(game_id: str, levels: Sequence[str], options: dict[str, Any], seed: str) -> GameOutcome:
    """One all-bot game through the same engine and policies as the service."""
    config = engine.make_config(game_id, len(levels), options, seed)
    snap, _ = engine.start(config)
    turns = 0
    while not snap.finished:
        seat = snap.to_act()[0]
        rng = SeededStream(f"simulate/{seed}", f"{snap.version}/{seat}")
        view = engine.view(snap, seat)
        action = choose_action(game_id, levels[seat], view, engine.legal_actions(snap, seat), rng)
        snap, _ = engine.act(snap, seat, action)
        turns += 1
        if turns > MAX_ACTIONS_PER_GAME:
            raise RuntimeError(f"game {seed} did not end within {MAX_ACTIONS_PER_GAME} actions")
    result = engine.view(snap, None)["result"]
    return GameOutcome(
        tuple(result["totals"]), tuple(result["winners"]), int(snap.game.public_view(snap.state)["round"]), turns
    )


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - margin), min(1.0, centre + margin)


def simulate(
    game_id: str, levels: Sequence[str], games: int, options: dict[str, Any], seed: str, progress: bool = True
) -> dict[str, Any]:
    """Play `games` games with seats rotating; the summary as a JSON-ready dict."""
    players = [PlayerStats(level) for level in levels]
    rounds = turns = 0
    started = time.perf_counter()
    with Progress(transient=True, disable=not progress, console=Console(stderr=True)) as bar:
        task = bar.add_task(f"{game_id}: {games} games", total=games)
        for i in range(games):
            n = len(levels)
            seated = [levels[(seat - i) % n] for seat in range(n)]  # player p at seat (p + i) mod n
            outcome = play_game(game_id, seated, options, f"{seed}-{i}")
            for p, stats in enumerate(players):
                seat = (p + i) % n
                stats.score_sum += outcome.totals[seat]
                stats.wins += seat in outcome.winners
            rounds += outcome.rounds
            turns += outcome.turns
            bar.advance(task)
    elapsed = time.perf_counter() - started
    return {
        "game": game_id,
        "games": games,
        "games_per_second": games / elapsed if elapsed else float("inf"),
        "rounds_per_game": rounds / games,
        "turns_per_game": turns / games,
        "seats": [_seat_summary(p, stats, games) for p, stats in enumerate(players)],
    }


def _seat_summary(player: int, stats: PlayerStats, games: int) -> dict[str, Any]:
    low, high = wilson_interval(stats.wins, games)
    return {
        "seat": player,
        "level": stats.level,
        "wins": stats.wins,
        "win_rate": stats.wins / games,
        "ci95": [low, high],
        "mean_score": stats.score_sum / games,
    }


def print_table(summary: dict[str, Any], console: Console) -> None:
    """The summary as a table (a shared win counts for each winner)."""
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


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m workers.simulate", description=__doc__)
    parser.add_argument("--game", required=True, help="game id, e.g. golf")
    parser.add_argument("--games", type=int, default=100, help="how many games (default 100)")
    parser.add_argument("--seats", required=True, help="bot levels, comma-separated, e.g. greedy,random")
    parser.add_argument("--options", default="{}", help="game options as JSON")
    parser.add_argument("--seed", default="simulate", help="prefix of the games' seeds (default: simulate)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    """Run the simulation; 2 for bad arguments."""
    args = parse_args(argv)
    levels = [level.strip() for level in args.seats.split(",") if level.strip()]
    try:
        options = json.loads(args.options)
        if not isinstance(options, dict) or args.games < 1:
            raise ValueError("--options must be a JSON object and --games at least 1")
        for level in levels:
            policy_for(args.game, level)
        engine.make_config(args.game, len(levels), options, "check")
        summary = simulate(args.game, levels, args.games, options, args.seed, progress=not args.json)
    except (ValueError, DomainError) as error:
        print(f"simulate: {getattr(error, 'detail', error)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary, Console())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
