"""Figure: an all-greedy game's turn latency while 8 expert games think, against the same with none.

The workers are those of `make run` with WORKERS=1 (scripts/supervisord.conf): one worker on both bot
queues (the quick bots first) and one more on the random and greedy bots' queue only. The same
all-greedy Golf games (same seeds, so the same turns) are played twice: alone, then while 8 Golf
games of 4 expert seats asking for `think_ms=10000` (capped by the server at EXPERT_THINK_MS_MAX)
keep the expert queue busy; one greedy game first warms the workers up. A game's turn latency is its
time from creation to its last bot turn, divided by its bot turns (the events' own timestamps); the
figure is the mean over the games.
"""

from __future__ import annotations

import time

import redis
from rq import Queue
from rq.serializers import JSONSerializer

from bench.procs import Processes, wait_until
from bench.records import record_time
from bench.report import Figure, Target
from domain.chain import record_actor
from service.play.game_service import GameService
from service.storage.event_store import EventStore
from service.storage.turn_queue import BOT_QUEUE, BOT_QUEUES, EXPERT_QUEUE

EXPERT_GAMES = 8
GREEDY_GAMES = 2
GREEDY_OPTIONS = {"rounds": 9}
EXPERT_SEATS = [{"kind": "bot", "level": "expert", "think_ms": 10_000}] * 4
GREEDY_SEATS = [{"kind": "bot", "level": "greedy"}] * 4


def greedy_latency(service: GameService, store: EventStore, round_name: str, games: int = GREEDY_GAMES) -> float:
    """Seconds a bot turn of the all-greedy games, from each game's creation to its end."""
    ids = [
        service.create_game("golf", GREEDY_SEATS, GREEDY_OPTIONS, seed=f"bench-greedy-{number}")["id"]
        for number in range(games)
    ]
    done = lambda: all(service.repository.load(game_id).snap.finished for game_id in ids)  # noqa: E731
    wait_until(done, 300, f"the greedy games ({round_name})")
    latencies = []
    for game_id in ids:
        records = store.read(game_id, after=0)
        turns = [record_time(record) for record in records if isinstance(record_actor(record), int)]
        latencies.append((turns[-1] - record_time(records[0])) / len(turns))
    return sum(latencies) / len(latencies)


def end_games(service: GameService, game_ids: list[str]) -> None:
    """Abandon those of the games still running: nothing of theirs is left due, for the workers of the bench's
    later parts to play (their reconciler would find an expert due and think for it beside those parts)."""
    for game_id in game_ids:
        if not service.repository.load(game_id).snap.finished:
            service.abandon(game_id, "the bench's part is over")


def figure(procs: Processes, client: redis.Redis, service: GameService, store: EventStore) -> Figure:
    """The greedy games' turn latency with 8 expert games running, against the same with none."""
    started = time.perf_counter()
    workers = procs.start_workers(1, "both-queues", BOT_QUEUES=",".join(BOT_QUEUES))
    workers += procs.start_workers(1, "quick-bots", BOT_QUEUES=BOT_QUEUE, WORKER_SCHEDULER="off")
    expert_queue = Queue(EXPERT_QUEUE, connection=client, serializer=JSONSerializer)
    expert_games: list[str] = []
    try:
        greedy_latency(service, store, "to warm the workers up", 1)  # started, imported, caches filled
        alone = greedy_latency(service, store, "alone")
        for number in range(EXPERT_GAMES):
            created = service.create_game("golf", EXPERT_SEATS, {"rounds": 9}, seed=f"bench-expert-{number}")
            expert_games.append(created["id"])
        wait_until(lambda: expert_queue.started_job_registry.count > 0, 60, "an expert to think")
        beside = greedy_latency(service, store, "beside experts")
        busy = expert_queue.count + expert_queue.started_job_registry.count
    finally:
        for worker in workers:
            procs.end(worker)
        expert_queue.empty()  # type: ignore[no-untyped-call]
        end_games(service, expert_games)
    note = (
        f"{GREEDY_GAMES} greedy Golf games, {EXPERT_GAMES} expert games ({busy} expert jobs still due at the end), "
        f"{alone * 1000:.1f} ms a turn alone, {time.perf_counter() - started:.0f} s"
    )
    return Figure("greedy_turn_latency_ratio_with_experts", beside, "s/turn", alone, Target("<=", 2.0), note)
