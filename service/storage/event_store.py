"""The event store: one Redis stream per game, compare-and-append inside Redis.

Keys of a game share one hash tag, so they live in one Redis Cluster slot:
  game:{<id>}:events  the stream; entry id `<seq>-0`, field `e` = the record as JSON
  game:{<id>}:meta    creation facts: game, seats, options, token hashes, the secret seed
  game:{<id>}:idem    Idempotency-Key answers, kept as long as the game
  game:{<id>}:recent  list: the internal idempotency fields of the last RECENT_FIELDS appends sent
                      without a key (`<field> <version>`), so that a resend after a lost reply is known
  game:{<id>}:disputes  disputes filed by seats: a stream of its own, never the game's; entry id
                        `<n>-0` for the game's n-th dispute, fields `s` = the seat, `d` = the dispute
  game:{<id>}:packed  a finished game compacted (service/storage/packed_games.py): its meta and its stream in one
                      compressed value; `events`, `meta` and `idem` are then gone (docs/storage.md)
  game:{<id>}:snapshots  hash: version -> the game folded to that version (service/storage/snapshots.py), for
                      cold loads and replays in a process that has not folded the game yet
  game:{<id>}:answers  hash, for a packed game only: name -> an answer made once from the packed value (its
                      meta; the record and audit of GameHistory), kept as the packed value's digest then the
                      answer compressed; an answer whose digest is not the packed value's now is not used
  game:{<id>}:ticket:<sha256>  a seat's live-stream ticket (its seat), single use, with an expiry
  stats:games         hash: `started:<game>` and `finished:<game>` counts, for the metrics (best effort:
                      counted right after the append that starts or ends a game)
The read methods (meta, read, read_raw, records_after, last_seq) answer the same for a packed game as
before it was packed.
Every command and script touches the keys of one game only (the scripts only those in KEYS), so the
store runs on one Redis or on a Redis Cluster alike (service/storage/redis_clients.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import redis
from redis.client import NEVER_DECODE
from redis.cluster import RedisCluster
from redis.exceptions import ClusterError, SlotNotCoveredError

from service.ops import metrics
from service.storage.packed_games import Entry, Packed, encode_record, pack, unpack
from service.storage.redis_clients import StoreClient, sent_once

log = logging.getLogger(__name__)

# KEYS: stream, meta hash, packed. ARGV: number of meta items, meta field/value pairs..., records...
# An id in use answers `exists` with that game's nonce: a resend can tell its own create from a clash.
_CREATE = """
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return {'exists', redis.call('HGET', KEYS[2], 'nonce') or ''}
end
local items = tonumber(ARGV[1])
for i = 2, items, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
for i = items + 2, #ARGV do
  redis.call('XADD', KEYS[1], tostring(i - items - 1) .. '-0', 'e', ARGV[i])
