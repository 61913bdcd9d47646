"""RQ job: the bot turns due at a version (service/play/due_turns.py), by a person's command path.

A job plays for about CHAIN_SECONDS in all. When its chain makes another game's bot due on the job's own queue
(a match's next game, started when this one ended), that turn is claimed for the job's worker rather than
queued (service/storage/turn_queue.py, FollowUps), and the job plays it itself while time is left: one RQ job
then plays a run of games, not one job each (RQ's bookkeeping of a job costs about a dozen writes, each waiting
for its fsync). A claimed turn the job has no time left for is queued for any worker. On the matches' queue,
a job rests after each game's turns while people play (service/play/match_pace.py).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC

from rq import get_current_job
from rq.job import Job

from service.play.due_turns import CHAIN_SECONDS, play_bot_turns
from service.play.game_service import GameService
from service.storage.keys import BOT_QUEUE, MATCH_QUEUE
from service.storage.turn_queue import QueuedTurn, RQDispatcher
from workers.context import dispatcher, game_service

log = logging.getLogger(__name__)


def play_bot_chain(game_id: str, version: int) -> str:
    """Play the bot turn due at `version` and the bot turns right after it, then the turns this made due on the
    job's queue while time is left; a stale version or a conflict is not an error."""
    games, queue = game_service(), dispatcher()
    job = get_current_job()
    deadline = time.monotonic() + CHAIN_SECONDS
    if job is None or not job.worker_name:  # run outside a worker: nobody to claim the turns it makes due for
        return play_bot_turns(games, game_id, version, due_at=_queued_at(job))
    lane = job.origin or BOT_QUEUE
    with queue.follow_ups.noting(lane, job.worker_name) as made_due:
        started = time.monotonic()
        try:
            outcome = play_bot_turns(games, game_id, version, due_at=_queued_at(job))
        except BaseException:
            _release(queue, made_due)
            raise
        log.info("bot turn %s@%s: %s", game_id, version, outcome)
        yield_to_people(games, lane, started)
        play_made_due(games, queue, made_due, deadline)
    return outcome


play_bot_turn = play_bot_chain  # the name queued jobs call it by (BOT_TURN_JOB): it stays


def play_made_due(games: GameService, queue: RQDispatcher, made_due: list[QueuedTurn], deadline: float) -> int:
    """Play the turns claimed in `made_due` (it grows as they are played) until `deadline` (time.monotonic());
    the number played. A turn that fails to play ends the run; it and the turns left are queued for any worker
    (or, failing that too, left to the reconciler once their claim expires)."""
    played = 0
    try:
        while made_due and (left := deadline - time.monotonic()) > 0:
            turn, started = made_due[0], time.monotonic()
            outcome = play_bot_turns(games, turn.game_id, turn.version, max_seconds=left, due_at=turn.at)
            made_due.pop(0)
            log.info("bot turn %s@%s (claimed by this job): %s", turn.game_id, turn.version, outcome)
            played += 1
            yield_to_people(games, turn.queue, started)
    except Exception:
        log.exception("bot turn %s@%s, claimed by this job, failed: queueing it again", *made_due[0][:2])
    _release(queue, made_due)
    return played


def yield_to_people(games: GameService, lane: str, started: float) -> float:
    """After turns played since `started` (time.monotonic()) on `lane`: a match's rest while people play
    (service/play/match_pace.py); the seconds rested."""
    if lane != MATCH_QUEUE:
        return 0.0
    return games.match_pace.rest_after(time.monotonic() - started)


def _release(queue: RQDispatcher, turns: list[QueuedTurn]) -> None:
    """Queue claimed turns for any worker (a failure leaves one to the reconciler once its claim expires)."""
    for turn in turns:
        try:
            queue.requeue(turn.game_id, turn.version, {}, queue=turn.queue)
        except Exception:
            log.exception("could not queue the claimed bot turn %s@%s again", turn.game_id, turn.version)


def _queued_at(job: Job | None) -> float | None:
    """When `job` was put on the queue (by the service, a retry, or RQ's scheduler when it was due)."""
    queued = job.enqueued_at if job is not None else None
    if queued is None:
        return None
    return (queued if queued.tzinfo else queued.replace(tzinfo=UTC)).timestamp()
