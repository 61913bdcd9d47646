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

from domain.duplicate_deals import games_needed_ratio, games_needed_ratio_at_one_table, mean_interval, sample_variance


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
    hands: tuple[tuple[int, ...], ...] = ()  # each round's points by seat (the game's `round_points`)
    events: int = 0  # the game's events, its end and the seed's reveal included
    event_limit: bool = False  # True when the game ended for its `max_events` (C-9)


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
    events = [outcome.events for outcome in outcomes]
    return {
        "game": game_id,
        "games": games,
        "games_per_second": games / elapsed if elapsed else float("inf"),
        "rounds_per_game": rounds / games,
        "turns_per_game": turns / games,
        "events_per_game": sum(events) / games,
        "events_max": max(events),
        "event_limit_ends": sum(outcome.event_limit for outcome in outcomes),
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


def duplicate_tally(
    game_id: str, levels: Sequence[str], outcomes: Sequence[GameOutcome], elapsed: float, lowest_wins: bool
) -> dict[str, Any]:
    """The summary of a duplicate run: deal d played in games d·n ... d·n + n - 1, one per rotation
    `seated(levels, r)`. Adds, per player, the mean points per hand, the hand win rate (the best
    points of a hand win it; equal best share) and the paired difference of the mean points per hand
    to each other player, deal by deal, with 95% intervals; the standard deviations over the deals of each
    player's deal score and of each paired difference, and how many games the paired comparison needs as a
    share of what independent deals need: each player's deal scores taken as independent
    (`games_needed_ratio`), or a new deal every game with both players at its table (`..._at_one_table`)."""
    n = len(levels)
    deals = len(outcomes) // n
    assert deals * n == len(outcomes), "a duplicate run plays every deal once per rotation"
    per_deal = [[_deal_points(outcomes[d * n : d * n + n], p, n) for d in range(deals)] for p in range(n)]
    per_game = [_game_points(outcomes, p, n) for p in range(n)]
    hand_wins = [0] * n
    hands = 0
    for i, outcome in enumerate(outcomes):
        hands += len(outcome.hands)
        for points in outcome.hands:
            best = min(points) if lowest_wins else max(points)
            for p in range(n):
                hand_wins[p] += points[(p + i) % n] == best
    summary = tally(game_id, levels, outcomes, elapsed)
    summary.update(
        duplicate=True, deals=deals, hands=hands, points_per_hand_better="lower" if lowest_wins else "higher"
    )
    for p, seat in enumerate(summary["seats"]):
        low, high = wilson_interval(hand_wins[p], hands)
        seat.update(
            mean_points_per_hand=sum(_points_of(outcomes, p, n)) / hands,
            deal_score_sd=_sd(per_deal[p]),
            hand_wins=hand_wins[p],
            hand_win_rate=hand_wins[p] / hands,
            hand_ci95=[low, high],
            paired_diff_ci95=[_paired(per_deal, per_game, p, q, levels[q]) for q in range(n) if q != p],
        )
    return summary


def _points_of(outcomes: Sequence[GameOutcome], player: int, n: int) -> list[int]:
    """Player `player`'s points in every hand of these games (game i seated as `seated(levels, i)`)."""
    return [points[(player + i) % n] for i, outcome in enumerate(outcomes) for points in outcome.hands]


def _deal_points(group: Sequence[GameOutcome], player: int, n: int) -> float:
    """A player's mean points per hand over one deal's games (the rotations of one duplicate group)."""
    points = _points_of(group, player, n)
    return sum(points) / len(points)


def _game_points(outcomes: Sequence[GameOutcome], player: int, n: int) -> list[float]:
    """A player's mean points per hand in each game (game i seated as `seated(levels, i)`)."""
    return [sum(points[(player + i) % n] for points in game.hands) / len(game.hands) for i, game in enumerate(outcomes)]


def _paired(per_deal: list[list[float]], per_game: list[list[float]], p: int, q: int, level: str) -> dict[str, Any]:
    differences = [a - b for a, b in zip(per_deal[p], per_deal[q], strict=True)]
    game_differences = [a - b for a, b in zip(per_game[p], per_game[q], strict=True)]
    mean, interval = mean_interval(differences)
    return {
        "seat": q,
        "level": level,
        "mean": mean,
        "ci95": list(interval) if interval else None,
        "sd": _sd(differences),
        "games_needed_ratio": games_needed_ratio(per_deal[p], per_deal[q]),
        "game_sd": _sd(game_differences),
        "games_needed_ratio_at_one_table": games_needed_ratio_at_one_table(
            differences, game_differences, len(per_game[p]) // len(per_deal[p])
        ),
    }


def _sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation; None for fewer than two values."""
    variance = sample_variance(values)
    return None if variance is None else math.sqrt(variance)