end
return {'ok', tostring(#ARGV - items - 1)}
"""

# KEYS: stream, idem hash, recent fields. ARGV: expected version, idem field ('' for none), idem value,
# records... A client's field (`<seat>:<Idempotency-Key>`) is kept in the idem hash for the game's life;
# an internal one (`~<hex>`, an action sent without a key) only in a list of the last RECENT_FIELDS.
RECENT_FIELDS = 16  # internal fields kept: a resend after a lost reply comes at once, a few appends later at most
_APPEND = """
local field = ARGV[2]
local internal = string.sub(field, 1, 1) == '~'
if internal then
  for _, kept in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    local name, value = string.match(kept, '^(%S+) (.*)$')
    if name == field then return {'duplicate', value} end
  end
elseif field ~= '' then
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
if internal then
  redis.call('LPUSH', KEYS[3], field .. ' ' .. ARGV[3])
  redis.call('LTRIM', KEYS[3], 0, RECENT_LAST)
elseif field ~= '' then
  redis.call('HSET', KEYS[2], field, ARGV[3])
end
return {'ok', tostring(version + #ARGV - 3)}
""".replace("RECENT_LAST", str(RECENT_FIELDS - 1))


# KEYS: stream, meta, packed, then the keys dropped once packed. ARGV: entries, meta fields, packed length.
# Drops the unpacked game only if it is still exactly what was packed and read back.
_DROP_UNPACKED = """
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) or redis.call('HLEN', KEYS[2]) ~= tonumber(ARGV[2])
    or redis.call('STRLEN', KEYS[3]) ~= tonumber(ARGV[3]) then
  return 'changed'
end
redis.call('DEL', KEYS[1], KEYS[2], unpack(KEYS, 4))
return 'ok'
"""

# KEYS: stream, meta, packed, disputes, then any other key of the game. ARGV: entries, meta fields,
# packed length, disputes. Deletes the game only if it is still as it was read.
_DELETE = """
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) or redis.call('HLEN', KEYS[2]) ~= tonumber(ARGV[2])
    or redis.call('STRLEN', KEYS[3]) ~= tonumber(ARGV[3]) or redis.call('XLEN', KEYS[4]) ~= tonumber(ARGV[4]) then
  return 'changed'
end
redis.call('DEL', unpack(KEYS))
return 'ok'
"""

# KEYS: stream, meta, packed, disputes. ARGV: packed value, then per dispute: id, field count, fields...
# Every dispute is checked (ids `<n>-0` strictly increasing, fields in pairs) before the first write:
# the game is restored whole or not at all.
_RESTORE = """
for i = 1, 4 do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 'exists' end
end
local previous = 0
local at = 2
while at <= #ARGV do
  local number = tonumber(string.match(ARGV[at], '^([1-9]%d*)%-0$') or '')
  local n = tonumber(ARGV[at + 1] or '')
  if not number or number <= previous or not n or n < 2 or n % 2 ~= 0 or at + 1 + n > #ARGV then
    return 'invalid'
  end
  previous = number
  at = at + 2 + n
end
redis.call('SET', KEYS[3], ARGV[1])
local i = 2
while i <= #ARGV do
  local n = tonumber(ARGV[i + 1])
  redis.call('XADD', KEYS[4], ARGV[i], unpack(ARGV, i + 2, i + 1 + n))
  i = i + 2 + n
end
return 'ok'
"""

# KEYS: stream, meta, packed, disputes. Everything stored of one game, read in one atomic step:
# meta hash pairs, stream entries, packed value ('' when there is none), disputes.
_READ_GAME = """
local packed = redis.call('GET', KEYS[3]) or ''
return {redis.call('HGETALL', KEYS[2]), redis.call('XRANGE', KEYS[1], '-', '+'), packed,
        redis.call('XRANGE', KEYS[4], '-', '+')}
"""

# KEYS: stream, meta, packed. ARGV: entries, last entry id, last entry text, meta fields, packed value.
# Writes the packed value only if the stream and meta are still as they were read: same length, same
# last entry (whose hash chains every entry before it), same meta size; a game deleted meanwhile stays deleted.
_WRITE_PACKED = """
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) or redis.call('HLEN', KEYS[2]) ~= tonumber(ARGV[4]) then
  return 'changed'
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 or last[1][1] ~= ARGV[2] or last[1][2][1] ~= 'e' or last[1][2][2] ~= ARGV[3] then
  return 'changed'
end
redis.call('SET', KEYS[3], ARGV[5])
return 'ok'
"""

PACKED_CACHE_BYTES = 32 * 2**20  # the unpacked games kept per process, in bytes of their entries' and meta's text
# (a packed game is read often right after it ends); the app reads PACKED_CACHE_BYTES from its config or the environment
DROPPED_WHEN_PACKED = ("idem", "recent", "snapshots")  # a game's keys, besides its stream and meta, that packing drops
OTHER_GAME_KEYS = ("disputes", "answers")  # a game's keys that stay when it is packed; deleted with the game
ANSWER_DIGEST_BYTES = 16  # an answer starts with the blake2b digest of the packed value it was made from

# KEYS: packed, answers. ARGV: the answer's name. The packed value and the answer kept under that name.
_PACKED_AND_ANSWER = """
return {redis.call('GET', KEYS[1]) or '', redis.call('HGET', KEYS[2], ARGV[1]) or ''}
"""

# KEYS: packed, answers. ARGV: packed length, name, answer. Kept only while the game is packed (never an
# orphan answers key beside a game exported meanwhile).
_KEEP_ANSWER = """
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) or tonumber(ARGV[1]) == 0 then return 'changed' end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 'ok'
"""


# KEYS: disputes stream, meta, packed value. ARGV: seat, the seat's limit, the dispute as JSON.
# The seat's disputes are counted by their `s` field (a game holds at most players x limit of them).
# A game that is gone (exported and deleted since the dispute was decided) takes none: its key would be
# an orphan that no file holds.
_ADD_DISPUTE = """
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[3]) == 0 then return {'gone', ''} end
local mine = 0
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 's' and fields[i + 1] == ARGV[1] then mine = mine + 1 end
  end
end
if mine >= tonumber(ARGV[2]) then return {'full', tostring(mine)} end
local number = 1
if redis.call('EXISTS', KEYS[1]) == 1 then  -- after the last id the stream ever had, deleted or not
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then number = tonumber(string.match(info[i + 1], '^(%d+)')) + 1 end
  end
