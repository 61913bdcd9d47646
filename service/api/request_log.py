"""The request log of the HTTP edge: every request gets an id (service/ops/logs.py), is counted and logged."""

from __future__ import annotations

import time

import flask

from service.ops import logs, metrics
from service.ops.logs import ACCESS, REQUEST_ID_HEADER, request_id_from


def init_app(app: flask.Flask) -> None:
    """Give every request an id, echo it, count the request and log it."""
    logs.read_request_ids_from(_current_request_id)
    app.before_request(_start)
    app.after_request(_finish)


def _current_request_id() -> str | None:
    """The id of the request being served; None outside a request."""
    request_id: str | None = flask.g.get("request_id") if flask.has_request_context() else None
    return request_id


def _start() -> None:
    flask.g.request_id = request_id_from(flask.request.headers.get(REQUEST_ID_HEADER))
    flask.g.started = time.perf_counter()


def _finish(response: flask.Response) -> flask.Response:
    request = flask.request
    request_id = flask.g.get("request_id") or request_id_from(None)
    response.headers[REQUEST_ID_HEADER] = request_id
    seconds = time.perf_counter() - flask.g.get("started", time.perf_counter())
    route = request.url_rule.rule if request.url_rule is not None else "unmatched"
    metrics.observe_request(request.method, route, response.status_code, seconds)
    ACCESS.info(
        "%s %s %s",
        request.method,
        request.path,
        response.status_code,
        extra={
            "request_id": request_id,
            "method": request.method,
            "path": request.path,
            "route": route,
            "status": response.status_code,
            "duration_ms": round(seconds * 1000, 2),
        },
    )
    return response
