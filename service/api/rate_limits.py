"""Per-client limits in Redis: game creations per minute (a fixed window), reads (a token bucket).

Settings (app config, else the environment; each off under TESTING unless a test sets it):
  GAMES_PER_MINUTE    games one client may create per window (default 30; 0 turns the limit off)
  BOT_REGISTRATIONS_PER_HOUR  bots one client may register an hour (default 10; 0 turns the limit off)
  READS_PER_SECOND    GET requests under /v1/ one client may make a second, sustained (default 20;
                      0 turns the limit off) ...
  READ_BURST          ... and at once after a quiet spell: the bucket's size (default 200)
  EXPERT_GAMES_PER_CLIENT  games with an expert seat one client may have running at once (default 4;
                      0 turns the limit off): each such game keeps one expert job on the queue at a time,
                      so a client's share of the expert workers is at most this many jobs
  TRUSTED_PROXY_HOPS  how many proxies in front of the API append to X-Forwarded-For (default 0:
                      the header is ignored and the client is the socket's remote address; with 1,
                      the last address in the header, the one the trusted proxy saw)

Games: one key per client, `ratelimit:games:{<client>}`: the first creation of a window INCRs it and sets
its expiry to the window; every later one INCRs it; both in one Lua script, so the counter and its
expiry can never part. The window runs on Redis's clock, so API processes need not agree on time.
Reads: one hash per client, `ratelimit:reads:{<client>}`, holding the tokens left and when they were
counted; a script refills them at READS_PER_SECOND up to READ_BURST on Redis's clock, takes one per
read, and lets the key expire once the bucket would be full again.
Expert games: one sorted set per client, `ratelimit:experts:{<client>}`, game id -> when created; a creation
with an expert seat first drops the games that have ended (or are gone), then is refused when as many
are left. Two creations at the very same moment may both pass: the bound is per request, not atomic.
Over a limit: 429 problem+json `rate_limited` with `Retry-After` (seconds until the window ends, or
until the bucket holds a token again).
Routes marked `@unlimited` (the static catalog) take no token: they cost Redis nothing, so they
answer with Redis down too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, TypeVar

import flask

from service.api.problems import ApiError
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call

DEFAULT_GAMES_PER_MINUTE = 30
DEFAULT_BOT_REGISTRATIONS_PER_HOUR = 10
BOT_REGISTRATIONS_EXTENSION = "ratelimit_bots"
DEFAULT_READS_PER_SECOND = 20
DEFAULT_READ_BURST = 200
DEFAULT_EXPERT_GAMES_PER_CLIENT = 4
EXPERT_GAMES_EXTENSION = "ratelimit_experts"
EXPERT_GAMES_KEY_SECONDS = 7 * 24 * 3600  # a client's set outlives its longest expert game
EXPERT_RETRY_SECONDS = 60
WINDOW_SECONDS = 60
EXTENSION = "ratelimit"
READS_EXTENSION = "ratelimit_reads"
READ_PATHS = "/v1/"
READS_LIMITED = "too many reads from this client (`rate_limited`); `Retry-After` says when to retry"
UNLIMITED = "unlimited_reads"  # the attribute `@unlimited` sets on a view
View = TypeVar("View", bound=Callable[..., Any])

# KEYS: bucket hash. ARGV: tokens a second, bucket size.
# Returns {1 if a token was taken else 0, ms until the bucket holds one token again}.
_TAKE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local rate, size = tonumber(ARGV[1]), tonumber(ARGV[2])
local saved = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(saved[1]), tonumber(saved[2])
if tokens == nil or at == nil then tokens, at = size, now end
tokens = math.min(size, tokens + math.max(0, now - at) * rate / 1000)
local taken, wait = 0, 0
if tokens >= 1 then
  tokens, taken = tokens - 1, 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((size - tokens) * 1000 / rate) + 1000)
return {taken, wait}
"""

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

    def __init__(
        self,
        client: StoreClient,
        limit: int,
        window_seconds: int = WINDOW_SECONDS,
        name: str = "games",
        noun: str = "new games",
    ):
        self.limit = limit
        self.noun = noun
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
        count, ttl_ms = store_call(self._hit, keys=[self.key(client_id)], args=[self.window_seconds * 1000])
        if int(count) > self.limit:
            retry_after = max(1, math.ceil(int(ttl_ms) / 1000))
            raise ApiError(
                429,
                "rate_limited",
                f"at most {self.limit} {self.noun} per client every {self.window_seconds} s; "
                f"try again in {retry_after} s",
                headers={"Retry-After": str(retry_after)},
            )


class TokenBucket:
    """A token bucket per client: `rate` tokens a second, at most `size` saved; a request takes one."""

    def __init__(self, client: StoreClient, rate: int, size: int, name: str = "reads") -> None:
        self.rate = rate
        self.size = max(1, size)
        self.name = name
        self._take = client.register_script(_TAKE)

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def key(self, client_id: str) -> str:
        return f"ratelimit:{self.name}:{{{client_id}}}"

    def take(self, client_id: str) -> None:
        """Take a token of `client_id`; 429 `rate_limited` with `Retry-After` when none is left."""
        if not self.enabled:
            return
        taken, wait_ms = store_call(self._take, keys=[self.key(client_id)], args=[self.rate, self.size])
        if not int(taken):
            retry_after = max(1, math.ceil(int(wait_ms) / 1000))
            raise ApiError(
                429,
                "rate_limited",
                f"at most {self.rate} reads a second per client (bursts of {self.size}); try again in {retry_after} s",
                headers={"Retry-After": str(retry_after)},
            )


