"""Disputes filed by seats: a stream of their own beside the game (`game:{<id>}:disputes`), never the game's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from service.storage import keys
from service.storage.outcomes import GameGone
from service.storage.redis_clients import StoreClient
from service.storage.scripts import run, store_call

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


class DisputeStore:
    """The disputes of each game, numbered `<n>-0` in the order they were filed."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client
        self._add_dispute = client.register_script(_ADD_DISPUTE)

    def add_dispute(self, game_id: str, seat: int, per_seat: int, dispute: Mapping[str, Any]) -> str | None:
        """Store a dispute of `seat` as the game's next one; its entry id, or None when the seat
        has `per_seat` disputes already (checked and written in one script); GameGone when the game
        is no longer stored (an export deleted it)."""
        args = [seat, per_seat, json.dumps(dispute, separators=(",", ":"), ensure_ascii=False)]
        names = [keys.disputes(game_id), keys.meta(game_id), keys.packed(game_id)]
        outcome, detail = run(self._add_dispute, names, args)
        if outcome == "gone":
            raise GameGone(game_id)
        return detail if outcome == "ok" else None

    def disputes(self, game_id: str, after: int = 0, count: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The game's disputes numbered after `after` (at most `count`), with their entry ids, oldest first."""
        entries = store_call(self._redis.xrange, keys.disputes(game_id), keys.entry_id(after + 1), "+", count)
        return [(str(entry_id), json.loads(fields["d"])) for entry_id, fields in entries]

    def count_disputes(self, game_id: str, seat: int) -> int:
        """How many disputes `seat` has filed in the game (by each entry's `s` field, unparsed)."""
        entries = store_call(self._redis.xrange, keys.disputes(game_id), "-", "+")
        return sum(1 for _, fields in entries if fields.get("s") == str(seat))
