"""Workers that lose nothing: real redis-server, real `python -m workers` processes.

Each test has a redis-server of its own: the queue, the waiting index and RQ's locks are global
keys, and one test kills workers (and their scheduler) with SIGKILL.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

import pytest
import redis
from rq import Queue, Worker
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

from service.bootstrap import game_service
from service.play.game_service import GameService
from service.storage.redis_clients import redis_clients
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import BOT_QUEUE, BOT_TURN_JOB, EXPERT_QUEUE, WAITING_KEY, RQDispatcher, bot_job_id
from tests.integration.conftest import ROOT, free_port, service_env, stop, wait_until
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain

pytestmark = pytest.mark.integration

FOUR_BOTS = [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}] * 2
OUTCOME = re.compile(r"bot turn (\S+)@(\d+): (\w+)")


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[str]:
    """A redis-server for this test alone, on a free port, with its files in a temporary folder."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required (make test installs it)"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    wait_until(client.ping, 10, "redis-server")
    yield f"redis://127.0.0.1:{port}/0"
    client.close()
    stop(process)


class Workers:
    """`python -m workers` processes, each in a process group of its own (with its RQ scheduler)."""

    def __init__(self, redis_url: str, folder: Path) -> None:
        self.redis_url = redis_url
        self.folder = folder
        self.running: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
        self.log_paths: list[Path] = []

    def start(self, **settings: str) -> subprocess.Popen[bytes]:
        """One more worker; `settings`: environment variables of its own (BOT_QUEUES=...)."""
        path = self.folder / f"worker-{len(self.log_paths)}.log"
        log = path.open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "workers"],
            cwd=ROOT,
            env={**service_env(self.redis_url), **settings},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.running.append((process, log))
        self.log_paths.append(path)
        return process

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL to the worker and its scheduler: the machine is gone, nothing is cleaned up."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for process, log in self.running:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            log.close()

    def outcomes(self) -> list[tuple[int, str, int, str]]:
        """(worker, game, version, outcome) of every bot job the workers logged."""
        found = []
        for number, path in enumerate(self.log_paths):
            for game_id, version, outcome in OUTCOME.findall(path.read_text(errors="replace")):
                found.append((number, game_id, int(version), outcome))
        return found

    def log_text(self) -> str:
        return "\n".join(path.read_text(errors="replace") for path in self.log_paths)


@pytest.fixture
def workers(own_redis: str, tmp_path: Path) -> Iterator[Workers]:
    group = Workers(own_redis, tmp_path)
    yield group
    group.stop_all()


class HeldDispatcher(RQDispatcher):
    """Keeps the waiting index like the real one (the turn scheduler writes it) but enqueues nothing: the test
    places the jobs."""

    def schedule(self, game_id: str, version: int, delay_seconds: int = 0, queue: str = BOT_QUEUE) -> None:
        return None


def make_service(redis_url: str, held: bool = False) -> GameService:
    store, blocking, queue_client = redis_clients(redis_url)
    dispatcher = HeldDispatcher(queue_client) if held else RQDispatcher(queue_client)
    return game_service(RedisStore.connect(store, blocking), dispatcher)


def bot_games(
    service: GameService, count: int, seats: list[dict[str, Any]] = FOUR_BOTS, rounds: int = 1
) -> dict[str, dict[str, Any]]:
    games = {}
    for number in range(count):
        created = service.create_game("golf", seats, {"rounds": rounds}, seed=f"workers-{number}")
        games[created["id"]] = created
    return games


def unfinished(service: GameService, games: dict[str, Any]) -> list[str]:
    return [game_id for game_id in games if not service.repository.load(game_id).snap.finished]


def check_all_played_once(redis_url: str, service: GameService, games: dict[str, dict[str, Any]]) -> None:
    for game_id, created in games.items():
        assert service.repository.load(game_id).snap.finished
        assert_stream_is_a_chain(redis_url, game_id, created["seed_commitment"])
    # the job that stored a game's last move settles the waiting index right after that append
    waiting = redis.Redis.from_url(redis_url)
    wait_until(lambda: waiting.zcard(WAITING_KEY) == 0, 10, "finished games to wait for no bot")


def started_jobs(queue: Queue) -> list[Job]:
    """The jobs RQ holds as started on `queue` (their worker may since have died)."""
    ids = StartedJobRegistry(queue=queue).get_job_ids(cleanup=False)
    return [Job.fetch(job_id, connection=queue.connection, serializer=JSONSerializer) for job_id in ids]


def test_a_worker_killed_in_the_middle_of_a_chain_loses_no_turn(own_redis: str, workers: Workers) -> None:
    service = make_service(own_redis)
    queue = Queue(BOT_QUEUE, connection=redis.Redis.from_url(own_redis), serializer=JSONSerializer)
    # a job stores a chain's quick turns 32 at a time, so a game of one round is over in two appends: games of
    # nine rounds (about 300 turns, several jobs each) are in the middle of a chain most of the time
    games = bot_games(service, 8, rounds=9)
    start_versions = {game_id: created["version"] for game_id, created in games.items()}

    def chain_under_way() -> bool:
        """A job has started, and its game has moved past its start and not finished: its worker is mid-chain
        (read from the started jobs, one look-up, so that the poll keeps up with chains played in batches)."""
        for job in started_jobs(queue):
            game_id = job.args[0]
            if game_id in games:
                loaded = service.repository.load(game_id)
                if start_versions[game_id] < loaded.version and not loaded.snap.finished:
                    return True
        return False

    killed_in_chain: list[str] = []
    for _attempt in range(5):
        worker = workers.start()
        wait_until(chain_under_way, 30, "a bot chain under way")
        workers.kill(worker)
        left = unfinished(service, games)
        killed_in_chain += [job.args[0] for job in started_jobs(queue) if job.args[0] in left and job.worker_name]
        if killed_in_chain:
            break
    assert killed_in_chain, "the worker was never killed in the middle of a job"
    killed_at = service.repository.load(killed_in_chain[0]).version
    assert unfinished(service, games), "games were left to play after the kill"

    started = time.monotonic()
    workers.start()
    wait_until(lambda: not unfinished(service, games), 30, "every game to finish after the restart")
    print(f"recovered {len(killed_in_chain)} killed chain(s) in {time.monotonic() - started:.1f} s")

    check_all_played_once(own_redis, service, games)
    assert service.repository.load(killed_in_chain[0]).version > killed_at
    assert f"enqueued the bot turn of {killed_in_chain[0]}" in workers.log_text(), "the reconciler revived it"


