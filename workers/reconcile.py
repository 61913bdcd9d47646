"""The reconciler: every bot turn that is due has a job that is queued, scheduled or running, and
every person on a turn timeout's clock has that timeout scheduled.

It walks the waiting index (`bots:waiting`, see service/storage/turn_queue.py). A game whose bot job or turn
timeout for the indexed version is in hand (queued in the list, scheduled, or started by a live
worker) is left alone without being loaded, so a game waiting for a person on a timeout's clock costs
a pass no more than one with a bot job queued. (Where a bot and a person may both act at that
version, a Go5 call, a lost bot job is then found once the timeout has played and the game moved on.)

Otherwise the game is loaded. When a bot is due at its current version and that version's job is not
in hand either (missing, lost from the queue, failed, finished, or started by a worker that is gone),
the job is enqueued again, on the queue its seat's controller names (service/play/seats.py: an
expert's on `bots-expert`), or put on RQ's schedule CALL_GRACE_SECONDS out while a person may call Go5.
When a person is due in a game with `turn_seconds` and that version's timeout is not in hand, it is
scheduled again, a full
`turn_seconds` from now (the reconciler does not know when the person's clock started, so it errs on
the person's side). When nothing is due, the game leaves the index.

Safe to run at any time and from any number of processes: jobs are one per (game, version) and a
turn is a compare-and-append on the version, so a job that runs twice plays once.

Liveness: every worker process sets `bots:alive:<RQ worker name>` with a short TTL each second
(Keeper); a started job whose worker has no such key was abandoned (SIGKILL, lost machine).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import redis
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from service.ops import metrics
from service.play.errors import GameNotFound
from service.play.game_service import GameService
from service.play.matches import Matches
from service.storage.turn_queue import BOT_QUEUE, RQDispatcher, bot_job_id, timeout_job_id
from service.upkeep.lifecycle import Lifecycle, SweepOutcome

log = logging.getLogger(__name__)

ALIVE_PREFIX = "bots:alive:"
ALIVE_TTL_MS = 5000
BEAT_SECONDS = 1.0
RECONCILE_SECONDS = 2.0
PASS_KEY = "bots:reconcile-pass"  # one pass per interval across all workers
LIFECYCLE_PASS_KEY = "games:lifecycle-pass"  # one lifecycle sweep per interval across all workers
TRANSIT_GRACE_SECONDS = 5.0  # a job taken from the queue but not yet started
SCHEDULE_GRACE_SECONDS = 10.0  # a retry this late was not moved by any RQ scheduler (none holds the lock)
REVIVE_BASE_SECONDS = 1.0  # a failed job is enqueued again after 1, 2, 4, ... seconds ...
REVIVE_CAP_SECONDS = 300.0  # ... at most this long after its last failure
STOP_JOIN_SECONDS = 2.0  # how long a stopping worker waits for its keeper's threads


@dataclasses.dataclass(frozen=True)
class Waiting:
    """What a game waits for at its current version."""

    version: int
    bot: bool  # a bot is due
    timeout_seconds: int | None = None  # a person is due, on a turn timeout's clock of this length
    grace_seconds: int = 0  # the bot due waits this long first: a person may act out of turn (a Go5 call)
    queue: str = BOT_QUEUE  # the queue of the bot due (service/play/seats.py: experts have their own)


Due = Callable[[str], Waiting | None]


def waiting_for(service: GameService, game_id: str) -> Waiting | None:
    """What the game waits for at its current version; None when there is no such game. A registered bot's
    turn due is offered to it again on the way (its offer may have been lost with its turn timeout: an
    offer already in the bot's queue is left as it is)."""
    try:
        loaded = service.load(game_id)
    except GameNotFound:
        return None
    service.turns.offer_turns(loaded, wake=True)
    queue = loaded.bot_queue()
    return Waiting(
        loaded.version,
        queue is not None,
        loaded.timeout_seconds(),
        loaded.bot_delay_seconds(),
        queue or BOT_QUEUE,
    )


def alive_key(worker_name: str) -> str:
    return f"{ALIVE_PREFIX}{worker_name}"


@dataclasses.dataclass
class _Look:
    """What RQ holds right now, read once per pass."""

    queued: set[str]
    in_transit: set[str]
    scheduled: dict[str, float]  # job id -> when it is due
    alive: dict[str, bool]


class Reconciler:
    """Finds games where a bot is due and no job is in hand, and enqueues that job."""

    def __init__(self, dispatcher: RQDispatcher, due: Due) -> None:
        self.dispatcher = dispatcher
        self.connection = dispatcher.connection
        self.due = due
        self._transit_since: dict[str, float] = {}

    def run_once(self) -> list[tuple[str, int]]:
        """One pass over the waiting index; returns the (game, version) jobs enqueued or scheduled again."""
        entries = self.dispatcher.index.entries()
        if not entries:
            return []
        listed = self._look()  # what the lists hold is in hand: most entries need no fetch of their job
        entries = [entry for entry in entries if not self._listed(bot_job_id(*entry), listed)]
        entries = [entry for entry in entries if not self._listed(timeout_job_id(*entry), listed)]
        if not entries:
            return []
        jobs = self._fetch([bot_job_id(game_id, version) for game_id, version in entries])
        look = self._look()  # after the fetch: a job enqueued in between is found in hand, not enqueued twice
        without_bot_job = [entry for entry, job in zip(entries, jobs, strict=True) if not self._in_hand(job, look)]
        timeouts = self._fetch([timeout_job_id(game_id, version) for game_id, version in without_bot_job])
        requeued = []
        for (game_id, seen), timeout in zip(without_bot_job, timeouts, strict=True):
            if self._in_hand(timeout, look):
                continue
            try:
                done = self._repair(game_id, seen, look)
            except Exception:
                log.exception("reconciler: could not check %s at version %s", game_id, seen)
                continue
            if done is not None:
                requeued.append(done)
        return requeued

    def _repair(self, game_id: str, seen: int, look: _Look) -> tuple[str, int] | None:
        state = self.due(game_id)
        if state is None or not (state.bot or state.timeout_seconds):
            self.dispatcher.index.settle(game_id, seen)
            return None
        version = state.version
        if version != seen:
            self.dispatcher.index.move(game_id, seen, version)
        seconds = state.timeout_seconds
        timeout = seconds is not None and self._repair_timeout(game_id, version, seconds, look)
        bot = state.bot and self._repair_bot(game_id, version, look, state.grace_seconds, state.queue)
        return (game_id, version) if timeout or bot else None

    def _repair_bot(self, game_id: str, version: int, look: _Look, grace_seconds: int, queue: str) -> bool:
        """Enqueue the bot job of (game, version) again on `queue` unless it is in hand (on RQ's schedule,
        `grace_seconds` from now, while a person may call); True if it was."""
        job = self._fetch([bot_job_id(game_id, version)])[0]  # afresh: it may have started meanwhile
        if self._in_hand(job, look) or not self._may_revive(job):
            return False
        revived = int(job.meta.get("revived", 0)) + 1 if job is not None else 0
        status = getattr(job.get_status(refresh=False), "value", "unknown") if job is not None else "missing"
        self.dispatcher.requeue(game_id, version, {"revived": revived}, grace_seconds, queue)
        metrics.RECONCILER_REPAIRS.labels("bot_turn").inc()
        log.warning("reconciler: enqueued the bot turn of %s at version %s (job was %s)", game_id, version, status)
        return True

    def _repair_timeout(self, game_id: str, version: int, seconds: int, look: _Look) -> bool:
        """Schedule the turn timeout of (game, version) again unless it is in hand; True if it was."""
        if self._in_hand(self._fetch([timeout_job_id(game_id, version)])[0], look):
            return False
        self.dispatcher.reschedule_timeout(game_id, version, seconds)
        metrics.RECONCILER_REPAIRS.labels("turn_timeout").inc()
        log.warning("reconciler: scheduled the turn timeout of %s at version %s again", game_id, version)
        return True

    def _fetch(self, job_ids: list[str]) -> list[Job | None]:
        if not job_ids:
            return []
        jobs: list[Job | None] = Job.fetch_many(job_ids, connection=self.connection, serializer=JSONSerializer)
        return jobs

    def _look(self) -> _Look:
        queues = list(self.dispatcher.queues.values())
        with self.connection.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.lrange(queue.key, 0, -1)
                pipe.lrange(queue.intermediate_queue_key, 0, -1)
                pipe.zrange(queue.scheduled_job_registry.key, 0, -1, withscores=True)
            replies = pipe.execute()
        queued, in_transit, due = set(), set(), {}
        for at in range(0, len(replies), 3):
            queued |= _texts(replies[at])
            in_transit |= _texts(replies[at + 1])
            due.update({_text(job_id): float(when) for job_id, when in replies[at + 2]})
        look = _Look(queued, in_transit, due, {})
        self._transit_since = {job_id: t for job_id, t in self._transit_since.items() if job_id in look.in_transit}
        return look

    @staticmethod
    def _listed(job_id: str, look: _Look) -> bool:
        """In hand by the lists alone: waiting in a queue, or on the schedule and not long overdue. A job
        anywhere else (taken by a worker, failed, missing) is fetched and judged by `_in_hand`."""
        due = look.scheduled.get(job_id)
        return job_id in look.queued or (due is not None and due + SCHEDULE_GRACE_SECONDS > time.time())

    def _in_hand(self, job: Job | None, look: _Look) -> bool:
        """Queued in the list, scheduled for a retry that is not long overdue, or running on a live worker."""
        if job is None:
            return False
        status = job.get_status(refresh=False)
        if status == JobStatus.QUEUED:
            if job.id in look.queued:
                return True
            if job.id in look.in_transit:
                since = self._transit_since.setdefault(job.id, time.monotonic())
                return time.monotonic() - since < TRANSIT_GRACE_SECONDS
            return False
        if status == JobStatus.SCHEDULED:
            return look.scheduled.get(job.id, 0.0) + SCHEDULE_GRACE_SECONDS > time.time()
        if status == JobStatus.STARTED:
            return self._alive(job.worker_name, look)
        return False

    def _alive(self, worker_name: str | None, look: _Look) -> bool:
        if not worker_name:
            return False
        if worker_name not in look.alive:
            look.alive[worker_name] = bool(self.connection.exists(alive_key(worker_name)))
        return bool(look.alive[worker_name])

    @staticmethod
    def _may_revive(job: Job | None) -> bool:
        """A failed job (its RQ retries used up) comes back after a delay that doubles each time."""
        if job is None or job.get_status(refresh=False) != JobStatus.FAILED or job.ended_at is None:
            return True
        revived = int(job.meta.get("revived", 0))
        delay = min(REVIVE_BASE_SECONDS * 2**revived, REVIVE_CAP_SECONDS)
        ended: datetime = job.ended_at if job.ended_at.tzinfo else job.ended_at.replace(tzinfo=UTC)
        age = (datetime.now(UTC) - ended).total_seconds()
        return bool(age >= delay)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _texts(values: list[bytes | str]) -> set[str]:
    return {_text(value) for value in values}


class Keeper:
    """Daemon threads of a worker process: the liveness beat, the reconciler's passes and, with a
    `lifecycle`, its sweep (service/upkeep/lifecycle.py: packing finished games, ending abandoned ones)."""

    def __init__(
        self,
        connection: redis.Redis,
        reconciler: Reconciler,
        beat_seconds: float = BEAT_SECONDS,
        reconcile_seconds: float = RECONCILE_SECONDS,
        lifecycle: Lifecycle | None = None,
        matches: Matches | None = None,
    ) -> None:
        """`matches`: advanced on each reconciler pass (a match never stalls on a lost step)."""
        self.connection = connection
        self.reconciler = reconciler
        self.matches = matches
        self.beat_seconds = beat_seconds
        self.reconcile_seconds = reconcile_seconds
        self.lifecycle = lifecycle
        self.worker_name = ""
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def serve(self, worker_name: str) -> None:
        """Beat for this RQ worker (a restarted worker has a new name) and run the threads."""
        self.worker_name = worker_name
        try:
            self.beat()
        except redis.RedisError as error:
            log.warning("keeper: no liveness beat: %s", error)
        if not self._threads:
            loops = [(self._beat_loop, "beat"), (self._reconcile_loop, "reconcile")]
            if self.lifecycle is not None:
                loops.append((self._lifecycle_loop, "lifecycle"))
            for target, name in loops:
                thread = threading.Thread(target=target, name=f"keeper-{name}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def beat(self) -> None:
        """This worker is alive for the next ALIVE_TTL_MS."""
        if self.worker_name:
            self.connection.set(alive_key(self.worker_name), "1", px=ALIVE_TTL_MS)

    def reconcile(self) -> list[tuple[str, int]] | None:
        """One pass, unless another worker ran one within the interval (then None)."""
        claimed = self.connection.set(PASS_KEY, self.worker_name or "-", nx=True, px=int(self.reconcile_seconds * 1000))
        if not claimed:
            return None
        repaired = self.reconciler.run_once()
        if self.matches is not None:
            self.matches.advance_running()
        return repaired

    def sweep(self) -> SweepOutcome | None:
        """One lifecycle sweep, unless another worker ran one within its interval (then None)."""
        if self.lifecycle is None:
            return None
        interval_ms = self.lifecycle.settings.sweep_seconds * 1000
        if not self.connection.set(LIFECYCLE_PASS_KEY, self.worker_name or "-", nx=True, px=interval_ms):
            return None
        return self.lifecycle.run_once()

    def stop(self, seconds: float = STOP_JOIN_SECONDS) -> None:
        """Stop the threads, waiting `seconds` at most for all of them together (one may be stuck on a
        Redis that does not answer); a worker that stopped cleanly is not alive any more."""
        self._stop.set()
        deadline = time.monotonic() + seconds
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.worker_name:
            with contextlib.suppress(redis.RedisError):
                self.connection.delete(alive_key(self.worker_name))

    def _beat_loop(self) -> None:
        while not self._stop.wait(self.beat_seconds):
            try:
                self.beat()
            except redis.RedisError as error:
                log.warning("keeper: no liveness beat: %s", error)

    def _lifecycle_loop(self) -> None:
        assert self.lifecycle is not None
        while not self._stop.is_set():
            try:
                self.sweep()
            except Exception:
                log.exception("keeper: lifecycle sweep failed")
            self._stop.wait(self.lifecycle.settings.sweep_seconds)

    def _reconcile_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.reconcile()
            except Exception:
                log.exception("keeper: reconciler pass failed")
            self._stop.wait(self.reconcile_seconds)
