"""Snapshots of folded games every SNAPSHOT_EVERY events, in a bounded in-process cache and in Redis.

A replay step, a dispute's views and a load whose latest state is no longer cached start from the
nearest snapshot at or before the step they need and fold only the events after it (at most
SNAPSHOT_EVERY - 1), read with one ranged XRANGE. Each snapshot keeps the hash of its last event:
the first event read after it must carry that hash, or the game's snapshots are dropped (the stored
stream changed) and the fold starts from scratch. The audit never uses snapshots: it is the check.

The command path also writes each snapshot it keeps to the store (`game:{<id>}:snapshots`, through
service/storage/snapshot_codec.py), so a process that has not folded a game yet (a cold load after a
restart, another API process) starts from the stored snapshot instead of from scratch. Reads never
write snapshots to the store; packing a finished game drops them. A stored snapshot this process
cannot use (written by other code, changed bytes, an older format; service/storage/snapshot_codec.py) drops
the game's stored snapshots, and the load folds from this process's own snapshots or from scratch.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import threading
from collections import OrderedDict
from typing import Any, Protocol

from domain import engine
from service.storage.outcomes import StoreUnavailable
from service.storage.snapshot_codec import SnapshotDecodeError, decode, encode

log = logging.getLogger(__name__)

SNAPSHOT_EVERY = 128  # a snapshot after every this many events
SNAPSHOT_CACHE_SIZE = 4096  # snapshots kept in all, over every game; the least recently used go first


@dataclasses.dataclass(frozen=True)
class Kept:
    """A game folded to `snap.version`, and the hash of that version's event."""

    snap: engine.Snapshot[Any]
    last_hash: str

    @property
    def version(self) -> int:
        return self.snap.version


class SnapshotStore(Protocol):
    """Where snapshots outlive the process (service/storage/snapshot_store.py in Redis)."""

    def put_snapshot(self, game_id: str, version: int, blob: bytes) -> None: ...
    def snapshot_versions(self, game_id: str) -> list[int]: ...
    def snapshot(self, game_id: str, version: int) -> bytes | None: ...
    def drop_snapshots(self, game_id: str) -> None: ...


class SnapshotCache:
    """Snapshots at every multiple of `every`, at most `size` of them, least recently used dropped first;
    with a `store`, the command path's snapshots are kept there too and found there on a miss."""

    def __init__(
        self, every: int = SNAPSHOT_EVERY, size: int = SNAPSHOT_CACHE_SIZE, store: SnapshotStore | None = None
    ) -> None:
        self.every = every
        self.size = size
        self.store = store
        self._kept: OrderedDict[tuple[str, int], Kept] = OrderedDict()
        self._versions: dict[str, list[int]] = {}  # per game, sorted
        self._lock = threading.Lock()

    def keep_crossing(self, before: int, game_id: str, snap: engine.Snapshot[Any], last_hash: str) -> None:
        """Keep `snap` when the events from version `before` to it passed a multiple of `every`
        (an action appends several events at once, so the multiple itself may never be a state here)."""
        if snap.version // self.every > before // self.every:
            self.keep(game_id, snap, last_hash)
            if self.store is not None:
                try:
                    self.store.put_snapshot(game_id, snap.version, encode(snap, last_hash))
                except StoreUnavailable as error:  # the action is stored; a later load folds a little more
                    log.warning("snapshot of game %s at %d not stored: %s", game_id, snap.version, error)

    def keep(self, game_id: str, snap: engine.Snapshot[Any], last_hash: str) -> None:
        """Keep `snap` (callers keep one at each multiple of `every`, or just past it)."""
        key = (game_id, snap.version)
        with self._lock:
            if key not in self._kept:
                bisect.insort(self._versions.setdefault(game_id, []), snap.version)
            self._kept[key] = Kept(snap, last_hash)
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                (old_game, old_version), _ = self._kept.popitem(last=False)
                self._drop_version(old_game, old_version)

    def nearest(self, game_id: str, at: int, config: engine.GameConfig | None = None) -> Kept | None:
        """The latest snapshot of the game at or before version `at`, if any: this process's, or (given
        the game's config) the store's when that is closer to `at`."""
        with self._lock:
            versions = self._versions.get(game_id, [])
            index = bisect.bisect_right(versions, at)
            kept = self._kept[(game_id, versions[index - 1])] if index else None
            if kept is not None:
                self._kept.move_to_end((game_id, kept.version))
        if (kept is not None and at - kept.version < self.every) or self.store is None or config is None:
            return kept
        return self._stored(game_id, at, config) or kept

    def _stored(self, game_id: str, at: int, config: engine.GameConfig) -> Kept | None:
        """The store's latest snapshot at or before `at`, kept in this process too."""
        assert self.store is not None
        versions = [version for version in self.store.snapshot_versions(game_id) if version <= at]
        blob = self.store.snapshot(game_id, versions[-1]) if versions else None
        if blob is None:
            return None
        try:
            snap, last_hash = decode(blob, config)
            if snap.version != versions[-1]:
                raise SnapshotDecodeError(f"a stored snapshot of version {snap.version} kept as {versions[-1]}")
        except SnapshotDecodeError as error:  # other code's, changed, or unreadable: fold from the events
            log.warning("game %s: stored snapshots dropped: %s", game_id, error)
            self.store.drop_snapshots(game_id)
            return None
        self.keep(game_id, snap, last_hash)
        return Kept(snap, last_hash)

    def forget(self, game_id: str) -> None:
        """Drop every snapshot of the game (its stored stream is not what they were folded from)."""
        with self._lock:
            for version in self._versions.pop(game_id, []):
                del self._kept[(game_id, version)]
        if self.store is not None:
            self.store.drop_snapshots(game_id)

    def __len__(self) -> int:
        return len(self._kept)

    def _drop_version(self, game_id: str, version: int) -> None:
        versions = self._versions[game_id]
        versions.remove(version)
        if not versions:
            del self._versions[game_id]
