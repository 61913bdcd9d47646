"""A game taken out of Redis whole and put back (service/upkeep/archive.py): everything stored of it, its
deletion only while it is as read, and its restore, packed, with its disputes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from service.storage import keys
from service.storage.keys import DROPPED_WHEN_PACKED, OTHER_GAME_KEYS
from service.storage.outcomes import RestoreRefused
from service.storage.packed_games import Entry, pack, unpack
from service.storage.redis_clients import StoreClient
from service.storage.scripts import GameKeys, GameReader, sent_once_until_known

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


@dataclasses.dataclass(frozen=True)
class StoredGame:
    """Everything the store holds of one game, packed or not: meta, entries (id, text), disputes."""

    meta: dict[str, str]
    entries: tuple[Entry, ...]
    disputes: tuple[tuple[str, dict[str, str]], ...]
    counts: tuple[int, int, int, int]  # stream entries, meta fields, packed length, disputes: as read


class ArchiveStore:
    """Whole games out of the store and back in."""

    def __init__(self, client: StoreClient, reader: GameReader | None = None) -> None:
        self._reader = reader or GameReader(client)
        self._delete = client.register_script(_DELETE)
        self._restore = client.register_script(_RESTORE)

    def stored_game(self, game_id: str) -> StoredGame | None:
        """Everything stored of the game (packed or not), with the counts `delete` checks; None if none."""
        found = self._reader.read(game_id)  # one atomic read: packing cannot drop the stream between reads
        meta, entries = found.meta, found.entries
        if not (meta and entries) and found.packed is not None:
            packed = unpack(found.packed)
            meta, entries = dict(packed.meta), packed.entries
        elif not meta:
            return None
        return StoredGame(meta, entries, found.disputes, found.counts())

    def delete(self, game_id: str, stored: StoredGame) -> bool:
        """Delete every key of the game, only if it is still as `stored` says; True if it was deleted.

        Sent once; when the reply is lost, the game is read back: nothing left of it means deleted."""
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id), keys.disputes(game_id)]
        names += [keys.game_key(game_id, name) for name in (*DROPPED_WHEN_PACKED, *OTHER_GAME_KEYS)]
        names = list(dict.fromkeys(names))

        def learn() -> str | None:  # sent once: a resend after a lost reply would meet `changed`
            now = self._reader.read(game_id).counts()
            if now == (0, 0, 0, 0):
                return "ok"  # deleted (by this call, or by another export of the same game)
            return None if now == stored.counts else "changed"

        return sent_once_until_known(self._delete, names, list(stored.counts), learn) == "ok"

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
        names = [keys.events(game_id), keys.meta(game_id), keys.packed(game_id), keys.disputes(game_id)]

        def learn() -> str | None:  # sent once: a resend after a lost reply would meet `exists`
            found = self._reader.read(game_id)
            if _restored_as(found, value, disputes):
                return "ok"
            nothing = not (found.meta or found.entries or found.packed is not None or found.disputes)
            return None if nothing else "exists"

        outcome = sent_once_until_known(self._restore, names, args, learn)
        if outcome == "invalid":
            raise RestoreRefused(f"game {game_id}: dispute ids are not `<n>-0` in increasing order, or not well-formed")
        return outcome == "ok"

    def holds_restored(
        self, game_id: str, meta: Mapping[str, str], entries: Sequence[Entry], disputes: Sequence[tuple[str, Any]]
    ) -> bool:
        """Whether the game is stored exactly as `restore` stores these (packed, these disputes, nothing else)."""
        return _restored_as(self._reader.read(game_id), pack(meta, entries), disputes)


def _restored_as(found: GameKeys, value: bytes, disputes: Sequence[tuple[str, Any]]) -> bool:
    """Whether a game's keys are exactly what a restore of the packed `value` and `disputes` writes."""
    wanted = tuple((dispute_id, dict(fields)) for dispute_id, fields in disputes)
    return not found.meta and not found.entries and found.packed == value and found.disputes == wanted
