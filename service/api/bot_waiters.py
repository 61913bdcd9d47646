"""Bots waiting for turns share one reader per process: a waiting long-poll or turn stream holds no thread and
no Redis connection of its own (as service/api/followers.py does for a game's watchers).

Each process that has waiting bots runs one waker: it blocks on XREAD for the offers stream
(`bots:{registry}:offers`, one entry per turn offered, service/storage/bot_turns.py) and wakes the
waiters of each bot named. A waiter takes a `mark` before it looks at its queue and waits from that mark,
so an offer that lands between the look and the wait is not missed; and it looks again after
RECHECK_SECONDS whatever happens (a lease that ended, an offer made while the waker was down). The waker
ends when nobody has waited for IDLE_SECONDS.
"""

from __future__ import annotations

import collections
import logging
import threading
import time

from service.storage.bot_turns import BotTurnQueues
from service.storage.outcomes import StoreUnavailable

log = logging.getLogger(__name__)
BLOCK_MS = 5000  # how long the waker blocks on XREAD before it looks whether anyone still waits
RECHECK_SECONDS = 2.0  # a waiter looks at its queue again after this long, woken or not
IDLE_SECONDS = 30.0  # the waker ends after this long without a waiter
ERROR_PAUSE_SECONDS = 1.0  # the waker's pause after Redis could not be reached


class BotWaiters:
    """The waiting bots of one process and the one waker that tells them a turn was offered."""

    def __init__(self, queues: BotTurnQueues) -> None:
        self._queues = queues
        self._lock = threading.Lock()
        self._offers: collections.Counter[str] = collections.Counter()  # offers seen, by bot (marks)
        self._conditions: dict[str, threading.Condition] = {}  # by bot, while it has waiters
        self._waiting: collections.Counter[str] = collections.Counter()
        self._waker: threading.Thread | None = None
        self._last_waiter = time.monotonic()

    def mark(self, name: str) -> int:
        """The bot's mark now: take it before looking at its queue, then `wait` from it. Starts the waker."""
        with self._lock:
            self._last_waiter = time.monotonic()
            if self._waker is None:
                self._start_waker()
            return self._offers[name]

    def wait(self, name: str, mark: int, timeout: float) -> bool:
        """Wait up to `timeout` seconds (at most RECHECK_SECONDS) for a turn offered to the bot after `mark`;
        True if one was."""
        end = time.monotonic() + min(timeout, RECHECK_SECONDS)
        with self._lock:
            changed = self._conditions.setdefault(name, threading.Condition(self._lock))
            self._waiting[name] += 1
            try:
                while self._offers[name] == mark:
                    left = end - time.monotonic()
                    if left <= 0:
                        return False
                    changed.wait(left)
                return True
            finally:
                self._waiting[name] -= 1
                if not self._waiting[name]:
                    del self._waiting[name], self._conditions[name]
                self._last_waiter = time.monotonic()

    def _start_waker(self) -> None:
        """Start the waker from the newest offer (under the lock)."""
        try:
            after = self._queues.last_offer()
        except StoreUnavailable:
            after = "$"
        self._waker = threading.Thread(target=self._wake_loop, args=(after,), name="bot-waker", daemon=True)
        self._waker.start()

    def _wake_loop(self, after: str) -> None:
        """Read the offers and wake the waiters of the bots named, until nobody has waited for IDLE_SECONDS."""
        while True:
            with self._lock:
                if not self._waiting and time.monotonic() - self._last_waiter > IDLE_SECONDS:
                    self._waker = None
                    return
            try:
                names, after = self._queues.offers_after(after, BLOCK_MS)
            except StoreUnavailable as error:
                log.warning("the bots' waker cannot read the offers: %s", error)
                time.sleep(ERROR_PAUSE_SECONDS)
                continue
            except Exception:
                log.exception("the bots' waker stopped")
                with self._lock:
                    self._waker = None
                return
            if names:
                with self._lock:
                    self._offers.update(names)
                    for name in set(names):
                        if name in self._conditions:
                            self._conditions[name].notify_all()
