"""RQ job: the bot turns due at a version (service/play/due_turns.py), by a person's command path.

A job plays for about CHAIN_SECONDS in all. When its chain made another game's bot due on the job's own queue
(a match's next game, started when this one ended), and time is left, the job takes that turn's job back off
the queue and plays it itself, unless a worker has taken it already: one RQ job then plays a run of games,
not one job each (RQ's bookkeeping of a job costs about a dozen writes, each waiting for its fsync).
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import UTC

from rq import get_current_job
from rq.job import Job

from service.play.due_turns import CHAIN_SECONDS, play_bot_turns
from service.play.game_service import GameService
from service.storage.keys import BOT_QUEUE
from service.storage.turn_queue import QueuedTurn, RQDispatcher
from workers.context import dispatcher, game_service

log = logging.getLogger(__name__)


def play_bot_chain(game_id: str, version: int) -> str:
    """Play the bot turn due at `version` and the bot turns right after it, then the turns this made due on the
    job's queue while time is left; a stale version or a conflict is not an error."""
    games, queue = game_service(), dispatcher()
    job = get_current_job()
    deadline = time.monotonic() + CHAIN_SECONDS
    with queue.follow_ups.noting() as made_due:
        outcome = play_bot_turns(games, game_id, version, due_at=_queued_at(job))
        log.info("bot turn %s@%s: %s", game_id, version, outcome)
        if job is not None and job.worker_name:
            play_made_due(games, queue, made_due, job.origin or BOT_QUEUE, job.worker_name, deadline)
    return outcome


play_bot_turn = play_bot_chain  # the name queued jobs call it by (BOT_TURN_JOB): it stays


def play_made_due(
    games: GameService,
    queue: RQDispatcher,
    made_due: list[QueuedTurn],
    lane: str,
    worker_name: str,
    deadline: float,
) -> int:
    """Play the turns in `made_due` (it grows as they are played) that are on `lane` and that no worker has
    taken, until `deadline` (time.monotonic()); the number played. A turn that fails to play goes back on
    the queue (or, failing that too, to the reconciler once its job's mark expires) and ends the run."""
    played = 0
    while made_due and (left := deadline - time.monotonic()) > 0:
        turn = made_due.pop(0)
        if turn.queue != lane or not queue.follow_ups.take_back(turn, worker_name):
            continue
        try:
            outcome = play_bot_turns(games, turn.game_id, turn.version, max_seconds=left, due_at=turn.at)
        except Exception:
            log.exception("bot turn %s@%s, taken back from the queue, failed: queueing it again", *turn[:2])
            with contextlib.suppress(Exception):
                queue.requeue(turn.game_id, turn.version, {}, queue=turn.queue)
            break
        log.info("bot turn %s@%s (taken back from the queue): %s", turn.game_id, turn.version, outcome)
        played += 1
    return played


def _queued_at(job: Job | None) -> float | None:
    """When `job` was put on the queue (by the service, a retry, or RQ's scheduler when it was due)."""
    queued = job.enqueued_at if job is not None else None
    if queued is None:
        return None
    return (queued if queued.tzinfo else queued.replace(tzinfo=UTC)).timestamp()
