"""What a simulation run reports: each game's outcome, the seats' tally with 95% intervals, a progress bar.

Shared by the in-process run (workers/simulate.py) and the run through the service (workers/simulate_queue.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import Progress


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


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - margin), min(1.0, centre + margin)


def progress_bar(shown: bool) -> Progress:
    """A progress bar on stderr that disappears when done."""
    return Progress(transient=True, disable=not shown, console=Console(stderr=True))


def seated(levels: Sequence[str], i: int) -> list[str]:
    """The seats' levels in game `i`: player p sits at seat (p + i) mod n."""
    n = len(levels)
    return [levels[(seat - i) % n] for seat in range(n)]


def tally(game_id: str, levels: Sequence[str], outcomes: Sequence[GameOutcome], elapsed: float) -> dict[str, Any]:
    """The summary of games played in order with `seated(levels, i)`, as a JSON-ready dict."""
    players = [PlayerStats(level) for level in levels]
    n, games = len(levels), len(outcomes)
    for i, outcome in enumerate(outcomes):
        for p, stats in enumerate(players):
            seat = (p + i) % n
            stats.score_sum += outcome.totals[seat]
            stats.wins += seat in outcome.winners
    rounds = sum(outcome.rounds for outcome in outcomes)
    turns = sum(outcome.turns for outcome in outcomes)
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
