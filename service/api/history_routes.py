"""Replay, record, audit and disputes: /v1/games/{id}/replay|record|audit|disputes."""

from __future__ import annotations

from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from domain import engine
from service.api.action_event_schemas import event_record_schema_name, game_name
from service.api.blueprint import (
    Blueprint,
    ProblemSchema,
    QueryInteger,
    bearer_token,
    checked_id,
    required_bearer_token,
)
from service.api.problems import problem_of_data
from service.api.rate_limits import READS_LIMITED
from service.api.shared_schemas import (
    DEAL_IN_PLAY,
    MATCH_PLACE,
    MAX_SEQ,
    SEED_SOURCES,
    STATUSES,
    ByGame,
    GameTyped,
    GameViewFrameSchema,
    MatchPlaceSchema,
    SeatCreatedSchema,
    by_game,
    full_view_fields,
)
from service.api.spec_plugin import Enum, OneOf
from service.api.view_schemas import fields as view_fields
from service.play.game_history import DISPUTES_PAGE, DISPUTES_PAGE_MAX, DisputePage, GameHistory

blp = Blueprint("history", __name__, url_prefix="/v1/games", description="Replay, records, audits and disputes")


def history() -> GameHistory:
    """The app's GameHistory."""
    found: GameHistory = flask.current_app.extensions["history"]
    return found


class ReplayQuerySchema(ma.Schema):
    at = QueryInteger(validate=validate.Range(min=0, max=MAX_SEQ), metadata={"description": "default: latest"})


class ReplayFrameSchema(GameViewFrameSchema):
    at = ma.fields.Integer(required=True)


class ReplaySchema(ByGame):
    variants = by_game(ReplayFrameSchema, "Replay", full_view_fields)


class RecordFrameSchema(ma.Schema):
    """What every game's record holds; each game's (e.g. GolfRecord) types its events."""

    format = ma.fields.String(
        required=True,
        metadata={"description": "cardtable-record/2; cardtable-record/1 for a game made before the nonce"},
    )
    id = ma.fields.String(required=True)
    game = GameTyped()
    rules_version = ma.fields.Integer(
        metadata={"description": "the version of the game's rules it was played under; missing: 1"}
    )
    options = GameTyped()
    seats = ma.fields.List(ma.fields.Nested(SeatCreatedSchema), required=True)
    stacked = ma.fields.Boolean(required=True)
    seed_commitment = ma.fields.String(required=True)
    seed_source = Enum("SeedSource", SEED_SOURCES, required=True)
    status = Enum("GameStatus", STATUSES, required=True)
    version = ma.fields.Integer(required=True)
    turn_seconds = ma.fields.Integer(required=True, allow_none=True, metadata={"description": "null: no timeout"})
    seed = ma.fields.String(metadata={"description": "only once the game has ended"})
    nonce = ma.fields.String(
        metadata={"description": "only once the game has ended; none in a game made before the nonce (C-4)"}
    )
    decks = ma.fields.List(ma.fields.List(ma.fields.String()), metadata={"description": "stacked decks, once ended"})
    match = ma.fields.Nested(MatchPlaceSchema, metadata=MATCH_PLACE)
    events = GameTyped()


def options_schema(game: engine.Game[Any]) -> type[ma.Schema]:
    """`<Game>Options`: every option of the game with its value, as the catalog bounds it."""
    fields = {spec.name: view_fields.option(game, spec.name) for spec in game.options}
    return ma.Schema.from_dict(fields, name=f"{game_name(game)}Options")


def record_fields(game: engine.Game[Any]) -> dict[str, ma.fields.Field[Any]]:
    """A game's record: its id, its options (`<Game>Options`, dumped as stored) and its events told
    apart by `type` (`<Game>EventRecord`)."""
    return {
        "game": ma.fields.String(required=True, validate=validate.OneOf([game.id])),
        "options": OneOf([options_schema(game)], required=True, metadata={"description": "every option's value"}),
        "events": ma.fields.List(OneOf([event_record_schema_name(game)]), required=True),
    }


class RecordSchema(ByGame):
    """The record: oneOf the games' records, by `game`."""

    variants = by_game(RecordFrameSchema, "Record", record_fields)


class VerdictSchema(ma.Schema):
    chain_ok = ma.fields.Boolean(required=True)
    replay_ok = ma.fields.Boolean(required=True, allow_none=True)
    first_bad_seq = ma.fields.Integer(required=True, allow_none=True)
    complete = ma.fields.Boolean(required=True)
    detail = ma.fields.String(required=True)


class DisputeRequestSchema(ma.Schema):
    seq = ma.fields.Integer(required=True, strict=True, validate=validate.Range(min=0, max=MAX_SEQ))
    reason = ma.fields.String(required=True, validate=validate.Length(1, 2000))


class DisputeSchema(ma.Schema):
    id = ma.fields.String(required=True)
    number = ma.fields.Integer(required=True, metadata={"description": "the dispute's number in its game, from 1"})
    seat = ma.fields.Integer(required=True)
    seq = ma.fields.Integer(required=True)
    reason = ma.fields.String(required=True)
    at = ma.fields.String(required=True)
    verdict = ma.fields.Nested(
        VerdictSchema, required=True, metadata={"description": "the audit of the stored game when it was filed"}
    )
    event_ok = ma.fields.Boolean(
        required=True, metadata={"description": "the audit found nothing wrong up to seq when it was filed"}
    )


