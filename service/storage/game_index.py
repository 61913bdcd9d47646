"""Indexes of games by their stage of life, so that nothing has to scan Redis's keys.

Keys (outside the games' hash tags, beside the event store; each command touches one of them only,
never a game's keys, so a Redis Cluster is fine):
  games:active    sorted set: game id -> when it was last seen acting (epoch seconds). Written before
                  the game is stored; only a hint: the lifecycle sweep checks a game's last event
                  before it abandons it, and moves the hint on when the game acted since.
  games:finished  sorted set: game id -> when it finished. Written before the append that ends the
                  game (an intent; a game whose final append lost is taken out again by the sweep)
                  and again after it; kept until the game is exported (`python -m service.archive`).
  games:unpacked  sorted set: finished games not packed yet -> when they finished; the sweep packs
                  each COMPACT_AFTER_SECONDS after its end and takes it out. A game the sweep could
                  not pack (or check, in games:active) gets a later score, so the others get their turn.

Each key lives on one master of a cluster (the writes of a game's end go in one pipeline, which a
cluster client splits by master), so a write here never fails a game's action: the command
path writes the indexes as best it can, and the lifecycle sweep's index walk (service/upkeep/lifecycle.py)
puts back every game the store holds that is missing from the index it belongs in.
"""

from __future__ import annotations

from service.storage.keys import ACTIVE_KEY as ACTIVE_KEY
from service.storage.keys import FINISHED_KEY as FINISHED_KEY
from service.storage.keys import UNPACKED_KEY as UNPACKED_KEY
from service.storage.redis_clients import StoreClient
from service.storage.scripts import store_call


class GameIndex:
    """The three sorted sets of games: active, finished, finished but not packed yet."""

    def __init__(self, client: StoreClient) -> None:
        self.client = client

    def started(self, game_id: str, at: float) -> None:
        """A game is about to be stored."""
        self._call(self.client.zadd, ACTIVE_KEY, {game_id: at})

    def finishing(self, game_id: str, at: float, unless_noted: bool = False) -> None:
        """An append is about to end the game at `at` (or has: with `unless_noted`, a note that is
        there already keeps its time)."""
        self._note_finished(game_id, at, unless_noted, still_active=True)

    def ended(self, game_id: str, at: float, unless_noted: bool = False) -> None:
        """The game's final append is stored: noted as finished at `at` (with `unless_noted`, a note that is
        there already keeps its time) and no longer active, in one round trip."""
        self._note_finished(game_id, at, unless_noted, still_active=False)

    def _note_finished(self, game_id: str, at: float, unless_noted: bool, still_active: bool) -> None:
        with self.client.pipeline(transaction=False) as pipe:  # one round trip; each command still one key
            pipe.zadd(FINISHED_KEY, {game_id: at}, nx=unless_noted)
            pipe.zadd(UNPACKED_KEY, {game_id: at}, nx=unless_noted)
            if not still_active:
                pipe.zrem(ACTIVE_KEY, game_id)
            self._call(pipe.execute)

    def not_finished(self, game_id: str) -> None:
        """An intent to end the game that did not come true (its append lost)."""
        self._call(self.client.zrem, UNPACKED_KEY, game_id)
        self._call(self.client.zrem, FINISHED_KEY, game_id)

    def retry_at(self, key: str, game_id: str, at: float) -> None:
        """Look at the game in `key` again once `at` is due (only if it is still there); in ACTIVE_KEY, the
        game last acted at `at`."""
        self._call(self.client.zadd, key, {game_id: at}, xx=True)

    def missing(self, key: str, game_ids: list[str]) -> list[str]:
        """Those of `game_ids` that are not in `key`."""
        if not game_ids:
            return []
        scores = self._call(self.client.zmscore, key, game_ids)
        return [game_id for game_id, score in zip(game_ids, scores, strict=True) if score is None]

    def packed(self, game_id: str) -> None:
        """The game is packed."""
        self._call(self.client.zrem, UNPACKED_KEY, game_id)

    def restored(self, game_id: str, finished_at: float) -> None:
        """A finished game came back from an archive, packed."""
        self._call(self.client.zadd, FINISHED_KEY, {game_id: finished_at})

    def forget(self, game_id: str) -> None:
        """The game is gone from the store (exported, or never stored)."""
        for key in (ACTIVE_KEY, UNPACKED_KEY, FINISHED_KEY):
            self._call(self.client.zrem, key, game_id)

    def idle(self, before: float, limit: int) -> list[str]:
        """Active games last seen acting before `before`, longest idle first."""
        return self._range(ACTIVE_KEY, before, limit)

    def to_pack(self, before: float, limit: int) -> list[str]:
        """Finished games not packed yet that ended before `before`, oldest first."""
        return self._range(UNPACKED_KEY, before, limit)

    def finished_before(self, before: float, limit: int) -> list[str]:
        """Finished games (packed or not) that ended before `before`, oldest first."""
        return self._range(FINISHED_KEY, before, limit)

    def _range(self, key: str, before: float, limit: int) -> list[str]:
        members = self._call(self.client.zrangebyscore, key, "-inf", f"({before}", start=0, num=limit)
        return [m.decode() if isinstance(m, bytes) else str(m) for m in members]

    _call = staticmethod(store_call)
