"""The event store: one Redis stream per game, compare-and-append inside Redis.

Keys of a game share one hash tag, so they live in one Redis Cluster slot:
  game:{<id>}:events  the stream; entry id `<seq>-0`, field `e` = the record as JSON
  game:{<id>}:meta    creation facts: game, seats, options, token hashes, the secret seed
  game:{<id>}:idem    Idempotency-Key answers, kept as long as the game
  game:{<id>}:disputes  disputes filed by seats: a stream of its own, never the game's
  game:{<id>}:ticket:<sha256>  a seat's live-stream ticket (its seat), single use, with an expiry
Every command and script touches the keys of one game only (the scripts only those in KEYS), so the
store runs on one Redis or on a Redis Cluster alike (service/connections.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.exceptions import ClusterError, SlotNotCoveredError

from service.connections import StoreClient

# KEYS: stream, meta hash. ARGV: number of meta items, meta field/value pairs..., records...
_CREATE = """
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  return {'exists', '0'}
end
local items = tonumber(ARGV[1])
for i = 2, items, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
for i = items + 2, #ARGV do
  redis.call('XADD', KEYS[1], tostring(i - items - 1) .. '-0', 'e', ARGV[i])
end
return {'ok', tostring(#ARGV - items - 1)}
"""

# KEYS: stream, idem hash. ARGV: expected version, idem field ('' for none), idem value, records...
_APPEND = """
local field = ARGV[2]
if field ~= '' then
  local prior = redis.call('HGET', KEYS[2], field)
  if prior then return {'duplicate', prior} end
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local version = 0
if #last > 0 then version = tonumber(string.match(last[1][1], '^(%d+)')) end
if version ~= tonumber(ARGV[1]) then return {'conflict', tostring(version)} end
for i = 4, #ARGV do
  redis.call('XADD', KEYS[1], tostring(version + i - 3) .. '-0', 'e', ARGV[i])
end
if field ~= '' then redis.call('HSET', KEYS[2], field, ARGV[3]) end
return {'ok', tostring(version + #ARGV - 3)}
"""


class StoreUnavailable(Exception):
    """Redis could not be reached; nothing was written."""


# Redis (or a node, or the slots of a cluster) cannot be reached right now
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, ClusterError, SlotNotCoveredError)


class GameExists(Exception):
    """A game with this id exists already."""


@dataclasses.dataclass(frozen=True)
class AppendResult:
    """What an append did: `ok`, `conflict` (version is the current one) or `duplicate`."""

    outcome: str
    version: int = 0
    prior: str | None = None


def _keys(game_id: str) -> tuple[str, str, str]:
    tag = f"game:{{{game_id}}}"
    return f"{tag}:events", f"{tag}:meta", f"{tag}:idem"


def _disputes_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:disputes"


def _ticket_key(game_id: str, digest: str) -> str:
    return f"game:{{{game_id}}}:ticket:{digest}"


def _entry_id(seq: int) -> str:
    return f"{seq}-0"


class EventStore:
    """Append-only game streams with atomic compare-and-append."""

    def __init__(self, client: StoreClient, blocking_client: StoreClient | None = None) -> None:
        self._redis = client
        self._blocking = blocking_client or client
        self._create = client.register_script(_CREATE)
        self._append = client.register_script(_APPEND)

    def ping(self) -> bool:
        """True when Redis answers (on a cluster: every primary)."""
        try:
            if isinstance(self._redis, RedisCluster):
                return bool(self._redis.ping(target_nodes=RedisCluster.PRIMARIES))
            return bool(self._redis.ping())
        except (redis.RedisError, SlotNotCoveredError):
            return False

    def create(self, game_id: str, meta: Mapping[str, str], records: list[dict[str, Any]]) -> None:
        """Store a new game's meta and its first records in one atomic step."""
        stream, meta_key, _ = _keys(game_id)
        flat = [item for pair in meta.items() for item in pair]
        outcome, _ = self._run(self._create, [stream, meta_key], [len(flat), *flat, *_encode(records)])
        if outcome == "exists":
            raise GameExists(game_id)

    def meta(self, game_id: str) -> dict[str, str] | None:
        """The game's creation facts, None when there is no such game."""
        data = self._call(self._redis.hgetall, _keys(game_id)[1])
        return dict(data) if data else None

    def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """Records with seq > after, in order."""
        entries = self._call(self._redis.xrange, _keys(game_id)[0], _entry_id(after + 1), "+", count)
        return [json.loads(fields["e"]) for _, fields in entries]

    def read_raw(self, game_id: str) -> list[str]:
        """Every stored entry's text as it is, for audits of a possibly damaged stream."""
        entries = self._call(self._redis.xrange, _keys(game_id)[0], "-", "+")
        return [str(fields.get("e", "")) for _, fields in entries]

    def add_dispute(self, game_id: str, dispute: Mapping[str, Any]) -> str:
        """Store a dispute in the game's dispute stream; returns its entry id."""
        entry = self._call(self._redis.xadd, _disputes_key(game_id), {"d": json.dumps(dispute)})
        return str(entry)

    def disputes(self, game_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Every dispute of a game with its entry id, oldest first."""
        entries = self._call(self._redis.xrange, _disputes_key(game_id), "-", "+")
        return [(str(entry_id), json.loads(fields["d"])) for entry_id, fields in entries]

    def count_disputes(self, game_id: str) -> int:
        """How many disputes a game has."""
        return int(self._call(self._redis.xlen, _disputes_key(game_id)))

    def last_seq(self, game_id: str) -> int:
        """The seq of the stream's last record; 0 when it has none."""
        entries = self._call(self._redis.xrevrange, _keys(game_id)[0], "+", "-", 1)
        return int(str(entries[0][0]).partition("-")[0]) if entries else 0

    def read_blocking(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """Records with seq > after; blocks up to block_ms until one exists (one XREAD, on the blocking client)."""
        stream = _keys(game_id)[0]
        reply = self._call(self._blocking.xread, {stream: _entry_id(after)}, None, block_ms)
        return [json.loads(fields["e"]) for _, entries in reply or [] for _, fields in entries]

    def put_ticket(self, game_id: str, digest: str, seat: int, seconds: int) -> None:
        """Keep a stream ticket (by its digest) for `seconds`."""
        self._call(self._redis.set, _ticket_key(game_id, digest), str(seat), ex=seconds)

    def take_ticket(self, game_id: str, digest: str) -> int | None:
        """The seat of a stream ticket, which is gone from then on; None when unknown, used or expired."""
        seat = self._call(self._redis.getdel, _ticket_key(game_id, digest))
        return None if seat is None else int(seat)

    def append(
        self,
        game_id: str,
        expected_version: int,
        records: list[dict[str, Any]],
        idempotency: tuple[str, str] | None = None,
    ) -> AppendResult:
        """Append records only if the stream is still at expected_version (atomic in Redis)."""
        stream, _, idem_key = _keys(game_id)
        field, value = idempotency or ("", "")
        args = [expected_version, field, value, *_encode(records)]
        outcome, detail = self._run(self._append, [stream, idem_key], args)
        if outcome == "duplicate":
            return AppendResult("duplicate", prior=detail)
        return AppendResult(outcome, int(detail))

    def idempotent_answer(self, game_id: str, field: str) -> str | None:
        """The stored answer for an Idempotency-Key field, if any."""
        answer = self._call(self._redis.hget, _keys(game_id)[2], field)
        return str(answer) if answer is not None else None

    def _run(self, script: Any, keys: list[str], args: list[Any]) -> tuple[str, str]:
        reply = self._call(script, keys=keys, args=args)
        return _text(reply[0]), _text(reply[1])

    @staticmethod
    def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except UNAVAILABLE as error:
            raise StoreUnavailable(str(error)) from error


def _encode(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(record, separators=(",", ":"), ensure_ascii=False) for record in records]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
