"""/v1/bots: register an outside program as a bot, read the registered bots, replace a bot's token; and a
bot's own turns (`/v1/bots/me/turns`, a long-poll, and `/v1/bots/me/stream`, Server-Sent Events), which
wait as the watchers of a game do (service/api/bot_waiters.py), best sent to the stream tier.

Settings (app config, else the environment): BOT_REGISTRATION says who may register, `open` (default),
`token` (the request must bring `Authorization: Bearer <BOT_REGISTRATION_TOKEN>`) or `closed`.
BOTS_MAX (service/play/bots.py) caps the registered bots; BOT_REGISTRATIONS_PER_HOUR
(service/api/rate_limits.py) each client's registrations.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from domain import engine
from service.api.blueprint import (
    Blueprint,
    QueryInteger,
    bearer_token,
    bot_turns,
    bot_waiters,
    bots,
    ladders,
    required_bearer_token,
    watchers,
)
from service.api.bot_waiters import BotWaiters
from service.api.problems import ApiError
from service.api.rate_limits import READS_LIMITED, client_address_of, limit_bot_registration
from service.api.shared_schemas import GameViewSchema
from service.ops import metrics
from service.play.bot_turns import TURNS_PAGE, TURNS_PAGE_MAX, BotTurns
from service.play.bots import DESCRIPTION_MAX, PAGE_MAX
from service.storage.outcomes import StoreUnavailable

log = logging.getLogger(__name__)
blp = Blueprint("bots", __name__, url_prefix="/v1/bots", description="Registered bots: outside programs in a seat")

REGISTRATION_MODES = ("open", "token", "closed")
BOTS_PAGE = 50
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{2,31}$"
WAIT_MAX = 30  # seconds a turns long-poll may wait
HEARTBEAT_SECONDS = 15.0  # a turn stream's comment when nothing else was sent; app config STREAM_HEARTBEAT_SECONDS
EVENT_STREAM = "text/event-stream"
BOT_TOKEN = "a bot's turns"


class RegisterBotSchema(ma.Schema):
    name = ma.fields.String(
        required=True,
        validate=validate.Regexp(NAME_PATTERN),
        metadata={"description": "3-32 of a-z, 0-9 and -, starting with a letter or digit; unique"},
    )
    games = ma.fields.List(
        ma.fields.String(),
        required=True,
        validate=validate.Length(1, 20),
        metadata={"description": "game ids from the catalog that the bot plays"},
    )
    description = ma.fields.String(validate=validate.Length(max=DESCRIPTION_MAX))


class BotRatingSchema(ma.Schema):
    mu = ma.fields.Float(required=True)
    sigma = ma.fields.Float(required=True)
    ordinal = ma.fields.Float(required=True)
    rank = ma.fields.Integer(required=True, metadata={"description": "its place in the ladder, from 1"})


class BotSchema(ma.Schema):
    name = ma.fields.String(required=True)
    games = ma.fields.List(ma.fields.String(), required=True)
    description = ma.fields.String(required=True, allow_none=True)
    created_at = ma.fields.String(required=True)
    online = ma.fields.Boolean(required=True, metadata={"description": "asked for its turns in the last 30 s"})
    playing = ma.fields.Integer(required=True, metadata={"description": "games it plays now"})
    played = ma.fields.Integer(required=True, metadata={"description": "games it finished"})
    timeouts = ma.fields.Integer(
        required=True, metadata={"description": "moves the service made for it when a turn's deadline passed"}
    )
    ratings = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.Nested(BotRatingSchema),
        required=True,
        metadata={"description": "by game: its rating in that game's ladder (GET /v1/ladder/{game}), if rated"},
    )


class RegisteredBotSchema(BotSchema):
    token = ma.fields.String(
        required=True, metadata={"description": "the bot's token: shown this once, kept only as a hash"}
    )


class BotTokenSchema(ma.Schema):
    name = ma.fields.String(required=True)
    token = ma.fields.String(required=True, metadata={"description": "the new token; the one before is void"})


class BotsQuerySchema(ma.Schema):
    game = ma.fields.String(metadata={"description": "only the bots registered for this game"})
    after = ma.fields.String(
        validate=validate.Regexp(NAME_PATTERN), metadata={"description": "list the bots named after this one"}
    )
    limit = ma.fields.Integer(
        load_default=BOTS_PAGE,
        validate=validate.Range(1, PAGE_MAX),
        metadata={"description": f"bots a page, default {BOTS_PAGE}"},
    )


class BotsPageSchema(ma.Schema):
    bots = ma.fields.List(ma.fields.Nested(BotSchema), required=True)
    next = ma.fields.String(
        required=True, allow_none=True, metadata={"description": "the path of the next page; null on the last page"}
    )


class TurnsQuerySchema(ma.Schema):
    wait = QueryInteger(
        load_default=0,
        validate=validate.Range(0, WAIT_MAX),
        metadata={"description": f"seconds to wait for a turn when none is due (0-{WAIT_MAX}, default 0)"},
    )
    limit = QueryInteger(
        load_default=TURNS_PAGE,
        validate=validate.Range(1, TURNS_PAGE_MAX),
        metadata={"description": f"turns at most (default {TURNS_PAGE}, at most {TURNS_PAGE_MAX})"},
    )


class TurnSchema(ma.Schema):
    turn = ma.fields.String(
        required=True, metadata={"description": "`<game_id>:<version>`: send it as the action's Idempotency-Key"}
    )
    game_id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    rules_version = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    version = ma.fields.Integer(required=True, metadata={"description": "send it as the action's expected_version"})
    deadline = ma.fields.String(
        required=True, metadata={"description": "RFC 3339: after it the service plays the turn (turn_timeout)"}
    )
    view = ma.fields.Nested(GameViewSchema, required=True, metadata={"description": "as GET /v1/games/{id} gives it"})
    legal = ma.fields.List(ma.fields.Dict(), required=True, metadata={"description": "the actions the seat may send"})
    options = ma.fields.Dict(
        required=True, metadata={"description": "the game's options, as its record states them (all of them)"}
    )


class TurnsSchema(ma.Schema):
    turns = ma.fields.List(ma.fields.Nested(TurnSchema), required=True)


class TurnResumeSchema(ma.Schema):
    last_event_id = ma.fields.String(
        data_key="Last-Event-ID",
        validate=validate.Length(1, 200),
        metadata={"description": "a reconnect: every turn still due is sent again at once, leased or not"},
    )


TURN_STREAM = (
    "Server-Sent Events: each due turn as `id: <turn>`, `event: turn`, `data: <the turn JSON>` (as "
    "GET /v1/bots/me/turns gives it), again after its lease while it is due; a comment (`: heartbeat`) every 15 s."
)


def init_app(app: flask.Flask) -> None:
    """Read BOT_REGISTRATION and BOT_REGISTRATION_TOKEN (app config, else the environment)."""
    mode = str(app.config.get("BOT_REGISTRATION", os.environ.get("BOT_REGISTRATION", "open")))
    if mode not in REGISTRATION_MODES:
        raise ValueError(f"BOT_REGISTRATION must be one of {', '.join(REGISTRATION_MODES)}, not {mode!r}")
    token = app.config.get("BOT_REGISTRATION_TOKEN", os.environ.get("BOT_REGISTRATION_TOKEN", ""))
    if mode == "token" and not token:
        raise ValueError("BOT_REGISTRATION=token needs BOT_REGISTRATION_TOKEN")
    app.config["BOT_REGISTRATION"] = mode
    app.config["BOT_REGISTRATION_TOKEN"] = token


def _admit_registration() -> None:
    """403 `registration_closed` when the operator takes no registrations, or wants a registration token
    that the request does not bring."""
    config = flask.current_app.config
    mode = config.get("BOT_REGISTRATION", "open")
    if mode == "closed":
        raise ApiError(403, "registration_closed", "this service takes no new bots")
    if mode == "token":
        given = bearer_token() or ""
        if not hmac.compare_digest(given.encode(), str(config["BOT_REGISTRATION_TOKEN"]).encode()):
            raise ApiError(
                403, "registration_closed", "registering a bot here needs 'Authorization: Bearer <registration token>'"
            )


@blp.route("", methods=["POST"])
@blp.arguments(RegisterBotSchema, example={"name": "acme-golfer", "games": ["golf"], "description": "a golfer"})
@blp.response(201, RegisteredBotSchema)
@blp.doc(
    operationId="registerBot",
    security=[{}, {"registrationToken": []}],
    responses={201: {"headers": {"Location": {"description": "the bot's profile", "schema": {"type": "string"}}}}},
)
@blp.problems(
    s400="malformed request: a bad name, an unknown game, a description too long",
    s401="an Authorization header that is not a bearer token",
    s403="the operator takes no registrations, or wants a registration token (`registration_closed`)",
    s409="the name is taken (`bot_exists`), or the service has its most bots (`bots_full`)",
    s429="this client registered too many bots this hour (`rate_limited`); `Retry-After` says when to retry",
)
def register_bot(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Register a bot; the answer holds its token, shown this once."""
    _admit_registration()
    limit_bot_registration()
    created = {**bots().register(body["name"], body["games"], body.get("description")), "ratings": {}}
    return created, 201, {"Location": f"/v1/bots/{created['name']}"}


