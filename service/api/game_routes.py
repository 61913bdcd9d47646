"""/v1/games: create a game, view it, act in it, follow its events."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from domain import engine
from domain.bots.expert import THINK_MS_RANGE, default_budget
from domain.options import CARD, CARD_LIST, INT, INT_LIST, OBJECT, TEXT, FieldSpec
from service.api import action_event_schemas as typed_schemas
from service.api.blueprint import (
    Blueprint,
    QueryInteger,
    QueryNumber,
    bearer_token,
    bots,
    checked_id,
    games,
    matches,
    repository,
    watchers,
)
from service.api.followers import FOLLOWERS_FULL
from service.api.problems import ApiError
from service.api.rate_limits import READS_LIMITED, client_address_of, expert_games, limit_game_creation
from service.api.shared_schemas import (
    DEAL_IN_PLAY,
    MAX_SEQ,
    SEAT_KINDS,
    SEED_SOURCES,
    GameViewSchema,
    SeatCreatedSchema,
    bot_level,
)
from service.api.spec_plugin import ETAG, LOCATION, Enum, OneOf
from service.ops import metrics
from service.play import seats as seat_kinds
from service.play.errors import GameNotFound
from service.play.game_service import TURN_SECONDS_RANGE
from service.play.game_view import render

blp = Blueprint("games", __name__, url_prefix="/v1/games", description="Games: create, view, act, follow")

MAX_WAIT_SECONDS = 30
# Events a page, by default and at most: one page is at most about 300 KB of JSON and a few tens of ms of CPU,
# whatever the game's length; and a client that reads `?after=0` once, as before pages, still gets every event
# of nearly every game (a Golf game has about 320), where a smaller default would cut its answer short unseen.
EVENTS_PAGE = 1000
EVENTS_PAGE_MAX = 1000


# ---------------------------------------------------------------- schemas


def _default_think_ms() -> str:
    """Each game's default think time, as the seat's description shows it: `golf 300 ms, ...`."""
    return ", ".join(f"{game.id} {default_budget(game.id).think_ms} ms" for game in engine.all_games())


class SeatRequestSchema(ma.Schema):
    kind = Enum("SeatKind", SEAT_KINDS, required=True)
    name = ma.fields.String(validate=validate.Length(1, 40))
    level = bot_level("house bots only; default greedy")
    bot = ma.fields.String(
        validate=validate.Length(1, 32),
        metadata={
            "description": "a registered bot's name (GET /v1/bots): it plays the seat with its token; not with `level`"
        },
    )
    think_ms = ma.fields.Integer(
        strict=True,
        validate=validate.Range(*THINK_MS_RANGE),
        metadata={
            "description": f"expert bots only: time budget a move, default the game's ({_default_think_ms()}); the"
            " server caps it (EXPERT_THINK_MS_MAX, default 2000 ms) and the answer's seat shows the think_ms in effect"
        },
    )

    @ma.validates_schema
    def _level_for_bots_only(self, data: dict[str, Any], **_: Any) -> None:
        if "level" in data and not seat_kinds.KINDS[data["kind"]].leveled:
            raise ma.ValidationError("only a bot seat has a level", "level")
        if "bot" in data and not seat_kinds.KINDS[data["kind"]].leveled:
            raise ma.ValidationError("only a bot seat names a registered bot", "bot")
        if "bot" in data and "level" in data:
            raise ma.ValidationError("a seat names either a `level` or a registered `bot`, not both", "bot")
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


class ActionSchema(ma.Schema):
    """One action, loaded loosely: its `type`, `expected_version` and every field of every registered game's
    action types, typed by kind (`action_fields`); the game's parse_action then checks it with its own
    problem codes.

    Documented as the typed union of every game's actions (service/api/action_event_schemas.py).
    """

    def load(self, data: Any, **kwargs: Any) -> Any:
        """Load through the schema of the games registered now."""
        return _loose_action_schema(tuple(engine.all_games())).load(data, **kwargs)

    @staticmethod
    def openapi_schema(converter: Any) -> dict[str, Any]:
        """The anyOf of every game's actions."""
        return typed_schemas.action_body()


