"""Figure 4: bot turns per second through the real RQ workers; floor: the same workers' rate for no-op jobs.

Both runs queue their work while no worker runs, then start the same number of `python -m workers`
processes, so worker start-up is outside both. The floor is timed from the first job's start to the
last job's end (RQ's own timestamps). The bot turns are timed from the first bot event to the moment
fewer games than workers are left running (the events' own timestamps): up to then every worker has
a game to play, after it some would idle for want of work, which is no cost of a bot turn.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from bench.procs import Processes, wait_until
from bench.records import record_time
from bench.report import Figure, Target
from domain.chain import record_actor
from service.play.game_service import GameService
from service.storage.event_store import EventStore
from service.storage.turn_queue import BOT_QUEUE

WORKERS = 2
NOOP_JOBS = 600
BOT_LEVELS = ("greedy", "random", "greedy", "random")
# Two finished games of each type, of lengths close enough that the workers stay busy to near the end.
BOT_GAMES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("golf", {}),
    ("golf", {}),
    ("romme", {"target": 500}),
    ("romme", {"target": 500}),
    ("switch", {"target": 200}),
    ("switch", {"target": 200}),
    ("go5", {}),
    ("go5", {}),
)


@dataclasses.dataclass(frozen=True)
class BotGame:
    """A finished all-bot game of the run."""

    id: str
    game: str


def _queue(client: redis.Redis) -> Queue:
    return Queue(BOT_QUEUE, connection=client, serializer=JSONSerializer)


def noop_rate(procs: Processes, client: redis.Redis, jobs: int = NOOP_JOBS) -> float:
    """No-op jobs per second through `WORKERS` worker processes."""
    queue = _queue(client)
    datas = [Queue.prepare_data("bench.jobs.noop", result_ttl=600) for _ in range(jobs)]
    for start in range(0, jobs, 500):
        queue.enqueue_many(datas[start : start + 500])
    ids = queue.get_job_ids()
    workers = procs.start_workers(WORKERS)
    try:
        wait_until(lambda: queue.finished_job_registry.count >= jobs, 300, "the no-op jobs")
    finally:
        for worker in workers:
            procs.end(worker)
    done = [job for job in Job.fetch_many(ids, connection=client, serializer=JSONSerializer) if job is not None]
    first = min(_stamp(job.started_at) for job in done)
    last = max(_stamp(job.ended_at) for job in done)
    return len(done) / (last - first)


def _stamp(moment: datetime | None) -> float:
    if moment is None:
        raise RuntimeError("a job without its timestamps")
    return moment.timestamp()


def play_bot_games(procs: Processes, service: GameService, store: EventStore) -> tuple[float, list[BotGame]]:
    """Bot turns per second, and the finished games."""
    games = []
    for number, (game, options) in enumerate(BOT_GAMES):
        seats = [{"kind": "bot", "level": level} for level in BOT_LEVELS]
        created = service.create_game(game, seats, options, seed=f"bench-bots-{number}")
        games.append(BotGame(created["id"], game))
    records: dict[str, list[dict[str, Any]]] = {g.id: [] for g in games}
    workers = procs.start_workers(WORKERS)
    try:
        wait_until(lambda: _all_finished(store, records), 600, "the bot games")
    finally:
        for worker in workers:
            procs.end(worker)
    return turn_rate(list(records.values()), WORKERS), games


def _all_finished(store: EventStore, records: dict[str, list[dict[str, Any]]]) -> bool:
    """Read what each unfinished game appended since the last look; True once every game has ended."""
    for game_id, seen in records.items():
        if not seen or seen[-1]["type"] != "SeedRevealed":
            seen += store.read(game_id, after=len(seen))
    return all(seen and seen[-1]["type"] == "SeedRevealed" for seen in records.values())


def turn_rate(games: Sequence[Sequence[dict[str, Any]]], workers: int) -> float:
    """Bot turns per second while at least `workers` games were still being played.

    A turn is a record with a seat as actor (each action has exactly one); its time is its `at`.
    """
    turns = [[record_time(r) for r in records if isinstance(record_actor(r), int)] for records in games]
    ends = sorted(times[-1] for times in turns if times)
    start = min(times[0] for times in turns if times)
    end = ends[max(0, len(ends) - workers)]
    counted = sum(1 for times in turns for moment in times if moment <= end)
    return counted / (end - start) if end > start else float("nan")


def figure(
    procs: Processes, client: redis.Redis, service: GameService, store: EventStore
) -> tuple[Figure, list[BotGame]]:
    """The bot figure against its floor, and the games played."""
    floor = noop_rate(procs, client)
    started = time.perf_counter()
    rate, games = play_bot_games(procs, service, store)
    note = f"{WORKERS} workers, {len(games)} games, {time.perf_counter() - started:.0f} s"
    return Figure("bot_turns_per_s", rate, "turns/s", floor, Target(">=", 1.0), note), games