@blp.route("")
@blp.doc(operationId="listBots")
@blp.arguments(BotsQuerySchema(), location="query")
@blp.response(200, BotsPageSchema)
@blp.problems(s400="bad query: an unknown game, a bad name or limit", s429=READS_LIMITED)
def list_bots(query: dict[str, Any]) -> dict[str, Any]:
    """The registered bots by name, a page at a time (`?game=`: those that play that game)."""
    game = query.get("game")
    if game is not None and game not in {known.id for known in engine.all_games()}:
        raise ApiError(400, "invalid_request", f"game: no game {game!r} in the catalog")
    limit = query["limit"]
    found, after = bots().page(query.get("after"), limit, game)
    following = f"/v1/bots?after={after}&limit={limit}" + (f"&game={game}" if game else "")
    seen: dict[str, list[dict[str, Any]]] = {}  # each game's ladder read once for the page
    return {"bots": [_rated(profile, seen) for profile in found], "next": None if after is None else following}


@blp.route("/<name>")
@blp.doc(operationId="getBot")
@blp.response(200, BotSchema)
@blp.problems(s404="no such bot (`bot_not_found`)", s429=READS_LIMITED)
def get_bot(name: str) -> dict[str, Any]:
    """A bot's public profile, with its ladder ratings."""
    return _rated(bots().profile(name))


