"""/v1/matches: matches on duplicate deals (C-8): start one, follow it, list them, download its record."""

from __future__ import annotations

import re
from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from service.api.blueprint import Blueprint, QueryNumber, matches
from service.api.rate_limits import READS_LIMITED, client_address_of
from service.api.spec_plugin import Enum, Verbatim
from service.play.errors import MatchNotFound
from service.play.matches import PAGE_MAX

blp = Blueprint("matches", __name__, url_prefix="/v1/matches", description="Matches on duplicate deals (C-8)")
MATCHES_PAGE = 20
MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MATCH_STATUSES = ("running", "finished")


class EntrantSchema(ma.Schema):
    level = ma.fields.String(metadata={"description": "a house level (or a plug-in's), as the catalog lists them"})
    bot = ma.fields.String(metadata={"description": "a registered bot's name"})


class MatchRequestSchema(ma.Schema):
    game = ma.fields.String(required=True, metadata={"description": "a game id from the catalog"})
    options = ma.fields.Dict(keys=ma.fields.String(), load_default=dict, metadata={"description": "the games' options"})
    entrants = ma.fields.List(
        ma.fields.Nested(EntrantSchema),
        required=True,
        validate=validate.Length(1, 16),
        metadata={"description": "as many as the game's seats, 2 or more; each names a `level` or a `bot`"},
    )
    deals = ma.fields.Integer(required=True, strict=True, metadata={"description": "deals to play, 1 to 1000"})
    seed = ma.fields.String(metadata={"description": "the match's seed, 1-128 printable ASCII; omitted: drawn"})


class PairedSchema(ma.Schema):
    vs = ma.fields.String(required=True)
    mean = ma.fields.Float(required=True, metadata={"description": "the entrant's deal score minus vs's, on average"})
    ci95 = ma.fields.List(
        ma.fields.Float(), required=True, allow_none=True, metadata={"description": "95% interval; null: one deal"}
    )


class ResultSchema(ma.Schema):
    entrant = ma.fields.String(required=True, metadata={"description": "a level, or `bot:<name>`"})
    hands = ma.fields.Integer(required=True)
    mean_points_per_hand = ma.fields.Float(required=True, allow_none=True)
    paired = ma.fields.List(ma.fields.Nested(PairedSchema), required=True)
    timeouts = ma.fields.Integer(
        metadata={
            "description": "moves the service played for the entrant at its deadline (a registered bot's timeouts, "
            "counted as its moves); absent from a match that finished before they were counted"
        }
    )


class ProgressSchema(ma.Schema):
    games_finished = ma.fields.Integer(required=True)
    games_total = ma.fields.Integer(required=True)


class MatchGameSchema(ma.Schema):
    deal = ma.fields.Integer(required=True)
    rotation = ma.fields.Integer(required=True)
    game_id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.String(), required=True, metadata={"description": "the entrants, by seat"})


class MatchSummarySchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    options = ma.fields.Dict(required=True)
    entrants = ma.fields.List(ma.fields.Nested(EntrantSchema), required=True)
    deals = ma.fields.Integer(required=True)
    games_total = ma.fields.Integer(required=True)
    status = Enum("MatchStatus", MATCH_STATUSES, required=True)
    better = ma.fields.String(required=True, metadata={"description": "`lower` or `higher` points are better (C-7)"})
    progress = ma.fields.Nested(ProgressSchema, required=True)
    results = ma.fields.List(ma.fields.Nested(ResultSchema), required=True, metadata={"description": "once finished"})
    seed_commitment = ma.fields.String(required=True)
    created_at = ma.fields.String(required=True)
    finished_at = ma.fields.String()
    seed = ma.fields.String(metadata={"description": "once the match has finished"})
    nonce = ma.fields.String(metadata={"description": "once the match has finished"})


class MatchSchema(MatchSummarySchema):
    games = Verbatim(ma.fields.Nested(MatchGameSchema), required=True)


class MatchRecordSchema(MatchSchema):
    format = ma.fields.String(required=True, metadata={"description": "cardtable-match/1"})
    records = ma.fields.List(
        ma.fields.Dict(), required=True, metadata={"description": "every game's record, as GET .../record gives it"}
    )


class MatchesQuerySchema(ma.Schema):
    before = QueryNumber(metadata={"description": "list the matches created before this cursor (a page's `next`)"})
    limit = ma.fields.Integer(load_default=MATCHES_PAGE, validate=validate.Range(1, PAGE_MAX))


class MatchesPageSchema(ma.Schema):
    matches = ma.fields.List(ma.fields.Nested(MatchSummarySchema), required=True)
    next = ma.fields.String(required=True, allow_none=True, metadata={"description": "the next page; null: the last"})


EXAMPLE = {
    "game": "golf",
    "options": {"rounds": 1},
    "entrants": [{"level": "greedy"}, {"level": "expert"}],
    "deals": 20,
}


@blp.route("", methods=["POST"])
@blp.arguments(MatchRequestSchema, example=EXAMPLE)
@blp.response(201, MatchSchema)
@blp.doc(
    operationId="createMatch",
    responses={201: {"headers": {"Location": {"description": "the match", "schema": {"type": "string"}}}}},
)
@blp.problems(
    s400="malformed request",
    s422="a wrong number of entrants, an unknown entrant or one twice, a bot not registered for the game, bad "
    "options, deals outside 1-1000 (`invalid_match`, naming the field)",
    s429="this client runs its most matches (`rate_limited`); `Retry-After` says when to retry",
    s503="the event store cannot be reached; or the service runs its most matches (`matches_full`)",
)
def create_match(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Start a match: `deals` x entrants games, each deal played with the entrants rotated (C-8)."""
    created = matches().create(
        body["game"],
        body["entrants"],
        body["deals"],
        body["options"],
        body.get("seed"),
        client_address_of(flask.request),
    )
    return created, 201, {"Location": f"/v1/matches/{created['id']}"}


@blp.route("")
@blp.doc(operationId="listMatches")
@blp.arguments(MatchesQuerySchema(), location="query")
@blp.response(200, MatchesPageSchema)
@blp.problems(s400="bad query", s429=READS_LIMITED)
def list_matches(query: dict[str, Any]) -> dict[str, Any]:
    """The matches, newest first, a page at a time (without their games)."""
    found, before = matches().page(query.get("before"), query["limit"])
    following = f"/v1/matches?before={before:.0f}&limit={query['limit']}" if before is not None else None
    return {"matches": found, "next": following}


@blp.route("/<match_id>")
@blp.doc(operationId="getMatch")
@blp.response(200, MatchSchema)
@blp.problems(s404="no such match (`match_not_found`)", s429=READS_LIMITED)
def get_match(match_id: str) -> dict[str, Any]:
    """The match: its progress, its games, its results (and its seed and nonce) once finished."""
    return matches().view(_checked(match_id))


@blp.route("/<match_id>/record")
@blp.doc(operationId="getMatchRecord")
@blp.response(200, MatchRecordSchema)
@blp.problems(
    s403="the match is still being played (`deal_in_play`); `Retry-After` says when to ask again",
    s404="no such match (`match_not_found`)",
    s429=READS_LIMITED,
)
def get_match_record(match_id: str) -> dict[str, Any]:
    """The match record: everything to check the match offline (`make verify RECORD=match.json`)."""
    return matches().record(_checked(match_id))


def _checked(match_id: str) -> str:
    """The match id of a path; 404 for one that no match can have."""
    if not MATCH_ID.fullmatch(match_id):
        raise MatchNotFound(match_id)
    return match_id
