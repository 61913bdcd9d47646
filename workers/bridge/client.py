"""The bridge's HTTP client: the bot's turns and its actions, JSON over `urllib` (standard library only)."""

from __future__ import annotations

import collections
import email.utils
import http.client
import json
import math
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from typing import Any

HTTP_SLACK_SECONDS = 15.0  # a long-poll's socket timeout is its wait plus this
POST_TIMEOUT_SECONDS = 15.0
OPTIONS_CACHE_GAMES = 1024  # the options of this many games are kept (the `--level` players need them)
# a longer Retry-After is taken as an hour (the service's longest, a rate limit's window): a wait of days,
# or of 1e12 s, which the platform's timers refuse, would stop the bridge's poller for good
RETRY_AFTER_MAX_SECONDS = 3600.0


class Unreachable(Exception):
    """No answer: the connection failed, was dropped or timed out (nothing is known of the request's fate)."""


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: its status, its JSON body (None when it had none or it was not JSON), its headers."""

    status: int
    body: Any
    retry_after: float | None = None
    date: datetime | None = None

    @property
    def problem(self) -> str:
        """What a problem answer says: its `code` and `detail` when it has them."""
        if isinstance(self.body, dict):
            parts = [str(self.body[key]) for key in ("code", "detail") if self.body.get(key)]
            if parts:
                return ": ".join(parts)
        return f"HTTP {self.status}"


class ServiceClient:
    """One service, one bot token. Thread-safe: every call opens its own connection."""

    def __init__(self, base_url: str, token: str) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--url wants the service's base URL, like http://127.0.0.1:8000, not {base_url!r}")
        self.base = base_url.rstrip("/")
        self._token = token
        self._options: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        self._options_lock = threading.Lock()

    def turns(self, wait: int, limit: int) -> Answer:
        """`GET /v1/bots/me/turns?wait=S&limit=N`: blocks up to `wait` seconds until the bot has a turn."""
        query = urllib.parse.urlencode({"wait": wait, "limit": limit})
        return self._call("GET", f"/v1/bots/me/turns?{query}", timeout=wait + HTTP_SLACK_SECONDS)

    def post_action(self, game_id: str, body: dict[str, Any], idempotency_key: str) -> Answer:
        """`POST /v1/games/{id}/actions` with the bot's token and the turn id as `Idempotency-Key`."""
        path = f"/v1/games/{urllib.parse.quote(game_id, safe='')}/actions"
        return self._call("POST", path, body, {"Idempotency-Key": idempotency_key}, POST_TIMEOUT_SECONDS)

    def game_options(self, game_id: str) -> dict[str, Any]:
        """A game's options, from its record (`GET /v1/games/{id}/record`), kept for the last few games.

        The seat's view does not carry them, and a house policy needs them (Switch's `match_rank`, the
        expert's sampled worlds). Raises Unreachable, or LookupError when the record cannot be had."""
        with self._options_lock:
            if game_id in self._options:
                self._options.move_to_end(game_id)
                return self._options[game_id]
        answer = self._call("GET", f"/v1/games/{urllib.parse.quote(game_id, safe='')}/record", timeout=30.0)
        record = answer.body if answer.status == 200 and isinstance(answer.body, dict) else {}
        if not isinstance(record.get("options"), dict):
            raise LookupError(f"no options for game {game_id}: {answer.problem}")
        options: dict[str, Any] = record["options"]
        with self._options_lock:
            self._options[game_id] = options
            while len(self._options) > OPTIONS_CACHE_GAMES:
                self._options.popitem(last=False)
        return options

    def _call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 30.0
    ) -> Answer:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _answer(response.status, response.read(), response.headers)
        except urllib.error.HTTPError as error:
            try:
                raw = error.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            return _answer(error.code, raw, error.headers)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            raise Unreachable(f"{method} {self.base}{path.split('?')[0]}: {error}") from error


def _answer(status: int, raw: bytes, headers: Any) -> Answer:
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read
        body = None
    return Answer(status, body, _retry_after(headers), _date(headers))


def _retry_after(headers: Any) -> float | None:
    """The seconds of a `Retry-After`, from 0 to RETRY_AFTER_MAX_SECONDS; None without one, or one that is
    no number (an HTTP date, NaN, an infinity)."""
    value = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX_SECONDS) if math.isfinite(seconds) else None


def _date(headers: Any) -> datetime | None:
    value = headers.get("Date") if headers is not None else None
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
