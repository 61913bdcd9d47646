"""The games as the play layer reads them: a game's header, its state now (cached by version, from
its latest snapshot plus the newer events) and its state after any event."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from typing import Any

from domain import engine
from domain.chain import record_actor
from service.play import game_header
from service.play.errors import GameNotFound, StreamDamaged
from service.play.loaded_game import LoadedGame, MatchPlace, seat_of_token
from service.play.ports import EventLog
from service.storage.snapshots import SnapshotCache

log = logging.getLogger(__name__)
CACHE_SIZE = 2048


class GameRepository:
    """Loads games from the event log, keeps the latest state of recent games (by version) and
    keeps snapshots on the way (service/storage/snapshots.py)."""

    def __init__(self, store: EventLog, snapshots: SnapshotCache | None = None) -> None:
        """`snapshots`: where snapshots are kept (default: this process only)."""
        self.store = store
        self.snapshots = snapshots if snapshots is not None else SnapshotCache()
        self._cache: OrderedDict[str, LoadedGame] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, game_id: str) -> LoadedGame:
        """The game at its latest version: cached state (or its latest snapshot) plus any newer events."""
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is None:
            cached = self._from_snapshot(self.load_header(game_id), None)
        try:
            # from the cached last event on: if that is gone or changed (a store that lost writes),
            # the cache is ahead of the store and the game is rebuilt from what the store holds
            newer = self.store.read(game_id, after=max(cached.version - 1, 0))
            if cached.version and (not newer or newer[0]["hash"] != cached.last_hash):
                self.snapshots.forget(game_id)
                cached = self.load_header(game_id)
                newer = self.store.read(game_id, after=0)
            elif cached.version:
                newer = newer[1:]
        except ValueError as error:  # an entry that is not JSON
            raise _damaged(game_id, cached.version + 1, error) from error
        if newer:
            cached = self._advance(cached, newer)
            self.remember(cached)
        return cached

    def state_at(self, game: LoadedGame, at: int) -> engine.Snapshot[Any]:
        """The game after event `at` (1 to its version): folded from the nearest snapshot at or
        before `at`, reading only the events after it; StreamDamaged when they do not replay."""
        if at == game.version:
            return game.snap
        start = self._from_snapshot(game, at)
        try:
            wanted = at - start.version
            records = self.store.read(game.id, after=max(start.version - 1, 0), count=wanted + (start.version > 0))
            if start.version and (not records or records[0]["hash"] != start.last_hash):
                self.snapshots.forget(game.id)  # the stream changed under the snapshot: from scratch
                start = self._from_snapshot(game, 0)
                records = self.store.read(game.id, after=0, count=at)
            elif start.version:
                records = records[1:]
        except (ValueError, KeyError, TypeError) as error:  # an entry that is not a record's JSON
            raise _damaged(game.id, start.version + 1, error) from error
        if len(records) != at - start.version:
            raise _damaged(game.id, start.version + len(records) + 1, LookupError("events missing"))
        return self._advance(start, records).snap if records else start.snap

    def load_header(self, game_id: str) -> LoadedGame:
        """The game's creation facts with none of its events applied; GameNotFound when there is none."""
        meta = self.store.meta(game_id)
        if meta is None:
            raise GameNotFound(game_id)
        return game_header.decode(game_id, meta)

    def seat_for_token(self, game_id: str, token: str | None) -> int | None:
        """The seat whose token this is (None for no token), from the game as this process holds it, else from
        its meta alone, no fold: GameNotFound when there is no such game, then Unauthorized for a token that is
        not one of its seats'."""
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is not None:  # a game's seats and their token digests never change: no read needed
            return None if token is None else cached.seat_for_token(token)
        meta = self.store.meta(game_id)
        if meta is None:
            raise GameNotFound(game_id)
        return None if token is None else seat_of_token(token, game_header.token_digests(meta))

    def require_game(self, game_id: str) -> MatchPlace | None:
        """GameNotFound unless the game exists; its place in a match, if it is a match's game."""
        meta = self.store.meta(game_id)
        if meta is None:
            raise GameNotFound(game_id)
        return game_header.place_of(meta)

    def appended(self, before: LoadedGame, after: LoadedGame) -> None:
        """An append took the game from `before` to `after`: cache it, and keep a snapshot where it
        crossed a multiple of the snapshot interval."""
        self.remember(after)
        self.snapshots.keep_crossing(before.version, after.id, after.snap, after.last_hash)

    def remember(self, loaded: LoadedGame) -> None:
        """Cache the game, unless a newer version of it is cached already."""
        with self._lock:
            current = self._cache.get(loaded.id)
            if current is None or current.version <= loaded.version:
                self._cache[loaded.id] = loaded
            self._cache.move_to_end(loaded.id)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    def _from_snapshot(self, game: LoadedGame, at: int | None) -> LoadedGame:
        """The game at its latest snapshot at or before `at` (any, with None), else before its first event."""
        kept = self.snapshots.nearest(game.id, at if at is not None else 2**63, game.config)
        if kept is None:
            initial = engine.Snapshot(game.snap.game, game.config, game.snap.game.initial_state(game.config))
            return dataclasses.replace(game, snap=initial, last_hash="")
        return dataclasses.replace(game, snap=kept.snap, last_hash=kept.last_hash)

    def _advance(self, loaded: LoadedGame, records: list[dict[str, Any]]) -> LoadedGame:
        catalog = loaded.snap.game.catalog
        snap = loaded.snap
        every = self.snapshots.every
        try:
            for record in records:
                snap = engine.advance(snap, catalog.build(record["type"], record_actor(record), record["data"]))
                if snap.version % every == 0:  # keep a snapshot at every multiple (service/storage/snapshots.py)
                    self.snapshots.keep(loaded.id, snap, record["hash"])
        except (AssertionError, KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise _damaged(loaded.id, snap.version + 1, error) from error
        return dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])


def _damaged(game_id: str, version: int, error: Exception) -> StreamDamaged:
    log.error("game %s: the stored stream does not replay at version %s: %r", game_id, version, error)
    return StreamDamaged()
