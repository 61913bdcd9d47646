"""Bot dispatch on fakeredis: the waiting index, the reconciler, chained bot turns, retries with backoff."""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, FinishedJobRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.scheduler import RQScheduler
from rq.serializers import JSONSerializer

from domain import engine
from domain.bots import choose_action
from domain.shuffle import SeededStream
from service.bootstrap import build_services, game_service
from service.play.due_turns import BotChain, play_bot_turns
from service.play.game_service import (
    CALL_GRACE_SECONDS,
    DUE_BATCH_SECONDS,
    DUE_BATCH_TURNS,
    DueTurn,
    GameService,
    LoadedGame,
)
from service.storage.keys import ACTIVE_KEY, FINISHED_KEY, GAME_COUNTS_KEY, MATCH_QUEUE
from service.storage.outcomes import StoreUnavailable
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import (
    BOT_JOB_TIMEOUT,
    BOT_QUEUE,
    BOT_RETRY_INTERVALS,
    EXPERT_QUEUE,
    WAITING_KEY,
    QueuedTurn,
    RQDispatcher,
    bot_job_id,
)
from service.upkeep.lifecycle import Lifecycle
from tests.conftest import RecordingDispatcher
from tests.service.helpers import check_chain
from workers.bot_turns import play_made_due
from workers.reconcile import ALIVE_PREFIX, Reconciler, waiting_for

FIXED_CLOCK = "2024-01-01T00:00:00.000Z"
TWO_BOTS = [{"kind": "bot"}, {"kind": "bot", "level": "random"}]
HUMAN_AND_BOT = [{"kind": "human", "name": "Ana"}, {"kind": "bot"}]
GO5_CALL_SEED = "go5-call-0"


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


@pytest.fixture
def queue_client(server: fakeredis.FakeServer) -> fakeredis.FakeRedis:
    """RQ's client: bytes replies."""
    return fakeredis.FakeRedis(server=server)


def make_service(server: fakeredis.FakeServer) -> GameService:
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))
    return game_service(store, RQDispatcher(fakeredis.FakeRedis(server=server)), clock=lambda: FIXED_CLOCK)


@pytest.fixture
def service(server: fakeredis.FakeServer) -> GameService:
    return make_service(server)


@pytest.fixture
def queue(queue_client: fakeredis.FakeRedis) -> Queue:
    return Queue(BOT_QUEUE, connection=queue_client, serializer=JSONSerializer)


def dispatcher_of(service: GameService) -> RQDispatcher:
    assert isinstance(service.turns.dispatcher, RQDispatcher)
    return service.turns.dispatcher


def reconciler(service: GameService) -> Reconciler:
    return Reconciler(dispatcher_of(service), functools.partial(waiting_for, service))


def waiting(client: fakeredis.FakeRedis) -> dict[str, int]:
    return {member.decode(): int(score) for member, score in client.zrange(WAITING_KEY, 0, -1, withscores=True)}


def queued_ids(queue: Queue) -> list[str]:
    return [raw.decode() for raw in queue.connection.lrange(queue.key, 0, -1)]


def create(service: GameService, seats: list[dict[str, Any]], seed: str = "dispatch") -> tuple[str, int]:
    created = service.create_game("golf", seats, {"rounds": 1}, seed=seed)
    return created["id"], created["version"]


def drain(service: GameService, queue: Queue, **chain: Any) -> list[str]:
    """Run queued bot jobs in order, the way a worker would, until the queue is empty."""
    outcomes = []
    while (raw := queue.connection.lpop(queue.key)) is not None:
        job = Job.fetch(raw.decode(), connection=queue.connection, serializer=JSONSerializer)
        outcomes.append(play_bot_turns(service, *job.args, **chain))
        assert len(outcomes) < 10_000
    return outcomes


def human_move(service: GameService, game_id: str) -> None:
    """Seat 0 (a person) plays a random legal action through the API's command path."""
    loaded = service.repository.load(game_id)
    rng = SeededStream("human", str(loaded.version))
    action = choose_action("golf", "random", engine.view(loaded.snap, 0), engine.legal_actions(loaded.snap, 0), rng)
    service.submit(game_id, 0, action, expected_version=loaded.version)


# ---------------------------------------------------------------- the waiting index


