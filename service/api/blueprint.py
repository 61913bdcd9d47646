"""Shared HTTP plumbing: the problem schema, a 400-raising argument parser, the blueprint class."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import flask
import flask_smorest
import marshmallow as ma
from marshmallow import validate
from webargs.core import missing
from webargs.flaskparser import FlaskParser

from service.api.bot_waiters import BotWaiters
from service.api.followers import Watchers
from service.api.problems import ApiError
from service.play.bot_turns import BotTurns
from service.play.bots import Bots
from service.play.errors import token_needed
from service.play.game_repository import GameRepository
from service.play.game_service import GameService
from service.play.ladder import Ladders
from service.play.matches import Matches
from service.play.stream_tickets import StreamTickets

F = TypeVar("F", bound=Callable[..., Any])
GAME_ID = validate.Regexp(r"^[A-Za-z0-9_-]{1,64}$")


class ProblemSchema(ma.Schema):
    """application/problem+json (RFC 9457) with a stable `code` and, for rules, `rule`."""

    type = ma.fields.String(required=True)
    title = ma.fields.String(required=True)
    status = ma.fields.Integer(required=True)
    code = ma.fields.String(
        required=True,
        metadata={
            "description": "stable snake_case error code; docs/api.md (Error codes) lists every code with its "
            "status and meaning: a 422 with `rule` is a refusal by the rules",
            "pattern": "^[a-z][a-z0-9_]*$",
        },
    )
    detail = ma.fields.String(required=True)
    rule = ma.fields.String(metadata={"description": "the rule id that refused the action"})


class ProblemParser(FlaskParser):
    """Request validation errors are 400 problems, not webargs' default 422."""

    DEFAULT_VALIDATION_STATUS = 400

    def _raw_load_json(self, req: flask.Request) -> Any:
        try:
            loaded = super()._raw_load_json(req)
        except json.JSONDecodeError:
            raise  # webargs answers these itself: 400 "Invalid JSON body."
        except ValueError as error:  # json's other refusal: an integer of more than 4300 digits
            raise ApiError(400, "invalid_request", "Invalid JSON body: a number has too many digits.") from error
        if loaded is not missing:  # no JSON body
            _require_unicode_text(loaded)
        return loaded

    def handle_error(
        self,
        error: ma.ValidationError,
        req: flask.Request,
        schema: ma.Schema,
        *,
        error_status_code: int | None,
        error_headers: Any,
    ) -> NoReturn:
        messages = error.messages
        if isinstance(messages, dict) and len(messages) == 1:
            messages = next(iter(messages.values()))  # drop the location ("json", "query")
        raise ApiError(400, "invalid_request", describe_validation(messages))


