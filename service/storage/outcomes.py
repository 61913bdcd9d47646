"""What the store's adapters raise and answer, free of Redis: the play layer names these."""

from __future__ import annotations

import dataclasses


class StoreUnavailable(Exception):
    """Redis could not be reached; nothing was written."""


class GameExists(Exception):
    """A game with this id exists already."""


class GameGone(Exception):
    """The game is no longer stored (its export deleted it): nothing was written."""


class RestoreRefused(ValueError):
    """A game to restore whose disputes are not well-formed; nothing was written."""


class CompactionError(Exception):
    """Packing a game stopped before it dropped anything; the game is as it was."""


@dataclasses.dataclass(frozen=True)
class AppendResult:
    """What an append did: `ok`, `conflict` (version is the current one) or `duplicate`."""

    outcome: str
    version: int = 0
    prior: str | None = None