end
local id = string.format('%d-0', number)
redis.call('XADD', KEYS[1], id, 's', ARGV[1], 'd', ARGV[3])
return {'ok', id}
"""


class StoreUnavailable(Exception):
    """Redis could not be reached; nothing was written."""


# Redis (or a node, or the slots of a cluster) cannot be reached right now
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, ClusterError, SlotNotCoveredError)


GAME_COUNTS_KEY = "stats:games"
RESENDS = 2  # times a create or an append whose outcome is unknown is sent again (safely) before a 503
RESEND_PAUSE_SECONDS = 0.05  # before the first resend; doubled for each next one


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


class RestoreRefused(ValueError):
    """A game to restore whose disputes are not well-formed; nothing was written."""


class GameGone(Exception):
    """The game is no longer stored (its export deleted it): nothing was written."""


class GameExists(Exception):
    """A game with this id exists already."""


class CompactionError(Exception):
    """Packing a game stopped before it dropped anything; the game is as it was."""


@dataclasses.dataclass(frozen=True)
class StoredGame:
    """Everything the store holds of one game, packed or not: meta, entries (id, text), disputes."""

    meta: dict[str, str]
    entries: tuple[Entry, ...]
    disputes: tuple[tuple[str, dict[str, str]], ...]
    counts: tuple[int, int, int, int]  # stream entries, meta fields, packed length, disputes: as read


@dataclasses.dataclass(frozen=True)
class _Keys:
    """A game's keys as one atomic read found them: meta hash, stream entries, packed value, disputes."""

    meta: dict[str, str]
    entries: tuple[Entry, ...]
    packed: bytes | None
    disputes: tuple[tuple[str, dict[str, str]], ...]


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


def _packed_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:packed"


def _game_key(game_id: str, suffix: str) -> str:
    return f"game:{{{game_id}}}:{suffix}"


def _ticket_key(game_id: str, digest: str) -> str:
    return f"game:{{{game_id}}}:ticket:{digest}"


def _entry_id(seq: int) -> str:
    return f"{seq}-0"


