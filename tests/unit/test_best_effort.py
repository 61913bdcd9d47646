"""The command path's best-effort notes (service/play/best_effort.py): at once, or behind the caller in order."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from service.play.best_effort import GATHERED_MAX, BestEffort


def test_at_once_each_write_runs_in_the_callers_thread_before_write_returns() -> None:
    done: list[tuple[str, int]] = []
    BestEffort().write("note", lambda n: done.append((threading.current_thread().name, n)), 1)
    assert done == [(threading.current_thread().name, 1)]


def test_behind_the_writes_run_in_order_in_a_thread_of_their_own_and_flush_waits_for_them() -> None:
    release = threading.Event()
    done: list[tuple[str, int]] = []
    writes = BestEffort(behind=True)
    writes.write("hold", release.wait, 5)
    for n in range(50):
        writes.write("note", lambda n: done.append((threading.current_thread().name, n)), n)
    assert done == [], "the caller did not wait for them"
    release.set()
    assert writes.flush()
    assert [n for _, n in done] == list(range(50))
    assert {name for name, _ in done} == {"best-effort-writes"}


def test_a_write_that_fails_is_logged_and_the_next_ones_run(caplog: pytest.LogCaptureFixture) -> None:
    done: list[int] = []

    def failing() -> None:
        raise ConnectionError("Redis went away")

    for writes in (BestEffort(), BestEffort(behind=True)):
        with caplog.at_level(logging.ERROR, logger="service.play.best_effort"):
            writes.write("count a game", failing)
            writes.write("note", done.append, 1)
            assert writes.flush()
    assert done == [1, 1]
    assert [r.getMessage() for r in caplog.records].count(
        "could not count a game (a best-effort write: the upkeep repairs it)"
    ) == 2


def test_when_the_queue_is_full_the_caller_writes_itself() -> None:
    release = threading.Event()
    done: list[str] = []
    writes = BestEffort(behind=True, queued_max=1)
    writes.write("hold", release.wait, 5)  # taken by the thread, which now waits
    assert _until(lambda: writes._queue is not None and writes._queue.empty())
    writes.write("queued", done.append, "queued")
    writes.write("written by the caller", lambda: done.append(threading.current_thread().name))
    assert done == [threading.current_thread().name]
    release.set()
    assert writes.flush()
    assert done == [threading.current_thread().name, "queued"]


class Blocks:
    """A gatherer that records the writes of each block, as marked, and fails those it is told to."""

    def __init__(self, failing: tuple[str, ...] = ()) -> None:
        self.blocks: list[list[str]] = []
        self.failing = failing

    def ahead(self) -> Iterator[Blocks]:
        raise AssertionError("the writes behind are gathered, not sent ahead")

    @contextmanager
    def gathering(self) -> Iterator[Blocks]:
        self.blocks.append([])
        self.failures: list[tuple[str, Exception]] = []
        yield self
        self.failures = [(label, ConnectionError("lost")) for label in self.blocks[-1] if label in self.failing]

    def mark(self, label: str) -> None:
        self.blocks[-1].append(label)


def test_behind_the_writes_waiting_are_sent_together_in_order_and_flush_waits_for_them() -> None:
    release = threading.Event()
    blocks = Blocks()
    done: list[int] = []
    writes = BestEffort(behind=True, gatherer=blocks)
    writes.write("hold", release.wait, 5)
    for n in range(2 * GATHERED_MAX + 1):
        writes.write(f"note {n}", done.append, n)
    release.set()
    assert writes.flush()
    assert done == list(range(2 * GATHERED_MAX + 1))
    assert [label for block in blocks.blocks for label in block] == ["hold"] + [f"note {n}" for n in done]
    assert max(len(block) for block in blocks.blocks) == GATHERED_MAX
    assert len(blocks.blocks) <= 4, "the writes waiting go together (the first may go alone: it was taken at once)"


def test_a_gathered_write_that_failed_is_logged_by_its_name(caplog: pytest.LogCaptureFixture) -> None:
    blocks = Blocks(failing=("count a game",))
    writes = BestEffort(behind=True, gatherer=blocks)
    with caplog.at_level(logging.ERROR, logger="service.play.best_effort"):
        writes.write("note a game", lambda: None)
        writes.write("count a game", lambda: None)
        assert writes.flush()
    assert [r.getMessage() for r in caplog.records] == [
        "could not count a game (a best-effort write: the upkeep repairs it): ConnectionError('lost')"
    ]


def _until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
