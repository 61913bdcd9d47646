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
with one short XRANGE; it never waits for the reader to catch up. A long-poll that arrives while its
game's feed is live and holds the records after its `after` (the usual case: a long-poll asks again
with the seq it was just given) takes them from the feed, or waits on it, with no read of its own.

An event is encoded once per process, not once per waiter: `Feed.encoded` keeps each batch's bytes
(the stream's messages, a long-poll's JSON body) on the feed, and every waiter given the same batch
writes the same bytes object.

Bounds, so that watchers can never take Redis's last connections (its `maxclients`) from the actions
and the workers: a process follows at most FOLLOWED_GAMES_MAX games at once (its blocking client's pool
is that size, service/app.py); a waiter that would start a feed past it is `503 followers_full` with
`Retry-After`. And one client (by address, as the rate limits count it) holds at most
WATCHES_PER_CLIENT open streams and long-polls in a process, else `429 rate_limited`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from domain.engine import SeedRevealed
from service.api.problems import ApiError
from service.storage.event_store import EventStore
from service.storage.outcomes import StoreUnavailable

log = logging.getLogger(__name__)
RECENT = 256  # records each reader keeps for its waiters
BLOCK_MS = 5000  # how long a reader blocks on XREAD before it looks whether anyone still waits
ENCODED = 64  # encoded batches each feed keeps (oldest out first)
SHARED_BATCH = 16  # at most this many records in a kept batch: waiters far behind are rare, and their
# batches (up to a whole game) would fill the process's memory rather than save it CPU
FAR_BEHIND_PAGE = 1000  # records a live stream far behind its feed reads from the store at a time
LAST_EVENT = SeedRevealed.__name__  # every game's last event: nothing follows it
FOLLOWED_GAMES_MAX = 1_000  # games one process follows at once (a Redis connection each); setting FOLLOWED_GAMES_MAX
WATCHES_PER_CLIENT = 32  # open streams and long-polls of one client in one process; setting WATCHES_PER_CLIENT
RETRY_SECONDS = 5  # Retry-After of a watcher refused by either bound
FOLLOWERS_FULL = "the server's most games followed at once (`followers_full`); `Retry-After` says when to retry"
Records = list[dict[str, Any]]


class Feed:
    """One followed game in one process: the newest version seen and the records just before it."""

    def __init__(self, game_id: str, lock: threading.Lock) -> None:
        self.game_id = game_id
        self.version: int | None = None  # None until the reader has looked at the stream
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT)
        self.waiters = 0
        self.error: str | None = None
        self.lock = lock
        self.arrived = threading.Event()  # set, and replaced by a new one, each time the feed changes
        self.encodings: collections.OrderedDict[tuple[str, int, int, str], bytes] = collections.OrderedDict()

    def since(self, after: int) -> list[dict[str, Any]] | None:
        """The kept records with seq > after; None when they do not reach back that far."""
        if not self.recent or self.recent[0]["seq"] > after + 1:
            return None
        # seqs are gap-free: the records after `after` start at a known index, not found by a scan
        return list(itertools.islice(self.recent, max(0, after + 1 - self.recent[0]["seq"]), None))

    def encoded(self, kind: str, records: Records, encode: Callable[[Records], bytes]) -> bytes:
        """`encode(records)`, kept for the next waiter given the same batch (`kind` tells encodings apart:
        the stream's messages, a long-poll's body). A game's records never change, so their seqs and the
        last one's hash name the batch."""
        if not records or len(records) > SHARED_BATCH:
            return encode(records)
        key = (kind, records[0]["seq"], records[-1]["seq"], records[-1]["hash"])
        with self.lock:
            found = self.encodings.get(key)
        if found is None:
            found = encode(records)
            with self.lock:
                self.encodings[key] = found
                while len(self.encodings) > ENCODED:
                    self.encodings.popitem(last=False)
        return found

    def covers(self, after: int) -> bool:
        """Whether a waiter after `after` can be answered by this feed alone, now or when it next changes:
        its reader runs, it keeps every record after `after` (none yet, when it is at `after`), and it has
        not seen the game's last event (a game that has ended is the store's to answer at once)."""
        return (
            self.error is None
            and self.version is not None
            and bool(self.recent)
            and self.recent[-1]["type"] != LAST_EVENT
            and self.recent[0]["seq"] <= after + 1
            and after <= self.version
        )


