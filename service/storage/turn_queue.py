"""How the service asks for bot turns: an RQ job per (game, version), and an index of games that wait for a bot.

Keys (outside the games' hash tags):
  bots:waiting   sorted set: game id -> the version at which a bot is due, or a person on a turn timeout's
                 clock. Written before an append that leaves either (an intent) and again when a bot job is
                 enqueued; removed when neither is due. The reconciler (workers/reconcile.py) walks it to
                 find turns that have no job.
                 It lives with the event store (REDIS_URL; one key, each command or script touches only it,
                 so a Redis Cluster is fine): it is the durable record of due turns, jobs are made from it.
  rq:…           RQ's own keys for the queues "bots" (random and greedy bots, turn timeouts), "bots-expert"
                 (expert bots) and "bots-match" (matches' random and greedy bots), on the queue's plain Redis
                 (QUEUE_REDIS_URL).

A bot turn goes on the queue its seat's controller names (service/play/seats.py), a match's quick bots on
"bots-match" (LoadedGame.turn_queue_of): experts think for up to a couple of seconds a move, so they have a
queue of their own and the other bots keep their pace while experts think (docs/operations.md, "Expert
bots"); a match is work nobody waits for, played by workers that take only spare CPU.

Turn timeouts (games with `turn_seconds`) are jobs on the same queue, scheduled with RQ's scheduler
(`rq:scheduled:bots`) one per (game, version) at which a human is to act, and deleted from the
schedule when the game moves on.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from service.storage.keys import BOT_QUEUE as BOT_QUEUE
from service.storage.keys import BOT_QUEUES as BOT_QUEUES
from service.storage.keys import EXPERT_QUEUE as EXPERT_QUEUE
from service.storage.keys import MATCH_QUEUE as MATCH_QUEUE
from service.storage.keys import WAITING_KEY as WAITING_KEY
from service.storage.redis_clients import StoreClient

BOT_TURN_JOB = "workers.bot_turns.play_bot_turn"
TURN_TIMEOUT_JOB = "workers.turn_timeouts.play_turn_timeout"
BOT_JOB_TIMEOUT = 60  # seconds; a job plays a chain bounded to about a second
BOT_RETRY_INTERVALS = (1, 2, 4, 8, 16)  # seconds before each retry of a failed job (Redis down, ...)
RESULT_TTL = 60
FAILURE_TTL = 24 * 3600

# KEYS: index. ARGV: game id, version. Removes the entry if its version is at most ARGV[2].
_SETTLE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""

# KEYS: index. ARGV: game id, expected version, new version. Moves the entry only if it is still as read.
_MOVE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
"""


# KEYS: the job's hash. ARGV: seconds, then the job's field/value pairs. Writes the job, marked started by a
# worker (as the reconciler reads a job in hand), only if no job of that id exists: 1 if so.
_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""


class QueuedTurn(NamedTuple):
    """A bot turn put on a queue: its game, the version at which it is due, the queue, and when (epoch seconds)."""

    game_id: str
    version: int
    queue: str
    at: float


def timeout_job_id(game_id: str, version: int) -> str:
    """One turn-timeout job id per (game, version)."""
    return f"turn-timeout_{game_id}_{version}"


def bot_job_id(game_id: str, version: int) -> str:
    """One job id per (game, version), so a duplicate enqueue is harmless."""
    return f"bot-turn_{game_id}_{version}"


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class WaitingIndex:
    """The sorted set `bots:waiting`: game id -> version at which a bot is due."""

    def __init__(self, connection: StoreClient, key: str = WAITING_KEY) -> None:
        self.connection = connection
        self.key = key
        self._settle = connection.register_script(_SETTLE)
        self._move = connection.register_script(_MOVE)

    def raise_to(self, game_id: str, version: int) -> None:
        """Add the game, or raise its version (never lowers it)."""
        self.connection.zadd(self.key, {game_id: version}, gt=True)

    def settle(self, game_id: str, version: int) -> None:
        """Remove the game unless a newer version is waiting."""
        self._settle(keys=[self.key], args=[game_id, version])

    def move(self, game_id: str, seen: int, version: int) -> bool:
        """Set the game's version, only if it still is `seen`."""
        return bool(self._move(keys=[self.key], args=[game_id, seen, version]))

    def missing(self, game_ids: list[str]) -> list[str]:
        """Those of `game_ids` that are not in the index."""
        if not game_ids:
            return []
        scores: list[float | None] = self.connection.zmscore(self.key, game_ids)
        return [game_id for game_id, score in zip(game_ids, scores, strict=True) if score is None]

    def entries(self) -> list[tuple[str, int]]:
        """Every waiting game with its version, oldest version first."""
        entries: list[tuple[bytes | str, float]] = self.connection.zrange(self.key, 0, -1, withscores=True)  # type: ignore[assignment]
        return [(_text(member), int(score)) for member, score in entries]


