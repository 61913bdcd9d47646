"""Per-game schemas of a view's game-specific parts: `table`, `you`, `result` and the full table.

A game may declare them in a module of its own, service/api/view_schemas/<game id>.py, as
`VIEWS = ViewSchemas(...)`; `view_schemas(game)` gives that module's `VIEWS`, or for a game without one
`AS_GIVEN`: its parts dumped as the game's views give them (which keep C-6 themselves) and documented
as objects. The game-independent frame
of a view (id, seats, version, ...) is in service/api/shared_schemas.py, which builds one view schema per
game from these. Shared fields (card codes, seats, counts, the result) are in `fields`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
from collections.abc import Iterator, Mapping
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


class AsGiven(ma.Schema):
    """A view part of a game without view schemas of its own: dumped as the game gives it (a copy),
    documented as an object."""

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        if self.many if many is None else many:
            return [dict(one) for one in obj]
        return dict(obj)

    @staticmethod
    def openapi_schema(converter: Any) -> dict[str, Any]:
        """Any object: the game declares no schema of its parts."""
        return {"type": "object", "description": "as the game gives it (it declares no view schema)"}


AS_GIVEN = ViewSchemas(table=AsGiven, you=AsGiven, result=AsGiven, full_table=AsGiven, phases=())
"""The view parts of a game that declares none: `phases` () for any phase."""


@functools.cache
def view_schemas(game: engine.Game[Any]) -> ViewSchemas:
    """The `VIEWS` of the game's own module in this package, or AS_GIVEN when it has none."""
    name = f"{__name__}.{game.id}"
    if importlib.util.find_spec(name) is None:
        return AS_GIVEN
    views = importlib.import_module(name).VIEWS
    assert isinstance(views, ViewSchemas), f"{name}.VIEWS is not a ViewSchemas"
    return views


class _ByGameId(Mapping[str, ViewSchemas]):
    """Every registered game's view schemas, by game id (the registry at the time of asking)."""

    def __getitem__(self, game_id: str) -> ViewSchemas:
        game = engine.registered(game_id)
        if game is None:
            raise KeyError(game_id)
        return view_schemas(game)

    def __iter__(self) -> Iterator[str]:
        return iter([game.id for game in engine.all_games()])

    def __len__(self) -> int:
        return len(engine.all_games())


VIEW_SCHEMAS: Mapping[str, ViewSchemas] = _ByGameId()
