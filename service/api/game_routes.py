"""/v1/games: create a game, view it, act in it, follow its events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import flask
import marshmallow as ma
from marshmallow import validate

from domain import engine
from domain.bots import LEVELS
from domain.bots.expert import DEFAULT_BUDGET, THINK_MS_RANGE
from service.api import action_event_schemas as typed_schemas
from service.api.action_event_schemas import game_name
from service.api.blueprint import (
    Blueprint,
    QueryInteger,
    QueryNumber,
    bearer_token,
    games,
    watchers,
)
from service.api.problems import ApiError
from service.api.rate_limits import READS_LIMITED, limit_game_creation
from service.api.spec_plugin import ETAG, LOCATION, Either, Enum, OneOf, union_of
from service.api.view_schemas import VIEW_SCHEMAS
from service.ops import metrics
from service.play.game_service import TURN_SECONDS_RANGE
from service.play.game_view import render

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Games: create, view, act, follow")

MAX_WAIT_SECONDS = 30
MAX_SEQ = 2**53 - 1  # far beyond any game; keeps `after + 1` a valid Redis stream id
GAME_ID = validate.Regexp(r"^[A-Za-z0-9_-]{1,64}$")
SEAT_KINDS = ("human", "bot")
SEED_SOURCES = ("server", "creator")
STATUSES = ("active", "finished")
ACTION_TYPES = {game.describe()["id"]: list(game.describe()["actions"]) for game in engine.all_games()}


# ---------------------------------------------------------------- schemas


class SeatRequestSchema(ma.Schema):
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(validate=validate.Length(1, 40))
    level = Enum("BotLevel", LEVELS, metadata={"description": "bots only; default greedy"})
    think_ms = ma.fields.Integer(
        strict=True,
        validate=validate.Range(*THINK_MS_RANGE),
        metadata={
            "description": f"expert bots only: time budget a move, default {DEFAULT_BUDGET.think_ms} ms; the server"
            " caps it (EXPERT_THINK_MS_MAX, default 2000 ms) and the answer's seat shows the think_ms in effect"
        },
    )

    @ma.validates_schema
    def _level_for_bots_only(self, data: dict[str, Any], **_: Any) -> None:
        if data["kind"] == "human" and "level" in data:
            raise ma.ValidationError("only a bot seat has a level", "level")
        if "think_ms" in data and data.get("level") != "expert":
            raise ma.ValidationError("only an expert bot has a time budget", "think_ms")


class CreateGameSchema(ma.Schema):
    game = ma.fields.String(required=True, metadata={"description": "a game id from the catalog"})
    seats = ma.fields.List(ma.fields.Nested(SeatRequestSchema), required=True, validate=validate.Length(1, 16))
    options = ma.fields.Dict(
        keys=ma.fields.String(),
        values=OneOf([typed_schemas.OPTION_VALUE], allow_none=True),
        load_default=dict,
        metadata={"description": "option values by name, as the catalog lists them; null: the default"},
    )
    seed = ma.fields.String(metadata={"description": "1-128 printable ASCII; omitted: the server draws one (C-4)"})
    decks = ma.fields.List(
        ma.fields.List(ma.fields.String(), validate=validate.Length(max=1000)),
        validate=validate.Length(max=20),
        metadata={"description": "stacked decks for the first rounds, top card first (C-5)"},
    )
    turn_seconds = ma.fields.Integer(
        strict=True,
        allow_none=True,
        validate=validate.Range(*TURN_SECONDS_RANGE),
        metadata={
            "description": "seconds a human seat has to act before the greedy policy plays for it; null: no timeout"
        },
    )


class SeatCreatedSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(required=True)
    level = Enum("BotLevel", LEVELS, metadata={"description": "bots only"})
    think_ms = ma.fields.Integer()
    token = ma.fields.String(metadata={"description": "humans only; shown once"})


class GameCreatedSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    rules_version = ma.fields.Integer(
        required=True, metadata={"description": "the version of the game's rules it is played under"}
    )
    version = ma.fields.Integer(required=True)
    seed_commitment = ma.fields.String(required=True)
    seed_source = Enum("SeedSource", SEED_SOURCES, required=True)
    stacked = ma.fields.Boolean(required=True)
    turn_seconds = ma.fields.Integer(required=True, allow_none=True, metadata={"description": "null: no timeout"})
    seats = ma.fields.List(ma.fields.Nested(SeatCreatedSchema), required=True)


class SeatViewSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(required=True)
    level = Enum("BotLevel", LEVELS, metadata={"description": "bots only"})
    think_ms = ma.fields.Integer()
    score = ma.fields.Integer(required=True)


class GameTyped(ma.fields.Raw):
    """A field of a frame (GameViewFrameSchema, RecordFrameSchema) that each game's schema types."""


