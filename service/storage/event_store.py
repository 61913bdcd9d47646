"""A game's events: one Redis stream per game, compare-and-append inside Redis, and the header beside it.

  game:{<id>}:events  the stream; entry id `<seq>-0`, field `e` = the record as JSON
  game:{<id>}:meta    the game's header: its creation facts (service/play/game_header.py encodes them)
  game:{<id>}:idem    Idempotency-Key answers, kept as long as the game
  game:{<id>}:recent  list: the internal idempotency fields of the last RECENT_FIELDS appends sent
                      without a key (`<field> <version>`), so that a resend after a lost reply is known
The read methods (meta, read, read_raw, records_after, last_seq) answer the same for a packed game as
before it was packed (service/storage/packing.py). The other keys of a game are named in
service/storage/keys.py, each with the adapter that keeps it.
Every command and script touches the keys of one game only (the scripts only those in KEYS), so the
store runs on one Redis or on a Redis Cluster alike (service/storage/redis_clients.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.exceptions import SlotNotCoveredError

from service.ops import metrics
from service.storage import keys
from service.storage.outcomes import AppendResult, GameExists
from service.storage.packed_games import encode_record
from service.storage.packing import PackedStore
from service.storage.redis_clients import StoreClient
from service.storage.scripts import run_until_known, store_call

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


class EventStore:
    """Append-only game streams with atomic compare-and-append, and each game's header."""

    def __init__(self, client: StoreClient, packed: PackedStore, blocking_client: StoreClient | None = None) -> None:
        """`packed`: where a packed game is read from once its stream is gone; `blocking_client`: the
        connections of the blocking reads (default: `client`'s)."""
        self._redis = client
        self._blocking = blocking_client or client
        self._packed = packed
        self._create = client.register_script(_CREATE)
        self._append = client.register_script(_APPEND)

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
        flat = [item for pair in meta.items() for item in pair]
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id)]
        mine = meta.get("nonce", "")  # without one, a resend could not tell this create from a clash
        outcome, nonce, _ = run_until_known(self._create, names, [len(flat), *flat, *_encode(records)], bool(mine))
        if outcome == "exists" and not (mine and nonce == mine):
            raise GameExists(game_id)

    def meta(self, game_id: str) -> dict[str, str] | None:
        """The game's creation facts, None when there is no such game."""
        data = store_call(self._redis.hgetall, keys.meta(game_id))
        if data:
            return dict(data)
        # the packed value is written before the meta hash is dropped, so never both gone
        return self._packed.meta(game_id)

    def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """Records with seq > after, in order."""
        return [json.loads(text) for text in self._texts(game_id, after, count)[0]]

    def read_raw(self, game_id: str) -> list[str]:
        """Every stored entry's text as it is, for audits of a possibly damaged stream."""
        return self._texts(game_id)[0]

    def records_after(self, game_id: str, after: int, count: int | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Records with seq > after (at most `count`), and whether the game is packed (it has ended:
        nothing can follow)."""
        texts, packed = self._texts(game_id, after, count)
        return [json.loads(text) for text in texts], packed

    def last_seq(self, game_id: str) -> int:
        """The seq of the game's last record, packed or not; 0 when it has none."""
        last = self._last_entry(game_id)
        return int(last[0].partition("-")[0]) if last is not None else 0

    def last_record(self, game_id: str) -> dict[str, Any] | None:
        """The game's last record, packed or not (one read, no fold); None when it has none."""
        last = self._last_entry(game_id)
        return dict(json.loads(last[1])) if last is not None else None

    def _last_entry(self, game_id: str) -> tuple[str, str] | None:
        """The id and text of the game's last entry, from the stream or else the packed game; None when none."""
        entries = store_call(self._redis.xrevrange, keys.events(game_id), "+", "-", 1)
        if entries:
            entry_id, fields = entries[0]
            return str(entry_id), str(fields.get("e", ""))
        packed = self._packed.unpacked(game_id)  # the stream is dropped only after the packed value is written
        return (packed.entries[-1][0], packed.entries[-1][1]) if packed is not None and packed.entries else None

    def read_blocking(self, game_id: str, after: int, block_ms: int) -> list[dict[str, Any]]:
        """Records with seq > after; blocks up to block_ms until one exists (one XREAD, on the blocking client)."""
        reply = store_call(self._blocking.xread, {keys.events(game_id): keys.entry_id(after)}, None, block_ms)
        return [json.loads(fields["e"]) for _, entries in reply or [] for _, fields in entries]

    def stored_games(self, count: int) -> Iterator[str]:
        """The ids of the games stored unpacked, a SCAN of `count` keys a step (a game may come twice)."""
        for key in self._redis.scan_iter(match=keys.every_game("meta"), count=count):
            yield keys.game_of(key.decode() if isinstance(key, bytes) else key)

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
        field, value = idempotency or ("", "")
        args = [expected_version, field, value, *_encode(records)]
        names = [keys.events(game_id), keys.idem(game_id), keys.recent(game_id)]
        outcome, detail, resent = run_until_known(self._append, names, args, bool(field))
        if outcome == "conflict" and resent and self._applied_at(game_id, expected_version, records):
            return AppendResult("duplicate", prior=value)  # resent after its reply was lost, and packed since
        if outcome == "duplicate":
            return AppendResult("duplicate", prior=detail)
        return AppendResult(outcome, int(detail))

    def idempotent_answer(self, game_id: str, field: str) -> str | None:
        """The stored answer for an Idempotency-Key field, if any."""
        answer = store_call(self._redis.hget, keys.idem(game_id), field)
        return str(answer) if answer is not None else None

    def _applied_at(self, game_id: str, version: int, records: list[dict[str, Any]]) -> bool:
        """Whether the game's record after `version` is the first of `records` (same hash)."""
        texts = self._texts(game_id, version, 1)[0]
        return bool(texts) and bool(records) and json.loads(texts[0]).get("hash") == records[0].get("hash")

    def _texts(self, game_id: str, after: int = 0, count: int | None = None) -> tuple[list[str], bool]:
        """Entry texts above `<after>-0` from the stream, or from the packed game once the stream is gone;
        and whether the game is packed."""
        entries = store_call(self._redis.xrange, keys.events(game_id), keys.entry_id(after + 1), "+", count)
        if entries:
            return [str(fields.get("e", "")) for _, fields in entries], False
        packed = self._packed.unpacked(game_id)  # the stream is dropped only after the packed value is written
        if packed is None:
            return [], False
        return packed.texts(after, count), True


def _encode(records: list[dict[str, Any]]) -> list[str]:
    return [encode_record(record) for record in records]
