"""Matches in Redis (keys in service/storage/keys.py): a match's header, its games' states and its finished
deals under the match's hash tag; the indexes of all matches, the running ones and each game's finished ones.
A match is created, and finished, by one script on its own keys; its place in the indexes is written after
and put back by the next pass over the running matches (service/play/matches.py) if that write was lost."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from service.storage import keys
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call, text

# KEYS: meta. ARGV: field/value pairs. Returns 1 if created, 0 if the match exists.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

# KEYS: meta. ARGV: results (JSON), finished_at (ms), deal_scores (JSON; optional). Returns 1 if it finished now,
# 0 if it had before.
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'finished', 'results', ARGV[1], 'finished_at', ARGV[2])
if ARGV[3] then redis.call('HSET', KEYS[1], 'deal_scores', ARGV[3]) end
return 1
"""

# KEYS: the match's games, its meta. ARGV: how many games to note finished, those games' fields, then the games to
# note started. Notes each game finished that was not (counting it in `finished_games` where the match keeps that
# count) and each game started that is not noted finished (a game noted started that was never stored is started
# again), raising `deals_begun` past each deal begun; returns the games noted started now.
_NOTE = """
local kept = redis.call('HEXISTS', KEYS[2], 'finished_games') == 1
local n = tonumber(ARGV[1])
for i = 2, n + 1 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= 'finished' then
    redis.call('HSET', KEYS[1], ARGV[i], 'finished')
    if kept then redis.call('HINCRBY', KEYS[2], 'finished_games', 1) end
  end
end
local started = {}
for i = n + 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= 'finished' then
    redis.call('HSET', KEYS[1], ARGV[i], 'started')
    table.insert(started, ARGV[i])
    local deal = tonumber(string.match(ARGV[i], '^(%d+):'))
    if kept and deal >= tonumber(redis.call('HGET', KEYS[2], 'deals_begun') or '0') then
      redis.call('HSET', KEYS[2], 'deals_begun', deal + 1)
    end
  end
end
return started
"""

# KEYS: the match's games, its meta. ARGV: the ended game's field, the next game of its deal ('' when it was the
# deal's last), the match's deals. A game's end in a match that keeps its counts: notes it finished and starts what
# follows it (the deal's next game, else the first deal not begun), unless a pass noted it finished first (and
# started what follows). Returns {finished_games, the game noted started now or ''}; {-1, ''} where the match keeps
# no counts (made before they were kept: the caller advances it as a pass does); {0, ''} where it is not running.
_END_GAME = """
if redis.call('HGET', KEYS[2], 'status') ~= 'running' then return {0, ''} end
if redis.call('HEXISTS', KEYS[2], 'finished_games') == 0 then return {-1, ''} end
if redis.call('HGET', KEYS[1], ARGV[1]) == 'finished' then
  return {tonumber(redis.call('HGET', KEYS[2], 'finished_games')), ''}
end
redis.call('HSET', KEYS[1], ARGV[1], 'finished')
local finished = redis.call('HINCRBY', KEYS[2], 'finished_games', 1)
local next = ARGV[2]
if next == '' then
  local begun = tonumber(redis.call('HGET', KEYS[2], 'deals_begun') or '0')
  if begun < tonumber(ARGV[3]) then
    next = begun .. ':0'
    redis.call('HSET', KEYS[2], 'deals_begun', begun + 1)
  end
end
if next ~= '' and redis.call('HSETNX', KEYS[1], next, 'started') == 0 then next = '' end
return {finished, next}
"""

# KEYS: meta. ARGV: a deal. Raises `deals_opened` to the deal (every deal below it done and opened), never lowers it.
_OPEN_BELOW = """
if tonumber(redis.call('HGET', KEYS[1], 'deals_opened') or '0') < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'deals_opened', ARGV[1])
end
return 0
"""


