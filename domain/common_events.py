"""Events that more than one game records alike."""

from __future__ import annotations

import dataclasses

from domain.events import Event


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundStarted(Event):
    """A round's deck is dealt (from the seed, C-4, or a stacked deck, C-5; not recorded): the round and its dealer.

    A game whose round start says more subclasses it under the same name (Rommé's cutter, Switch's start card).
    """

    round: int
    dealer: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class StockReshuffled(Event):
    """The discard pile but its top card, shuffled with the round's `reshuffle`-th C-4 label, went into the stock."""

    reshuffle: int
