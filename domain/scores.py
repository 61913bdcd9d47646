"""C-7: who wins when the end condition is met — everyone level at the best total."""

from __future__ import annotations

from collections.abc import Sequence


def lowest_totals(totals: Sequence[int]) -> tuple[int, ...]:
    """Seats level at the lowest total (games where lowest wins)."""
    best = min(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)


def highest_totals(totals: Sequence[int]) -> tuple[int, ...]:
    """Seats level at the highest total (games where highest wins)."""
    best = max(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)