class GameViewFrameSchema(ma.Schema):
    """The fields of every game's view, in the order of an answer; each game's own view schema types
    the game's parts (`GameTyped`), which keep their place here (see by_game)."""

    id = ma.fields.String(required=True)
    game = GameTyped()
    rules_version = ma.fields.Integer(
        required=True, metadata={"description": "the version of the game's rules it is played under"}
    )
    stacked = ma.fields.Boolean(required=True)
    status = Enum("GameStatus", STATUSES, required=True)
    version = ma.fields.Integer(required=True)
    round = ma.fields.Integer(required=True)
    phase = GameTyped()
    to_act = ma.fields.List(ma.fields.Integer(), required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatViewSchema), required=True)
    table = GameTyped()
    you = GameTyped()
    actions = GameTyped()
    result = GameTyped()
    turn_seconds = ma.fields.Integer(required=True, allow_none=True, metadata={"description": "null: no timeout"})


def game_view_fields(game: engine.Game[Any], full: bool = False) -> dict[str, ma.fields.Field[Any]]:
    """What a game's view types beyond the frame: its id, phases, action types, table, you and result;
    `full`: the table may be the full one, every card (a finished game's replay)."""
    parts = VIEW_SCHEMAS[game.id]
    table: ma.fields.Field[Any] = ma.fields.Nested(parts.table, required=True, metadata={"description": "public"})
    if full:
        table = Either(
            [parts.full_table, parts.table],
            required=True,
            metadata={"description": "public; in a finished game's replay without a token, every card"},
        )
    return {
        "game": ma.fields.String(required=True, validate=validate.OneOf([game.id])),
        "phase": ma.fields.String(required=True, validate=validate.OneOf(parts.phases)),
        "actions": ma.fields.List(
            ma.fields.String(validate=validate.OneOf(ACTION_TYPES[game.id])),
            required=True,
            metadata={"description": "the action types the seat may send now"},
        ),
        "table": table,
        "you": ma.fields.Nested(
            parts.you, metadata={"description": "the seat's own view, with `legal`: every action it may send now"}
        ),
        "result": ma.fields.Nested(
            parts.result, required=True, allow_none=True, metadata={"description": "when finished: totals, winners"}
        ),
    }


class ByGame(ma.Schema):
    """An answer that one schema a game types: dumped through its game's schema (which keeps the
    declared fields only) and documented as their oneOf, told apart by `game`."""

    variants: ClassVar[dict[str, type[ma.Schema]]] = {}
    _dumpers: ClassVar[dict[str, ma.Schema]]

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        if self.many if many is None else many:
            return [self.dump(one, many=False) for one in obj]
        dumpers = type(self).__dict__.get("_dumpers")
        if dumpers is None:
            dumpers = {game: schema() for game, schema in self.variants.items()}
            type(self)._dumpers = dumpers
        return dumpers[obj["game"]].dump(obj)

    @classmethod
    def openapi_schema(cls, converter: Any) -> dict[str, Any]:
        """oneOf the games' schemas with a discriminator on `game`."""
        return union_of(converter, cls.variants, "game")


def by_game(
    frame: type[ma.Schema], suffix: str, fields: Callable[[engine.Game[Any]], dict[str, ma.fields.Field[Any]]]
) -> dict[str, type[ma.Schema]]:
    """One schema a game: `frame`'s fields and the game's own `fields` (e.g. GolfGameView); a field the
    frame holds as GameTyped keeps its place, so every game's answer has the frame's order."""
    games = engine.all_games()
    variants = {game.id: frame.from_dict(fields(game), name=f"{game_name(game)}{suffix}") for game in games}
    for name, variant in variants.items():
        untyped = [key for key, field in variant._declared_fields.items() if isinstance(field, GameTyped)]
        assert not untyped, f"{name}'s {suffix} leaves {untyped} untyped"
    return variants


