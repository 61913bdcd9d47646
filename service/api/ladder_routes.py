"""/v1/ladder: each game's ladder, rated from its finished matches (shared/API.md "The ladder")."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from service.api.blueprint import Blueprint, ladders
from service.api.rate_limits import READS_LIMITED

blp = Blueprint("ladder", __name__, url_prefix="/v1/ladder", description="Each game's ladder, from finished matches")


class RatingSchema(ma.Schema):
    mu = ma.fields.Float(required=True, metadata={"description": "the rating's mean (25 to start with)"})
    sigma = ma.fields.Float(required=True, metadata={"description": "its uncertainty (25/3 to start with)"})
    ordinal = ma.fields.Float(required=True, metadata={"description": "mu - 3 sigma: what the ladder is ordered by"})


class LadderEntrySchema(ma.Schema):
    entrant = ma.fields.String(required=True, metadata={"description": "a level, or `bot:<name>`"})
    rating = ma.fields.Nested(RatingSchema, required=True)
    matches = ma.fields.Integer(required=True, metadata={"description": "finished matches it played"})
    deals = ma.fields.Integer(required=True, metadata={"description": "deals it was rated on, one contest each"})
    hands = ma.fields.Integer(required=True, metadata={"description": "hands it played in those matches"})


class LadderSchema(ma.Schema):
    game = ma.fields.String(required=True)
    matches = ma.fields.Integer(required=True, metadata={"description": "the game's finished matches rated"})
    ladder = ma.fields.List(
        ma.fields.Nested(LadderEntrySchema),
        required=True,
        metadata={"description": "every entrant of a finished match, best ordinal first (equal ones by entrant)"},
    )


@blp.route("/<game>")
@blp.doc(operationId="getLadder")
@blp.response(200, LadderSchema)
@blp.problems(s404="no game with this id in the catalog (`ladder_not_found`)", s429=READS_LIMITED)
def get_ladder(game: str) -> dict[str, Any]:
    """The game's ladder: openskill's Plackett-Luce ratings, each deal of a finished match one contest in which
    the entrants rank by their deal scores (C-8), in the order the matches finished."""
    return ladders().ladder(game)
