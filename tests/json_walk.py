"""Walk JSON-like values: every string and every key inside (for leak checks on views)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def strings_in(value: Any) -> set[str]:
    """Every string value (not key) inside a JSON-like value."""
    found: set[str] = set()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, Iterable):
            stack.extend(item)
    return found


def keys_in(value: Any) -> set[str]:
    """Every mapping key inside a JSON-like value."""
    found: set[str] = set()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            found.update(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found
