"""Duplicate deals (C-8): a match plays the same deals with its entrants rotated through the seats.

The match's secret seed gives every deal's game seed; its commitment is public from the match's creation.
Its results: each entrant's score on a deal (its mean points per hand over its games of that deal), the
paired differences of the entrants' deal scores with 95% intervals, and each deal's ranking (for the ladder).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from domain.engine import GameCreated
from domain.events import SYSTEM

T = TypeVar("T")


def match_commitment(match_seed: str, match_nonce: str) -> str:
    """SHA-256 of UTF-8(match seed) || 0x00 || UTF-8(match nonce), as lowercase hex (C-8)."""
    return hashlib.sha256(match_seed.encode("utf-8") + b"\x00" + match_nonce.encode("utf-8")).hexdigest()


def deal_seed(match_seed: str, deal: int) -> str:
    """The game seed of deal `deal` (0, 1, ...): lowercase hex of HMAC-SHA256(match seed, "deal/<deal>") (C-8)."""
    if deal < 0:
        raise ValueError(f"a deal is numbered from 0, not {deal}")
    message = f"deal/{deal}".encode()
    return hmac.new(match_seed.encode("utf-8"), message, hashlib.sha256).hexdigest()


def entrant_label(entrant: Mapping[str, Any]) -> str:
    """An entrant's name in results and the ladder, or a seat's in a match game's record: its level, or
    `bot:<name>` for a registered bot."""
    return f"bot:{entrant['bot']}" if entrant.get("bot") is not None else str(entrant.get("level"))


def seating(entrants: Sequence[T], rotation: int) -> tuple[T, ...]:
    """Who sits where in game `rotation` of a deal: entrant (i + rotation) mod n at seat i (C-8)."""
    count = len(entrants)
    if not 0 <= rotation < count:
        raise ValueError(f"a deal of {count} entrants has rotations 0 to {count - 1}, not {rotation}")
    return tuple(entrants[(seat + rotation) % count] for seat in range(count))


def seat_of(entrant: int, rotation: int, count: int) -> int:
    """The seat entrant `entrant` holds in game `rotation` of a deal of `count` entrants (C-8's seating inverted)."""
    return (entrant - rotation) % count


def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, tuple[float, float] | None]:
    """The mean and its 95% interval, mean ± z · s / √n with the sample standard deviation s (C-8); no interval
    from fewer than two values."""
    n = len(values)
    mean = sum(values) / n
    variance = sample_variance(values)
    if variance is None:
        return mean, None
    margin = z * math.sqrt(variance / n)
    return mean, (mean - margin, mean + margin)


