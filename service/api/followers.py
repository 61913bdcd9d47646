"""Followers of a game share one reader: an open stream or long-poll holds no thread and no Redis connection.

Why this shape: the API runs under gunicorn's gevent worker (scripts/run.sh), the well-trodden way
to serve many long-lived requests from a WSGI app like this one without rewriting it for asyncio:
every request is a greenlet of a few KiB, so a waiting request costs no OS thread. What would still
cost per waiter is a blocking Redis read each (one connection per waiter). So each API process runs
one reader per followed game: it blocks on XREAD for the game's stream on one connection, keeps the
newest records, and wakes every waiter of that game, who take the records from it. The reader ends
when its last waiter has left. Under the Flask test client (no gevent) the readers are plain
threads and the same code runs; gevent's monkey-patching makes `threading` cooperative in gunicorn.

A waiter that is further behind than the reader's recent records reads them from the store itself,
with one short XRANGE; it never waits for the reader to catch up.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from service.storage.event_store import EventStore, StoreUnavailable

log = logging.getLogger(__name__)
RECENT = 256  # records each reader keeps for its waiters
BLOCK_MS = 5000  # how long a reader blocks on XREAD before it looks whether anyone still waits


class Feed:
    """One followed game in one process: the newest version seen and the records just before it."""

    def __init__(self, game_id: str, lock: threading.Lock) -> None:
        self.game_id = game_id
        self.version: int | None = None  # None until the reader has looked at the stream
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT)
        self.waiters = 0
        self.error: str | None = None
        self.changed = threading.Condition(lock)

    def since(self, after: int) -> list[dict[str, Any]] | None:
        """The kept records with seq > after; None when they do not reach back that far."""
        if not self.recent or self.recent[0]["seq"] > after + 1:
            return None
        return [record for record in self.recent if record["seq"] > after]


class Follower:
    """A waiter's handle on a game's feed (from `Watchers.follow`)."""

    def __init__(self, store: EventStore, feed: Feed) -> None:
        self._store = store
        self._feed = feed

    def next(self, after: int, timeout: float) -> list[dict[str, Any]]:
        """Records with seq > after, as soon as one exists; [] when `timeout` seconds pass first."""
        feed = self._feed
        deadline = time.monotonic() + timeout
        with feed.changed:
            while feed.error is None and (feed.version is None or feed.version <= after):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return []
                feed.changed.wait(remaining)
            if feed.error is not None:
                raise StoreUnavailable(feed.error)
            kept = feed.since(after)
        return kept if kept is not None else self._store.read(self._feed.game_id, after)


class Watchers:
    """Every feed of one API process, by game id."""

    def __init__(self, store: EventStore, block_ms: int = BLOCK_MS) -> None:
        self._store = store
        self._block_ms = block_ms
        self._lock = threading.Lock()
        self._feeds: dict[str, Feed] = {}

    def wait(self, game_id: str, after: int, timeout: float) -> list[dict[str, Any]]:
        """The long-poll: records with seq > after, waiting up to `timeout` seconds for one."""
        records, ended = self._store.records_after(game_id, after)
        if records or timeout <= 0 or ended:  # a packed game has ended: nothing can follow
            return records
        with self.follow(game_id) as follower:
            return follower.next(after, timeout)

    @contextlib.contextmanager
    def follow(self, game_id: str) -> Iterator[Follower]:
        """Wait on a game's feed (started if it has none) for as long as the block lasts."""
        with self._lock:
            feed = self._feeds.get(game_id)
            if feed is None:
                feed = self._feeds[game_id] = Feed(game_id, self._lock)
                threading.Thread(target=self._read, args=(feed,), name=f"feed-{game_id}", daemon=True).start()
            feed.waiters += 1
        try:
            yield Follower(self._store, feed)
        finally:
            with self._lock:
                feed.waiters -= 1

    def waiting(self) -> int:
        """How many waiters this process has right now, over every game."""
        with self._lock:
            return sum(feed.waiters for feed in self._feeds.values())

    def _read(self, feed: Feed) -> None:
        """The feed's reader: the stream's last seq, then one blocking XREAD after another."""
        try:
            last = self._store.last_seq(feed.game_id)
            self._publish(feed, last, [])
            while self._still_followed(feed):
                records = self._store.read_blocking(feed.game_id, last, self._block_ms)
                if records:
                    last = records[-1]["seq"]
                    self._publish(feed, last, records)
        except Exception as error:
            if not isinstance(error, StoreUnavailable):
                log.exception("the reader of game %s stopped", feed.game_id)
            with self._lock:
                feed.error = str(error) or type(error).__name__
                feed.changed.notify_all()
                self._drop(feed)

    def _publish(self, feed: Feed, version: int, records: list[dict[str, Any]]) -> None:
        with self._lock:
            feed.recent.extend(records)
            feed.version = version
            feed.changed.notify_all()

    def _still_followed(self, feed: Feed) -> bool:
        """False (and the feed is gone) once nobody waits on it."""
        with self._lock:
            if feed.waiters > 0:
                return True
            self._drop(feed)
            return False

    def _drop(self, feed: Feed) -> None:
        if self._feeds.get(feed.game_id) is feed:
            del self._feeds[feed.game_id]
