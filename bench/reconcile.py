"""The reconciler's pass against the size of the waiting index (`bots:waiting`).

Persons on a turn timeout's clock stay in the index for the life of their game, each with its timeout
on RQ's schedule. The index is filled with `ENTRIES` such games (a scheduled timeout each, as
`RQDispatcher.schedule_timeout` writes it; no game is stored, as none is loaded when its timeout is in
hand), and one pass of `Reconciler.run_once` is timed, fastest of `REPEATS`. The figure is the pass at
the largest index against its floor, one read of the index alone (a pass must read it); the table
notes the pass's time at each size. The pass runs every 2 s in one worker: its time is that
worker's share of a core taken from bot turns.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence

import redis

from bench.report import Figure, Target
from service.storage.turn_queue import RQDispatcher
from workers.reconcile import Reconciler

ENTRIES = (10, 1_000, 10_000)
REPEATS = 5
TURN_SECONDS = 3600
TARGET = Target("<=", 3)


def _no_game(game_id: str) -> None:
    raise RuntimeError(f"the pass loaded {game_id}: its timeout was not found in hand")


def fill(dispatcher: RQDispatcher, start: int, count: int) -> None:
    """`count` more persons on a timeout's clock: in the index, each with its timeout scheduled."""
    for number in range(start, start + count):
        game_id = f"bench-reconcile-{number}"
        dispatcher.expect(game_id, 5)
        dispatcher.schedule_timeout(game_id, 5, TURN_SECONDS)


def best_of(run: Callable[[], object]) -> float:
    """The fastest of REPEATS runs of `run`, in seconds."""
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def run_pass(reconciler: Reconciler) -> None:
    """One pass, which must find every entry in hand."""
    repaired = reconciler.run_once()
    if repaired:
        raise RuntimeError(f"the pass repaired {repaired[:3]}: the bench's entries are not in hand")


def measure(connection: redis.Redis, sizes: Sequence[int] = ENTRIES) -> tuple[dict[int, float], float]:
    """Seconds of one pass at each index size (the index grows from one size to the next), and of one
    read of the index at the largest."""
    dispatcher = RQDispatcher(connection)
    reconciler = Reconciler(dispatcher, _no_game)
    seconds: dict[int, float] = {}
    filled = 0
    for size in sizes:
        fill(dispatcher, filled, size - filled)
        filled = size
        seconds[size] = best_of(functools.partial(run_pass, reconciler))
    return seconds, best_of(dispatcher.index.entries)


OWN_DATABASE = 15  # of the bench's own Redis: the index holds the bench's entries alone


def figures(connection: redis.Redis) -> list[Figure]:
    """reconcile_pass_ms_<largest>: a pass against one read of its index, in a database of the bench's Redis
    that nothing else uses (the games of the bench's earlier parts, their bots still due when their workers
    stopped, would be in the index too, and each be loaded and logged by every pass)."""
    settings = connection.connection_pool.connection_kwargs
    own = redis.Redis(host=settings.get("host", "localhost"), port=settings.get("port", 6379), db=OWN_DATABASE)
    seconds, index_read = measure(own)
    large = max(seconds)
    note = ", ".join(f"{size:,}: {value * 1000:.1f} ms" for size, value in seconds.items())
    return [
        Figure(
            f"reconcile_pass_ms_{large}",
            seconds[large] * 1000,
            "ms",
            floor=index_read * 1000,
            target=TARGET,
            note=f"a pass (entries: time): {note}",
        )
    ]
