"""How many games one client may create per minute: a fixed-window counter in Redis.

Settings (app config, else the environment):
  GAMES_PER_MINUTE    games one client may create per window (default 30; 0 turns the limit off;
                      off under TESTING unless a test sets it)
  TRUSTED_PROXY_HOPS  how many proxies in front of the API append to X-Forwarded-For (default 0:
                      the header is ignored and the client is the socket's remote address; with 1,
                      the last address in the header, the one the trusted proxy saw)

One key per client, `ratelimit:games:{<client>}`: the first creation of a window INCRs it and sets
its expiry to the window; every later one INCRs it; both in one Lua script, so the counter and its
expiry can never part. The window runs on Redis's clock, so API processes need not agree on time.
Over the limit: 429 problem+json `rate_limited` with `Retry-After` (seconds until the window ends).
"""

from __future__ import annotations

import math
import os
from typing import Any

import flask

from service.connections import StoreClient
from service.problems import ApiError
from service.store import UNAVAILABLE, StoreUnavailable

DEFAULT_GAMES_PER_MINUTE = 30
WINDOW_SECONDS = 60
EXTENSION = "ratelimit"

# KEYS: counter. ARGV: window in ms. Returns {count after this request, ms left in the window}.
_HIT = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""


class RateLimiter:
    """A fixed-window counter per client: at most `limit` hits per `window_seconds`."""

    def __init__(self, client: StoreClient, limit: int, window_seconds: int = WINDOW_SECONDS, name: str = "games"):
        self.limit = limit
        self.window_seconds = window_seconds
        self.name = name
        self._hit = client.register_script(_HIT)

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def key(self, client_id: str) -> str:
        return f"ratelimit:{self.name}:{{{client_id}}}"

    def hit(self, client_id: str) -> None:
        """Count one request of `client_id`; 429 `rate_limited` when it is over the limit."""
        if not self.enabled:
            return
        try:
            count, ttl_ms = self._hit(keys=[self.key(client_id)], args=[self.window_seconds * 1000])
        except UNAVAILABLE as error:
            raise StoreUnavailable(str(error)) from error
        if int(count) > self.limit:
            retry_after = max(1, math.ceil(int(ttl_ms) / 1000))
            raise ApiError(
                429,
                "rate_limited",
                f"at most {self.limit} new games per client every {self.window_seconds} s; "
                f"try again in {retry_after} s",
                headers={"Retry-After": str(retry_after)},
            )


def client_address(request: flask.Request, trusted_hops: int) -> str:
    """The client's address: the socket's peer, or with trusted proxies the address the outermost
    trusted proxy saw (counted from the right of X-Forwarded-For, which a client cannot forge)."""
    remote = request.remote_addr or "unknown"
    if trusted_hops <= 0:
        return remote
    header = request.headers.get("X-Forwarded-For", "")
    hops = [part.strip() for part in header.split(",") if part.strip()]
    if len(hops) < trusted_hops:
        return remote
    return hops[-trusted_hops][:100]


def _setting(app: flask.Flask, name: str, default: int) -> int:
    if name in app.config:
        return int(app.config[name])
    if app.config.get("TESTING"):
        return 0  # tests create many games; a test that checks the limit sets it
    return int(os.environ.get(name, default))


def init_app(app: flask.Flask, client: StoreClient) -> RateLimiter:
    """Read the settings and attach the game-creation limiter to the app."""
    app.config["GAMES_PER_MINUTE"] = _setting(app, "GAMES_PER_MINUTE", DEFAULT_GAMES_PER_MINUTE)
    app.config["TRUSTED_PROXY_HOPS"] = _setting(app, "TRUSTED_PROXY_HOPS", 0)
    limiter = RateLimiter(client, app.config["GAMES_PER_MINUTE"])
    app.extensions[EXTENSION] = limiter
    return limiter


def limit_game_creation() -> None:
    """Count a game creation by the current client (no-op when the limit is off)."""
    app: Any = flask.current_app
    limiter: RateLimiter | None = app.extensions.get(EXTENSION)
    if limiter is None or not limiter.enabled:
        return
    limiter.hit(client_address(flask.request, int(app.config.get("TRUSTED_PROXY_HOPS", 0))))
