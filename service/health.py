"""GET /healthz (process up) and GET /readyz (event store reachable)."""

from __future__ import annotations

import marshmallow as ma

from service.http import Blueprint, games
from service.problems import store_unavailable

blp = Blueprint("health", __name__, description="Liveness and readiness")


class StatusSchema(ma.Schema):
    status = ma.fields.String(required=True)


@blp.route("/healthz")
@blp.response(200, StatusSchema)
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@blp.route("/readyz")
@blp.response(200, StatusSchema)
@blp.problems(s503="the event store cannot be reached")
def readyz() -> dict[str, str]:
    """The event store answers."""
    if not games().store.ping():
        raise store_unavailable()
    return {"status": "ready"}
