"""Per-game schemas of a view's game-specific parts: `table`, `you` and `result`.

One module per game (service/view_schemas/<game>.py) declares them; `VIEW_SCHEMAS` maps each game
id of the catalog to its three. The game-independent frame of a view (id, seats, version, ...)
stays in service/games_api.py, which builds one view schema per game from these.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import marshmallow as ma

from domain import engine
from service.contract import OneOf
from service.typed_schemas import game_action_schema_name


@dataclasses.dataclass(frozen=True)
class ViewSchemas:
    """The schemas of one game's `table` (public), `you` (one seat's own) and `result` (once finished)."""

    table: type[ma.Schema]
    you: type[ma.Schema]
    result: type[ma.Schema]


def legal_actions_field(game: str) -> ma.fields.Field[Any]:
    """The `legal` list of a seat's view: every concrete action of `game` the seat may send now
    (`<Game>Action`), dumped as the game lists them."""
    return ma.fields.List(OneOf([game_action_schema_name(engine.get_game(game))]), required=True)


class _FreeForm(ma.Schema):
    """A placeholder until the game's module declares the part: any object, dumped as it is."""

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        return obj

    @staticmethod
    def openapi_schema(converter: Any) -> dict[str, Any]:
        return {"type": "object"}


def _free_form(game: str, part: str) -> type[ma.Schema]:
    """A placeholder: any object (until the game's module declares the part)."""
    return _FreeForm.from_dict({}, name=f"{game.capitalize()}{part}")


VIEW_SCHEMAS: dict[str, ViewSchemas] = {
    game.describe()["id"]: ViewSchemas(
        *(_free_form(game.describe()["id"], part) for part in ("Table", "You", "Result"))
    )
    for game in engine.all_games()
}
