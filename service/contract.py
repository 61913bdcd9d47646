"""What the OpenAPI document says beyond the schemas: the headers that every answer carries or takes.

An apispec plugin, so that every operation gets them as it is registered: `X-Request-Id` (taken on
every request, echoed on every answer, see service/logs.py) and `Retry-After` on every 429.
Headers of one operation (`Location`, `ETag`, `Idempotency-Key`, `If-Match`) sit on its route.
"""

from __future__ import annotations

from typing import Any

from apispec import APISpec, BasePlugin

from service.logs import REQUEST_ID_HEADER, SANE_REQUEST_ID

REQUEST_ID = "RequestId"
RETRY_AFTER = "RetryAfter"
REQUEST_ID_REF = {"$ref": f"#/components/headers/{REQUEST_ID}"}
RETRY_AFTER_REF = {"$ref": f"#/components/headers/{RETRY_AFTER}"}
ETAG = {
    "description": 'the game\'s version in quotes, like "12": send it back as If-Match',
    "required": True,
    "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
}
LOCATION = {
    "description": "the new game's path, /v1/games/{id}",
    "required": True,
    "schema": {"type": "string", "pattern": "^/v1/games/[A-Za-z0-9_-]+$"},
}


class HeadersPlugin(BasePlugin):
    """Declares `X-Request-Id` on every operation and answer and `Retry-After` on every 429."""

    def init_spec(self, spec: APISpec) -> None:
        """Register the shared headers and the request id parameter as components."""
        spec.components.header(
            REQUEST_ID,
            {
                "description": "the request's id: the client's X-Request-Id when sane, else a new one",
                "required": True,
                "schema": {"type": "string", "pattern": f"^{SANE_REQUEST_ID.pattern}$"},
            },
        )
        spec.components.header(
            RETRY_AFTER,
            {
                "description": "seconds until the client may try again",
                "required": True,
                "schema": {"type": "string", "pattern": "^[0-9]+$"},
            },
        )
        spec.components.parameter(
            REQUEST_ID,
            "header",
            {
                "name": REQUEST_ID_HEADER,
                "description": "an id for this request's log lines; a value of another form is replaced by a new id",
                "schema": {"type": "string", "pattern": f"^{SANE_REQUEST_ID.pattern}$"},
            },
        )

    def operation_helper(self, path: str | None = None, operations: Any = None, **kwargs: Any) -> None:
        """Add the request id to every operation and answer, and Retry-After to every 429."""
        for operation in (operations or {}).values():
            operation.setdefault("parameters", []).append(REQUEST_ID)
            for status, response in operation.get("responses", {}).items():
                if isinstance(response, dict):
                    declare_headers(response, retry_after=str(status) == "429")


def declare_headers(response: dict[str, Any], *, retry_after: bool = False) -> None:
    """Declare X-Request-Id (and Retry-After) on one response."""
    headers = response.setdefault("headers", {})
    headers[REQUEST_ID_HEADER] = dict(REQUEST_ID_REF)  # a copy each: the YAML shows no anchors
    if retry_after:
        headers["Retry-After"] = dict(RETRY_AFTER_REF)
