"""Plug-in levels that load but fail their turns, each in its own way, and two that are of no use at all.

`SLOW` sleeps SLOW_SECONDS before it answers the last legal action: past a small cap on think time, within the
default one."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

SLOW_SECONDS = 0.3


def _raises(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> dict[str, Any]:
    raise RuntimeError("the plug-in's own bug")


def _illegal(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> dict[str, Any]:
    return {"type": "take_everything"}


def _slow(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> dict[str, Any]:
    time.sleep(SLOW_SECONDS)
    return dict(legal[-1])


RAISES = SimpleNamespace(games=["golf"], policy=_raises)
ILLEGAL = SimpleNamespace(games=["golf"], policy=_illegal)
SLOW = SimpleNamespace(games=["golf"], policy=_slow)
SHAPELESS = SimpleNamespace(games="golf", policy=_raises)  # `games` is a string, not a list of game ids