class Follower:
    """A waiter's handle on a game's feed (from `Watchers.follow`)."""

    def __init__(self, store: EventStore, feed: Feed) -> None:
        self._store = store
        self._feed = feed

    def encoded(self, kind: str, records: Records, encode: Callable[[Records], bytes]) -> bytes:
        """`encode(records)`, computed once per process for every waiter of the game given the same batch."""
        return self._feed.encoded(kind, records, encode)

    def next(self, after: int, timeout: float, count: int | None = None) -> list[dict[str, Any]]:
        """Records with seq > after (at most `count`), as soon as one exists; [] when `timeout` seconds pass first."""
        feed = self._feed
        deadline = time.monotonic() + timeout
        while True:
            with feed.lock:
                if feed.error is not None:
                    raise StoreUnavailable(feed.error)
                if feed.version is not None and feed.version > after:
                    kept = feed.since(after)
                    break
                arrived = feed.arrived
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            arrived.wait(remaining)  # one event wakes every waiter of the feed at once
        if kept is not None:
            return kept if count is None else kept[:count]
        return self._store.read(feed.game_id, after, count if count is not None else FAR_BEHIND_PAGE)


def followers_full(limit: int) -> ApiError:
    """The process follows its most games: 503 `followers_full`, to retry in a moment."""
    detail = f"this server follows its most games at once ({limit}); try again in {RETRY_SECONDS} s"
    return ApiError(503, "followers_full", detail, headers={"Retry-After": str(RETRY_SECONDS)})


class Watchers:
    """Every feed of one API process, by game id, and the open watches of each client."""

    def __init__(
        self,
        store: EventStore,
        block_ms: int = BLOCK_MS,
        max_games: int = FOLLOWED_GAMES_MAX,
        per_client: int = WATCHES_PER_CLIENT,
    ) -> None:
        """`max_games`: feeds at once (each a blocking Redis connection); `per_client`: open streams and
        long-polls of one client (0: no bound)."""
        self._store = store
        self._block_ms = block_ms
        self._max_games = max_games
        self._per_client = per_client
        self._lock = threading.Lock()
        self._feeds: dict[str, Feed] = {}
        self._clients: collections.Counter[str] = collections.Counter()

    def check_room(self, game_id: str) -> None:
        """503 `followers_full` unless a waiter of the game can be admitted now (before a stream answers:
        its status cannot change once it streams; `follow` holds the bound itself)."""
        with self._lock:
            if game_id not in self._feeds and len(self._feeds) >= self._max_games:
                raise followers_full(self._max_games)

    def hold(self, client: str) -> Callable[[], None]:
        """Count an open watch of `client`; 429 `rate_limited` when it holds its most already. Returns
        the release (once is enough; more are nothing)."""
        with self._lock:
            if self._per_client and self._clients[client] >= self._per_client:
                raise ApiError(
                    429,
                    "rate_limited",
                    f"at most {self._per_client} open streams and long-polls per client; "
                    f"close one or try again in {RETRY_SECONDS} s",
                    headers={"Retry-After": str(RETRY_SECONDS)},
                )
            self._clients[client] += 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if not released.is_set():
                    released.set()
                    self._clients[client] -= 1
                    if self._clients[client] <= 0:
                        del self._clients[client]

        return release

    @contextlib.contextmanager
    def watching(self, client: str) -> Iterator[None]:
        """`hold` for as long as the block lasts (a long-poll)."""
        release = self.hold(client)
        try:
            yield
        finally:
            release()

    def wait(self, game_id: str, after: int, timeout: float, count: int | None = None) -> list[dict[str, Any]]:
        """The long-poll: records with seq > after (at most `count`), waiting up to `timeout` seconds for one.
        With a live feed that covers `after`, the answer comes from it (now or at its next change) without a
        read of the store."""
        if timeout > 0:
            with self._lock:
                feed = self._feeds.get(game_id)
                live = feed is not None and feed.covers(after)
            if live:
                with self.follow(game_id) as follower:
                    return follower.next(after, timeout, count)
        records, ended = self._store.records_after(game_id, after, count)
        if records or timeout <= 0 or ended:  # a packed game has ended: nothing can follow
            return records
        with self.follow(game_id) as follower:
            return follower.next(after, timeout, count)

    def encoded(self, game_id: str, kind: str, records: Records, encode: Callable[[Records], bytes]) -> bytes:
        """`encode(records)`, shared with the other waiters of the game in this process given the same records
        while it has a feed (a long-poll's body: `Feed.encoded`)."""
        with self._lock:
            feed = self._feeds.get(game_id)
        return encode(records) if feed is None else feed.encoded(kind, records, encode)

    @contextlib.contextmanager
    def follow(self, game_id: str) -> Iterator[Follower]:
        """Wait on a game's feed (started if it has none) for as long as the block lasts."""
        with self._lock:
            feed = self._feeds.get(game_id)
            if feed is None:
                if len(self._feeds) >= self._max_games:
                    raise followers_full(self._max_games)
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
                self._changed(feed)
                self._drop(feed)

    def _publish(self, feed: Feed, version: int, records: list[dict[str, Any]]) -> None:
        with self._lock:
            feed.recent.extend(records)
            feed.version = version
            self._changed(feed)

    @staticmethod
    def _changed(feed: Feed) -> None:
        """Wake every waiter of the feed (under the lock); the next change sets a new event."""
        feed.arrived.set()
        feed.arrived = threading.Event()

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