class MatchStore:
    """Matches in Redis: create, read, note their games and finished deals, finish, list."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client
        self._create = client.register_script(_CREATE)
        self._finish = client.register_script(_FINISH)
        self._note = client.register_script(_NOTE)
        self._end_game = client.register_script(_END_GAME)
        self._open_below = client.register_script(_OPEN_BELOW)

    def create(self, match_id: str, fields: Mapping[str, Any], created_ms: int) -> bool:
        """Store a new match (its header `fields`, JSON for what is not text) as running; False if the id is taken."""
        pairs = [str(part) for item in _texts(fields).items() for part in item]
        created = bool(store_call(self._create, keys=[keys.match_key(match_id, "meta")], args=pairs))
        if created:
            self.index_running(match_id, created_ms)
        return created

    def index_running(self, match_id: str, created_ms: int) -> None:
        """The match in the list of all matches and of the running ones."""
        with self._redis.pipeline(transaction=False) as pipe:
            pipe.zadd(keys.MATCHES_ALL_KEY, {match_id: created_ms})
            pipe.zadd(keys.MATCHES_RUNNING_KEY, {match_id: created_ms})
            store_call(pipe.execute)

    def meta(self, match_id: str) -> dict[str, str] | None:
        """The match's header as stored (texts), None when there is no such match."""
        stored = store_call(self._redis.hgetall, keys.match_key(match_id, "meta"))
        return {text(k): text(v) for k, v in stored.items()} if stored else None

    def game_states(self, match_id: str, deals: range | None = None, count: int = 0) -> dict[tuple[int, int], str]:
        """Each started game's state (`started`, `finished`) by (deal, rotation): of every deal, or only of the
        games of `deals` (`count` a deal), read by name."""
        key = keys.match_key(match_id, "games")
        if deals is None:
            stored = store_call(self._redis.hgetall, key)
        else:
            fields = [_field((deal, rotation)) for deal in deals for rotation in range(count)]
            found = store_call(self._redis.hmget, key, fields) if fields else []
            stored = {field: state for field, state in zip(fields, found, strict=True) if state is not None}
        return {_key(text(field)): text(state) for field, state in stored.items()}

    def opened_below(self, match_id: str, deal: int) -> None:
        """Every deal below `deal` is done and opened: a pass need not look at them again (never lowered)."""
        store_call(self._open_below, keys=[keys.match_key(match_id, "meta")], args=[deal])

    def note_games(
        self, match_id: str, finished: Sequence[tuple[int, int]], started: Sequence[tuple[int, int]]
    ) -> list[tuple[int, int]]:
        """Note games, by (deal, rotation), as finished, and as started those not noted finished, in one step; the
        games noted started now."""
        args = [len(finished), *(_field(key) for key in finished), *(_field(key) for key in started)]
        noted = store_call(self._note, keys=self._keys(match_id), args=args)
        return [_key(text(field)) for field in noted]

    def end_game(
        self, match_id: str, ended: tuple[int, int], following: tuple[int, int] | None, deals: int
    ) -> tuple[int, tuple[int, int] | None] | None:
        """A game's end: note it finished and start what follows it (`following`, the deal's next game, else the
        first deal not begun), reading none of the match's other games; the count of finished games and the game
        noted started now. None where the match keeps no counts; (count, None) where a pass noted the end first;
        (0, None) where the match is not running."""
        args = [_field(ended), _field(following) if following is not None else "", deals]
        count, noted = store_call(self._end_game, keys=self._keys(match_id), args=args)
        if int(count) < 0:
            return None
        return int(count), (_key(text(noted)) if text(noted) else None)

    @staticmethod
    def _keys(match_id: str) -> list[str]:
        return [keys.match_key(match_id, "games"), keys.match_key(match_id, "meta")]

    def finish(self, match_id: str, results: Any, finished_ms: int, deal_scores: Any = None) -> bool:
        """Mark the match finished with its results (and its deal scores, for the ladder), unless it was already;
        True if it finished now."""
        args = [json.dumps(results, separators=(",", ":")), finished_ms]
        if deal_scores is not None:
            args.append(json.dumps(deal_scores, separators=(",", ":")))
        return bool(store_call(self._finish, keys=[keys.match_key(match_id, "meta")], args=args))

    def index_finished(self, match_id: str, game: str, finished_ms: int) -> None:
        """The match among `game`'s finished matches (the ladder's order), and no longer running."""
        with self._redis.pipeline(transaction=False) as pipe:
            pipe.zadd(keys.matches_finished(game), {match_id: finished_ms})
            pipe.zrem(keys.MATCHES_RUNNING_KEY, match_id)
            store_call(pipe.execute)

    def running(self) -> list[str]:
        """The running matches' ids, oldest first."""
        return [text(member) for member in store_call(self._redis.zrange, keys.MATCHES_RUNNING_KEY, 0, -1)]

    def newest(self, before: float | None, count: int) -> list[tuple[str, float]]:
        """At most `count` matches created before `before` (ms; all without), newest first, with their times."""
        top = f"({before}" if before is not None else "+inf"
        found = store_call(
            self._redis.zrevrangebyscore, keys.MATCHES_ALL_KEY, top, "-inf", start=0, num=count, withscores=True
        )
        return [(text(member), float(score)) for member, score in found]

    def finished_of(self, game: str) -> list[str]:
        """The finished matches of `game`, in the order they finished (ties by id)."""
        found = store_call(self._redis.zrange, keys.matches_finished(game), 0, -1, withscores=True)
        return [text(member) for member, _ in sorted(found, key=lambda item: (float(item[1]), text(item[0])))]


class MatchEmbargo:
    """The games of a match whose deal is still being played (one hash, `matches:embargo`): closed to all but
    their seats' own views (C-8)."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client

    def update(self, opened: Sequence[str], closed: Mapping[str, tuple[str, int]]) -> None:
        """The `opened` games open to everyone (their deal is done); the `closed` ones (id -> match, deal) are
        closed until theirs is: one round trip."""
        if not opened and not closed:
            return
        with self._redis.pipeline(transaction=False) as pipe:
            if opened:
                pipe.hdel(keys.MATCHES_EMBARGO_KEY, *opened)
            if closed:
                fields = [
                    part for game_id, (match_id, deal) in closed.items() for part in (game_id, f"{match_id}:{deal}")
                ]
                pipe.hset(keys.MATCHES_EMBARGO_KEY, items=fields)
            store_call(pipe.execute)

    def embargoed(self, game_id: str) -> tuple[str, int] | None:
        """The match and deal of a game closed until its deal is done; None for a game that is open."""
        found = store_call(self._redis.hget, keys.MATCHES_EMBARGO_KEY, game_id)
        if found is None:
            return None
        match_id, _, deal = text(found).rpartition(":")
        return match_id, int(deal)


def _texts(fields: Mapping[str, Any]) -> dict[str, str]:
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in fields.items()}


def _field(key: tuple[int, int]) -> str:
    """A game's field in the match's games hash: `<deal>:<rotation>`."""
    return f"{key[0]}:{key[1]}"


def _key(field: str) -> tuple[int, int]:
    deal, _, rotation = field.partition(":")
    return int(deal), int(rotation)
