"""The presenter: a game as the API shows it to a seat or a spectator."""

from __future__ import annotations

from typing import Any

from domain import engine
from service.play.loaded_game import LoadedGame


def render(
    loaded: LoadedGame, snap: engine.Snapshot[Any], seat: int | None, reveal_all: bool = False
) -> dict[str, Any]:
    """The view of `loaded` at `snap` for a seat or a spectator (None); with `reveal_all`, every card
    (a finished game)."""
    view = engine.full_view(snap) if reveal_all else engine.view(snap, seat)
    view.pop("options")  # the game's options are in its record and its creation answer
    scores = view.pop("scores")
    seats = [dict(s.public(), score=scores[s.seat]) for s in loaded.seats]
    game = {"id": loaded.id, "game": loaded.config.game, "stacked": loaded.config.stacked}
    place = {"match": loaded.place.public()} if loaded.place is not None else {}
    return {**game, **view, "seats": seats, "turn_seconds": loaded.turn_seconds, **place}