class EventStore:
    """Append-only game streams with atomic compare-and-append."""

    def __init__(
        self,
        client: StoreClient,
        blocking_client: StoreClient | None = None,
        packed_cache_bytes: int = PACKED_CACHE_BYTES,
    ) -> None:
        """`packed_cache_bytes`: how much unpacked text of packed games this process keeps (a game larger
        than that is unpacked for each read that needs its events)."""
        self._redis = client
        self._blocking = blocking_client or client
        self._create = client.register_script(_CREATE)
        self._append = client.register_script(_APPEND)
        self._drop_unpacked_script = client.register_script(_DROP_UNPACKED)
        self._delete = client.register_script(_DELETE)
        self._restore = client.register_script(_RESTORE)
        self._read_game_script = client.register_script(_READ_GAME)
        self._write_packed_script = client.register_script(_WRITE_PACKED)
        self._add_dispute = client.register_script(_ADD_DISPUTE)
        self._packed_and_answer_script = client.register_script(_PACKED_AND_ANSWER)
        self._keep_answer_script = client.register_script(_KEEP_ANSWER)
        self._unpacked: OrderedDict[str, tuple[bytes, Packed, int]] = OrderedDict()
        self._unpacked_bytes = 0
        self.packed_cache_bytes = packed_cache_bytes
        self._lock = threading.Lock()

    @property
    def client(self) -> StoreClient:
        """The Redis client of the store (for the game indexes beside it)."""
        return self._redis

    def ping(self) -> bool:
        """True when Redis answers (on a cluster: every primary)."""
        try:
            if isinstance(self._redis, RedisCluster):
                return bool(self._redis.ping(target_nodes=RedisCluster.PRIMARIES))
            return bool(self._redis.ping())
        except (redis.RedisError, SlotNotCoveredError):
            metrics.STORE_ERRORS.inc()
            return False

    def create(self, game_id: str, meta: Mapping[str, str], records: list[dict[str, Any]]) -> None:
        """Store a new game's meta and its first records in one atomic step; GameExists if the id is taken.

        Never resent blindly (service/storage/redis_clients.py's sent_once): when the reply is lost, the same
        create is sent again, and an `exists` that names this create's own nonce (meta `nonce`, drawn
        for every game) means the first one landed. Without a nonce the unknown outcome is StoreUnavailable.
        """
        stream, meta_key, _ = _keys(game_id)
        flat = [item for pair in meta.items() for item in pair]
        keys = [stream, meta_key, _packed_key(game_id)]
        mine = meta.get("nonce", "")  # without one, a resend could not tell this create from a clash
        outcome, nonce, _ = self._run_until_known(self._create, keys, [len(flat), *flat, *_encode(records)], bool(mine))
        if outcome == "exists" and not (mine and nonce == mine):
            raise GameExists(game_id)

    def meta(self, game_id: str) -> dict[str, str] | None:
        """The game's creation facts, None when there is no such game."""
        data = self._call(self._redis.hgetall, _keys(game_id)[1])
        if data:
            return dict(data)
        # the packed value is written before the meta hash is dropped, so never both gone; its meta is kept
        # as an answer, so that reading it costs no unpacking of the events
        value, kept = self._packed_and_answer(game_id, "meta")
        if value is None:
            return None
        if kept is not None:
            return {str(key): str(text) for key, text in json.loads(kept).items()}
        meta = dict(self._unpacked_value(game_id, value).meta)
        try:
            self._keep_answer(game_id, "meta", value, json.dumps(meta).encode("utf-8"))
        except StoreUnavailable as error:  # the read answers all the same; a later one keeps it
            log.warning("game %s: its meta not kept beside its packed value: %s", game_id, error)
        return meta

    def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """Records with seq > after, in order."""
        return [json.loads(text) for text in self._texts(game_id, after, count)[0]]

    def read_raw(self, game_id: str) -> list[str]:
        """Every stored entry's text as it is, for audits of a possibly damaged stream."""
        return self._texts(game_id)[0]

    def packed_answer(self, game_id: str, name: str) -> bytes | None:
        """The answer kept under `name` for the packed game, if it was made from the packed value as it is
        now (one read of the value and the answer); None when the game is not packed or has no such answer."""
        return self._packed_and_answer(game_id, name)[1]

    def keep_answer(self, game_id: str, name: str, answer: bytes) -> bool:
        """Keep `answer` under `name` for the game as packed now (made from the game's stored meta and
        events, which the packed value holds exactly); nothing when it is not packed. True if kept."""
        value = self._call(self._redis.execute_command, "GET", _packed_key(game_id), **{NEVER_DECODE: []})
        return value is not None and self._keep_answer(game_id, name, value, answer)

    def _packed_and_answer(self, game_id: str, name: str) -> tuple[bytes | None, bytes | None]:
        """The packed value (None: not packed) and the answer under `name` made from it (None: none, or one
        made from another value)."""
        keys = [_packed_key(game_id), _game_key(game_id, "answers")]
        value, kept = self._run_raw(self._packed_and_answer_script, keys, [name])
        if not value:
            return None, None
        digest = _digest(bytes(value))
        if not kept or bytes(kept[:ANSWER_DIGEST_BYTES]) != digest:
            return bytes(value), None
        try:
            return bytes(value), zlib.decompress(bytes(kept[ANSWER_DIGEST_BYTES:]))
        except zlib.error:  # damaged: made again
            return bytes(value), None

    def _keep_answer(self, game_id: str, name: str, value: bytes, answer: bytes) -> bool:
        keys = [_packed_key(game_id), _game_key(game_id, "answers")]
        kept = _digest(value) + zlib.compress(answer, 6)
        return _text(self._call(self._keep_answer_script, keys=keys, args=[len(value), name, kept])) == "ok"

    def _texts(self, game_id: str, after: int = 0, count: int | None = None) -> tuple[list[str], bool]:
        """Entry texts above `<after>-0` from the stream, or from the packed game once the stream is gone;
        and whether the game is packed."""
        entries = self._call(self._redis.xrange, _keys(game_id)[0], _entry_id(after + 1), "+", count)
        if entries:
            return [str(fields.get("e", "")) for _, fields in entries], False
        packed = self._packed(game_id)  # the stream is dropped only after the packed value is written
        if packed is None:
            return [], False
        return packed.texts(after, count), True

    def _packed(self, game_id: str) -> Packed | None:
        """The packed game, if it is packed (unpacked once per process while it stays the same)."""
        value = self._call(self._redis.execute_command, "GET", _packed_key(game_id), **{NEVER_DECODE: []})
        return None if value is None else self._unpacked_value(game_id, value)

    def _unpacked_value(self, game_id: str, value: bytes) -> Packed:
        """`value` unpacked: kept while the cache's bytes allow (the least recently used go first)."""
        digest = _digest(value)
        with self._lock:
            cached = self._unpacked.get(game_id)
            if cached is not None and cached[0] == digest:
                self._unpacked.move_to_end(game_id)
                return cached[1]
        packed = unpack(value)
        size = packed.size()
        with self._lock:
            old = self._unpacked.pop(game_id, None)
            self._unpacked_bytes -= old[2] if old is not None else 0
            if size <= self.packed_cache_bytes:
                self._unpacked[game_id] = (digest, packed, size)
                self._unpacked_bytes += size
            while self._unpacked_bytes > self.packed_cache_bytes:
                self._unpacked_bytes -= self._unpacked.popitem(last=False)[1][2]
        return packed

    def unpacked_bytes(self) -> int:
        """The bytes of text of the unpacked games this process keeps now."""
        with self._lock:
            return self._unpacked_bytes

    # ------------------------------------------------------------ compaction, export, import

    def compact(self, game_id: str) -> str:
        """Pack the game into one compressed value, then drop its stream, meta and idempotency answers.

        The meta and the stream are read in one atomic step. The value is written only if the stream
        and meta are still as read (one script: a game exported and deleted meanwhile stays deleted),
        then read back, and checked to unpack to exactly the stream and meta as
        read, before anything is dropped; the drop itself (one script, this game's keys only) happens
        only if the stream and meta are still as read, and is sent once: when its reply is lost, the
        game is read back to learn whether it was dropped. A crash at any point loses nothing: the game
        is then either as it was, or packed and unpacked at once (reads answer the same from
        either), and compacting it again finishes the job. Says `packed`, `already` or `missing` (also
        when the game was exported between its drop and the drop's lost reply)."""
        found = self._read_game(game_id)  # meta and stream in one atomic read
        meta, entries = found.meta, found.entries
        if not meta and not entries:
            return "already" if found.packed is not None else "missing"
        if not meta or not entries:
            raise CompactionError(f"game {game_id} has a meta hash or a stream but not both; left as it is")
        value = pack(meta, entries)
        if self._write_packed(game_id, value, entries, len(meta)) != "ok":
            raise CompactionError(f"game {game_id} changed or was deleted before it was packed; left as it is")
        if self._read_packed(game_id) != value or unpack(value) != Packed(meta, entries):
            raise CompactionError(f"game {game_id}: the packed value did not read back as written; left as it is")
        outcome = self._drop_unpacked(game_id, (len(entries), len(meta), len(value)), value)
        if outcome == "gone":
            return "missing"  # packed, then exported by another process before the drop's reply came
        if outcome != "ok":
            raise CompactionError(f"game {game_id} changed while it was packed; left as it is")
        try:  # so that a read of the meta unpacks nothing; else the first read that needs it keeps it
            self._keep_answer(game_id, "meta", value, json.dumps(meta).encode("utf-8"))
        except StoreUnavailable as error:
            log.warning("game %s packed; its meta not kept beside it yet: %s", game_id, error)
        return "packed"

    def _read_game(self, game_id: str) -> _Keys:
        """Every key of the game that export and packing need, read in one script (one atomic step)."""
        stream, meta_key, _ = _keys(game_id)
        keys = [stream, meta_key, _packed_key(game_id), _disputes_key(game_id)]
        meta, entries, packed, disputes = self._run_raw(self._read_game_script, keys, [])
        return _Keys(
            dict(_text_pairs(meta)),
            tuple((_text(entry_id), dict(_text_pairs(fields)).get("e", "")) for entry_id, fields in entries),
            bytes(packed) or None,
            tuple((_text(entry_id), dict(_text_pairs(fields))) for entry_id, fields in disputes),
        )

    def _run_raw(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """A script's reply as bytes, never decoded (it may hold a packed value, which is not text)."""
        raw: dict[str, Any] = {NEVER_DECODE: []}
        try:
            return self._call(self._redis.execute_command, "EVALSHA", script.sha, len(keys), *keys, *args, **raw)
        except redis.exceptions.NoScriptError:
            return self._call(self._redis.execute_command, "EVAL", script.script, len(keys), *keys, *args, **raw)

    def _write_packed(self, game_id: str, value: bytes, entries: tuple[Entry, ...], meta_fields: int) -> str:
        """Write the packed value, only if the stream is still `entries` and the meta is unchanged."""
        stream, meta_key, _ = _keys(game_id)
        keys = [stream, meta_key, _packed_key(game_id)]
        args = [len(entries), *entries[-1], meta_fields, value]
        return _text(self._call(self._write_packed_script, keys=keys, args=args))

    def _read_packed(self, game_id: str) -> bytes | None:
        value: bytes | None = self._call(self._redis.execute_command, "GET", _packed_key(game_id), **{NEVER_DECODE: []})
        return value

    def _drop_unpacked(self, game_id: str, counts: tuple[int, int, int], value: bytes) -> str:
        """Drop the stream, meta and idem hash of a game packed as `value`, if they are still `counts`
        long: `ok`, `changed`, or `gone` (not even the packed value is left: exported meanwhile).

        Sent once: after a lost reply a resend would meet `changed` for a drop that was done, so the
        game is read back instead: unpacked keys gone and `value` in place means dropped."""
        stream, meta_key, _ = _keys(game_id)
        dropped = [_game_key(game_id, suffix) for suffix in DROPPED_WHEN_PACKED]
        keys = [stream, meta_key, _packed_key(game_id), *dropped]

        def learn() -> str | None:
            found = self._read_game(game_id)
            if found.meta or found.entries:
                return None if (len(found.entries), len(found.meta), len(found.packed or b"")) == counts else "changed"
            if found.packed is None:
                return "gone"
            return "ok" if found.packed == value else "changed"

        return self._sent_once_until_known(self._drop_unpacked_script, keys, list(counts), learn)

    def stored_game(self, game_id: str) -> StoredGame | None:
        """Everything stored of the game (packed or not), with the counts `delete` checks; None if none."""
        found = self._read_game(game_id)  # one atomic read: packing cannot drop the stream between reads
        meta, entries = found.meta, found.entries
        if not (meta and entries) and found.packed is not None:
            packed = unpack(found.packed)
            meta, entries = dict(packed.meta), packed.entries
        elif not meta:
            return None
        counts = (len(found.entries), len(found.meta), len(found.packed or b""), len(found.disputes))
        return StoredGame(meta, entries, found.disputes, counts)

    def delete(self, game_id: str, stored: StoredGame) -> bool:
        """Delete every key of the game, only if it is still as `stored` says; True if it was deleted.

        Sent once; when the reply is lost, the game is read back: nothing left of it means deleted."""
        stream, meta_key, idem_key = _keys(game_id)
        keys = [stream, meta_key, _packed_key(game_id), _disputes_key(game_id), idem_key]
        keys += [_game_key(game_id, suffix) for suffix in (*DROPPED_WHEN_PACKED, "answers") if suffix != "idem"]

        def learn() -> str | None:  # sent once: a resend after a lost reply would meet `changed`
            found = self._read_game(game_id)
            now = (len(found.entries), len(found.meta), len(found.packed or b""), len(found.disputes))
            if now == (0, 0, 0, 0):
                return "ok"  # deleted (by this call, or by another export of the same game)
            return None if now == stored.counts else "changed"

        return self._sent_once_until_known(self._delete, keys, list(stored.counts), learn) == "ok"

    def restore(
        self, game_id: str, meta: Mapping[str, str], entries: Sequence[Entry], disputes: Sequence[tuple[str, Any]]
    ) -> bool:
        """Store a game back, packed, with its disputes (their ids as they were); False if it exists.

        All or nothing: RestoreRefused, and nothing written, when the disputes are not well-formed.
        Sent once; when the reply is lost, the game is read back: exactly this packed value and these
        disputes mean restored, nothing at all means not run (sent again)."""
        value = pack(meta, entries)
        args: list[Any] = [value]
        for dispute_id, fields in disputes:
            flat = [item for pair in dict(fields).items() for item in pair]
            args += [dispute_id, len(flat), *flat]
        stream, meta_key, _ = _keys(game_id)
        keys = [stream, meta_key, _packed_key(game_id), _disputes_key(game_id)]

        def learn() -> str | None:  # sent once: a resend after a lost reply would meet `exists`
            found = self._read_game(game_id)
            if _restored_as(found, value, disputes):
                return "ok"
            nothing = not (found.meta or found.entries or found.packed is not None or found.disputes)
            return None if nothing else "exists"

        outcome = self._sent_once_until_known(self._restore, keys, args, learn)
        if outcome == "invalid":
            raise RestoreRefused(f"game {game_id}: dispute ids are not `<n>-0` in increasing order, or not well-formed")
        return outcome == "ok"

    def holds_restored(
        self, game_id: str, meta: Mapping[str, str], entries: Sequence[Entry], disputes: Sequence[tuple[str, Any]]
    ) -> bool:
        """Whether the game is stored exactly as `restore` stores these (packed, these disputes, nothing else)."""
        return _restored_as(self._read_game(game_id), pack(meta, entries), disputes)

    def add_dispute(self, game_id: str, seat: int, per_seat: int, dispute: Mapping[str, Any]) -> str | None:
        """Store a dispute of `seat` as the game's next one; its entry id, or None when the seat
        has `per_seat` disputes already (checked and written in one script); GameGone when the game
        is no longer stored (an export deleted it)."""
        args = [seat, per_seat, json.dumps(dispute, separators=(",", ":"), ensure_ascii=False)]
        keys = [_disputes_key(game_id), _keys(game_id)[1], _packed_key(game_id)]
        outcome, detail = self._run(self._add_dispute, keys, args)
        if outcome == "gone":
            raise GameGone(game_id)
        return detail if outcome == "ok" else None

    def disputes(self, game_id: str, after: int = 0, count: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The game's disputes numbered after `after` (at most `count`), with their entry ids, oldest first."""
        key = _disputes_key(game_id)
        entries = self._call(self._redis.xrange, key, _entry_id(after + 1), "+", count)
        return [(str(entry_id), json.loads(fields["d"])) for entry_id, fields in entries]

    def count_disputes(self, game_id: str, seat: int) -> int:
        """How many disputes `seat` has filed in the game (by each entry's `s` field, unparsed)."""
        entries = self._call(self._redis.xrange, _disputes_key(game_id), "-", "+")
        return sum(1 for _, fields in entries if fields.get("s") == str(seat))

    def records_after(self, game_id: str, after: int, count: int | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Records with seq > after (at most `count`), and whether the game is packed (it has ended:
        nothing can follow)."""
        texts, packed = self._texts(game_id, after, count)
        return [json.loads(text) for text in texts], packed

    def last_seq(self, game_id: str) -> int:
        """The seq of the game's last record, packed or not; 0 when it has none."""
        entries = self._call(self._redis.xrevrange, _keys(game_id)[0], "+", "-", 1)
        if entries:
            return int(str(entries[0][0]).partition("-")[0])
        packed = self._packed(game_id)  # the stream is dropped only after the packed value is written
        return int(packed.entries[-1][0].partition("-")[0]) if packed is not None and packed.entries else 0

    def read_blocking(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """Records with seq > after; blocks up to block_ms until one exists (one XREAD, on the blocking client)."""
        stream = _keys(game_id)[0]
        reply = self._call(self._blocking.xread, {stream: _entry_id(after)}, None, block_ms)
        return [json.loads(fields["e"]) for _, entries in reply or [] for _, fields in entries]

    def put_snapshot(self, game_id: str, version: int, blob: bytes) -> None:
        """Keep the game folded to `version` (an encoded snapshot) beside its stream."""
        self._call(self._redis.hset, _game_key(game_id, "snapshots"), str(version), blob)

    def snapshot_versions(self, game_id: str) -> list[int]:
        """The versions the game has snapshots of (one every SNAPSHOT_EVERY events: a short list)."""
        return sorted(int(field) for field in self._call(self._redis.hkeys, _game_key(game_id, "snapshots")))

    def snapshot(self, game_id: str, version: int) -> bytes | None:
        """The encoded snapshot at `version`, if there is one."""
        key = _game_key(game_id, "snapshots")
        blob: bytes | None = self._call(self._redis.execute_command, "HGET", key, str(version), **{NEVER_DECODE: []})
        return blob

    def drop_snapshots(self, game_id: str) -> None:
        """Forget the game's snapshots (its stream is not what they were folded from)."""
        self._call(self._redis.delete, _game_key(game_id, "snapshots"))

    def put_ticket(self, game_id: str, digest: str, seat: int, seconds: int) -> None:
        """Keep a stream ticket (by its digest) for `seconds`."""
        self._call(self._redis.set, _ticket_key(game_id, digest), str(seat), ex=seconds)

    def take_ticket(self, game_id: str, digest: str) -> int | None:
        """The seat of a stream ticket, which is gone from then on; None when unknown, used or expired.

        Sent once: a resend after a lost reply would find the ticket gone and refuse a valid one. A lost
        reply is StoreUnavailable (503), and the client takes a new ticket."""
        with sent_once():
            seat = self._call(self._redis.getdel, _ticket_key(game_id, digest))
        return None if seat is None else int(seat)

    def append(
        self,
        game_id: str,
        expected_version: int,
        records: list[dict[str, Any]],
        idempotency: tuple[str, str] | None = None,
    ) -> AppendResult:
        """Append records only if the stream is still at expected_version (atomic in Redis).

        `idempotency`: (field, value) kept in the game's idem hash with the append; a later append
        with that field is not applied and answers `duplicate` with the value. Never resent blindly:
        when the reply is lost (the script may have run), an append with a field is sent again as it
        was, which answers `duplicate` if the first one was applied; a `conflict` then is checked
        against the stream too (packing drops the idem hash): this append's first record there means
        it was applied. Without a field the unknown outcome is StoreUnavailable.
        """
        stream, _, idem_key = _keys(game_id)
        field, value = idempotency or ("", "")
        args = [expected_version, field, value, *_encode(records)]
        keys = [stream, idem_key, _game_key(game_id, "recent")]
        outcome, detail, resent = self._run_until_known(self._append, keys, args, bool(field))
        if outcome == "conflict" and resent and self._applied_at(game_id, expected_version, records):
            return AppendResult("duplicate", prior=value)  # resent after its reply was lost, and packed since
        if outcome == "duplicate":
            return AppendResult("duplicate", prior=detail)
        return AppendResult(outcome, int(detail))

    def _applied_at(self, game_id: str, version: int, records: list[dict[str, Any]]) -> bool:
        """Whether the game's record after `version` is the first of `records` (same hash)."""
        texts = self._texts(game_id, version, 1)[0]
        return bool(texts) and bool(records) and json.loads(texts[0]).get("hash") == records[0].get("hash")

    def _run_until_known(
        self, script: Any, keys: list[str], args: list[Any], resendable: bool
    ) -> tuple[str, str, bool]:
        """Run a write script once; if its outcome is unknown (the connection failed on the way) and
        it is `resendable` (the same script again cannot apply it twice), send it again, up to RESENDS
        times. Its reply, and whether it was resent; StoreUnavailable when no reply came."""
        pause = RESEND_PAUSE_SECONDS
        for attempt in range(RESENDS if resendable else 0):
            try:
                return (*self._run(script, keys, args), attempt > 0)
            except StoreUnavailable:
                time.sleep(pause)
                pause *= 2
        return (*self._run(script, keys, args), resendable)

    def _sent_once_until_known(
        self, script: Any, keys: list[str], args: list[Any], learn: Callable[[], str | None]
    ) -> str:
        """Run a write script of one reply, sent once; when its outcome is unknown (the connection failed
        on the way: it may have run or not), `learn` reads the game back and says what the script's reply
        would have been, or None when it did not run: then it is sent again, up to RESENDS times.
        StoreUnavailable when no reply came and nothing could be learnt."""
        pause = RESEND_PAUSE_SECONDS
        for attempt in range(RESENDS + 1):
            try:
                with sent_once():
                    return _text(self._call(script, keys=keys, args=args))
            except StoreUnavailable:
                if attempt == RESENDS:
                    raise
            known = learn()
            if known is not None:
                return known
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

    def idempotent_answer(self, game_id: str, field: str) -> str | None:
        """The stored answer for an Idempotency-Key field, if any."""
        answer = self._call(self._redis.hget, _keys(game_id)[2], field)
        return str(answer) if answer is not None else None

    def count_game(self, game: str, moment: str) -> None:
        """Count a game of type `game` that has `moment` (started, finished), for the metrics."""
        self._call(self._redis.hincrby, GAME_COUNTS_KEY, f"{moment}:{game}", 1)

    def game_counts(self) -> dict[str, int]:
        """Every count kept by count_game, as `<moment>:<game>` -> count."""
        counts = self._call(self._redis.hgetall, GAME_COUNTS_KEY)
        return {_text(key): int(value) for key, value in counts.items()}

    def _run(self, script: Any, keys: list[str], args: list[Any]) -> tuple[str, str]:
        """Run a write script, sent once (a lost reply is the caller's to resolve, not the driver's)."""
        with sent_once():
            reply = self._call(script, keys=keys, args=args)
        return _text(reply[0]), _text(reply[1])

    _call = staticmethod(store_call)


def _restored_as(found: _Keys, value: bytes, disputes: Sequence[tuple[str, Any]]) -> bool:
    """Whether a game's keys are exactly what a restore of the packed `value` and `disputes` writes."""
    wanted = tuple((dispute_id, dict(fields)) for dispute_id, fields in disputes)
    return not found.meta and not found.entries and found.packed == value and found.disputes == wanted


def _digest(value: bytes) -> bytes:
    """The digest that names a packed value (its cache entry, its answers)."""
    return hashlib.blake2b(value, digest_size=ANSWER_DIGEST_BYTES).digest()


def _encode(records: list[dict[str, Any]]) -> list[str]:
    return [encode_record(record) for record in records]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _text_pairs(flat: Sequence[Any]) -> list[tuple[str, str]]:
    """A flat [field, value, ...] reply as (field, value) texts."""
    return [(_text(flat[i]), _text(flat[i + 1])) for i in range(0, len(flat), 2)]