LOOSE_FIELDS: dict[str, Callable[[], ma.fields.Field[Any]]] = {
    INT: lambda: ma.fields.Integer(strict=True),
    INT_LIST: lambda: ma.fields.List(ma.fields.Integer(strict=True)),
    CARD: ma.fields.String,
    CARD_LIST: lambda: ma.fields.List(ma.fields.String()),
    TEXT: ma.fields.String,
    OBJECT: ma.fields.Dict,
}
"""The marshmallow field of an action field's kind (domain/options.py): its JSON type, no more."""


def action_fields(games: Iterable[engine.Game[Any]]) -> dict[str, ma.fields.Field[Any]]:
    """Every field name of the games' action types, by first appearance: typed by its kind, or any JSON value
    where games give one name two kinds; null where any of them allows it."""
    specs: dict[str, list[FieldSpec]] = {}
    for game in games:
        for action in game.actions:
            for spec in action.fields:
                specs.setdefault(spec.name, []).append(spec)
    fields: dict[str, ma.fields.Field[Any]] = {}
    for name, alike in specs.items():
        kinds = {spec.kind for spec in alike}
        field = LOOSE_FIELDS[kinds.pop()]() if len(kinds) == 1 else ma.fields.Raw()
        field.allow_none = any(spec.nullable for spec in alike)
        fields[name] = field
    return fields


@functools.cache
def _loose_action_schema(games: tuple[engine.Game[Any], ...]) -> ma.Schema:
    fields: dict[str, ma.fields.Field[Any]] = {
        "type": ma.fields.String(required=True),
        "expected_version": ma.fields.Integer(strict=True, validate=validate.Range(min=0)),
        **action_fields(games),
    }
    return ma.Schema.from_dict(fields, name="LooseAction")()


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
    limit = QueryInteger(
        load_default=EVENTS_PAGE,
        validate=validate.Range(min=1, max=EVENTS_PAGE_MAX),
        metadata={"description": f"events a page, default {EVENTS_PAGE}"},
    )


