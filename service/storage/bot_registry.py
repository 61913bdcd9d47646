"""Registered bots (keys in service/storage/keys.py): each bot's hash, the index of names and one index of
names per game. A registration is one Lua script, so it is all or nothing and the cap on registered bots
is checked in the same step that adds the name."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.storage import keys
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call, text

# KEYS: names, tokens, bot hash, then one index per game. ARGV: cap, name, digest, then the hash's
# field/value pairs. Returns 'ok', 'exists' or 'full'.
_REGISTER = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 'exists' end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 'full' end
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[3], unpack(fields))
redis.call('ZADD', KEYS[1], 0, ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
for i = 4, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[2]) end
return 'ok'
"""

# KEYS: bot hash, tokens. ARGV: the current token's digest, the new one, the name. Returns 1 if replaced.
_ROTATE = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'token', ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

# KEYS: names, tokens. ARGV: the bot hash's key prefix. Indexes every bot's token digest that the index
# lacks (bots registered before the index was kept); returns how many it added.
_INDEX_TOKENS = """
local added = 0
for _, name in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local digest = redis.call('HGET', ARGV[1] .. name, 'token')
  if digest then added = added + redis.call('HSETNX', KEYS[2], digest, name) end
end
return added
"""

# KEYS: bot hash. ARGV: field, by. Adds to one of the bot's counts if the bot is still registered.
_COUNT = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]) end
"""

COUNTED = ("playing", "played", "timeouts")  # a bot's counts, kept in its hash


class BotRegistry:
    """Registered bots in Redis: register, read, page through, replace a token."""

    def __init__(self, client: StoreClient, before_register: Callable[[], None] | None = None) -> None:
        """`before_register`: called just before the registration script runs (a test's hook to force an
        interleaving)."""
        self._redis = client
        self._register = client.register_script(_REGISTER)
        self._rotate = client.register_script(_ROTATE)
        self._count = client.register_script(_COUNT)
        self._index_tokens = client.register_script(_INDEX_TOKENS)
        self._before_register = before_register

    def register(self, bot: Mapping[str, Any], digest: str, cap: int) -> str:
        """Add `bot` (name, games, description, created_at) with its token's digest, unless its name is
        taken (`exists`) or `cap` bots are registered (`full`); `ok` when added."""
        fields = {**bot, "games": json.dumps(list(bot["games"])), "token": digest, **dict.fromkeys(COUNTED, 0)}
        if fields.get("description") is None:
            fields.pop("description", None)
        pairs = [str(part) for item in fields.items() for part in item]
        if self._before_register is not None:
            self._before_register()
        game_keys = [keys.bots_of_game(game) for game in bot["games"]]
        reply = store_call(
            self._register,
            keys=[keys.BOT_NAMES_KEY, keys.BOT_TOKENS_KEY, keys.bot(bot["name"]), *game_keys],
            args=[cap, bot["name"], digest, *pairs],
        )
        return text(reply)

    def bot(self, name: str) -> dict[str, Any] | None:
        """The bot's stored fields (games decoded, `token` its digest); None when there is no such bot."""
        stored = store_call(self._redis.hgetall, keys.bot(name))
        if not stored:
            return None
        fields = {text(k): text(v) for k, v in stored.items()}
        return {**fields, "games": json.loads(fields["games"])}

    def names(self, after: str | None, count: int, game: str | None = None) -> list[str]:
        """At most `count` names after `after` (all from the first without), in order; of `game`'s bots only."""
        index = keys.bots_of_game(game) if game is not None else keys.BOT_NAMES_KEY
        start = f"({after}" if after is not None else "-"
        found: Sequence[Any] = store_call(self._redis.zrangebylex, index, start, "+", start=0, num=count)
        return [text(name) for name in found]

    def replace_token(self, name: str, current: str, new: str) -> bool:
        """Put the digest `new` in place of `current`; False when `current` is not the bot's digest now."""
        return bool(store_call(self._rotate, keys=[keys.bot(name), keys.BOT_TOKENS_KEY], args=[current, new, name]))

    def index_tokens(self) -> int:
        """Put in the token index every bot's token that it lacks (a bot registered before it was kept, whose
        token would find no turns otherwise); how many were added."""
        prefix = keys.bot("")
        return int(store_call(self._index_tokens, keys=[keys.BOT_NAMES_KEY, keys.BOT_TOKENS_KEY], args=[prefix]))

    def name_of_token(self, digest: str) -> str | None:
        """The name of the bot whose token has this digest, if any."""
        name = store_call(self._redis.hget, keys.BOT_TOKENS_KEY, digest)
        return None if name is None else text(name)

    def count(self, name: str, field: str, by: int) -> None:
        """Add `by` to one of the bot's counts (COUNTED); a bot that is gone is left so."""
        assert field in COUNTED
        store_call(self._count, keys=[keys.bot(name)], args=[field, by])

    def seen(self, name: str, at_ms: int) -> None:
        """The bot asked for its turns at `at_ms` (epoch ms)."""
        store_call(self._redis.hset, keys.bot(name), "seen_ms", at_ms)