def _require_unicode_text(loaded: Any) -> None:
    """JSON's escapes can spell a lone surrogate (`"\\ud800"`), which is no character: such a string could never
    be stored or sent on as UTF-8, so the body is refused here, before anything keeps it."""
    try:
        json.dumps(loaded, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise ApiError(
            400, "invalid_request", "Invalid JSON body: a string holds a lone surrogate (\\ud800-\\udfff), not text."
        ) from error


def describe_validation(messages: Any, prefix: str = "") -> str:
    """Flatten marshmallow's nested messages into one readable line."""
    if isinstance(messages, dict):
        parts = []
        for key, value in messages.items():
            name = "body" if key == "_schema" else f"{prefix}{key}"
            parts.append(
                describe_validation(value, f"{name}.") if isinstance(value, dict) else f"{name}: {_join(value)}"
            )
        return "; ".join(parts)
    return _join(messages)


def _join(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, list) else str(value)


PROBLEM_JSON = "application/problem+json"


class PlainQuery:
    """A query parameter written plainly (`PLAIN`, ASCII only), converted by the field it is mixed into."""

    PLAIN: re.Pattern[str]

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not self.PLAIN.fullmatch(value):
            raise self.make_error("invalid")  # type: ignore[attr-defined]
        return super()._deserialize(value, attr, data, **kwargs)  # type: ignore[misc]


class QueryInteger(PlainQuery, ma.fields.Integer):
    """A query parameter that is an integer written plainly: ASCII digits and nothing else.

    marshmallow's Integer goes through Python's `int()`, which also takes `+1`, ` 1`, `1_000`,
    `١` (an Arabic-Indic one) and, not strict, `1.0`; every query integer of the API is this field.
    """

    PLAIN = re.compile(r"[0-9]{1,18}", re.ASCII)
    default_error_messages = {"invalid": "Not a plain integer (ASCII digits only)."}  # noqa: RUF012


class QueryNumber(PlainQuery, ma.fields.Float):
    """A query parameter that is a plain decimal number: ASCII digits with an optional fraction."""

    PLAIN = re.compile(r"[0-9]{1,18}(\.[0-9]{1,9})?", re.ASCII)
    default_error_messages = {"invalid": "Not a plain number (ASCII digits and an optional fraction)."}  # noqa: RUF012


STORE_UNREACHABLE = "the event store cannot be reached"
BODY_METHODS = ("POST", "PUT", "PATCH")
"""The methods whose body must be JSON (service/app.py answers 415 to any other body)."""


class Blueprint(flask_smorest.Blueprint):  # type: ignore[misc]
    """flask-smorest blueprint whose argument errors are problems and whose routes document the
    problems every route shares (`shared_problems`), so that each route names only its own.

    `needs_store=False`: its routes do not reach the event store, so they have no 503 by default.
    """

    ARGUMENTS_PARSER = ProblemParser()

    def __init__(self, *args: Any, needs_store: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.needs_store = needs_store

    def route(self, rule: str, **options: Any) -> Callable[[F], F]:
        """Register a view (flask-smorest's `route`) with the shared problems it does not document itself."""
        register = super().route(rule, **options)
        methods = options.get("methods", ("GET",))

        def decorate(view: F) -> F:
            registered: F = register(self.problems(**self.shared_problems(view, methods))(view))
            return registered

        return decorate

    def shared_problems(self, view: Callable[..., Any], methods: Sequence[str]) -> dict[str, str]:
        """The problems a route has without saying so, less those it documents itself (they win):
        503 when the blueprint needs the store; 415 for a method with a body; 413 with a JSON body."""
        apidoc = getattr(view, "_apidoc", {})
        documented = {f"s{status}" for status in apidoc.get("response", {}).get("responses", {})}
        json_body = any(argument.get("in") == "json" for argument in apidoc.get("arguments", {}).get("parameters", []))
        shared = {}
        if self.needs_store:
            shared["s503"] = STORE_UNREACHABLE
        if any(method.upper() in BODY_METHODS for method in methods):
            shared["s415"] = "the body is not application/json" if json_body else "a body that is not application/json"
        if json_body:
            shared["s413"] = "request body over 64 KiB"
        return {key: description for key, description in shared.items() if key not in documented}

    def problems(self, **by_status: str) -> Callable[[F], F]:
        """Document problem responses, e.g. `problems(s404="no such game")`."""

        def decorate(view: F) -> F:
            for key, description in by_status.items():
                view = self.alt_response(
                    int(key.removeprefix("s")), schema=ProblemSchema, description=description, content_type=PROBLEM_JSON
                )(view)
            return view

        return decorate


def _extension(name: str) -> Any:
    """What the app factory keeps under `name` (service/app.py)."""
    return flask.current_app.extensions[name]


def games() -> GameService:
    """The app's command use cases: create, act."""
    service: GameService = _extension("games")
    return service


def bots() -> Bots:
    """The app's registered bots."""
    found: Bots = _extension("bots")
    return found


def bot_turns() -> BotTurns:
    """The app's registered bots' due turns."""
    found: BotTurns = _extension("bot_turns")
    return found


def matches() -> Matches:
    """The app's matches on duplicate deals."""
    found: Matches = _extension("matches")
    return found


def ladders() -> Ladders:
    """The app's ladders, one per game."""
    found: Ladders = _extension("ladders")
    return found


def bot_waiters() -> BotWaiters:
    """The app's waiting bots and their waker."""
    found: BotWaiters = _extension("bot_waiters")
    return found


def repository() -> GameRepository:
    """The app's games as the read routes load them."""
    found: GameRepository = _extension("repository")
    return found


def tickets() -> StreamTickets:
    """The app's stream tickets: issued to a seat, redeemed by its stream."""
    found: StreamTickets = _extension("tickets")
    return found


def store_answers() -> bool:
    """Whether the event store answers now (readiness)."""
    ping: Callable[[], bool] = _extension("store_ping")
    return ping()


def watchers() -> Watchers:
    """The app's Watchers: one reader per followed game, shared by its streams and long-polls."""
    found: Watchers = _extension("watchers")
    return found


def bearer_token() -> str | None:
    """The token of `Authorization: Bearer <token>`, if any; 401 for another scheme."""
    header = flask.request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "use 'Authorization: Bearer <token>'")
    return token.strip()


def required_bearer_token(what: str) -> str:
    """The seat token that `what` (e.g. "an action") needs; 401 without one."""
    token = bearer_token()
    if token is None:
        raise ApiError(401, "unauthorized", token_needed(what))
    return token


def problem_response(error: ApiError) -> flask.Response:
    """Render an ApiError as application/problem+json."""
    response = flask.jsonify(error.body())
    response.status_code = error.status
    response.mimetype = "application/problem+json"
    for name, value in error.headers.items():
        response.headers[name] = value
    return response


def checked_id(game_id: str) -> str:
    """The game id of a path; 404 for one that no game can have."""
    try:
        GAME_ID(game_id)
    except ma.ValidationError:
        raise ApiError(404, "game_not_found", "no game with that id") from None
    return game_id