class EventsSchema(ma.Schema):
    events = event_records(required=True)
    next = ma.fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "the path of the next page, when more events are stored than this page holds; null "
            "when this page has the latest (a running game's next events come with after = the last seq)"
        },
    )


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
    s422="the rules refuse this setup (player count); a seat's bot is unknown, not registered for the game or in"
    " two seats, or its level does not play the game (`invalid_bot_seat`)",
    s429="this client created too many games this minute, or has its most running games with an expert seat "
    "(`rate_limited`); `Retry-After` says when to retry",
)
def create_game(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Create a game; it starts at once, and bots act through the job queue."""
    limit_game_creation()
    experts = expert_games() if any(seat.get("level") == "expert" for seat in body["seats"]) else None
    client = client_address_of(flask.request)
    if experts is not None:
        experts.admit(client, _running)
    created = games().create_game(
        body["game"], body["seats"], body["options"], body.get("seed"), body.get("decks", ()), body.get("turn_seconds")
    )
    if experts is not None:
        experts.note(client, created["id"], time.time())
    return created, 201, {"Location": f"/v1/games/{created['id']}"}


def _running(game_id: str) -> bool:
    """Whether the game exists and has not ended."""
    try:
        return not repository().load(game_id).snap.finished
    except GameNotFound:
        return False


@blp.route("/<game_id>")
@blp.doc(
    operationId="getGame",
    security=[{}, {"seatToken": []}, {"botToken": []}],
    responses={200: {"headers": {"ETag": ETAG}}},
)
@blp.response(200, GameViewSchema)
@blp.problems(
    s429=READS_LIMITED,
    s401="a token that is not this game's",
    s403="no seat's token, and " + DEAL_IN_PLAY,
    s404="no such game",
)
def get_game(game_id: str) -> tuple[dict[str, Any], int, dict[str, str]]:
    """The caller's view: a seat's with its token (or with the token of the registered bot that holds it),
    else the spectator's (C-6)."""
    loaded = repository().load(checked_id(game_id))
    token = bearer_token()
    seat = bots().seat_for_token(loaded.seats, loaded.token_digests, token) if token else None
    if seat is None:
        matches().check_place(loaded.place)  # a match's game shows only its seats' own views while its deal is played
    return render(loaded, loaded.snap, seat), 200, {"ETag": f'"{loaded.version}"'}


@blp.route("/<game_id>/actions", methods=["POST"])
@blp.doc(
    operationId="postAction",
    security=[{"seatToken": []}, {"botToken": []}],
    responses={409: {"headers": {"ETag": ETAG}}},
    parameters=[
        {
            "in": "header",
            "name": "Idempotency-Key",
            "schema": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[ -~]+$"},
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
    s401="no valid token for this game",
    s404="no such game",
    s409="expected_version / If-Match no longer current",
    s422="the rules refuse it; `rule` names the rule",
    s503="the event store cannot be reached; nothing was written",
)
def post_action(body: dict[str, Any], game_id: str) -> dict[str, Any]:
    """One action for the token's seat (a registered bot's token: the seat it holds); `Idempotency-Key`
    makes retries safe."""
    game_id = checked_id(game_id)
    token = bearer_token()  # none: act says 401 once it knows the game (404 first)
    expected = _expected_version(body.pop("expected_version", None))
    return games().act(game_id, token, body, expected, _idempotency_key())


@blp.route("/<game_id>/events")
@blp.doc(operationId="getEvents")
@blp.arguments(EventsQuerySchema(), location="query")
@blp.response(200, EventsSchema)
@blp.problems(
    s429=f"{READS_LIMITED}; or a long-poll past the client's most open streams and long-polls",
    s400="bad query",
    s403=DEAL_IN_PLAY,
    s404="no such game",
    s503=f"the event store cannot be reached; or a long-poll past {FOLLOWERS_FULL}",
)
def get_events(query: dict[str, Any], game_id: str) -> dict[str, Any] | flask.Response:
    """Public events with seq > after, at most `limit`; with `wait` the call blocks until one exists."""
    game_id = checked_id(game_id)
    matches().check_place(repository().require_game(game_id))
    after, limit = query["after"], query["limit"]
    if not query["wait"]:
        return _events_page(game_id, limit, watchers().wait(game_id, after, 0, limit + 1))
    with metrics.watching("longpoll"), watchers().watching(client_address_of(flask.request)):
        events = watchers().wait(game_id, after, query["wait"], limit + 1)
        if not events:
            return {"events": events, "next": None}
        # the body the game's other long-polls in this process get for the same events, encoded once
        kind = "events" if len(events) <= limit else f"events?limit={limit}"
        body = watchers().encoded(game_id, kind, events, lambda records: _events_body(game_id, limit, records))
        return flask.Response(body, mimetype="application/json")


def _events_page(game_id: str, limit: int, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A page of `records` (read `limit` + 1 of them, to know whether more follow) and where the next one is."""
    if len(records) <= limit:
        return {"events": records, "next": None}
    page = records[:limit]
    return {"events": page, "next": f"/v1/games/{game_id}/events?after={page[-1]['seq']}&limit={limit}"}


def _events_body(game_id: str, limit: int, records: list[dict[str, Any]]) -> bytes:
    """The JSON body of GET /events for these records, as the response schema and Flask's JSON make it."""
    page = _events_page(game_id, limit, records)
    response = flask.current_app.json.response(EventsSchema().dump(page))
    body: bytes = response.get_data()  # type: ignore[attr-defined]  # a flask.Response, typed as its base
    return body


# ---------------------------------------------------------------- helpers


def _expected_version(from_body: int | None) -> int | None:
    header = flask.request.headers.get("If-Match")
    if header is None:
        return from_body
    text = header.strip().removeprefix("W/").strip('"')
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ApiError(400, "invalid_request", 'If-Match must be a version in quotes, like "12"')
    version = int(text)
    if from_body is not None and from_body != version:
        raise ApiError(400, "invalid_request", "If-Match and expected_version disagree")
    return version


def _idempotency_key() -> str | None:
    key = flask.request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= 200 and all(" " <= char <= "~" for char in key)):
        raise ApiError(400, "invalid_request", "Idempotency-Key must be 1 to 200 printable ASCII characters")
    return key