def _rated(profile: dict[str, Any], seen: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The profile with the bot's rating in each of its games' ladders where it has one."""
    return {**profile, "ratings": ladders().ratings_of(f"bot:{profile['name']}", profile["games"], seen)}


@blp.route("/<name>/token", methods=["POST"])
@blp.doc(operationId="newBotToken", security=[{"botToken": []}])
@blp.response(200, BotTokenSchema)
@blp.problems(s401="not the bot's current token", s404="no such bot (`bot_not_found`)")
def new_bot_token(name: str) -> dict[str, Any]:
    """A new token for the bot, given its current one, which is void from then on."""
    return bots().new_token(name, bearer_token())


@blp.route("/me/turns")
@blp.doc(operationId="getBotTurns", security=[{"botToken": []}])
@blp.arguments(TurnsQuerySchema(), location="query")
@blp.response(200, TurnsSchema)
@blp.problems(
    s400="bad query: wait or limit out of range",
    s401="no bot token, or not a registered bot's",
    s429=f"{READS_LIMITED}; or the client's most open streams and long-polls",
)
def get_bot_turns(query: dict[str, Any]) -> dict[str, Any]:
    """The turns due now for the seats the bot holds, each leased for a short time; `wait` blocks until one is."""
    turns = bot_turns()
    name = turns.bot_of_token(required_bearer_token(BOT_TOKEN))
    if query["wait"] == 0:
        return {"turns": turns.hand_out(name, query["limit"])[0]}
    with watchers().watching(client_address_of(flask.request)), metrics.watching("bot_turns"):
        return {"turns": _wait_for_turns(turns, bot_waiters(), name, query["limit"], query["wait"])}


def _wait_for_turns(turns: BotTurns, waiters: BotWaiters, name: str, limit: int, wait: float) -> list[dict[str, Any]]:
    """The bot's turns, waiting up to `wait` seconds for one (woken by an offer, or when a lease ends)."""
    end = time.monotonic() + wait
    while True:
        mark = waiters.mark(name)
        found, next_free = turns.hand_out(name, limit)
        left = end - time.monotonic()
        if found or left <= 0:
            return found
        if next_free is not None:
            left = min(left, max(0.0, (next_free - turns.now_ms()) / 1000))
        waiters.wait(name, mark, left)


@blp.route("/me/stream")
@blp.doc(
    operationId="getBotTurnStream",
    security=[{"botToken": []}],
    responses={200: {"description": TURN_STREAM, "content": {EVENT_STREAM: {"schema": {"type": "string"}}}}},
)
@blp.arguments(TurnResumeSchema(), location="headers")
@blp.problems(
    s400="a bad Last-Event-ID",
    s401="no bot token, or not a registered bot's",
    s429=f"{READS_LIMITED}; or the client's most open streams and long-polls",
)
def get_bot_turn_stream(headers: dict[str, Any]) -> flask.Response:
    """The bot's turns as Server-Sent Events, as they become due; a reconnect with `Last-Event-ID` gets every
    turn still due again at once."""
    turns = bot_turns()
    name = turns.bot_of_token(required_bearer_token(BOT_TOKEN))
    heartbeat = float(flask.current_app.config.get("STREAM_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
    release = watchers().hold(client_address_of(flask.request))
    frames = _turn_frames(turns, bot_waiters(), name, "last_event_id" in headers, heartbeat)
    response = flask.Response(frames, mimetype=EVENT_STREAM, headers={"Cache-Control": "no-store"})
    response.call_on_close(release)
    return response


def _turn_frames(turns: BotTurns, waiters: BotWaiters, name: str, resumed: bool, heartbeat: float) -> Iterator[bytes]:
    """The stream's messages: the due turns (all of them first after a reconnect), heartbeats."""
    every = resumed
    quiet_since = time.monotonic()
    try:
        with metrics.watching("bot_stream"):
            while True:
                mark = waiters.mark(name)
                found, next_free = turns.hand_out(name, TURNS_PAGE_MAX, every)
                every = False
                if found:
                    yield "".join(_turn_frame(turn) for turn in found).encode("utf-8")
                    quiet_since = time.monotonic()
                    continue
                if time.monotonic() - quiet_since >= heartbeat:
                    yield b": heartbeat\n\n"
                    quiet_since = time.monotonic()
                left = heartbeat - (time.monotonic() - quiet_since)
                if next_free is not None:
                    left = min(left, max(0.0, (next_free - turns.now_ms()) / 1000))
                waiters.wait(name, mark, left)
    except StoreUnavailable as error:  # the bot reconnects with Last-Event-ID
        log.warning("the turn stream of the bot %s ended: event store unavailable: %s", name, error)


def _turn_frame(turn: dict[str, Any]) -> str:
    data = json.dumps(turn, separators=(",", ":"), ensure_ascii=False)
    return f"id: {turn['turn']}\nevent: turn\ndata: {data}\n\n"
