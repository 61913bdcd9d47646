"""Packing a finished game (compaction), reading a packed game, and the answers kept beside it.

A packed game is one compressed value (`game:{<id>}:packed`, service/storage/packed_games.py) that holds its
meta and its stream; `events`, `meta` and the keys in DROPPED_WHEN_PACKED are then gone (docs/storage.md).
The events adapter (service/storage/event_store.py) reads a packed game through PackedStore, so that its
reads answer the same for a packed game as before it was packed.
`game:{<id>}:answers` (a packed game only): name -> an answer made once from the packed value (its meta;
the record and audit of GameHistory), kept as the packed value's digest then the answer compressed; an
answer whose digest is not the packed value's now is not used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import zlib
from collections import OrderedDict

from service.storage import keys
from service.storage.keys import DROPPED_WHEN_PACKED
from service.storage.outcomes import CompactionError, StoreUnavailable
from service.storage.packed_games import Entry, Packed, pack, unpack
from service.storage.redis_clients import StoreClient
from service.storage.scripts import GameReader, read_bytes, run_raw, sent_once_until_known, store_call, text

log = logging.getLogger(__name__)

PACKED_CACHE_BYTES = 32 * 2**20  # the unpacked games kept per process, in bytes of their entries' and meta's text
# (a packed game is read often right after it ends); the app reads PACKED_CACHE_BYTES from its config or the environment
ANSWER_DIGEST_BYTES = 16  # an answer starts with the blake2b digest of the packed value it was made from

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


class PackedStore:
    """Packs finished games and reads packed ones (unpacked once per process while the cache's bytes allow)."""

    def __init__(
        self, client: StoreClient, reader: GameReader | None = None, packed_cache_bytes: int = PACKED_CACHE_BYTES
    ) -> None:
        """`packed_cache_bytes`: how much unpacked text of packed games this process keeps (a game larger
        than that is unpacked for each read that needs its events)."""
        self._redis = client
        self._reader = reader or GameReader(client)
        self._drop_unpacked_script = client.register_script(_DROP_UNPACKED)
        self._write_packed_script = client.register_script(_WRITE_PACKED)
        self._packed_and_answer_script = client.register_script(_PACKED_AND_ANSWER)
        self._keep_answer_script = client.register_script(_KEEP_ANSWER)
        self._unpacked: OrderedDict[str, tuple[bytes, Packed, int]] = OrderedDict()
        self._unpacked_bytes = 0
        self.packed_cache_bytes = packed_cache_bytes
        self._lock = threading.Lock()

    # ------------------------------------------------------------ reading a packed game

    def unpacked(self, game_id: str) -> Packed | None:
        """The packed game, if it is packed (unpacked once per process while it stays the same)."""
        value = read_bytes(self._redis, keys.packed(game_id))
        return None if value is None else self._unpacked_value(game_id, value)

    def meta(self, game_id: str) -> dict[str, str] | None:
        """The packed game's meta, None when it is not packed; kept as an answer, so that reading it costs
        no unpacking of the events."""
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

    def packed_answer(self, game_id: str, name: str) -> bytes | None:
        """The answer kept under `name` for the packed game, if it was made from the packed value as it is
        now (one read of the value and the answer); None when the game is not packed or has no such answer."""
        return self._packed_and_answer(game_id, name)[1]

    def keep_answer(self, game_id: str, name: str, answer: bytes) -> bool:
        """Keep `answer` under `name` for the game as packed now (made from the game's stored meta and
        events, which the packed value holds exactly); nothing when it is not packed. True if kept."""
        value = read_bytes(self._redis, keys.packed(game_id))
        return value is not None and self._keep_answer(game_id, name, value, answer)

    def unpacked_bytes(self) -> int:
        """The bytes of text of the unpacked games this process keeps now."""
        with self._lock:
            return self._unpacked_bytes

    def _packed_and_answer(self, game_id: str, name: str) -> tuple[bytes | None, bytes | None]:
        """The packed value (None: not packed) and the answer under `name` made from it (None: none, or one
        made from another value)."""
        names = [keys.packed(game_id), keys.answers(game_id)]
        value, kept = run_raw(self._redis, self._packed_and_answer_script, names, [name])
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
        names = [keys.packed(game_id), keys.answers(game_id)]
        kept = _digest(value) + zlib.compress(answer, 6)
        return text(store_call(self._keep_answer_script, keys=names, args=[len(value), name, kept])) == "ok"

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

    # ------------------------------------------------------------ compaction

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
        found = self._reader.read(game_id)  # meta and stream in one atomic read
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

    def _write_packed(self, game_id: str, value: bytes, entries: tuple[Entry, ...], meta_fields: int) -> str:
        """Write the packed value, only if the stream is still `entries` and the meta is unchanged."""
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id)]
        args = [len(entries), *entries[-1], meta_fields, value]
        return text(store_call(self._write_packed_script, keys=names, args=args))

    def _read_packed(self, game_id: str) -> bytes | None:
        return read_bytes(self._redis, keys.packed(game_id))

    def _drop_unpacked(self, game_id: str, counts: tuple[int, int, int], value: bytes) -> str:
        """Drop the stream, meta and idem hash of a game packed as `value`, if they are still `counts`
        long: `ok`, `changed`, or `gone` (not even the packed value is left: exported meanwhile).

        Sent once: after a lost reply a resend would meet `changed` for a drop that was done, so the
        game is read back instead: unpacked keys gone and `value` in place means dropped."""
        dropped = [keys.game_key(game_id, name) for name in DROPPED_WHEN_PACKED]
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id), *dropped]

        def learn() -> str | None:
            found = self._reader.read(game_id)
            if found.meta or found.entries:
                return None if (len(found.entries), len(found.meta), len(found.packed or b"")) == counts else "changed"
            if found.packed is None:
                return "gone"
            return "ok" if found.packed == value else "changed"

        return sent_once_until_known(self._drop_unpacked_script, names, list(counts), learn)


def _digest(value: bytes) -> bytes:
    """The digest that names a packed value (its cache entry, its answers)."""
    return hashlib.blake2b(value, digest_size=ANSWER_DIGEST_BYTES).digest()
