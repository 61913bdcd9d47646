"""Every error leaves as application/problem+json with a stable `code` (API.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.play.errors import (
    BadBotSeat,
    BadMatch,
    BotExists,
    BotNotFound,
    BotsFull,
    DealInPlay,
    EventOutOfRange,
    GameNotFound,
    IdempotencyKeyReused,
    InvalidRequest,
    LadderNotFound,
    MatchesFull,
    MatchNotFound,
    NoFreeGameId,
    PlayError,
    RulesRefusal,
    StreamDamaged,
    TooManyDisputes,
    Unauthorized,
    VersionConflict,
)

PROBLEM_TYPE_BASE = "https://cardtable.invalid/problems/"
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class ApiError(Exception):
    """An error with its HTTP status, stable code, detail and (for rules) rule id."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        rule: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.rule = rule
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The problem+json document."""
        problem: dict[str, Any] = {
            "type": PROBLEM_TYPE_BASE + self.code,
            "title": TITLES.get(self.status, "Error"),
            "status": self.status,
            "code": self.code,
            "detail": self.detail,
        }
        if self.rule:
            problem["rule"] = self.rule
        return problem


STATUS_OF: dict[type[PlayError], int] = {
    InvalidRequest: 400,
    Unauthorized: 401,
    GameNotFound: 404,
    VersionConflict: 409,
    RulesRefusal: 422,
    EventOutOfRange: 422,
    TooManyDisputes: 422,
    IdempotencyKeyReused: 422,
    BotExists: 409,
    BotsFull: 409,
    BotNotFound: 404,
    BadBotSeat: 422,
    MatchNotFound: 404,
    BadMatch: 422,
    MatchesFull: 503,
    DealInPlay: 403,
    LadderNotFound: 404,
    StreamDamaged: 500,
    NoFreeGameId: 503,
}
"""The one place the play layer's refusals meet HTTP: each class's status."""


def status_of(kind: type[PlayError]) -> int:
    """The status of a refusal class (or of the nearest class above it in STATUS_OF); 500 for none."""
    return next((STATUS_OF[cls] for cls in kind.__mro__ if cls in STATUS_OF), 500)


def problem_for(error: PlayError) -> ApiError:
    """A refusal of the play layer as its problem: status, code, detail, rule; a 409's ETag."""
    headers = {"ETag": f'"{error.current}"'} if isinstance(error, VersionConflict) else None
    if isinstance(error, DealInPlay | MatchesFull):
        headers = {"Retry-After": str(error.retry_after)}
    status = 429 if isinstance(error, MatchesFull) and error.per_client else status_of(type(error))
    return ApiError(status, error.code, error.detail, error.rule, headers)


def problem_of_data(refusal: Mapping[str, Any]) -> dict[str, Any]:
    """The problem+json document of a refusal kept as data (PlayError.as_data: a dispute's view of a step
    that does not replay); one kept as its problem already (by an earlier version) as it is."""
    if "status" in refusal:
        return dict(refusal)
    code = refusal["code"]
    status = next((status for kind, status in STATUS_OF.items() if getattr(kind, "code", None) == code), 500)
    return ApiError(status, code, refusal["detail"], refusal.get("rule")).body()


def store_unavailable() -> ApiError:
    """503 when Redis cannot be reached."""
    return ApiError(503, "store_unavailable", "the event store cannot be reached; nothing was written")
