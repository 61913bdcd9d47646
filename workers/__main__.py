"""`python -m workers`: one RQ worker for the bot queues (JSON serializer), with its scheduler and keeper.

It takes jobs from the queues named in BOT_QUEUES (comma-separated, in the order it takes them; default
`bots,bots-expert,bots-match`: people's random and greedy bots' turns first, then the experts', then those of
matches' games). `make run` runs its workers on `bots,bots-expert`, one more with BOT_QUEUES=bots only, so
that the quick bots keep their pace while every other worker thinks for an expert (docs/operations.md, "Expert
bots"; WORKER_SCHEDULER=off leaves the RQ scheduler to the other workers), and its matches' workers on
`bots-match` at idle CPU priority (docs/operations.md, "Matches' workers").

Before its first job it imports every game and its bots (`load_what_jobs_play`), so the first turns after
a start wait for no import. The RQ scheduler (a child process) moves jobs whose retry is due back to the
queue; the keeper (three threads) beats this worker's liveness, runs the reconciler at start and every few
seconds, and the lifecycle sweep (packing finished games, ending abandoned ones) every LIFECYCLE_SWEEP_SECONDS.
The scheduler is asked to stop (SIGTERM, and it gives up its lock) when this process ends in any way,
SIGKILL included, so no orphan keeps `rq:scheduler-lock:bots`. While Redis is away the worker tries
again every second, so it serves again within about a second of Redis being back.

Stopping: SIGTERM or SIGINT asks for RQ's warm stop (the job under way ends first); whatever Redis does
meanwhile (gone, or hanging without an answer), the process and its scheduler are gone STOP_SECONDS
later. When the process that started this one (supervisord) dies, this one stops the same way: the
parent-death signal on Linux, and everywhere a watchdog thread that checks the parent each half second.

Its metrics (bot turns, their delay, reconciler repairs, store errors) go into PROMETHEUS_MULTIPROC_DIR
when that is set (the API on the same host serves them), else to http://0.0.0.0:$METRICS_PORT/metrics.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any, ClassVar

import redis
from prometheus_client import start_http_server
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.serializers import JSONSerializer

from domain import engine
from domain.bots import bot_module
from service.ops import heap, logs
from service.play.seats import ThinkCapError
from service.storage.redis_clients import RedisSettingsError
from service.storage.turn_queue import BOT_QUEUES
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings, LifecycleSettingsError
from workers.context import dispatcher, game_service, queue_url, services
from workers.reconcile import Keeper, Reconciler, waiting_for

log = logging.getLogger("workers")
RESTART_DELAYS = (0.5, 1.0)  # seconds before the worker loop starts again after an error
STEADY_SECONDS = 60  # a worker that ran this long before its error starts again after the shortest delay
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that forked it ends
STOP_SECONDS = 6.0  # after a request to stop, the process is gone within this long (issue 28: 10 s at most)
PARENT_CHECK_SECONDS = 0.5  # how often the watchdog looks whether the parent is still there
_stopping = threading.Event()  # a stop was asked: the deadline runs


class BotQueue(Queue):
    """RQ's Queue; notes the job this process took last until its worker has seen it through."""

    taken: ClassVar[str | None] = None

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> Any:
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            BotQueue.taken = result[0].id
        return result


def give_back_taken() -> None:
    """Put a job this process took from the queue and did not see through (Redis went away meanwhile
    and RQ's loop ended) back at the front of the queue, so that it runs as soon as Redis is back
    rather than when the reconciler finds it stuck or abandoned. Raises a Redis error while Redis is
    still away. A job that had played its turn already finds its version stale."""
    if BotQueue.taken is None:
        return
    dispatcher().give_back(BotQueue.taken)
    log.warning("gave the job %s back to the queue: its worker's loop ended before it was done", BotQueue.taken)
    BotQueue.taken = None


def release_scheduler_lock(worker: SimpleWorker | None) -> None:
    """Give up the lock of the RQ scheduler of this process's last worker, whose loop ended: with Redis
    away its scheduler could not give it up when it stopped, and RQ would leave the schedule unserved
    until the lock expired (a minute) and its next maintenance pass (minutes). Raises a Redis error while
    Redis is still away."""
    scheduler = worker.scheduler if worker is not None else None
    if scheduler is not None and scheduler.acquired_locks:
        scheduler.release_locks()  # type: ignore[no-untyped-call]  # only the locks it still owns


class BotWorker(SimpleWorker):
    """A SimpleWorker whose stop, once asked for, ends by STOP_SECONDS later whatever Redis does."""

    max_connection_wait_time = 1.0  # between attempts to reach Redis (RQ doubles its wait up to 60 s by default)
    queue_class = BotQueue

    def perform_job(self, job: Job, queue: Queue) -> bool:
        """Run the job and record its outcome; only then is it no longer this process's to give back."""
        done: bool = super().perform_job(job, queue)
        BotQueue.taken = None
        return done

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        stop_within(STOP_SECONDS)  # RQ's warm stop talks to Redis, which may never answer
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]


