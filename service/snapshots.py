"""Snapshots of folded games every SNAPSHOT_EVERY events, in a bounded in-process cache.

A replay step, a dispute's views and a load whose latest state is no longer cached start from the
nearest snapshot at or before the step they need and fold only the events after it (at most
SNAPSHOT_EVERY - 1), read with one ranged XRANGE. Each snapshot keeps the hash of its last event:
the first event read after it must carry that hash, or the game's snapshots are dropped (the stored
stream changed) and the fold starts from scratch. The audit never uses snapshots: it is the check.
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
from collections import OrderedDict
from typing import Any

from domain import engine

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


class SnapshotCache:
    """Snapshots at every multiple of `every`, at most `size` of them, least recently used dropped first."""

    def __init__(self, every: int = SNAPSHOT_EVERY, size: int = SNAPSHOT_CACHE_SIZE) -> None:
        self.every = every
        self.size = size
        self._kept: OrderedDict[tuple[str, int], Kept] = OrderedDict()
        self._versions: dict[str, list[int]] = {}  # per game, sorted
        self._lock = threading.Lock()

    def keep_crossing(self, before: int, game_id: str, snap: engine.Snapshot[Any], last_hash: str) -> None:
        """Keep `snap` when the events from version `before` to it passed a multiple of `every`
        (an action appends several events at once, so the multiple itself may never be a state here)."""
        if snap.version // self.every > before // self.every:
            self.keep(game_id, snap, last_hash)

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

    def nearest(self, game_id: str, at: int) -> Kept | None:
        """The latest snapshot of the game at or before version `at`, if any."""
        with self._lock:
            versions = self._versions.get(game_id, [])
            index = bisect.bisect_right(versions, at)
            if index == 0:
                return None
            key = (game_id, versions[index - 1])
            self._kept.move_to_end(key)
            return self._kept[key]

    def forget(self, game_id: str) -> None:
        """Drop every snapshot of the game (its stored stream is not what they were folded from)."""
        with self._lock:
            for version in self._versions.pop(game_id, []):
                del self._kept[(game_id, version)]

    def __len__(self) -> int:
        return len(self._kept)

    def _drop_version(self, game_id: str, version: int) -> None:
        versions = self._versions[game_id]
        versions.remove(version)
        if not versions:
            del self._versions[game_id]