class RunningGames:
    """Per client, the games it created that are still running (only games with an expert seat are noted)."""

    def __init__(self, client: StoreClient, limit: int, name: str = "experts") -> None:
        self.client = client
        self.limit = limit
        self.name = name

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def key(self, client_id: str) -> str:
        return f"ratelimit:{self.name}:{{{client_id}}}"

    def admit(self, client_id: str, running: Callable[[str], bool]) -> None:
        """429 `rate_limited` when `client_id` has `limit` games still `running` (the others are dropped)."""
        if not self.enabled:
            return
        key = self.key(client_id)
        noted = [str(game_id) for game_id in store_call(self.client.zrange, key, 0, -1)]
        ended = [game_id for game_id in noted if not running(game_id)]
        if ended:
            store_call(self.client.zrem, key, *ended)
        if len(noted) - len(ended) >= self.limit:
            raise ApiError(
                429,
                "rate_limited",
                f"at most {self.limit} running games with an expert seat per client; "
                f"try again when one has ended (in {EXPERT_RETRY_SECONDS} s, say)",
                headers={"Retry-After": str(EXPERT_RETRY_SECONDS)},
            )

    def note(self, client_id: str, game_id: str, at: float) -> None:
        """`client_id` created `game_id`, which counts until it ends."""
        if not self.enabled:
            return
        key = self.key(client_id)
        store_call(self.client.zadd, key, {game_id: at})
        store_call(self.client.expire, key, EXPERT_GAMES_KEY_SECONDS)


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


def client_address_of(request: flask.Request) -> str:
    """The current client, as the limits count it (TRUSTED_PROXY_HOPS from the app's config)."""
    return client_address(request, int(flask.current_app.config.get("TRUSTED_PROXY_HOPS", 0)))


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
    app.config["READS_PER_SECOND"] = _setting(app, "READS_PER_SECOND", DEFAULT_READS_PER_SECOND)
    app.config["READ_BURST"] = _setting(app, "READ_BURST", DEFAULT_READ_BURST) or DEFAULT_READ_BURST
    limiter = RateLimiter(client, app.config["GAMES_PER_MINUTE"])
    app.extensions[EXTENSION] = limiter
    app.extensions[READS_EXTENSION] = TokenBucket(client, app.config["READS_PER_SECOND"], app.config["READ_BURST"])
    experts = _setting(app, "EXPERT_GAMES_PER_CLIENT", DEFAULT_EXPERT_GAMES_PER_CLIENT)
    app.config["EXPERT_GAMES_PER_CLIENT"] = experts
    app.extensions[EXPERT_GAMES_EXTENSION] = RunningGames(client, experts)
    bots = _setting(app, "BOT_REGISTRATIONS_PER_HOUR", DEFAULT_BOT_REGISTRATIONS_PER_HOUR)
    app.config["BOT_REGISTRATIONS_PER_HOUR"] = bots
    app.extensions[BOT_REGISTRATIONS_EXTENSION] = RateLimiter(client, bots, 3600, "bots", "bot registrations")
    app.before_request(limit_reads)
    return limiter


def unlimited(view: View) -> View:
    """Mark a view that reads nothing from Redis: it takes no read token."""
    setattr(view, UNLIMITED, True)
    return view


def limit_reads() -> None:
    """Take a read token of the current client for a GET under /v1/ (no-op when the limit is off, and
    for an `@unlimited` route)."""
    request = flask.request
    if request.method not in ("GET", "HEAD") or not request.path.startswith(READ_PATHS):
        return
    app: Any = flask.current_app
    if getattr(app.view_functions.get(request.endpoint or ""), UNLIMITED, False):
        return
    bucket: TokenBucket | None = app.extensions.get(READS_EXTENSION)
    if bucket is None or not bucket.enabled:
        return
    bucket.take(client_address_of(request))


def limit_game_creation() -> None:
    """Count a game creation by the current client (no-op when the limit is off)."""
    app: Any = flask.current_app
    limiter: RateLimiter | None = app.extensions.get(EXTENSION)
    if limiter is None or not limiter.enabled:
        return
    limiter.hit(client_address_of(flask.request))


def limit_bot_registration() -> None:
    """Count a bot registration by the current client (no-op when the limit is off)."""
    limiter: RateLimiter | None = flask.current_app.extensions.get(BOT_REGISTRATIONS_EXTENSION)
    if limiter is not None and limiter.enabled:
        limiter.hit(client_address_of(flask.request))


def expert_games() -> RunningGames | None:
    """The app's bound on each client's running games with an expert seat (None when not set up)."""
    found: RunningGames | None = flask.current_app.extensions.get(EXPERT_GAMES_EXTENSION)
    return found
