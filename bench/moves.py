"""Golf moves for the bench's clients, read from a game's public table (any seat's view will do).

`play` is the simple strategy of docs/playing.md: reveal two cards, then draw and discard, turning up a card,
so rounds end and the game goes on to the next one. `stall` swaps the top discard into a face-up
place: one event a turn and a round that never ends, to make long games quickly.
"""

from __future__ import annotations

from typing import Any

GOLF_GAME: dict[str, Any] = {"game": "golf", "options": {"rounds": 18}, "seats": [{"kind": "human"}, {"kind": "human"}]}


def _slots(view: dict[str, Any], seat: int, state: str) -> list[int]:
    return [i for i, slot in enumerate(view["table"]["grids"][seat]["slots"]) if slot["state"] == state]


def play(view: dict[str, Any], seat: int | None = None) -> tuple[int, dict[str, Any]]:
    """The seat to act (`seat`, else the first of those to act) and its action."""
    seat = int(view["to_act"][0]) if seat is None else seat
    down = _slots(view, seat, "down")
    if view["phase"] == "setup":
        return seat, {"type": "reveal", "positions": down[:2]}
    if view["table"]["drawn_by"] == seat:
        return seat, {"type": "discard", "flip": down[0] if down else None}
    return seat, {"type": "draw", "from": "stock"}


def stall(view: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The seat to act and an action that keeps the round going."""
    seat = int(view["to_act"][0])
    if view["phase"] == "setup":
        return seat, {"type": "reveal", "positions": _slots(view, seat, "down")[:2]}
    return seat, {"type": "take_discard", "position": _slots(view, seat, "up")[0]}
