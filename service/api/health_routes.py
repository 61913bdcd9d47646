"""GET /healthz (process up), GET /readyz (event store reachable) and GET /metrics (Prometheus)."""

from __future__ import annotations

import flask
import marshmallow as ma

from service.api.blueprint import STORE_UNREACHABLE, Blueprint, store_answers
from service.api.problems import store_unavailable
from service.ops import metrics

blp = Blueprint("health", __name__, description="Liveness, readiness and metrics", needs_store=False)
PROMETHEUS_TEXT = "text/plain"  # version=1.0.0 of the text format, as prometheus-client sends it


class StatusSchema(ma.Schema):
    status = ma.fields.String(required=True)


@blp.route("/healthz")
@blp.doc(operationId="getHealth")
@blp.response(200, StatusSchema)
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@blp.route("/readyz")
@blp.doc(operationId="getReadiness")
@blp.response(200, StatusSchema)
@blp.problems(s503=STORE_UNREACHABLE)  # its own problem: only /readyz of these asks the store
def readyz() -> dict[str, str]:
    """The event store answers."""
    if not store_answers():
        raise store_unavailable()
    return {"status": "ready"}


@blp.route("/metrics")
@blp.doc(
    operationId="getMetrics",
    responses={
        200: {
            "description": "Every process's samples in Prometheus's text format (see docs/operations.md)",
            "content": {PROMETHEUS_TEXT: {"schema": {"type": "string"}}},
        }
    },
)
def get_metrics() -> flask.Response:
    """Requests, watchers, games, the bot queue, bot turn delays, store errors and reconciler repairs."""
    body, content_type = metrics.exposition(flask.current_app.extensions["scrape_time_metrics"])
    return flask.Response(body, content_type=content_type)
