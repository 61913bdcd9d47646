"""`python -m workers`: one RQ worker for the bot queue (JSON serializer), with its scheduler and keeper.

The RQ scheduler (a child process) moves jobs whose retry is due back to the queue; the keeper
(three threads) beats this worker's liveness, runs the reconciler at start and every few seconds, and
the lifecycle sweep (packing finished games, ending abandoned ones) every LIFECYCLE_SWEEP_SECONDS.
"""

from __future__ import annotations

import functools
import logging
import time
from types import FrameType

import redis
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

from service.connections import RedisSettingsError
from service.dispatch import BOT_QUEUE
from service.lifecycle import Lifecycle, LifecycleSettings, LifecycleSettingsError
from workers.context import dispatcher, game_service, queue_url
from workers.reconcile import Keeper, Reconciler, waiting_for

log = logging.getLogger("workers")
RESTART_DELAYS = (1, 2, 3, 5)  # seconds before the worker loop starts again after an error
STEADY_SECONDS = 60  # a worker that ran this long before its error starts again after the shortest delay


class BotWorker(SimpleWorker):
    """A SimpleWorker that knows whether it stopped because it was asked to."""

    stop_asked = False

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_asked = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]


def main() -> None:
    """Run until stopped; jobs run in this process, so its game cache stays warm."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(levelname)s %(message)s")
    try:
        connection = redis.Redis.from_url(queue_url())
        lifecycle = Lifecycle(game_service(), LifecycleSettings.from_env())
    except (RedisSettingsError, LifecycleSettingsError) as error:
        raise SystemExit(f"workers: {error}") from error
    queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)
    reconciler = Reconciler(dispatcher(), functools.partial(waiting_for, game_service()))
    keeper = Keeper(dispatcher().connection, reconciler, lifecycle=lifecycle)
    failures = 0
    try:
        while True:
            worker: BotWorker | None = None
            started = time.monotonic()
            try:
                worker = BotWorker([queue], connection=connection, serializer=JSONSerializer)
                keeper.serve(worker.name)
                worker.work(with_scheduler=True)
            except Exception:
                log.exception("the worker loop failed")
            if worker is not None and worker.stop_asked:
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


if __name__ == "__main__":
    main()
