"""A seat as a game stores it, and the think time a house expert seat gets."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from domain.bots.expert import THINK_MS_RANGE, default_budget

THINK_MS_MAX = 2000  # the server's cap on an expert's think time a move, unless EXPERT_THINK_MS_MAX says otherwise


@dataclasses.dataclass(frozen=True)
class Seat:
    """A seat as created: human or bot."""

    seat: int
    kind: str
    name: str
    level: str | None = None
    think_ms: int | None = None

    def public(self) -> dict[str, Any]:
        """The seat without secrets."""
        out: dict[str, Any] = {"seat": self.seat, "kind": self.kind, "name": self.name}
        if self.level is not None:
            out["level"] = self.level
        if self.think_ms is not None:
            out["think_ms"] = self.think_ms
        return out


class ThinkCapError(ValueError):
    """EXPERT_THINK_MS_MAX is not a whole number of milliseconds in THINK_MS_RANGE."""


def think_ms_max_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """The cap on an expert's think time a move: EXPERT_THINK_MS_MAX, default THINK_MS_MAX."""
    text = environ.get("EXPERT_THINK_MS_MAX", "").strip()
    if not text:
        return THINK_MS_MAX
    low, high = THINK_MS_RANGE
    if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
        raise ThinkCapError(f"EXPERT_THINK_MS_MAX must be a whole number of milliseconds from {low} to {high}")
    return int(text)


def effective_think_ms(game_id: str, level: str | None, asked: int | None, cap: int) -> int | None:
    """The think time an expert seat gets, as its creation answer shows it: what it asked for, at
    most `cap`; None (the game's default budget) when it asked nothing and that is within the cap."""
    if level != "expert":
        return asked
    if asked is None:
        return cap if cap < default_budget(game_id).think_ms else None
    return min(asked, cap)
