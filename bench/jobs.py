"""The no-op RQ job of the bot figure's floor."""

from __future__ import annotations


def noop() -> None:
    """Do nothing: what is left is RQ's own cost of a job."""
    return None
