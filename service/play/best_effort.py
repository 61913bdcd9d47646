"""The command path's best-effort writes: notes that no move waits for and that the upkeep repairs when one is
lost (a game noted active or finished in the game indexes, a game counted, a game out of the waiting index once
nothing is due in it). A failure is logged, never raised.

`BestEffort()` writes each one at once, in the caller's thread. `BestEffort(behind=True)` (the workers) hands
them to one thread of its own, in order, so that a bot job does not wait for their round trips (each waits for
Redis's fsync): a worker playing a match's games spends its time on the games. Given the store client's way to
gather writes (`gatherer`, service/storage/gathering.py), that thread sends the writes that come within
GATHER_SECONDS in one pipeline (at most GATHERED_MAX): one round trip and one fsync for several games' notes.

`ahead()` is for the intents before a write (a game waiting for a bot before the append that makes it due, a game
finishing before its final append): with a `gatherer`, the intent goes in one round trip with the thread's next
store command, in front of it; else at once. A failure is logged. What a stopped process had not
written yet is lost as a failed write is: the lifecycle sweep's index walk puts a game back in the index it
belongs in, the reconciler takes a game out of the waiting index once nothing is due in it, and a count is lost
(counts are for the metrics and the bots' profiles). A process that ends normally writes what is left first.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

log = logging.getLogger(__name__)
QUEUED_MAX = 10_000  # writes waiting at most; past it the caller writes (so a Redis outage cannot fill memory)
EXIT_SECONDS = 2.0  # what a process ending normally gives the writes left (a stopping worker is gone in 6 s)
GATHERED_MAX = 64  # writes sent together at most ...
GATHER_SECONDS = 0.02  # ... waited for at most after the first


class Batch(Protocol):
    """Writes gathered to be sent together: `mark` names the commands that follow; after the block, `failures`
    says which writes failed and why."""

    failures: list[tuple[str, Exception]]

    def mark(self, label: str) -> None: ...


class _OneByOne:
    """No gathering: each write is sent as it is made (a failure is logged then)."""

    def __init__(self) -> None:
        self.failures: list[tuple[str, Exception]] = []

    def mark(self, label: str) -> None:
        return None


class Gatherer(Protocol):
    """The store client's ways to gather writes (service/storage/gathering.py)."""

    def gathering(self) -> AbstractContextManager[Batch]:
        """Inside: writes are gathered, sent together at the end."""
        ...

    def ahead(self) -> AbstractContextManager[Batch]:
        """Inside: writes are gathered, sent in front of the thread's next command after the block."""
        ...


Write = tuple[str, Callable[..., Any], tuple[Any, ...]]


class BestEffort:
    """Runs best-effort writes, at once or behind the caller (in order, in a thread of its own)."""

    def __init__(
        self,
        behind: bool = False,
        queued_max: int = QUEUED_MAX,
        gatherer: Gatherer | None = None,
    ) -> None:
        """`behind`: in a thread of its own; `gatherer`: how writes go together in one round trip (default: each
        on its own)."""
        self._queue: queue.Queue[Write | threading.Event] | None = queue.Queue(queued_max) if behind else None
        self._gatherer = gatherer
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def write(self, what: str, write: Callable[..., Any], *args: Any) -> None:
        """`write(*args)`, `what` naming it in the log should it fail: now, or queued behind the caller."""
        if self._queue is not None:
            self._start()
            try:
                self._queue.put_nowait((what, write, args))
                return
            except queue.Full:
                pass
        write_now(what, write, *args)

    def ahead(self, what: str, write: Callable[..., Any], *args: Any) -> bool:
        """`write(*args)`, sent in front of this thread's next store command, in one round trip with it (at once
        without a gatherer); False if it failed already."""
        if self._gatherer is None:
            return write_now(what, write, *args)
        with self._gatherer.ahead() as batch:
            batch.mark(what)
            return write_now(what, write, *args)

    def flush(self, timeout: float = EXIT_SECONDS) -> bool:
        """Wait until every write queued so far is done (at most `timeout` seconds); True if they are."""
        if self._queue is None or self._thread is None:
            return True
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="best-effort-writes", daemon=True)
                self._thread.start()
                atexit.register(self.flush)

    def _drain(self) -> None:
        while True:
            writes, flushed = self._waiting()
            try:
                self._send(writes)
            except Exception:  # the thread goes on whatever happens
                log.exception("could not send %d best-effort writes", len(writes))
            if flushed is not None:
                flushed.set()

    def _waiting(self) -> tuple[list[Write], threading.Event | None]:
        """The next writes: the first one waited for, then those that come within GATHER_SECONDS (at most
        GATHERED_MAX), up to a flush's marker if one comes."""
        assert self._queue is not None
        writes: list[Write] = []
        item = self._queue.get()
        until = time.monotonic() + GATHER_SECONDS
        while not isinstance(item, threading.Event):
            writes.append(item)
            if len(writes) >= GATHERED_MAX:
                return writes, None
            try:
                item = self._queue.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                return writes, None
        return writes, item

    def _send(self, writes: list[Write]) -> None:
        """The writes, gathered into one round trip; each failure logged."""
        if not writes:
            return
        together = self._gatherer.gathering() if self._gatherer is not None else contextlib.nullcontext(_OneByOne())
        with together as batch:
            for what, write, args in writes:
                batch.mark(what)
                write_now(what, write, *args)
        for what, error in batch.failures:
            log.error("could not %s (a best-effort write: the upkeep repairs it): %r", what, error)


def write_now(what: str, write: Callable[..., Any], *args: Any) -> bool:
    """`write(*args)` in this thread; a failure is logged, never raised (False)."""
    try:
        write(*args)
    except Exception:
        log.exception("could not %s (a best-effort write: the upkeep repairs it)", what)
        return False
    return True
