"""Calling Redis for the store's adapters: a failure to reach it is StoreUnavailable; a write script is sent
once, sent again only when that is safe, or read back when its reply is lost (service/storage/redis_clients.py's
sent_once); and the read every upkeep adapter shares, a game's keys in one atomic step."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.client import NEVER_DECODE
from redis.exceptions import ClusterError, SlotNotCoveredError

from service.ops import metrics
from service.storage import keys
from service.storage.outcomes import StoreUnavailable
from service.storage.packed_games import Entry
from service.storage.redis_clients import StoreClient, sent_once

# Redis (or a node, or the slots of a cluster) cannot be reached right now
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, ClusterError, SlotNotCoveredError)
RESENDS = 2  # times a write whose outcome is unknown is sent again (safely) before a 503
RESEND_PAUSE_SECONDS = 0.05  # before the first resend; doubled for each next one

# KEYS: stream, meta, packed, disputes. Everything stored of one game, read in one atomic step:
# meta hash pairs, stream entries, packed value ('' when there is none), disputes.
_READ_GAME = """
local packed = redis.call('GET', KEYS[3]) or ''
return {redis.call('HGETALL', KEYS[2]), redis.call('XRANGE', KEYS[1], '-', '+'), packed,
        redis.call('XRANGE', KEYS[4], '-', '+')}
"""


def store_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Call Redis; StoreUnavailable (counted in the metrics) when it cannot be reached."""
    try:
        return function(*args, **kwargs)
    except UNAVAILABLE as error:
        metrics.STORE_ERRORS.inc()
        raise StoreUnavailable(str(error)) from error
    except redis.ResponseError as error:  # a script's OOM comes as a plain ResponseError
        if not isinstance(error, redis.exceptions.OutOfMemoryError) and "OOM" not in str(error):
            raise
        metrics.STORE_ERRORS.inc()  # maxmemory reached under `noeviction`: Redis refused the write whole
        raise StoreUnavailable(f"Redis is out of memory: {error}") from error


def run(script: Any, keys: list[str], args: list[Any]) -> tuple[str, str]:
    """Run a write script of a two-item reply, sent once (a lost reply is the caller's to resolve, not the driver's)."""
    with sent_once():
        reply = store_call(script, keys=keys, args=args)
    return text(reply[0]), text(reply[1])


def run_raw(client: StoreClient, script: Any, keys: list[str], args: list[Any]) -> Any:
    """A script's reply as bytes, never decoded (it may hold a packed value, which is not text)."""
    raw: dict[str, Any] = {NEVER_DECODE: []}
    try:
        return store_call(client.execute_command, "EVALSHA", script.sha, len(keys), *keys, *args, **raw)
    except redis.exceptions.NoScriptError:
        return store_call(client.execute_command, "EVAL", script.script, len(keys), *keys, *args, **raw)


def run_until_known(script: Any, keys: list[str], args: list[Any], resendable: bool) -> tuple[str, str, bool]:
    """Run a write script once; if its outcome is unknown (the connection failed on the way) and
    it is `resendable` (the same script again cannot apply it twice), send it again, up to RESENDS
    times. Its reply, and whether it was resent; StoreUnavailable when no reply came."""
    pause = RESEND_PAUSE_SECONDS
    for attempt in range(RESENDS if resendable else 0):
        try:
            return (*run(script, keys, args), attempt > 0)
        except StoreUnavailable:
            time.sleep(pause)
            pause *= 2
    return (*run(script, keys, args), resendable)


def sent_once_until_known(script: Any, keys: list[str], args: list[Any], learn: Callable[[], str | None]) -> str:
    """Run a write script of one reply, sent once; when its outcome is unknown (the connection failed
    on the way: it may have run or not), `learn` reads the game back and says what the script's reply
    would have been, or None when it did not run: then it is sent again, up to RESENDS times.
    StoreUnavailable when no reply came and nothing could be learnt."""
    pause = RESEND_PAUSE_SECONDS
    for attempt in range(RESENDS + 1):
        try:
            with sent_once():
                return text(store_call(script, keys=keys, args=args))
        except StoreUnavailable:
            if attempt == RESENDS:
                raise
        known = learn()
        if known is not None:
            return known
        time.sleep(pause)
        pause *= 2
    raise AssertionError("unreachable")


def read_bytes(client: StoreClient, key: str) -> bytes | None:
    """A string key's value as bytes, never decoded (a packed value, a snapshot)."""
    value: bytes | None = store_call(client.execute_command, "GET", key, **{NEVER_DECODE: []})
    return value


@dataclasses.dataclass(frozen=True)
class GameKeys:
    """A game's keys as one atomic read found them: meta hash, stream entries, packed value, disputes."""

    meta: dict[str, str]
    entries: tuple[Entry, ...]
    packed: bytes | None
    disputes: tuple[tuple[str, dict[str, str]], ...]

    def counts(self) -> tuple[int, int, int, int]:
        """Stream entries, meta fields, packed length, disputes."""
        return len(self.entries), len(self.meta), len(self.packed or b""), len(self.disputes)


class GameReader:
    """Every key of a game that export and packing need, read in one script (one atomic step)."""

    def __init__(self, client: StoreClient) -> None:
        self._client = client
        self._script = client.register_script(_READ_GAME)

    def read(self, game_id: str) -> GameKeys:
        """The game's meta, stream, packed value and disputes, as they are at one moment."""
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id), keys.disputes(game_id)]
        meta, entries, packed, disputes = run_raw(self._client, self._script, names, [])
        return GameKeys(
            dict(text_pairs(meta)),
            tuple((text(entry_id), dict(text_pairs(fields)).get("e", "")) for entry_id, fields in entries),
            bytes(packed) or None,
            tuple((text(entry_id), dict(text_pairs(fields))) for entry_id, fields in disputes),
        )


def text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def text_pairs(flat: Sequence[Any]) -> list[tuple[str, str]]:
    """A flat [field, value, ...] reply as (field, value) texts."""
    return [(text(flat[i]), text(flat[i + 1])) for i in range(0, len(flat), 2)]
