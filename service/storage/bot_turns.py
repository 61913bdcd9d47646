"""The registered bots' turn queues (keys in service/storage/keys.py): per bot, its due turns by when each
may be handed out, and their deadlines; one capped stream of offers that wakes the processes where bots
wait. Each step is one Lua script on the registry's hash tag, so a lease never hands one turn out twice
at once and a withdrawal never leaves half a turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.storage import keys
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call, text

OFFERS_KEPT = 10_000  # entries the offers stream keeps (about): it only wakes waiters, nothing is read back

# KEYS: turns, deadlines, offers. ARGV: turn, now (ms), deadline (ms), name, wake (0/1), offers kept.
# Adds the turn unless it is there; wakes the bot's waiters when asked. Returns 1 if added.
_OFFER = """
local added = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
if added == 1 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
if ARGV[5] == '1' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[6], '*', 'b', ARGV[4])
end
return added
"""

# KEYS: turns, deadlines. ARGV: now (ms), the lease's end (ms), limit, every (0/1).
# Hands out at most `limit` turns that are free at `now` (with `every`, leased ones too), leased until the
# end; returns {turn, deadline, ...} and when the next turn is free ('' if none waits).
_LEASE = """
local upto = ARGV[4] == '1' and '+inf' or ARGV[1]
local turns = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', upto, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, turn in ipairs(turns) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], turn)
  out[#out + 1] = turn
  out[#out + 1] = redis.call('HGET', KEYS[2], turn) or '0'
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {out, first[2] or ''}
"""

# KEYS: turns, deadlines. ARGV: the turns to take out.
_WITHDRAW = """
redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
return 1
"""


class BotTurnQueues:
    """Each registered bot's due turns in Redis: offer, lease, withdraw; and the offers' wake-up stream."""

    def __init__(self, client: StoreClient, blocking_client: StoreClient | None = None) -> None:
        """`blocking_client`: the one a process's waker blocks on (default `client`)."""
        self._redis = client
        self._blocking = blocking_client or client
        self._offer = client.register_script(_OFFER)
        self._lease = client.register_script(_LEASE)
        self._withdraw = client.register_script(_WITHDRAW)

    def offer(self, name: str, turn: str, now_ms: int, deadline_ms: int, wake: bool) -> bool:
        """Put `turn` in the bot's queue, free now, unless it is there already; `wake`: tell the processes
        where the bot waits. True if it was added."""
        args = [turn, now_ms, deadline_ms, name, int(wake), OFFERS_KEPT]
        return bool(store_call(self._offer, keys=self._keys(name) + [keys.BOT_OFFERS_KEY], args=args))

    def lease(
        self, name: str, now_ms: int, until_ms: int, limit: int, every: bool = False
    ) -> tuple[list[tuple[str, int]], int | None]:
        """At most `limit` of the bot's turns free at `now_ms` (`every`: leased ones too), with their
        deadlines, each leased until `until_ms`; and when the first turn left is free (None: none is left)."""
        reply: Any = store_call(self._lease, keys=self._keys(name), args=[now_ms, until_ms, limit, int(every)])
        flat, first = reply
        turns = [(text(flat[i]), int(text(flat[i + 1]))) for i in range(0, len(flat), 2)]
        first_text = text(first)
        return turns, (int(float(first_text)) if first_text else None)

    def release(self, name: str, turns: Sequence[str], now_ms: int) -> None:
        """Make `turns` free again at `now_ms` (leased but not handed out: their game had not reached them)."""
        if turns:
            store_call(self._redis.zadd, keys.bot_turns(name), dict.fromkeys(turns, now_ms), xx=True)

    def withdraw(self, name: str, turns: Sequence[str]) -> None:
        """Take `turns` out of the bot's queue (they were played, or their game moved on)."""
        if turns:
            store_call(self._withdraw, keys=self._keys(name), args=list(turns))

    def queued(self, name: str) -> int:
        """How many turns the bot's queue holds."""
        return int(store_call(self._redis.zcard, keys.bot_turns(name)))

    def last_offer(self) -> str:
        """The id of the newest offer (`0-0` when there is none): a waker reads the offers after it."""
        newest: Any = store_call(self._redis.xrevrange, keys.BOT_OFFERS_KEY, count=1)
        return text(newest[0][0]) if newest else "0-0"

    def offers_after(self, after: str, block_ms: int) -> tuple[list[str], str]:
        """The names of the bots offered a turn after the offer `after`, waiting up to `block_ms` for one;
        with the newest offer's id."""
        reply: Any = store_call(self._blocking.xread, {keys.BOT_OFFERS_KEY: after}, block=block_ms, count=1000)
        names: list[str] = []
        for _, entries in reply or []:
            for entry_id, fields in entries:
                after = text(entry_id)
                names.append(text(fields.get(b"b", fields.get("b", b""))))
        return names, after

    @staticmethod
    def _keys(name: str) -> list[str]:
        return [keys.bot_turns(name), keys.bot_deadlines(name)]
