"""Prometheus metrics: what an operator scrapes at GET /metrics.

Under gunicorn (and with the workers on the same host) every process writes its samples into
PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess mode; `make run` gives it a fresh folder
under var/) and a scrape adds them up. Without that variable the samples stay in the process (tests,
a single process). Counts that must outlive the processes (games started and finished) and the bot
queue's depth are read from Redis when scraped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

MULTIPROC_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
BOT_DELAY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

REQUESTS = Counter(
    "cardtable_http_requests_total",
    "HTTP requests answered, by method, route (the URL rule, not the path) and status",
    ["method", "route", "status"],
)
REQUEST_SECONDS = Histogram(
    "cardtable_http_request_duration_seconds",
    "Time from a request's arrival in the app to its answer, by method and route",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
WATCHERS = Gauge(
    "cardtable_watchers_open",
    "Clients waiting for a game's next events right now, by kind (longpoll, stream)",
    ["kind"],
    multiprocess_mode="livesum",
)
STORE_ERRORS = Counter(
    "cardtable_store_errors_total",
    "Calls to the event store's Redis that failed because it could not be reached",
)
BOT_TURNS = Counter("cardtable_bot_turns_total", "Bot turns played and stored, by game", ["game"])
BOT_TURN_DELAY = Histogram(
    "cardtable_bot_turn_delay_seconds",
    "Time from a bot being due (its job queued, or the turn before it in a chain stored) to its move stored",
    ["game"],
    buckets=BOT_DELAY_BUCKETS,
)
MATCH_RESTS = Counter(
    "cardtable_match_rest_seconds_total",
    "Seconds the matches' workers rested after a game's turns while people played (service/play/match_pace.py)",
)
RECONCILER_REPAIRS = Counter(
    "cardtable_reconciler_repairs_total",
    "Jobs the reconciler put back: a bot turn or a turn timeout that had no job in hand",
    ["kind"],
)


@contextlib.contextmanager
def watching(kind: str) -> Iterator[None]:
    """Count one open watcher of `kind` (longpoll, stream) while the block runs."""
    gauge = WATCHERS.labels(kind)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """Count an answered request and its latency. A method outside HTTP's own is counted as `other`: a
    client may send any token as a method, and each would be a label of its own, kept for good."""
    method = method if method in HTTP_METHODS else "other"
    REQUESTS.labels(method, route, str(status)).inc()
    REQUEST_SECONDS.labels(method, route).observe(seconds)


def observe_bot_turn(game: str, due_at: float) -> None:
    """Count a stored bot move that was due at `due_at` (seconds since the epoch)."""
    turns, delay = _bot_turn_metrics(game)
    turns.inc()
    delay.observe(max(0.0, time.time() - due_at))


@functools.cache
def _bot_turn_metrics(game: str) -> tuple[Counter, Histogram]:
    """The bot turn metrics of one game (a game's labels looked up once a process: a bot's every move counts)."""
    return BOT_TURNS.labels(game), BOT_TURN_DELAY.labels(game)


class ScrapeTimeCollector(Collector):
    """Values read from Redis when scraped; none when Redis cannot be reached (the store errors count it)."""

    def __init__(self, game_counts: Callable[[], dict[str, int]], queue_depths: Callable[[], dict[str, int]]) -> None:
        self.game_counts = game_counts
        self.queue_depths = queue_depths

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily("cardtable_store_up", "1 when the event store's Redis answered this scrape")
        try:
            counts = self.game_counts()
            depths = self.queue_depths()
        except Exception:  # the store counted its error; the queue's Redis is most likely the same one
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        active = GaugeMetricFamily("cardtable_games_active", "Games started and not ended, by game", labels=["game"])
        finished = GaugeMetricFamily("cardtable_games_finished", "Games that have ended, by game", labels=["game"])
        abandoned = GaugeMetricFamily(
            "cardtable_games_abandoned", "Games that were ended as abandoned, by game", labels=["game"]
        )
        for game in sorted({key.partition(":")[2] for key in counts}):
            started, ended = counts.get(f"started:{game}", 0), counts.get(f"finished:{game}", 0)
            given_up = counts.get(f"abandoned:{game}", 0)
            active.add_metric([game], max(0, started - ended - given_up))
            finished.add_metric([game], ended)
            abandoned.add_metric([game], given_up)
        yield active
        yield finished
        yield abandoned
        queue = GaugeMetricFamily(
            "cardtable_bot_queue_depth", "Bot and timeout jobs in RQ's queue, by state", labels=["state"]
        )
        for state, depth in sorted(depths.items()):
            queue.add_metric([state], depth)
        yield queue


def exposition(scrape_time: Collector | None = None) -> tuple[bytes, str]:
    """The text format of every process's samples (multiprocess mode when set up), plus `scrape_time`."""
    if os.environ.get(MULTIPROC_DIR_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry = _LocalRegistry(REGISTRY)
    if scrape_time is not None:
        registry.register(scrape_time)
    return generate_latest(registry), CONTENT_TYPE_LATEST


class _LocalRegistry(CollectorRegistry):
    """This process's samples (the default registry) plus collectors for one scrape only."""

    def __init__(self, default: CollectorRegistry) -> None:
        super().__init__()
        self._default = default

    def collect(self) -> Iterable[Metric]:
        yield from self._default.collect()
        yield from super().collect()


def process_exited(pid: int) -> None:
    """Drop a dead process's live gauges (gunicorn's child_exit hook)."""
    if os.environ.get(MULTIPROC_DIR_VARIABLE):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def forget_dead_processes() -> None:
    """Drop the live gauges of processes that are gone without a child_exit (a gunicorn master killed
    with its workers), so that a restarted API does not count their watchers (gunicorn's on_starting)."""
    folder = os.environ.get(MULTIPROC_DIR_VARIABLE)
    if not folder:
        return
    for path in Path(folder).glob("gauge_live*_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        if not _alive(pid):
            multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