class FollowUps:
    """The bot turns that a job's own moves make due on its own queue (a match's next game, started as the job's
    game ended): instead of being queued for any worker, each is claimed for the job's worker, which plays it
    itself (workers/bot_turns.py). One write a turn, where queueing and then taking it back off the queue were
    three and RQ's bookkeeping of a job."""

    def __init__(self, connection: redis.Redis) -> None:
        self._claim = connection.register_script(_CLAIM)
        self._noting = threading.local()  # .lane, .worker, .turns: what `noting` set in this thread, if anything

    @contextlib.contextmanager
    def noting(self, lane: str, worker_name: str) -> Iterator[list[QueuedTurn]]:
        """The bot turns due now on `lane` that this thread asks for inside the block, in order, each claimed
        for `worker_name`."""
        noted: list[QueuedTurn] = []
        self._noting.lane, self._noting.worker, self._noting.turns = lane, worker_name, noted
        try:
            yield noted
        finally:
            self._noting.turns = None

    def claim(self, job: Job, game_id: str, version: int) -> bool:
        """When this thread is noting and `job` is due now on its lane: write the job as started by the noting
        worker, unless a job of its id exists, and note its turn; True if it was claimed (it is not to be
        queued). The reconciler counts a claimed turn in hand while that worker lives, and enqueues it again if
        the worker dies before playing it (the waiting index still holds the turn)."""
        noted: list[QueuedTurn] | None = getattr(self._noting, "turns", None)
        if noted is None or job.origin != self._noting.lane:
            return False
        fields = dict(job.to_dict(), status=JobStatus.STARTED.value, worker_name=self._noting.worker)
        flat = [item for pair in fields.items() for item in pair]
        if not self._claim(keys=[job.key], args=[BOT_JOB_TIMEOUT, *flat]):
            return False
        noted.append(QueuedTurn(game_id, version, job.origin, time.time()))
        return True


