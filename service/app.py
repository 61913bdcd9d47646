"""The Flask app factory: the wiring root's services (service/bootstrap.py) behind blueprints, rate limits,
the request log and problem+json errors."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import flask
import flask_smorest
import redis
from werkzeug.exceptions import HTTPException

from service.api import bot_routes as bots_api
from service.api import catalog_routes as catalog
from service.api import game_routes as games_api
from service.api import health_routes as health
from service.api import history_routes as history_api
from service.api import ladder_routes as ladder_api
from service.api import match_routes as matches_api
from service.api import rate_limits as ratelimit
from service.api import request_log
from service.api import spec_plugin as contract
from service.api import spec_routes as apidocs
from service.api import stream_routes as live
from service.api import web_page as web
from service.api.blueprint import PROBLEM_JSON, ProblemSchema, describe_validation, problem_response
from service.api.bot_waiters import BotWaiters
from service.api.followers import FOLLOWED_GAMES_MAX, WATCHES_PER_CLIENT, Watchers
from service.api.problems import ApiError, problem_for, store_unavailable
from service.bootstrap import build_services, connection_settings
from service.ops import metrics
from service.play.errors import PlayError
from service.play.game_history import DISPUTES_PER_SEAT
from service.play.ports import TurnDispatcher
from service.storage.outcomes import StoreUnavailable
from service.storage.turn_queue import RQDispatcher

MAX_BODY_BYTES = 64 * 1024
HTTP_CODES = {
    400: "invalid_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}
log = logging.getLogger(__name__)


class Api(flask_smorest.Api):  # type: ignore[misc]
    """flask-smorest's Api, documenting errors as problems."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        """flask-smorest's default error responses, as problem+json."""
        self.DEFAULT_RESPONSE_CONTENT_TYPE = PROBLEM_JSON
        try:
            super()._register_responses()
        finally:
            del self.DEFAULT_RESPONSE_CONTENT_TYPE  # back to the class default for success responses
        contract.declare_headers(self.spec.components.responses_lazy[self.DEFAULT_ERROR_RESPONSE_NAME])

    def _register_pagination_header(self) -> None:
        """None: the API pages with its own `after`/`limit`, so flask-smorest's pagination header and
        its PaginationMetadata schema would be unused components."""


def create_app(
    settings: Mapping[str, Any] | None = None,
    *,
    redis_client: redis.Redis | None = None,
    dispatcher: TurnDispatcher | None = None,
) -> flask.Flask:
    """Build the app; without a client it connects to REDIS_URL (default localhost:6379) and
    QUEUE_REDIS_URL (see service/storage/redis_clients.py)."""
    app = flask.Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        API_TITLE="Card table",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.1.0",
        **connection_settings(),
        DISPUTES_PER_SEAT=os.environ.get("DISPUTES_PER_SEAT", DISPUTES_PER_SEAT),
        JSON_SORT_KEYS=False,
        STREAM_HEARTBEAT_SECONDS=float(os.environ.get("STREAM_HEARTBEAT_SECONDS", live.HEARTBEAT_SECONDS)),
        FOLLOWED_GAMES_MAX=int(os.environ.get("FOLLOWED_GAMES_MAX", FOLLOWED_GAMES_MAX)),
    )
    app.config.update(settings or {})
    if "WATCHES_PER_CLIENT" not in app.config:  # off in tests unless one sets it, as the rate limits
        testing = app.config.get("TESTING")
        app.config["WATCHES_PER_CLIENT"] = (
            0 if testing else int(os.environ.get("WATCHES_PER_CLIENT", WATCHES_PER_CLIENT))
        )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    request_log.init_app(app)  # first, so that every request is timed and has its id before other hooks run
    services = build_services(app.config, redis_client=redis_client, dispatcher=dispatcher)
    app.extensions["games"] = services.games
    app.extensions["history"] = services.history
    app.extensions["storage"] = services.storage
    app.extensions["repository"] = services.repository
    app.extensions["tickets"] = services.tickets
    app.extensions["bots"] = services.bots
    app.extensions["bot_turns"] = services.bot_turns
    app.extensions["matches"] = services.matches
    app.extensions["ladders"] = services.ladders
    app.extensions["bot_waiters"] = BotWaiters(services.storage.bot_turns)
    app.extensions["store_ping"] = services.store.ping
    app.extensions["watchers"] = Watchers(
        services.store,
        max_games=int(app.config["FOLLOWED_GAMES_MAX"]),
        per_client=int(app.config["WATCHES_PER_CLIENT"]),
    )
    ratelimit.init_app(app, services.store_client)
    bots_api.init_app(app)
    try:  # bots registered before their tokens were indexed find their turns (one script, a few ms)
        services.storage.bots.index_tokens()
    except StoreUnavailable as error:
        log.warning("the bots' tokens were not indexed at start (the event store is away): %s", error)
    depths = services.dispatcher.queue_depths if isinstance(services.dispatcher, RQDispatcher) else dict
    app.extensions["scrape_time_metrics"] = metrics.ScrapeTimeCollector(services.storage.counts.game_counts, depths)

    api = Api(
        app,
        spec_kwargs={
            "marshmallow_plugin": contract.TypedMarshmallowPlugin(),
            "extra_plugins": [contract.HeadersPlugin()],
        },
    )
    api.spec.components.security_scheme("seatToken", {"type": "http", "scheme": "bearer"})
    api.spec.components.security_scheme("botToken", {"type": "http", "scheme": "bearer"})
    api.spec.components.security_scheme("registrationToken", {"type": "http", "scheme": "bearer"})
    blueprints = (
        catalog.blp,
        games_api.blp,
        history_api.blp,
        live.blp,
        health.blp,
        bots_api.blp,
        matches_api.blp,
        ladder_api.blp,
    )
    for blueprint in blueprints:
        api.register_blueprint(blueprint)
    app.register_blueprint(web.blp)  # the page at `/`, outside the API and its OpenAPI document
    app.register_blueprint(apidocs.blp)  # the document itself and its reference page `/docs`
    _register_errors(app)
    app.before_request(_require_json_body)
    return app


def _require_json_body() -> None:
    """A request with a body must send it as JSON (415 otherwise)."""
    request = flask.request
    if request.method in ("POST", "PUT", "PATCH") and request.content_length and not request.is_json:
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")


def _register_errors(app: flask.Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(error: ApiError) -> flask.Response:
        return problem_response(error)

    @app.errorhandler(PlayError)
    def _refused(error: PlayError) -> flask.Response:
        return problem_response(problem_for(error))

    @app.errorhandler(StoreUnavailable)
    def _store_down(error: StoreUnavailable) -> flask.Response:
        log.warning("event store unavailable: %s", error)
        return problem_response(store_unavailable())

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> flask.Response:
        status = error.code or 500
        detail = error.description or error.name
        messages = getattr(error, "data", {}).get("messages")
        if messages:
            detail = describe_validation(messages.get("json", messages))
        if status == 413:
            detail = f"the request body is over the limit of {MAX_BODY_BYTES} bytes"
        return problem_response(ApiError(status, HTTP_CODES.get(status, "http_error"), detail))

    @app.errorhandler(RecursionError)
    def _too_deep(error: RecursionError) -> flask.Response:
        return problem_response(ApiError(400, "invalid_request", "the JSON body is nested too deeply"))

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> flask.Response:
        log.exception("unexpected error", exc_info=error)
        return problem_response(ApiError(500, "internal_error", "an unexpected error; it has been logged"))
