"""GET /v1/catalog: the games, their player ranges, options and action types."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from domain import engine
from domain.bots import levels_for
from service.api.action_event_schemas import OPTION_VALUE
from service.api.blueprint import Blueprint, games
from service.api.rate_limits import unlimited
from service.api.spec_plugin import OneOf

blp = Blueprint("catalog", __name__, url_prefix="/v1", description="The games this service offers", needs_store=False)


class PlayerRangeSchema(ma.Schema):
    min = ma.fields.Integer(required=True)
    max = ma.fields.Integer(required=True)


class OptionSchema(ma.Schema):
    name = ma.fields.String(required=True)
    description = ma.fields.String(required=True)
    default = OneOf(
        [OPTION_VALUE], required=True, allow_none=True, metadata={"description": "null: derived from players"}
    )
    choices = ma.fields.List(ma.fields.String())
    minimum = ma.fields.Integer()
    maximum = ma.fields.Integer()


class CatalogGameSchema(ma.Schema):
    id = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    players = ma.fields.Nested(PlayerRangeSchema, required=True)
    options = ma.fields.List(ma.fields.Nested(OptionSchema), required=True)
    actions = ma.fields.List(ma.fields.String(), required=True)
    bot_levels = ma.fields.List(
        ma.fields.String(),
        required=True,
        metadata={"description": "the house bot levels that play the game: the built-in ones, then the plug-ins'"},
    )


class CatalogSchema(ma.Schema):
    games = ma.fields.List(ma.fields.Nested(CatalogGameSchema), required=True)


@blp.route("/catalog")
@unlimited
@blp.doc(operationId="getCatalog")
@blp.response(200, CatalogSchema)
def catalog() -> dict[str, Any]:
    """The games: id, name, player range, options with defaults and ranges (`max_events`: the
    operator's), action types, bot levels (a plug-in's for the games it plays)."""
    limits = games().event_limits
    return {"games": [dict(game.describe(limits), bot_levels=list(levels_for(game.id))) for game in engine.all_games()]}