def test_two_workers_racing_on_the_same_jobs_play_each_turn_once(own_redis: str, workers: Workers) -> None:
    connection = redis.Redis.from_url(own_redis)
    queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)
    workers.start()
    workers.start()

    def both_idle() -> bool:
        states = [worker.get_state() for worker in Worker.all(queue=queue)]
        return states == ["idle", "idle"]

    wait_until(both_idle, 30, "two idle workers")
    service = make_service(own_redis, held=True)
    games = bot_games(service, 8)
    for game_id, created in games.items():
        job_id = bot_job_id(game_id, created["version"])
        with connection.pipeline() as pipe:  # MULTI: both idle workers wake up for the same job at once
            queue.enqueue(BOT_TURN_JOB, game_id, created["version"], job_id=job_id, pipeline=pipe)
            pipe.rpush(queue.key, job_id)
            pipe.execute()

    wait_until(lambda: not unfinished(service, games), 30, "every game to finish")
    check_all_played_once(own_redis, service, games)

    outcomes = workers.outcomes()
    played = Counter((game_id, version) for _, game_id, version, outcome in outcomes if outcome == "played")
    assert max(played.values()) == 1, "no job plays twice"
    for game_id, created in games.items():
        runs = [outcome for _, g, v, outcome in outcomes if (g, v) == (game_id, created["version"])]
        assert len(runs) >= 2 and runs.count("played") == 1, runs
        assert set(runs) <= {"played", "stale", "conflict"}, runs
    assert {number for number, *_ in outcomes} == {0, 1}, "both workers ran bot jobs"


def test_the_reconciler_enqueues_turns_whose_jobs_were_deleted(own_redis: str, workers: Workers) -> None:
    service = make_service(own_redis)
    connection = redis.Redis.from_url(own_redis)
    queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)
    games = bot_games(service, 3)
    human = service.create_game("golf", [{"kind": "human"}, {"kind": "bot"}], {"rounds": 1}, seed="human")
    assert len(queue.get_job_ids()) == 4

    connection.delete(queue.key)  # every job lost from the queue ...
    first = next(iter(games))
    Job.fetch(bot_job_id(first, games[first]["version"]), connection=connection, serializer=JSONSerializer).delete()
    connection.delete(f"rq:job:{bot_job_id(human['id'], human['version'])}")  # ... and two of them altogether

    workers.start()
    wait_until(lambda: not unfinished(service, games), 30, "every bot game to finish")
    check_all_played_once(own_redis, service, {**games})
    wait_until(
        lambda: service.repository.load(human["id"]).snap.to_act() == (0,), 10, "the bot's reveal in the human game"
    )
    assert service.repository.load(human["id"]).version == human["version"] + 1


def test_a_retry_waiting_in_the_schedule_is_run_by_the_workers_scheduler(own_redis: str, workers: Workers) -> None:
    service = make_service(own_redis, held=True)
    connection = redis.Redis.from_url(own_redis)
    queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)
    games = bot_games(service, 1)
    (game_id, created), *_ = games.items()
    job = queue.enqueue_in(
        timedelta(seconds=1), BOT_TURN_JOB, game_id, created["version"], job_id=bot_job_id(game_id, created["version"])
    )
    assert job.get_status() == "scheduled"

    workers.start()
    wait_until(lambda: not unfinished(service, games), 30, "the scheduled turn and the game")
    check_all_played_once(own_redis, service, games)
    assert "enqueued the bot turn" not in workers.log_text(), "the scheduler, not the reconciler, ran it"


def test_a_greedy_game_finishes_while_the_expert_queue_is_stopped(own_redis: str, workers: Workers) -> None:
    """The queues of expert bots and of the other bots are separate: with no worker on `bots-expert`
    (one worker, BOT_QUEUES=bots), all-greedy games play to their end while an expert's turn waits,
    untouched, on its own queue; a worker on the expert queue then plays it."""
    service = make_service(own_redis)
    expert = service.create_game("golf", [{"kind": "bot", "level": "expert"}] * 2, {"rounds": 1}, seed="experts")
    greedy = bot_games(service, 2, [{"kind": "bot", "level": "greedy"}] * 4)
    connection = redis.Redis.from_url(own_redis)
    expert_job = bot_job_id(expert["id"], expert["version"])

    workers.start(BOT_QUEUES=BOT_QUEUE)
    wait_until(lambda: not unfinished(service, greedy), 60, "the greedy games to finish")
    for game_id, created in greedy.items():
        assert_stream_is_a_chain(own_redis, game_id, created["seed_commitment"])
    assert service.repository.load(expert["id"]).version == expert["version"], "no worker plays an expert's turn"
    assert Queue(EXPERT_QUEUE, connection=connection, serializer=JSONSerializer).job_ids == [expert_job]
    assert Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer).count == 0

    workers.start(BOT_QUEUES=EXPERT_QUEUE)
    wait_until(lambda: service.repository.load(expert["id"]).version > expert["version"], 60, "the expert's turn")