class StepViewSchema(ByGame):
    """The game after one event, as the caller may see it (a replay's view without `at`)."""

    variants = by_game(GameViewFrameSchema, "StepView", full_view_fields)


class ViewErrorSchema(ma.Schema):
    """Why the stored events cannot give the game at a step (damaged before it, or the event is gone)."""

    error = ma.fields.Nested(ProblemSchema, required=True)


class DisputeReviewSchema(DisputeSchema):
    before = OneOf(
        [StepViewSchema, ViewErrorSchema],
        required=True,
        allow_none=True,
        metadata={"description": "the game after seq - 1; null for the first event"},
    )
    after = OneOf([StepViewSchema, ViewErrorSchema], required=True, metadata={"description": "the game after seq"})


class DisputesQuerySchema(ma.Schema):
    after = QueryInteger(
        load_default=0,
        validate=validate.Range(min=0, max=MAX_SEQ),
        metadata={"description": "list the disputes numbered after this one"},
    )
    limit = QueryInteger(
        load_default=DISPUTES_PAGE,
        validate=validate.Range(min=1, max=DISPUTES_PAGE_MAX),
        metadata={"description": f"disputes a page, default {DISPUTES_PAGE}"},
    )


class DisputesSchema(ma.Schema):
    disputes = ma.fields.List(ma.fields.Nested(DisputeReviewSchema), required=True)
    next = ma.fields.String(
        required=True, allow_none=True, metadata={"description": "the path of the next page; null on the last page"}
    )


@blp.route("/<game_id>/replay")
@blp.doc(operationId="getReplay", security=[{}, {"seatToken": []}])
@blp.arguments(ReplayQuerySchema, location="query")
@blp.response(200, ReplaySchema)
@blp.problems(
    s429=READS_LIMITED,
    s400="bad query",
    s401="a token that is not this game's",
    s403="no seat's token, and " + DEAL_IN_PLAY,
    s404="no such game",
    s422="no such event",
)
def get_replay(query: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The game after event `at`: the seat's view with a token; else the spectator view, or all once finished."""
    return history().replay(checked_id(game_id), query.get("at"), bearer_token())


@blp.route("/<game_id>/record")
@blp.doc(operationId="getRecord")
@blp.response(200, RecordSchema)
@blp.problems(s429=READS_LIMITED, s403=DEAL_IN_PLAY, s404="no such game")
def get_record(game_id: str) -> dict[str, Any]:
    """The portable game record (the seed only once the game has ended)."""
    return history().record(checked_id(game_id))


@blp.route("/<game_id>/audit")
@blp.doc(operationId="getAudit")
@blp.response(200, VerdictSchema)
@blp.problems(s429=READS_LIMITED, s404="no such game")
def get_audit(game_id: str) -> dict[str, Any]:
    """Re-check the stored game from scratch: hash chain, deals, every action, every score."""
    return history().audit(checked_id(game_id))


@blp.route("/<game_id>/disputes", methods=["POST"])
@blp.doc(operationId="createDispute", security=[{"seatToken": []}])
@blp.arguments(DisputeRequestSchema)
@blp.response(201, DisputeSchema)
@blp.problems(
    s400="malformed",
    s401="no valid token",
    s404="no such game",
    s422="no such event (`event_out_of_range`), or the seat has filed its most disputes (`too_many_disputes`)",
    s503="the event store cannot be reached; nothing was written",
)
def post_dispute(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """A seat disputes one event; the dispute is kept beside the game, never in its stream."""
    token = required_bearer_token("a dispute")
    return history().file_dispute(checked_id(game_id), token, body["seq"], body["reason"])


@blp.route("/<game_id>/disputes")
@blp.doc(operationId="getDisputes", security=[{}, {"seatToken": []}])
@blp.arguments(DisputesQuerySchema(), location="query")
@blp.response(200, DisputesSchema)
@blp.problems(
    s429=READS_LIMITED,
    s400="bad query",
    s401="a token that is not this game's",
    s404="no such game",
)
def get_disputes(query: dict[str, Any], game_id: str) -> dict[str, Any]:
    """A page of disputes, each with its verdict from when it was filed and the game just before and after its event."""
    game_id = checked_id(game_id)
    return listed_page(
        game_id, history().disputes(game_id, bearer_token(), query["after"], query["limit"]), query["limit"]
    )


def listed_page(game_id: str, page: DisputePage, limit: int) -> dict[str, Any]:
    """A page of disputes as the API lists it: a view that the stored events cannot give with its
    refusal as a problem, and `next` as the path of the next page (null on the last)."""
    after = page.next_after
    return {
        "disputes": [
            {**dispute, "before": _shown(dispute["before"]), "after": _shown(dispute["after"])}
            for dispute in page.disputes
        ],
        "next": None if after is None else f"/v1/games/{game_id}/disputes?after={after}&limit={limit}",
    }


def _shown(view: dict[str, Any] | None) -> dict[str, Any] | None:
    """A step's view as listed; `{"error": <refusal as data>}` with its problem document instead."""
    if view is None or set(view) != {"error"}:
        return view
    return {"error": problem_of_data(view["error"])}