class RQDispatcher:
    """The turn scheduler of service/play/ports.py on RQ: enqueues bot turns and turn timeouts for the
    workers (JSON serializer) and keeps the waiting index."""

    def __init__(self, connection: redis.Redis, index_connection: StoreClient | None = None) -> None:
        """`connection`: the queue's Redis; `index_connection`: the store's (default: the queue's)."""
        self.connection = connection
        self.queues = {name: Queue(name, connection=connection, serializer=JSONSerializer) for name in BOT_QUEUES}
        self.queue = self.queues[BOT_QUEUE]  # the bot turns of random and greedy bots, and turn timeouts
        self.index = WaitingIndex(index_connection or connection)
        self.follow_ups = FollowUps(connection)  # the turns a job makes due on its own queue, claimed to play

    def queue_depths(self) -> dict[str, int]:
        """Jobs on the bot queues now (both summed), by state: queued, scheduled (to wait), started (running)."""
        queues = self.queues.values()
        return {
            "queued": sum(queue.count for queue in queues),
            "scheduled": sum(queue.scheduled_job_registry.count for queue in queues),
            "started": sum(queue.started_job_registry.count for queue in queues),
        }

    def expect(self, game_id: str, version: int) -> None:
        """An append is about to leave a turn due at `version`: the game goes in the waiting index."""
        self.index.raise_to(game_id, version)

    def settle(self, game_id: str, version: int) -> None:
        """Nothing is due in `game_id` at `version`: out of the waiting index, unless a newer version waits."""
        self.index.settle(game_id, version)

    def unnoted(self, game_ids: list[str]) -> list[str]:
        """Those of `game_ids` that the waiting index does not hold."""
        return self.index.missing(game_ids)

    def schedule(self, game_id: str, version: int, delay_seconds: int = 0, queue: str = BOT_QUEUE) -> None:
        """The job of (game, version), put on RQ's schedule when it is to wait, claimed instead when the thread
        is noting and it is due now on its lane (FollowUps); a job that exists already (any state) is left
        alone. The waiting index is the caller's (service/play/turn_scheduler.py): the net under the job."""
        job = self._bot_job(game_id, version, queue=queue)
        if delay_seconds > 0 or not self.follow_ups.claim(job, game_id, version):
            with contextlib.suppress(DuplicateJobError):
                self._put(job, delay_seconds, unique=True)

    def enqueue(
        self,
        game_id: str,
        version: int,
        *,
        unique: bool = False,
        meta: dict[str, Any] | None = None,
        queue: str = BOT_QUEUE,
    ) -> Job:
        """The job of (game, version) on `queue`, retried with backoff when it fails."""
        return self._put(self._bot_job(game_id, version, meta, queue), 0, unique=unique)

    def _put(self, job: Job, delay_seconds: int, unique: bool = False) -> Job:
        """`job` on its queue now, or on RQ's schedule `delay_seconds` from now."""
        queue = self.queues[job.origin]
        if delay_seconds > 0:
            scheduled: Job = queue.schedule_job(job, _due(delay_seconds), unique=unique)
            return scheduled
        return queue.enqueue_job(job, unique=unique)

    def _bot_job(self, game_id: str, version: int, meta: dict[str, Any] | None = None, queue: str = BOT_QUEUE) -> Job:
        return self._job(BOT_TURN_JOB, bot_job_id(game_id, version), game_id, version, meta, queue)

    def _job(
        self,
        func: str,
        job_id: str,
        game_id: str,
        version: int,
        meta: dict[str, Any] | None = None,
        queue: str = BOT_QUEUE,
    ) -> Job:
        """A job on `queue`, retried with backoff when it fails."""
        return self.queues[queue].create_job(
            func,
            args=(game_id, version),
            job_id=job_id,
            timeout=BOT_JOB_TIMEOUT,
            result_ttl=RESULT_TTL,
            failure_ttl=FAILURE_TTL,
            retry=Retry(max=len(BOT_RETRY_INTERVALS), interval=list(BOT_RETRY_INTERVALS)),
            meta=meta,
        )

    def schedule_timeout(self, game_id: str, version: int, seconds: int) -> None:
        """Schedule the timeout job of (game, version) for the first whole second at least `seconds` from
        now; one that is scheduled already is left alone."""
        job = self._job(TURN_TIMEOUT_JOB, timeout_job_id(game_id, version), game_id, version)
        with contextlib.suppress(DuplicateJobError):
            self._put(job, seconds, unique=True)

    def cancel_timeout(self, game_id: str, version: int) -> None:
        """Take the timeout of (game, version) off the schedule and delete it; one that the scheduler has
        moved to the queue already runs and finds the game moved on."""
        job_id = timeout_job_id(game_id, version)
        if self.connection.zrem(self.queue.scheduled_job_registry.key, job_id):
            self.connection.delete(Job.key_for(job_id))

    def reschedule_timeout(self, game_id: str, version: int, seconds: int) -> None:
        """Schedule the timeout of (game, version) afresh, whatever became of its job (lost, failed)."""
        job_id = timeout_job_id(game_id, version)
        self._forget(job_id)
        self.connection.delete(Job.key_for(job_id))
        self.schedule_timeout(game_id, version, seconds)

    def requeue(
        self, game_id: str, version: int, meta: dict[str, Any], delay_seconds: int = 0, queue: str = BOT_QUEUE
    ) -> Job:
        """Enqueue (game, version) again on `queue`, whatever became of its job (on RQ's schedule when it
        is to wait): first drop the job id from RQ's lists and registries, where a dead worker or an earlier
        failure left it, so that RQ's own clean-up does not act on the new job later."""
        self._forget(bot_job_id(game_id, version))
        return self._put(self._bot_job(game_id, version, meta, queue), delay_seconds)

    def give_back(self, job_id: str) -> None:
        """Put a job that a worker took and then lost (its loop ended on a Redis error) back at the front
        of its queue, out of every list and registry it was left in."""
        origin = self.connection.hget(Job.key_for(job_id), "origin")
        queue = self.queues.get(_text(origin) if origin is not None else BOT_QUEUE, self.queue)
        self._forget(job_id)
        self.connection.lpush(queue.key, job_id)

    def _forget(self, job_id: str) -> None:
        """Drop a job id from RQ's lists and registries of every bot queue (a dead worker's, a failure's,
        the schedule): a job may come back on the other queue (its game's next bot is of another level)."""
        prefix = f"{job_id}:"
        for queue in self.queues.values():
            running: list[bytes | str] = self.connection.zrange(queue.started_job_registry.key, 0, -1)  # type: ignore[assignment]
            stale = [entry for entry in map(_text, running) if entry.startswith(prefix)]
            with self.connection.pipeline() as pipe:
                if stale:
                    pipe.zrem(queue.started_job_registry.key, *stale)
                pipe.zrem(queue.failed_job_registry.key, job_id)
                pipe.zrem(queue.scheduled_job_registry.key, job_id)
                pipe.lrem(queue.intermediate_queue_key, 0, job_id)
                pipe.lrem(queue.key, 0, job_id)
                pipe.execute()


def _due(seconds: int) -> datetime:
    """The first whole second at least `seconds` from now (RQ's scheduler counts whole seconds)."""
    return datetime.fromtimestamp(math.ceil(time.time() + seconds), UTC)
