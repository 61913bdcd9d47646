"""`last-legal`: a module as a plug-in level, for Golf and Pick (tests/fifth_game.py). It plays the last of its
seat's legal actions (in Golf, it reveals and flips its cards and ends a round soon), and notes each call so that
a test sees which turns it played."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

games = ("golf", "pick")
calls: list[int] = []  # the version of the view of each turn it was asked for


def policy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> dict[str, Any]:
    calls.append(view["version"])
    return dict(legal[-1])
