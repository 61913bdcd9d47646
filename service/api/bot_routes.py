"""/v1/bots: register an outside program as a bot, read the registered bots, replace a bot's token.

Settings (app config, else the environment): BOT_REGISTRATION says who may register, `open` (default),
`token` (the request must bring `Authorization: Bearer <BOT_REGISTRATION_TOKEN>`) or `closed`.
BOTS_MAX (service/play/bots.py) caps the registered bots; BOT_REGISTRATIONS_PER_HOUR
(service/api/rate_limits.py) each client's registrations.
"""

from __future__ import annotations

import hmac
import os
from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from domain import engine
from service.api.blueprint import Blueprint, bearer_token, bots
from service.api.problems import ApiError
from service.api.rate_limits import READS_LIMITED, limit_bot_registration
from service.play.bots import DESCRIPTION_MAX, PAGE_MAX

blp = Blueprint("bots", __name__, url_prefix="/v1/bots", description="Registered bots: outside programs in a seat")

REGISTRATION_MODES = ("open", "token", "closed")
BOTS_PAGE = 50
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{2,31}$"
NOT_YET = "(kept once the service hands bots their turns: until then {})"


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


class BotSchema(ma.Schema):
    name = ma.fields.String(required=True)
    games = ma.fields.List(ma.fields.String(), required=True)
    description = ma.fields.String(required=True, allow_none=True)
    created_at = ma.fields.String(required=True)
    online = ma.fields.Boolean(
        required=True, metadata={"description": "asked for turns in the last 30 s " + NOT_YET.format("false")}
    )
    playing = ma.fields.Integer(required=True, metadata={"description": "games it plays now " + NOT_YET.format("0")})
    played = ma.fields.Integer(required=True, metadata={"description": "games it finished " + NOT_YET.format("0")})
    timeouts = ma.fields.Integer(
        required=True, metadata={"description": "moves the service made for it " + NOT_YET.format("0")}
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
    created = bots().register(body["name"], body["games"], body.get("description"))
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
    return {"bots": found, "next": None if after is None else following}


@blp.route("/<name>")
@blp.doc(operationId="getBot")
@blp.response(200, BotSchema)
@blp.problems(s404="no such bot (`bot_not_found`)", s429=READS_LIMITED)
def get_bot(name: str) -> dict[str, Any]:
    """A bot's public profile."""
    return bots().profile(name)


@blp.route("/<name>/token", methods=["POST"])
@blp.doc(operationId="newBotToken", security=[{"botToken": []}])
@blp.response(200, BotTokenSchema)
@blp.problems(s401="not the bot's current token", s404="no such bot (`bot_not_found`)")
def new_bot_token(name: str) -> dict[str, Any]:
    """A new token for the bot, given its current one, which is void from then on."""
    return bots().new_token(name, bearer_token())
