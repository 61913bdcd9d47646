"""What the bench reads from a game's records: when each was stored, and whether a seat made it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def record_time(record: Mapping[str, Any]) -> float:
    """When the record was stored (its `at`), in seconds since the epoch."""
    return datetime.fromisoformat(str(record["at"]).replace("Z", "+00:00")).timestamp()


def is_seat(actor: Any) -> bool:
    """An actor that is a seat (not the system, nor the service playing a seat at its deadline)."""
    return isinstance(actor, int) and not isinstance(actor, bool)