def full_view_fields(game: engine.Game[Any]) -> dict[str, ma.fields.Field[Any]]:
    """A view's fields where the table may be the full one (a finished game's replay)."""
    return game_view_fields(game, full=True)


class GameViewSchema(ByGame):
    variants = by_game(GameViewFrameSchema, "GameView", game_view_fields)


class ActionSchema(ma.Schema):
    """One action, loaded loosely: the game's parse_action checks it with its own problem codes.

    Documented as the typed union of every game's actions (service/api/action_event_schemas.py).
    """

    type = ma.fields.String(required=True)
    expected_version = ma.fields.Integer(strict=True, validate=validate.Range(min=0))
    positions = ma.fields.List(ma.fields.Integer(strict=True))
    position = ma.fields.Integer(strict=True)
    flip = ma.fields.Integer(strict=True, allow_none=True)
    card = ma.fields.String()
    cards = ma.fields.List(ma.fields.String())
    meld = ma.fields.Raw(metadata={"description": "a meld id, or {kind, cards}"})
    kind = ma.fields.String()
    end = ma.fields.String()
    suit = ma.fields.String()
    set = ma.fields.Integer(strict=True)
    from_seat = ma.fields.Integer(strict=True)
    take = ma.fields.String()
    give = ma.fields.String()
    then = ma.fields.Dict()
    by = ma.fields.String()

    class Meta:
        include: ClassVar[dict[str, Any]] = {"from": ma.fields.String(metadata={"description": "where to draw from"})}

    @staticmethod
    def openapi_schema(converter: Any) -> dict[str, Any]:
        """The anyOf of every game's actions."""
        return typed_schemas.action_body()


def event_records(**kwargs: Any) -> ma.fields.Field[Any]:
    """A list of event records of any game (EventRecord, their anyOf), dumped as stored."""
    return ma.fields.List(OneOf([typed_schemas.EVENT_RECORD]), **kwargs)


class ActionResultSchema(ma.Schema):
    version = ma.fields.Integer(required=True)
    events = event_records(required=True)
    state = ma.fields.Nested(GameViewSchema, required=True)


class EventsQuerySchema(ma.Schema):
    after = QueryInteger(load_default=0, validate=validate.Range(min=0, max=MAX_SEQ))
    wait = QueryNumber(load_default=0, validate=validate.Range(min=0, max=MAX_WAIT_SECONDS))


class EventsSchema(ma.Schema):
    events = event_records(required=True)


# ---------------------------------------------------------------- routes

GAME_ID_FROM_BODY = {"game_id": "$response.body#/id"}
GAME_LINKS = {
    name: {"operationId": operation, "parameters": GAME_ID_FROM_BODY, "description": text}
    for name, operation, text in (
        ("GetGame", "getGame", "the new game's view"),
        ("PostAction", "postAction", "an action in the new game"),
        ("GetEvents", "getEvents", "the new game's events"),
        ("GetReplay", "getReplay", "the new game at a step"),
        ("GetRecord", "getRecord", "the new game's record"),
        ("GetAudit", "getAudit", "the new game's audit"),
    )
}


CREATE_EXAMPLE = {
    "game": "golf",
    "seats": [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "expert"}],
    "options": {"rounds": 1},
}
"""A request that creates a game: shown in the API document and tried by its contract tests."""