def sample_variance(values: Sequence[float]) -> float | None:
    """The sample variance (divided by n - 1); None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return sum((value - mean) ** 2 for value in values) / (n - 1)


def games_needed_ratio(first: Sequence[float], second: Sequence[float]) -> float | None:
    """How many games telling two entrants apart takes on duplicate deals, as a share of what independent deals
    take: var(first - second) / (var(first) + var(second)), from their scores deal by deal.

    The interval's half-width is 1.96 · s / √D, so the deals needed to exclude 0 for a given mean difference
    grow with the variance s² of what is averaged: on the same deals the paired difference, on independent
    deals the difference of two independent scores, whose variance is the sum of theirs (the same games a
    deal in both). None for fewer than two deals or when no score varies."""
    paired = sample_variance([a - b for a, b in zip(first, second, strict=True)])
    spread = [sample_variance(first), sample_variance(second)]
    if paired is None or spread[0] is None or spread[1] is None or spread[0] + spread[1] == 0:
        return None
    return paired / (spread[0] + spread[1])


def games_needed_ratio_at_one_table(
    deal_differences: Sequence[float], game_differences: Sequence[float], games_per_deal: int
) -> float | None:
    """How many games telling two entrants apart takes on duplicate deals, as a share of what it takes when
    every game has a new deal and both sit at its table: games_per_deal · var(deal difference) / var(game
    difference), the differences of their mean points per hand, per deal (its games' mean, as C-8 scores a
    deal) and per game. Where one's points are another's loss (a seat goes out, the others pay) the game
    difference varies more than two independent scores do. None for fewer than two deals or games, or when no
    game difference varies."""
    paired, single = sample_variance(deal_differences), sample_variance(game_differences)
    if paired is None or not single:
        return None
    return games_per_deal * paired / single


@dataclasses.dataclass(frozen=True)
class DealGame:
    """One finished game of a match: its deal, its rotation, each hand's points by seat and, by seat, the
    moves the service played for the seat at its deadline (none known: empty)."""

    deal: int
    rotation: int
    hands: tuple[tuple[int, ...], ...]
    timeouts: tuple[int, ...] = ()


def deal_game(deal: int, rotation: int, events: Sequence[Mapping[str, Any]], round_scored: str) -> DealGame:
    """One finished game of a match from its recorded events."""
    return DealGame(deal, rotation, hands_of(events, round_scored), timeouts_of(events))


def hands_of(events: Sequence[Mapping[str, Any]], round_scored: str) -> tuple[tuple[int, ...], ...]:
    """Each hand's points by seat, from a game's recorded events (its `round_scored` events' `scores`)."""
    return tuple(tuple(event["data"]["scores"]) for event in events if event["type"] == round_scored)


def timeouts_of(events: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """By seat, the moves the service played for the seat at its deadline: its records that the system played
    for the seat (actor "system" with a `seat`), one move being those of one append (one `at`)."""
    created = next((event for event in events if event["type"] == GameCreated.type_name()), None)
    players = int(created["data"]["players"]) if created is not None else 0
    moves = {(event["seat"], event["at"]) for event in events if event["actor"] == SYSTEM and "seat" in event}
    return tuple(sum(1 for seat, _ in moves if seat == player) for player in range(players))


def deal_scores(count: int, games: Sequence[DealGame]) -> dict[int, list[float]]:
    """Each deal's scores by entrant: its mean points per hand over its games of the deal (C-8). Only deals
    whose every game has at least one hand are scored."""
    points: dict[int, list[list[int]]] = {}
    for game in games:
        by_entrant = points.setdefault(game.deal, [[] for _ in range(count)])
        for entrant in range(count):
            seat = seat_of(entrant, game.rotation, count)
            by_entrant[entrant].extend(hand[seat] for hand in game.hands)
    return {
        deal: [sum(hand) / len(hand) for hand in by_entrant]
        for deal, by_entrant in sorted(points.items())
        if all(by_entrant)
    }


def results(labels: Sequence[str], games: Sequence[DealGame]) -> list[dict[str, Any]]:
    """Each entrant's hands, mean points per hand and paired differences to every other (C-8), and the moves
    played for it at its deadlines (a registered bot's timeouts: they count as its moves)."""
    count = len(labels)
    scores = deal_scores(count, games)
    out = []
    for entrant, label in enumerate(labels):
        points = [hand[seat_of(entrant, g.rotation, count)] for g in games for hand in g.hands]
        paired = []
        for other, other_label in enumerate(labels):
            if other == entrant:
                continue
            mean, interval = mean_interval([s[entrant] - s[other] for s in scores.values()]) if scores else (0.0, None)
            paired.append({"vs": other_label, "mean": mean, "ci95": list(interval) if interval else None})
        mean_points = sum(points) / len(points) if points else None
        timeouts = sum(g.timeouts[seat_of(entrant, g.rotation, count)] for g in games if g.timeouts)
        out.append(
            {
                "entrant": label,
                "hands": len(points),
                "mean_points_per_hand": mean_points,
                "paired": paired,
                "timeouts": timeouts,
            }
        )
    return out


def deal_ranks(scores: Sequence[float], lowest_wins: bool) -> list[int]:
    """The entrants' ranks on one deal (0 is best; equal scores tie, C-8)."""
    ordered = sorted(set(scores), reverse=not lowest_wins)
    return [ordered.index(score) for score in scores]
