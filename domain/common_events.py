"""Events that more than one game records alike."""

from __future__ import annotations

import dataclasses

from domain.events import Event


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundStarted(Event):
    """G-3: the round's deck is dealt (derived from the seed, not recorded)."""

    round: int
    dealer: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class StockReshuffled(Event):
    """G-10: the discard pile but its top card became the new stock."""

    reshuffle: int
