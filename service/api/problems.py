"""Every error leaves as application/problem+json with a stable `code` (API.md)."""

from __future__ import annotations

from typing import Any

from domain.errors import DomainError, InvalidInput, RuleViolation

PROBLEM_TYPE_BASE = "https://cardtable.invalid/problems/"
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
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


def from_domain(error: DomainError) -> ApiError:
    """400 for malformed input, 422 for what the rules refuse."""
    if isinstance(error, RuleViolation):
        return ApiError(422, error.code, error.detail, error.rule)
    assert isinstance(error, InvalidInput)
    return ApiError(400, error.code, error.detail, error.rule)


def not_found(game_id: str) -> ApiError:
    """404 for an unknown game id."""
    return ApiError(404, "game_not_found", f"no game with id {game_id!r}")


def version_conflict(expected: int, current: int) -> ApiError:
    """409 when the caller's version is no longer current."""
    return ApiError(
        409,
        "version_conflict",
        f"expected version {expected}, but the game is at version {current}",
        headers={"ETag": f'"{current}"'},
    )


def store_unavailable() -> ApiError:
    """503 when Redis cannot be reached."""
    return ApiError(503, "store_unavailable", "the event store cannot be reached; nothing was written")
