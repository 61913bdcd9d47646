"""A turn as `GET /v1/bots/me/turns` hands it out, and what a player makes of it."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DEFAULT_DEADLINE_SECONDS = 10.0  # a turn whose deadline cannot be read is given this long
# a deadline further away is taken as this far: no turn is given that long (a game's turn_seconds is at most
# a day), and a wait for an unbounded one (a deadline in the year 9999) is more than the platform's timers take
MAX_DEADLINE_SECONDS = 7 * 24 * 3600.0


class BadTurn(ValueError):
    """A turn that lacks a field the bridge needs, or has one of the wrong type."""


@dataclass(frozen=True)
class Turn:
    """One due turn. `received_at`: when it came, on this machine's monotonic clock; `seconds`: how long it had
    left then."""

    id: str
    game_id: str
    game: str
    seat: int
    version: int
    deadline: str
    view: dict[str, Any]
    legal: list[dict[str, Any]]
    received_at: float
    seconds: float
    options: dict[str, Any] | None = None  # the game's options, when the turn brings them

    def remaining(self, now: float | None = None) -> float:
        """Seconds left before the deadline (negative once past)."""
        return self.seconds - ((time.monotonic() if now is None else now) - self.received_at)


@dataclass(frozen=True)
class Left:
    """The player sends nothing for the turn, which is left to its deadline (the service then plays it)."""

    reason: str


def parse_turn(raw: Any, received_at: float, server_date: datetime | None) -> Turn:
    """A turn from its JSON; its deadline measured from the answer's `Date` (the service's clock) when there
    is one, so that a machine whose clock is off still meets it."""
    if not isinstance(raw, dict):
        raise BadTurn(f"a turn is a JSON object, not {type(raw).__name__}")
    fields = {"turn": str, "game_id": str, "game": str, "seat": int, "version": int, "deadline": str}
    for name, kind in fields.items():
        if not isinstance(raw.get(name), kind) or isinstance(raw.get(name), bool):
            raise BadTurn(f"the turn's {name!r} is missing or not a {kind.__name__}")
    if not isinstance(raw.get("view"), dict):
        raise BadTurn("the turn's 'view' is missing or not an object")
    legal = raw.get("legal")
    if not isinstance(legal, list) or not all(isinstance(action, dict) for action in legal):
        raise BadTurn("the turn's 'legal' is missing or not a list of actions")
    return Turn(
        id=raw["turn"],
        game_id=raw["game_id"],
        game=raw["game"],
        seat=raw["seat"],
        version=raw["version"],
        deadline=raw["deadline"],
        view=raw["view"],
        legal=legal,
        received_at=received_at,
        seconds=seconds_left(raw["deadline"], server_date),
        options=raw["options"] if isinstance(raw.get("options"), dict) else None,
    )


def seconds_left(deadline: str, server_date: datetime | None) -> float:
    """Seconds from the service's `Date` (else this machine's clock) to an RFC 3339 deadline, at most
    MAX_DEADLINE_SECONDS."""
    try:
        due = datetime.fromisoformat(deadline)
    except ValueError:
        return DEFAULT_DEADLINE_SECONDS
    if due.tzinfo is None:
        due = due.replace(tzinfo=UTC)
    now = server_date if server_date is not None and server_date.tzinfo is not None else datetime.now(UTC)
    return min((due - now).total_seconds(), MAX_DEADLINE_SECONDS)


def canonical(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces; `1`, `1.0` and `true` stay apart."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def legal_match(action: Any, legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The legal action that `action` spells exactly (a copy of it), or None."""
    if not isinstance(action, dict):
        return None
    try:
        wanted = canonical(action)
    except (TypeError, ValueError, RecursionError):
        return None
    for candidate in legal:
        if canonical(candidate) == wanted:
            return json.loads(canonical(candidate))  # type: ignore[no-any-return]
    return None