@blp.route("", methods=["POST"])
@blp.arguments(CreateGameSchema, example=CREATE_EXAMPLE)
@blp.response(201, GameCreatedSchema)
@blp.doc(operationId="createGame", responses={201: {"links": GAME_LINKS, "headers": {"Location": LOCATION}}})
@blp.problems(
    s400="malformed request, unknown game or card, bad option",
    s413="request body over 64 KiB",
    s415="the body is not application/json",
    s422="the rules refuse this setup (player count)",
    s429="this client created too many games this minute (`rate_limited`); `Retry-After` says when to retry",
    s503="the event store cannot be reached",
)
def create_game(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Create a game; it starts at once, and bots act through the job queue."""
    limit_game_creation()
    created = games().create_game(
        body["game"], body["seats"], body["options"], body.get("seed"), body.get("decks", ()), body.get("turn_seconds")
    )
    return created, 201, {"Location": f"/v1/games/{created['id']}"}


@blp.route("/<game_id>")
@blp.doc(operationId="getGame", security=[{}, {"seatToken": []}], responses={200: {"headers": {"ETag": ETAG}}})
@blp.response(200, GameViewSchema)
@blp.problems(
    s429=READS_LIMITED,
    s401="a token that is not this game's",
    s404="no such game",
    s503="the event store cannot be reached",
)
def get_game(game_id: str) -> tuple[dict[str, Any], int, dict[str, str]]:
    """The caller's view: a seat's with its token, else the spectator's (C-6)."""
    loaded = games().repository.load(checked_id(game_id))
    token = bearer_token()
    seat = loaded.seat_for_token(token) if token else None
    return render(loaded, loaded.snap, seat), 200, {"ETag": f'"{loaded.version}"'}


@blp.route("/<game_id>/actions", methods=["POST"])
@blp.doc(
    operationId="postAction",
    security=[{"seatToken": []}],
    responses={409: {"headers": {"ETag": ETAG}}},
    parameters=[
        {
            "in": "header",
            "name": "Idempotency-Key",
            "schema": {"type": "string", "maxLength": 200},
            "description": "a retry with the same key and body returns the first answer and appends nothing",
        },
        {
            "in": "header",
            "name": "If-Match",
            "schema": {"type": "string"},
            "description": 'the expected version in quotes, like "12" (same as expected_version)',
        },
    ],
)
@blp.arguments(ActionSchema())  # an instance: a class would be instantiated on every request
@blp.response(200, ActionResultSchema)
@blp.problems(
    s400="malformed action, unknown card or action type",
    s413="request body over 64 KiB",
    s415="the body is not application/json",
    s401="no valid token for this game",
    s404="no such game",
    s409="expected_version / If-Match no longer current",
    s422="the rules refuse it; `rule` names the rule",
    s503="the event store cannot be reached; nothing was written",
)
def post_action(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """One action for the token's seat; `Idempotency-Key` makes retries safe."""
    game_id = checked_id(game_id)
    token = bearer_token()  # none: act says 401 once it knows the game (404 first)
    expected = _expected_version(body.pop("expected_version", None))
    return games().act(game_id, token, body, expected, _idempotency_key())


@blp.route("/<game_id>/events")
@blp.doc(operationId="getEvents")
@blp.arguments(EventsQuerySchema(), location="query")
@blp.response(200, EventsSchema)
@blp.problems(
    s429=READS_LIMITED,
    s400="bad query",
    s404="no such game",
    s503="the event store cannot be reached",
)
def get_events(query: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Public events with seq > after; with `wait` the call blocks until one exists."""
    game_id = checked_id(game_id)
    games().repository.require_game(game_id)
    if not query["wait"]:
        return {"events": watchers().wait(game_id, query["after"], 0)}
    with metrics.watching("longpoll"):
        return {"events": watchers().wait(game_id, query["after"], query["wait"])}


# ---------------------------------------------------------------- helpers


def checked_id(game_id: str) -> str:
    try:
        GAME_ID(game_id)
    except ma.ValidationError:
        raise ApiError(404, "game_not_found", "no game with that id") from None
    return game_id


def _expected_version(from_body: int | None) -> int | None:
    header = flask.request.headers.get("If-Match")
    if header is None:
        return from_body
    text = header.strip().removeprefix("W/").strip('"')
    if not text.isdigit() or len(text) > 18:
        raise ApiError(400, "invalid_request", 'If-Match must be a version in quotes, like "12"')
    version = int(text)
    if from_body is not None and from_body != version:
        raise ApiError(400, "invalid_request", "If-Match and expected_version disagree")
    return version


def _idempotency_key() -> str | None:
    key = flask.request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= 200:
        raise ApiError(400, "invalid_request", "Idempotency-Key must be 1 to 200 characters")
    return key
