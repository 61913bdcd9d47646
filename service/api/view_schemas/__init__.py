"""Per-game schemas of a view's game-specific parts: `table`, `you`, `result` and the full table.

One module per game, service/api/view_schemas/<game id>.py, declares them as `VIEWS = ViewSchemas(...)`;
`VIEW_SCHEMAS` maps each game id of the catalog to its module's `VIEWS`. The game-independent frame
of a view (id, seats, version, ...) is in service/api/shared_schemas.py, which builds one view schema per
game from these. Shared fields (card codes, seats, counts, the result) are in `fields`.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import marshmallow as ma

from domain import engine
from service.api.action_event_schemas import game_action_schema_name
from service.api.spec_plugin import OneOf


@dataclasses.dataclass(frozen=True)
class ViewSchemas:
    """The schemas of one game's view parts.

    `table`: the public table (`engine.view`); `you`: one seat's own view, `legal` included;
    `result`: the result once finished (or abandoned); `full_table`: the table of `engine.full_view`,
    every hand and the stock in order (a finished game's replay); `phases`: every value of `phase`.
    """

    table: type[ma.Schema]
    you: type[ma.Schema]
    result: type[ma.Schema]
    full_table: type[ma.Schema]
    phases: tuple[str, ...]


def legal_actions_field(game: str) -> ma.fields.Field[Any]:
    """The `legal` list of a seat's view: every concrete action of `game` the seat may send now
    (`<Game>Action`), dumped as the game lists them."""
    return ma.fields.List(OneOf([game_action_schema_name(engine.get_game(game))]), required=True)


def _declared(game_id: str) -> ViewSchemas:
    """The `VIEWS` of the game's module."""
    views = importlib.import_module(f"{__name__}.{game_id}").VIEWS
    assert isinstance(views, ViewSchemas), f"{__name__}.{game_id}.VIEWS is not a ViewSchemas"
    return views


VIEW_SCHEMAS: dict[str, ViewSchemas] = {game.id: _declared(game.id) for game in engine.all_games()}