def test_the_index_holds_a_game_exactly_while_a_bot_is_due(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue
) -> None:
    game_id, version = create(service, HUMAN_AND_BOT)
    assert waiting(queue_client) == {game_id: version}, "both seats reveal first: the bot is due at creation"
    assert queued_ids(queue) == [bot_job_id(game_id, version)]
    states_seen = set()
    for _ in range(500):
        loaded = service.repository.load(game_id)
        bot_due_now = loaded.bot_to_act() is not None
        if bot_due_now:
            assert waiting(queue_client) == {game_id: loaded.version}
            assert bot_job_id(game_id, loaded.version) in queued_ids(queue)
            states_seen.add("bot")
            drain(service, queue)
        else:
            assert waiting(queue_client) == {}, f"no bot is due at {loaded.version}, yet the game waits"
            if loaded.snap.finished:
                states_seen.add("finished")
                break
            states_seen.add("human")
            human_move(service, game_id)
    assert states_seen == {"bot", "human", "finished"}
    assert waiting(queue_client) == {}


def test_a_failed_enqueue_after_the_append_leaves_the_game_in_the_index(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is written before the append; a crash between the append and the enqueue loses no turn."""

    def crash(game_id: str, version: int) -> None:
        raise ConnectionError("the process died here")

    monkeypatch.setattr(dispatcher_of(service), "schedule", crash)
    game_id, version = create(service, TWO_BOTS)
    assert queued_ids(queue) == []
    assert waiting(queue_client) == {game_id: version}

    assert reconciler(service).run_once() == [(game_id, version)]
    assert queued_ids(queue) == [bot_job_id(game_id, version)]


# ---------------------------------------------------------------- the reconciler


def test_reconcile_enqueues_exactly_the_missing_jobs(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue
) -> None:
    games = {name: create(service, TWO_BOTS, seed=name) for name in "ABCDEFGHKL"}
    human_game, human_version = create(service, HUMAN_AND_BOT, seed="I")
    drain_one = play_bot_turns(service, human_game, human_version)  # the bot reveals; the person is due
    assert drain_one == "played"
    queue_client.delete(queue.key)
    for game_id, version in games.values():  # every bot game's job is queued and in the list again
        queue_client.rpush(queue.key, bot_job_id(game_id, version))

    def job(name: str) -> Job:
        game_id, version = games[name]
        return Job.fetch(bot_job_id(game_id, version), connection=queue_client, serializer=JSONSerializer)

    # A: queued and in the list: in hand.
    # B: lost from the queue list (its hash still says queued).
    queue_client.lrem(queue.key, 0, job("B").id)
    # C: the job is gone altogether.
    queue_client.lrem(queue.key, 0, job("C").id)
    job("C").delete()
    # D: failed long ago (its RQ retries used up).
    failed_long_ago(job("D"), queue, seconds=60, revived=0)
    # E: started by a worker that is gone (no liveness key), e.g. killed with SIGKILL.
    started_by(job("E"), queue, "dead-worker")
    # F: started by a live worker.
    started_by(job("F"), queue, "live-worker")
    queue_client.set(f"{ALIVE_PREFIX}live-worker", "1", px=5000)
    # G: failed a moment ago after three revivals: it waits 8 s before the next.
    failed_long_ago(job("G"), queue, seconds=1, revived=3)
    # H: a worker died in the middle of a chain: three turns stored, the index still at the start.
    game_h, version_h = games["H"]
    started_by(job("H"), queue, "dead-worker")
    for _ in range(3):
        loaded = service.repository.load(game_h)
        bot = loaded.bot_to_act()
        assert bot is not None and bot.level is not None
        rng = SeededStream("h", str(loaded.version))
        view, legal = engine.view(loaded.snap, bot.seat), engine.legal_actions(loaded.snap, bot.seat)
        action = choose_action("golf", bot.level, view, legal, rng)
        step = service.decide_due_turn(loaded, bot.seat, action)
        service.store_due_turns(loaded, [DueTurn(loaded, bot.seat, step)])  # stored as a chain stores its turns
    now_h = service.repository.load(game_h).version
    assert now_h > version_h and service.repository.load(game_h).bot_to_act() is not None
    # I: a stale entry (a person is due), J: a game that does not exist.
    queue_client.zadd(WAITING_KEY, {human_game: human_version, "no-such-game": 7})
    # K: scheduled for a retry; L: a retry long overdue (no RQ scheduler runs).
    scheduled_for_retry(job("K"), queue, in_seconds=30)
    scheduled_for_retry(job("L"), queue, in_seconds=-60)

    pass_one = reconciler(service).run_once()

    expected = {games["B"], games["C"], games["D"], games["E"], games["L"], (game_h, now_h)}
    assert sorted(pass_one) == sorted(expected)
    assert waiting(queue_client) == {**{game_id: v for game_id, v in games.values()}, game_h: now_h}
    listed = queued_ids(queue)
    assert sorted(listed) == sorted({bot_job_id(*games[name]) for name in "ABCDEL"} | {bot_job_id(game_h, now_h)}), (
        "each enqueued once, the ones in hand left as they are"
    )
    for game_id, version in expected:
        revived = Job.fetch(bot_job_id(game_id, version), connection=queue_client, serializer=JSONSerializer)
        assert revived.get_status() == JobStatus.QUEUED
        assert revived.retries_left == len(BOT_RETRY_INTERVALS)
    assert job("D").id not in FailedJobRegistry(queue=queue).get_job_ids(cleanup=False)
    running = queue_client.zrange(StartedJobRegistry(queue=queue).key, 0, -1)
    assert not any(entry.startswith(job("E").id.encode()) for entry in running), "the dead worker's entry is gone"
    assert job("D").meta == {"revived": 1}

    assert reconciler(service).run_once() == [], "a second pass finds nothing to do"
    assert sorted(queued_ids(queue)) == sorted(listed)


def failed_long_ago(job: Job, queue: Queue, seconds: float, revived: int) -> None:
    queue.connection.lrem(queue.key, 0, job.id)
    job.meta = {"revived": revived}
    job.ended_at = datetime.now(UTC) - timedelta(seconds=seconds)
    job.set_status(JobStatus.FAILED)
    job.save()
    FailedJobRegistry(queue=queue).add(job, ttl=3600)


def started_by(job: Job, queue: Queue, worker_name: str) -> None:
    queue.connection.lrem(queue.key, 0, job.id)
    job.worker_name = worker_name
    job.set_status(JobStatus.STARTED)
    job.save()
    queue.connection.zadd(StartedJobRegistry(queue=queue).key, {f"{job.id}:execution": time.time() + 120})


def scheduled_for_retry(job: Job, queue: Queue, in_seconds: float) -> None:
    queue.connection.lrem(queue.key, 0, job.id)
    job.set_status(JobStatus.SCHEDULED)
    job.save()
    ScheduledJobRegistry(queue=queue).schedule(job, datetime.now(UTC) + timedelta(seconds=in_seconds))


# ---------------------------------------------------------------- chains of bot turns


def test_one_job_plays_a_chain_of_bot_turns_and_enqueues_only_the_next(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, version = create(service, TWO_BOTS)
    appends: list[tuple[int, list[int]]] = []  # each append: its version, the versions its turns were decided at
    real_store = service.store_due_turns

    def counting_store(loaded: LoadedGame, batch: Sequence[DueTurn]) -> None:
        appends.append((loaded.version, [due.before.version for due in batch]))
        real_store(loaded, batch)

    monkeypatch.setattr(service, "store_due_turns", counting_store)
    assert play_bot_turns(service, game_id, version, max_turns=5) == "played"
    after = service.repository.load(game_id)
    decided_at = [at for _, batch in appends for at in batch]
    assert len(decided_at) == 5, "five bot turns in one job"
    assert decided_at[0] == version and decided_at == sorted(set(decided_at)), "each decided on the one before"
    assert all(at == batch[0] for at, batch in appends), "each append at the version its first turn was decided on"
    assert after.bot_to_act() is not None
    assert queued_ids(queue) == [bot_job_id(game_id, version), bot_job_id(game_id, after.version)]
    assert waiting(queue_client) == {game_id: after.version}

    assert play_bot_turns(service, game_id, version) == "stale", "a second run of the same job plays nothing"
    assert service.repository.load(game_id).version == after.version


class SteppedClock:
    """time.monotonic for the due-turn loop: each reading `step` seconds after the one before."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1000.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


def stored_batches(service: GameService, monkeypatch: pytest.MonkeyPatch, clock_step: float) -> list[int]:
    """Run the loop on a clock that moves `clock_step` a reading; the number of turns in each append."""
    monkeypatch.setattr("service.play.game_service.time", SteppedClock(clock_step))
    sizes: list[int] = []
    real_store = service.store_due_turns

    def counting_store(loaded: LoadedGame, batch: Sequence[DueTurn]) -> None:
        sizes.append(len(batch))
        real_store(loaded, batch)

    monkeypatch.setattr(service, "store_due_turns", counting_store)
    return sizes


@pytest.mark.parametrize(
    ("clock_step", "max_turns", "sizes"),
    [(0.0, 5, [5]), (0.0, 2 * DUE_BATCH_TURNS + 8, [DUE_BATCH_TURNS, DUE_BATCH_TURNS, 8]), (1.0, 3, [1, 1, 1])],
    ids=["quick-turns-together", "at-most-a-batch", "slow-turns-alone"],
)
def test_a_chains_quick_turns_are_stored_together_and_a_slow_one_at_once(
    service: GameService, monkeypatch: pytest.MonkeyPatch, clock_step: float, max_turns: int, sizes: list[int]
) -> None:
    """A batch holds the turns decided within DUE_BATCH_SECONDS of its first decision's start, at most
    DUE_BATCH_TURNS: a run of quick bots costs one append, an expert's move is stored when it is made."""
    seats = [{"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]
    created = service.create_game("golf", seats, {"rounds": 9}, seed="batches")  # longer than the turns played
    game_id, version = created["id"], created["version"]
    stored = stored_batches(service, monkeypatch, clock_step)
    chain = BotChain(service.think_ms_max, max_turns, max_seconds=10**9, due_at=None)
    assert service.play_due_turns(game_id, version, chain) == "played"
    assert stored == sizes
    records = service.store.read(game_id)
    moves = [r for r in records[version:] if isinstance(r["actor"], int)]
    assert len(moves) == max_turns and [r["seq"] for r in records] == list(range(1, len(records) + 1))
    check_chain(records, records[0]["prev_hash"])


def test_the_design_doc_gives_the_batch_bounds() -> None:
    text = " ".join((Path(__file__).parents[2] / "docs" / "design.md").read_text(encoding="utf-8").split())
    assert f"within {DUE_BATCH_SECONDS * 1000:.0f} ms of each other (at most {DUE_BATCH_TURNS})" in text


def test_a_chain_stops_at_a_persons_turn(service: GameService, queue: Queue) -> None:
    game_id, version = create(service, HUMAN_AND_BOT)
    assert play_bot_turns(service, game_id, version) == "played"
    loaded = service.repository.load(game_id)
    assert loaded.version == version + 1 and loaded.snap.to_act() == (0,)
    assert queued_ids(queue) == [bot_job_id(game_id, version)], "nothing new enqueued while a person is due"


def test_a_chain_stops_at_its_time_bound_after_one_turn(service: GameService, queue: Queue) -> None:
    game_id, version = create(service, TWO_BOTS)
    assert play_bot_turns(service, game_id, version, max_seconds=0) == "played"
    now = service.repository.load(game_id).version
    assert now == version + 1
    assert queued_ids(queue) == [bot_job_id(game_id, version), bot_job_id(game_id, now)]


def test_chained_and_unchained_bots_play_the_same_game(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("service.play.game_service.secrets.token_urlsafe", lambda size: "same-game-id")
    monkeypatch.setattr(
        "service.play.game_service.new_nonce", lambda: "0" * 64
    )  # the bots' streams are keyed by the secrets
    records = []
    for chain in (1, 50):
        one = make_service(fakeredis.FakeServer())
        game_id, _ = create(one, TWO_BOTS + [{"kind": "bot", "level": "greedy"}], seed="same")
        outcomes = drain(one, Queue(BOT_QUEUE, connection=dispatcher_of(one).connection), max_turns=chain)
        assert set(outcomes) == {"played"}
        assert one.repository.load(game_id).snap.finished
        events = one.store.read(game_id)
        check_chain(events, events[0]["prev_hash"])
        records.append(([(e["type"], e["actor"], e["data"]) for e in events], len(outcomes)))
    (unchained, jobs_unchained), (chained, jobs_chained) = records
    assert chained == unchained
    assert jobs_chained * 5 < jobs_unchained, (jobs_chained, jobs_unchained)


# ---------------------------------------------------------------- a job plays the turns its chain made due


WORKER = "worker-a"


def made_due(service: GameService, count: int, lane: str = BOT_QUEUE) -> list[QueuedTurn]:
    """`count` new games of two bots, created as a chain's end would start them: their turns as the job, on
    `lane`, noted and claimed them."""
    with dispatcher_of(service).follow_ups.noting(lane, WORKER) as noted:
        for n in range(count):
            create(service, TWO_BOTS, seed=f"made-due-{n}")
    return noted


def claimed_job(queue_client: fakeredis.FakeRedis, turn: QueuedTurn) -> Job:
    return Job.fetch(bot_job_id(turn.game_id, turn.version), connection=queue_client, serializer=JSONSerializer)


def test_the_turns_a_chain_makes_due_on_its_own_queue_are_claimed_not_queued(
    service: GameService, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    turns = made_due(service, 2)
    assert [turn.queue for turn in turns] == [BOT_QUEUE] * 2
    assert queued_ids(queue) == [], "no worker is asked for them"
    for turn in turns:
        job = claimed_job(queue_client, turn)
        assert job.get_status() == JobStatus.STARTED and job.worker_name == WORKER
        assert job.args == [turn.game_id, turn.version] and job.origin == BOT_QUEUE
        assert 0 < queue_client.ttl(job.key) <= BOT_JOB_TIMEOUT
    assert set(waiting(queue_client)) == {turn.game_id for turn in turns}, "the waiting index holds them"


def test_a_job_plays_the_turns_it_claimed(
    service: GameService, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    turns = made_due(service, 2)
    games = [turn.game_id for turn in turns]
    played = play_made_due(service, dispatcher_of(service), turns, time.monotonic() + 60)
    assert played == 2 and turns == []
    assert all(service.repository.load(game_id).snap.finished for game_id in games)
    assert queued_ids(queue) == [] and waiting(queue_client) == {}, "no job left for another worker, none waiting"


def test_only_this_threads_turns_due_now_on_its_lane_are_claimed(
    service: GameService, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    """A turn put on RQ's schedule (a bot that waits for a person's call), a turn of another queue (an expert's),
    and a turn that another thread of the process asks for meanwhile (the reconciler's pass starting a match's
    game) are queued as ever; so is a turn whose job exists already."""
    dispatcher = dispatcher_of(service)
    dispatcher.schedule("queued-before", 3)
    with dispatcher.follow_ups.noting(BOT_QUEUE, WORKER) as noted:
        dispatcher.schedule("waits-for-a-call", 7, delay_seconds=3)
        dispatcher.schedule("an-expert", 2, queue=EXPERT_QUEUE)
        other = threading.Thread(target=dispatcher.schedule, args=("another-thread", 4))
        other.start()
        other.join()
        dispatcher.schedule("queued-before", 3)
        dispatcher.schedule("due-now", 5)
    assert [(turn.game_id, turn.version) for turn in noted] == [("due-now", 5)]
    dispatcher.schedule("after-the-block", 6)
    assert len(noted) == 1
    assert queued_ids(queue) == [
        bot_job_id(*game) for game in (("queued-before", 3), ("another-thread", 4), ("after-the-block", 6))
    ]
    assert queued_ids(Queue(EXPERT_QUEUE, connection=queue_client)) == [bot_job_id("an-expert", 2)]


def test_the_claimed_turns_left_once_the_jobs_time_is_spent_are_queued(
    service: GameService, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    turns = made_due(service, 2)
    ids = [bot_job_id(turn.game_id, turn.version) for turn in turns]
    assert play_made_due(service, dispatcher_of(service), turns, time.monotonic() - 0.001) == 0
    assert queued_ids(queue) == ids, "for any worker"
    assert [claimed_job(queue_client, turn).get_status() for turn in turns] == [JobStatus.QUEUED] * 2


def test_a_claimed_turn_is_in_hand_while_its_worker_lives_and_enqueued_again_when_it_dies(
    service: GameService, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    (turn,) = made_due(service, 1)
    queue_client.set(f"{ALIVE_PREFIX}{WORKER}", 1)
    assert queued_ids(queue) == []
    assert reconciler(service).run_once() == [], "in the hands of a live worker"
    queue_client.delete(f"{ALIVE_PREFIX}{WORKER}")  # the worker died before it played the turn
    assert reconciler(service).run_once() == [(turn.game_id, turn.version)]
    assert queued_ids(queue) == [bot_job_id(turn.game_id, turn.version)]


def test_a_claimed_turn_that_fails_ends_the_run_and_it_and_the_rest_are_queued(
    service: GameService, queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = made_due(service, 2)

    def failing_load(game_id: str) -> LoadedGame:
        raise StoreUnavailable("Redis went away for a moment")

    monkeypatch.setattr(service.repository, "load", failing_load)
    turns = [first, second]
    assert play_made_due(service, dispatcher_of(service), turns, time.monotonic() + 60) == 0
    assert queued_ids(queue) == [bot_job_id(first.game_id, first.version), bot_job_id(second.game_id, second.version)]


@pytest.mark.parametrize("behind", [False, True], ids=["notes-at-once", "notes-written-behind"])
def test_one_worker_plays_a_match_in_one_job_a_deal(
    server: fakeredis.FakeServer,
    queue: Queue,
    queue_client: fakeredis.FakeRedis,
    monkeypatch: pytest.MonkeyPatch,
    behind: bool,
) -> None:
    """As the workers play it (their best-effort notes written behind the jobs) or with every note written at once:
    the same games, indexes, counts and waiting index in the end. A match's quick bots play on the matches' own
    queue (`bots-match`), none of them on the people's (`bots`)."""
    store_client = fakeredis.FakeRedis(server=server, decode_responses=True)
    services = build_services(
        {}, redis_client=store_client, dispatcher=RQDispatcher(queue_client), writes_behind=behind
    )
    match = services.matches.create("golf", [{"level": "greedy"}, {"level": "random"}], 3, {"rounds": 1})
    people = queue
    queue = Queue(MATCH_QUEUE, connection=queue_client, serializer=JSONSerializer)
    assert len(queued_ids(queue)) == 3, "each deal's first game queued on the matches' queue"
    assert queued_ids(people) == []
    monkeypatch.setattr("workers.bot_turns.game_service", lambda: services.games)
    monkeypatch.setattr("workers.bot_turns.dispatcher", lambda: services.dispatcher)
    monkeypatch.setattr("workers.bot_turns.CHAIN_SECONDS", 60.0)  # time enough for a deal whatever the machine
    SimpleWorker([queue], connection=queue_client, serializer=JSONSerializer).work(burst=True)
    view = services.matches.view(match["id"])
    assert view["status"] == "finished" and view["progress"]["games_finished"] == 6
    assert FinishedJobRegistry(queue=queue).count == 3, "each deal's second game played by its first game's job"
    assert services.games.best_effort.flush()
    assert queued_ids(queue) == [] and waiting(queue_client) == {}
    assert queued_ids(people) == [] and FinishedJobRegistry(queue=people).count == 0
    games = {game["game_id"] for game in view["games"]}
    assert set(store_client.zrange(FINISHED_KEY, 0, -1)) == games and store_client.zcard(ACTIVE_KEY) == 0
    assert store_client.hgetall(GAME_COUNTS_KEY) == {"started:golf": "6", "finished:golf": "6"}


# ---------------------------------------------------------------- retries with backoff


def test_a_job_that_meets_a_store_error_is_retried_with_backoff(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, version = create(service, TWO_BOTS)
    job_id = bot_job_id(game_id, version)
    job = Job.fetch(job_id, connection=queue_client, serializer=JSONSerializer)
    assert job.retries_left == len(BOT_RETRY_INTERVALS) and job.retry_intervals == list(BOT_RETRY_INTERVALS)
    assert list(BOT_RETRY_INTERVALS) == sorted(BOT_RETRY_INTERVALS) and BOT_RETRY_INTERVALS[0] >= 1

    real_append = service.store.append
    failures = []

    def flaky_append(*args: Any, **kwargs: Any) -> Any:
        if not failures:
            failures.append(args)
            raise StoreUnavailable("Redis went away for a moment")
        return real_append(*args, **kwargs)

    monkeypatch.setattr(service.store, "append", flaky_append)
    monkeypatch.setattr("workers.bot_turns.game_service", lambda: service)
    worker = SimpleWorker([queue], connection=queue_client, serializer=JSONSerializer)

    started = time.time()
    worker.work(burst=True)
    job = Job.fetch(job_id, connection=queue_client, serializer=JSONSerializer)
    assert failures and job.get_status() == JobStatus.SCHEDULED
    assert job.retries_left == len(BOT_RETRY_INTERVALS) - 1
    due = ScheduledJobRegistry(queue=queue).get_scheduled_time(job)
    assert BOT_RETRY_INTERVALS[0] - 1 <= (due.timestamp() - started) <= BOT_RETRY_INTERVALS[0] + 2
    assert service.repository.load(game_id).version == version, "nothing was stored by the failed attempt"

    scheduler = RQScheduler([queue], connection=queue_client, serializer=JSONSerializer)
    scheduler.acquire_locks()
    deadline = time.monotonic() + 15
    while job.get_status(refresh=True) != JobStatus.QUEUED:
        assert time.monotonic() < deadline, "the scheduler never moved the retry back to the queue"
        scheduler.enqueue_scheduled_jobs()
        time.sleep(0.1)
    worker.work(burst=True)
    assert job.get_status(refresh=True) == JobStatus.FINISHED
    assert job.return_value() == "played"
    assert service.repository.load(game_id).snap.finished


# ---------------------------------------------------------------- a moment for a person's Go5 call


def test_a_bot_gives_a_person_who_may_call_go5_a_moment_first(fake_redis: fakeredis.FakeRedis) -> None:
    """V-13: a person may call Go5 from a discard until the next draw. A bot due then (to draw, or to
    call itself) waits CALL_GRACE_SECONDS; a chain of bot turns stops there; every other bot turn is
    asked for at once."""
    dispatcher = RecordingDispatcher()
    service = game_service(RedisStore.connect(fake_redis), dispatcher)
    dispatcher.service = service
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot"}, {"kind": "bot"}]
    game_id = service.create_game("go5", seats, {}, seed=GO5_CALL_SEED)["id"]
    for step in range(5000):
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        if loaded.snap.finished:
            break
        view = engine.view(loaded.snap, 0)
        action = choose_action("go5", "greedy", view, view["you"]["legal"], SeededStream("ana", str(step)))
        service.submit(game_id, 0, action, expected_version=loaded.version)
    final = service.repository.load(game_id)
    assert final.snap.finished
    waits = []
    for version in range(1, final.version + 1):
        at = dataclasses.replace(final, snap=service.repository.state_at(final, version))
        if at.bot_to_act() is None:
            continue
        person_may_call = 0 in at.snap.out_of_turn()
        assert dispatcher.delays.get((game_id, version), 0) == (CALL_GRACE_SECONDS if person_may_call else 0)
        if person_may_call:
            waits.append(version)
            assert (game_id, version) in dispatcher.delays, "a chain stops where a person may call"
    assert waits, "the game gave the person no chance to call Go5; pick another seed"


def test_a_lost_bot_turn_that_waits_for_a_call_is_put_back_on_the_schedule(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue
) -> None:
    """V-13: the reconciler gives a bot job lost while a person may call Go5 the same moment again:
    back on RQ's schedule, CALL_GRACE_SECONDS from now, not in the queue to be played at once."""
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot"}, {"kind": "bot"}]
    game_id = service.create_game("go5", seats, {}, seed=GO5_CALL_SEED)["id"]
    registry = ScheduledJobRegistry(queue=queue)
    for step in range(5000):
        drain(service, queue)
        if registry.get_job_ids():
            break
        loaded = service.repository.load(game_id)
        assert not loaded.snap.finished, "the person never had a chance to call Go5; pick another seed"
        view = engine.view(loaded.snap, 0)
        action = choose_action("go5", "greedy", view, view["you"]["legal"], SeededStream("ana", str(step)))
        service.submit(game_id, 0, action, expected_version=loaded.version)
    loaded = service.repository.load(game_id)
    job_id = bot_job_id(game_id, loaded.version)
    assert loaded.person_may_call() and registry.get_job_ids() == [job_id]
    queue_client.zrem(registry.key, job_id)  # the scheduled job is lost
    Job.fetch(job_id, connection=queue_client, serializer=JSONSerializer).delete()

    before = datetime.now(UTC)
    assert reconciler(service).run_once() == [(game_id, loaded.version)]
    assert queued_ids(queue) == [] and registry.get_job_ids() == [job_id]
    due = registry.get_scheduled_time(job_id)
    assert before + timedelta(seconds=CALL_GRACE_SECONDS) <= due <= before + timedelta(seconds=CALL_GRACE_SECONDS + 1)


def test_a_bot_turn_that_waits_is_on_rqs_schedule_and_in_hand(
    service: GameService, queue_client: fakeredis.FakeRedis, queue: Queue
) -> None:
    """The waiting job is the (game, version) job, on RQ's schedule for CALL_GRACE_SECONDS from now, and
    the reconciler counts it as in hand."""
    game_id, version = create(service, TWO_BOTS)
    Job.fetch(bot_job_id(game_id, version), connection=queue_client, serializer=JSONSerializer).delete()
    queue_client.delete(queue.key)
    before = datetime.now(UTC)
    dispatcher_of(service).schedule(game_id, version, CALL_GRACE_SECONDS)
    registry = ScheduledJobRegistry(queue=queue)
    assert registry.get_job_ids() == [bot_job_id(game_id, version)] and queued_ids(queue) == []
    due = registry.get_scheduled_time(bot_job_id(game_id, version))
    assert before + timedelta(seconds=CALL_GRACE_SECONDS) <= due <= before + timedelta(seconds=CALL_GRACE_SECONDS + 1)
    assert waiting(queue_client) == {game_id: version}
    assert reconciler(service).run_once() == [] and queued_ids(queue) == []


# ---------------------------------------------------------------- the waiting index cannot be written


class IndexDown(fakeredis.FakeRedis):
    """The store's client, whose commands on `bots:waiting` fail while `down` (the key's cluster master is down)."""

    down = True

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.down and WAITING_KEY in args:
            raise redis.ConnectionError("the master of bots:waiting is down")
        return super().execute_command(*args, **options)


def service_with_index_down(server: fakeredis.FakeServer) -> tuple[GameService, IndexDown]:
    index = IndexDown(server=server, decode_responses=True)
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))
    dispatcher = RQDispatcher(fakeredis.FakeRedis(server=server), index)
    return game_service(store, dispatcher, clock=lambda: FIXED_CLOCK), index


def test_a_bot_made_due_while_the_waiting_index_is_down_still_gets_its_job(
    server: fakeredis.FakeServer, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    """Issue 35, item 1: the index write failed before the enqueue and nothing was queued, though the create
    (or a person's move) that made the bot due was answered; the game waited for a month. The job is queued
    whatever became of the index write, and the bots play the game to its end."""
    service, index = service_with_index_down(server)
    game_id, version = create(service, TWO_BOTS)
    assert queued_ids(queue) == [bot_job_id(game_id, version)]
    drain(service, queue)
    assert service.repository.load(game_id).snap.finished
    index.down = False
    assert waiting(queue_client) == {}


def test_a_persons_move_while_the_waiting_index_is_down_still_queues_the_bot(
    server: fakeredis.FakeServer, queue: Queue
) -> None:
    service, index = service_with_index_down(server)
    index.down = False
    game_id, _ = create(service, HUMAN_AND_BOT)
    drain(service, queue)
    index.down = True
    human_move(service, game_id)  # both seats reveal first; the person's reveal leaves the bot to play
    loaded = service.repository.load(game_id)
    assert loaded.bot_to_act() is not None
    assert queued_ids(queue) == [bot_job_id(game_id, loaded.version)]


def test_the_index_walk_puts_back_a_game_whose_bot_is_due_and_that_no_index_holds(
    server: fakeredis.FakeServer, queue: Queue, queue_client: fakeredis.FakeRedis
) -> None:
    """When the job is lost as well (both writes failed, or its worker died with the index down), the
    lifecycle's walk through the stored games finds the due bot and notes it; the reconciler queues it."""
    service, index = service_with_index_down(server)
    game_id, version = create(service, TWO_BOTS)
    queue_client.delete(queue.key)  # the job is gone too
    index.down = False
    assert waiting(queue_client) == {} and queued_ids(queue) == []

    Lifecycle(service, RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True))).reindex(100)

    assert waiting(queue_client) == {game_id: version}
    assert reconciler(service).run_once() == [(game_id, version)]
    assert queued_ids(queue) == [bot_job_id(game_id, version)]
