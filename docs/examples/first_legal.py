"""A bot for `python -m workers.bridge --policy first_legal:choose`: a function of the seat's view and its
legal actions, returning one of them. This one plays the first; a real bot reads `view` to choose."""

from typing import Any


def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    return legal[0]
