"""The command path's best-effort writes: notes that no move waits for and that the upkeep repairs when one is
lost (a game noted active or finished in the game indexes, a game counted, a game out of the waiting index once
nothing is due in it). A failure is logged, never raised.

`BestEffort()` writes each one at once, in the caller's thread. `BestEffort(behind=True)` (the workers) hands
them to one thread of its own, in order, so that a bot job does not wait for their round trips (each waits for
Redis's fsync): a worker playing a match's games spends its time on the games. What a stopped process had not
written yet is lost as a failed write is: the lifecycle sweep's index walk puts a game back in the index it
belongs in, the reconciler takes a game out of the waiting index once nothing is due in it, and a count is lost
(counts are for the metrics and the bots' profiles). A process that ends normally writes what is left first.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
QUEUED_MAX = 10_000  # writes waiting at most; past it the caller writes (so a Redis outage cannot fill memory)
EXIT_SECONDS = 2.0  # what a process ending normally gives the writes left (a stopping worker is gone in 6 s)


class BestEffort:
    """Runs best-effort writes, at once or behind the caller (in order, in a thread of its own)."""

    def __init__(self, behind: bool = False, queued_max: int = QUEUED_MAX) -> None:
        self._queue: queue.Queue[tuple[str, Callable[..., Any], tuple[Any, ...]]] | None = (
            queue.Queue(queued_max) if behind else None
        )
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

    def flush(self, timeout: float = EXIT_SECONDS) -> bool:
        """Wait until every write queued so far is done (at most `timeout` seconds); True if they are."""
        if self._queue is None or self._thread is None:
            return True
        done = threading.Event()
        try:
            self._queue.put((f"flush {id(done)}", done.set, ()), timeout=timeout)
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
        assert self._queue is not None
        while True:
            what, write, args = self._queue.get()
            write_now(what, write, *args)


def write_now(what: str, write: Callable[..., Any], *args: Any) -> None:
    """`write(*args)` in this thread; a failure is logged, never raised."""
    try:
        write(*args)
    except Exception:
        log.exception("could not %s (a best-effort write: the upkeep repairs it)", what)
