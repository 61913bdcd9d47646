"""The operator's whole-number settings from the environment, read one way: ASCII digits in a range, else a
clear error naming the setting (so a process refuses to start on a typo, not later on a request)."""

from __future__ import annotations

from collections.abc import Mapping


def whole_setting(
    environ: Mapping[str, str],
    name: str,
    default: int,
    low: int = 0,
    high: int | None = None,
    unit: str = "",
    error: type[ValueError] = ValueError,
) -> int:
    """`name` from `environ` as a whole number from `low` to `high` (no bound: None), `default` when unset or
    blank; `error` (a ValueError) naming the setting otherwise. `unit`: what it counts, for the message."""
    text = environ.get(name, "").strip()
    if not text:
        return default
    if text.isascii() and text.isdigit() and low <= int(text) and (high is None or int(text) <= high):
        return int(text)
    counted = f" of {unit}" if unit else ""
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
    raise error(f"{name} must be a whole number{counted} {bounds}, not {text!r}")