def stop_within(seconds: float) -> None:
    """A stop was asked: unless the process has ended by itself `seconds` from now, it ends then (its
    children, RQ's scheduler, first). The first call counts."""
    if _stopping.is_set():
        return
    _stopping.set()
    deadline = threading.Timer(seconds, _leave_now, args=(seconds,))
    deadline.daemon = True
    deadline.start()


def _leave_now(seconds: float) -> None:
    log.warning("still stopping %s s after the request (Redis away or not answering): leaving now", seconds)
    for child in multiprocessing.active_children():
        child.kill()
    os._exit(0)  # each log line is flushed as written


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGINT before RQ's worker has its own handlers (or between two of its loops)."""
    stop_within(STOP_SECONDS)
    raise SystemExit(0)


def main() -> None:
    """Run until stopped; jobs run in this process, so its game cache stays warm."""
    logs.configure("worker")
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_stop_signal)
    _stop_with_parent(os.getppid())
    serve_metrics(os.environ.get("METRICS_PORT"))
    os.register_at_fork(after_in_child=functools.partial(_stop_with_parent, os.getpid()))
    try:
        connection = redis.Redis.from_url(queue_url())
        lifecycle = Lifecycle(game_service(), services().storage, LifecycleSettings.from_env())
        names = queue_names(os.environ.get("BOT_QUEUES"))
        scheduler_wanted = os.environ.get("WORKER_SCHEDULER", "on").strip().lower() != "off"
    except (RedisSettingsError, LifecycleSettingsError, ThinkCapError, ValueError) as error:
        raise SystemExit(f"workers: {error}") from error
    queues = [BotQueue(name, connection=connection, serializer=JSONSerializer) for name in names]
    reconciler = Reconciler(dispatcher(), functools.partial(waiting_for, game_service()))
    keeper = Keeper(dispatcher().connection, reconciler, lifecycle=lifecycle, matches=services().matches)
    log.info("games loaded before the first job: %s", ", ".join(load_what_jobs_play()))
    heap.freeze_what_startup_built()
    failures = 0
    last: BotWorker | None = None
    try:
        while not _stopping.is_set():
            started = time.monotonic()
            try:
                give_back_taken()
                release_scheduler_lock(last)
                worker = last = BotWorker(queues, connection=connection, serializer=JSONSerializer)
                keeper.serve(worker.name)
                worker.work(with_scheduler=scheduler_wanted)
            except Exception:
                if not _stopping.is_set():
                    log.exception("the worker loop failed")
            if _stopping.is_set():
                break
            # RQ leaves its loop on an error it cannot handle (Redis gone while it records a job);
            # a job it was running is picked up by the reconciler once this worker's name is dead.
            failures = 0 if time.monotonic() - started > STEADY_SECONDS else failures + 1
            delay = RESTART_DELAYS[min(failures, len(RESTART_DELAYS)) - 1]
            log.warning("the worker stopped on an error; starting again in %s s", delay)
            try:
                time.sleep(delay)
            except Exception:  # StopRequested, from the SIGTERM handler the last worker installed
                break
    finally:
        keeper.stop()


def load_what_jobs_play() -> list[str]:
    """Import every game and its bots' module now rather than in the first job that plays it (about 0.1 s of
    CPU): the first turns after a worker starts wait for no import, and what the imports built is frozen with
    the rest of the start (service/ops/heap.py). The games' ids."""
    games = [game.id for game in engine.all_games()]
    for game in games:
        bot_module(game)
    return games


def queue_names(setting: str | None) -> list[str]:
    """The queues a worker takes jobs from, in order: BOT_QUEUES, comma-separated (default: every bot queue)."""
    if setting is None or not setting.strip():
        return list(BOT_QUEUES)
    names = [name.strip() for name in setting.split(",") if name.strip()]
    unknown = [name for name in names if name not in BOT_QUEUES]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(f"BOT_QUEUES must name some of {', '.join(BOT_QUEUES)}, each once (got {setting!r})")
    return names


def serve_metrics(port: str | None) -> None:
    """With METRICS_PORT, serve this worker's own metrics at http://0.0.0.0:<port>/metrics, for a worker
    that shares no PROMETHEUS_MULTIPROC_DIR with an API on its host (its own container or machine)."""
    if port:
        start_http_server(int(port))


def _stop_with_parent(parent: int) -> None:
    """Stop when `parent` ends (the worker's supervisor; in RQ's scheduler, the worker): SIGTERM at once
    on Linux (the parent-death signal), and everywhere from a watchdog thread, which also ends the
    process STOP_SECONDS later should the stop hang (RQ's scheduler has no deadline of its own)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    watchdog = threading.Thread(target=_watch_parent, args=(parent,), name="parent-watchdog", daemon=True)
    watchdog.start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    log.warning("the parent process %s is gone: stopping", parent)
    stop_within(STOP_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)


def parse_args(argv: list[str]) -> None:
    """The command line takes no arguments (settings come from the environment); `--help` tells so."""
    parser = argparse.ArgumentParser(
        prog="python -m workers",
        description=__doc__,
        epilog="Settings: REDIS_URL, QUEUE_REDIS_URL, METRICS_PORT, PROMETHEUS_MULTIPROC_DIR and the "
        "LIFECYCLE_* variables (docs/operations.md, docs/storage.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)


if __name__ == "__main__":
    parse_args(sys.argv[1:])
    main()
