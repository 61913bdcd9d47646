"""C-9's settings: the `max_events` a new game gets by default, and the most a creator may ask for."""

from __future__ import annotations

import os
from collections.abc import Mapping

from domain.options import MAX_EVENTS_DEFAULT, MAX_EVENTS_LEAST, EventLimits
from service.play.settings import whole_setting

MAX_EVENTS_CEILING = 100_000
"""The most events a creator may ask for, unless MAX_EVENTS_LIMIT says otherwise."""


class EventLimitsError(ValueError):
    """MAX_EVENTS_DEFAULT or MAX_EVENTS_LIMIT is not a usable number."""


def event_limits_from_env(environ: Mapping[str, str] = os.environ) -> EventLimits:
    """MAX_EVENTS_DEFAULT (default MAX_EVENTS_DEFAULT) and MAX_EVENTS_LIMIT (default MAX_EVENTS_CEILING):
    whole numbers of at least MAX_EVENTS_LEAST, the default at most the limit."""
    ceiling = _whole(environ, "MAX_EVENTS_LIMIT", MAX_EVENTS_CEILING)
    default = _whole(environ, "MAX_EVENTS_DEFAULT", min(MAX_EVENTS_DEFAULT, ceiling))
    if default > ceiling:
        raise EventLimitsError(f"MAX_EVENTS_DEFAULT ({default}) must be at most MAX_EVENTS_LIMIT ({ceiling})")
    return EventLimits(default, ceiling)


def _whole(environ: Mapping[str, str], name: str, fallback: int) -> int:
    return whole_setting(environ, name, fallback, MAX_EVENTS_LEAST, unit="events", error=EventLimitsError)
