"""Matches (issue 38): a match's turns through the service against `simulate --duplicate` on as many deals, and
the open loop's actions while a long match runs.

`match_turns_per_s`: a Golf match (one round) of the entrants `greedy` and `random` (LEVELS), played by the RQ
workers as `make run` starts them for matches (MATCH_WORKERS of them, on the matches' queue, at MATCH_PRIORITY), its
games' moves (records with a seat as actor) over the span from its first move to its last: the match's own pacing (a
deal's games one after another, MATCH_DEALS_AT_ONCE deals at once) is part of it. Floor: `python -m workers.simulate
--duplicate --jobs J` (J = MATCH_WORKERS) on the same number of deals, in the same run. `simulate` cannot take the
match's deal seeds (C-8: HMAC of the match seed; it seeds deal d with `<prefix>-<d>`), so the two play as many deals
of the same game, not the same deals: turns a second do not hang on which cards are dealt beyond the games' lengths,
which the note gives for both. DEALS is large enough that both rates are a steady pace: at 40 deals `simulate` spent
about half its time starting its process pool, which halved the floor (the match's clock starts at its first move,
after its workers are up). Both are run RUNS times, in turns (a match, then simulate), and each side's median is the
figure: on a shared host of two cores one run of either came out a third below the next.

`actions_p99_ms_open50_match`: the open loop (bench/openloop.py) in windows while a 200-deal match keeps the
workers busy, taken in turns with windows with its workers stopped (LoadWorkers), one house worker running
throughout as `make run`'s does.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis
from rq import Queue, Worker

from bench import openloop
from bench.openloop import Connections
from bench.procs import MATCH_PRIORITY, Processes, Server, match_workers_default, wait_until
from bench.records import is_seat, record_time
from bench.report import Figure, Target
from service.storage.event_store import EventStore
from service.storage.keys import BOT_QUEUE, MATCH_QUEUE
from workers.simulate import simulate

GAME = "golf"
OPTIONS: dict[str, Any] = {"rounds": 1}
# Four greedy entrants are refused (each entrant at most once, and Golf has three house levels), so the match is
# two house levels on two-seat Golf, the cheap ones: what it measures is the service's share of a turn.
LEVELS = ("greedy", "random")
DEALS = 200  # match_turns_per_s: 400 games, about 7,500 moves
LOAD_DEALS = 200  # the match beside the open loop: longer than the loop runs
TURNS_TARGET = Target(">=", 0.5)
MATCH_WORKERS = match_workers_default()  # as `make run` starts them on this machine: J
RUNS = 5  # matches and simulate runs, taken in turns: on a shared host one run of either can be a third off
TIMEOUT = 600.0
WORKERS_UP_SECONDS = 60.0  # for the matches' workers to start taking jobs


def match_body(deals: int) -> dict[str, Any]:
    """POST /v1/matches: the bench's Golf match of the LEVELS on `deals` deals."""
    return {"game": GAME, "options": OPTIONS, "entrants": [{"level": level} for level in LEVELS], "deals": deals}


def moves_per_second(games: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[int, float]:
    """The moves in the games' records (a seat as actor: not a deal, nor a move the service played for a seat at
    its deadline) and how many a second from the first to the last (their `at`); nan for fewer than two
    moments."""
    moments = [record_time(record) for records in games for record in records if is_seat(record.get("actor"))]
    if len(moments) < 2 or max(moments) == min(moments):
        return len(moments), float("nan")
    return len(moments), len(moments) / (max(moments) - min(moments))


async def start_match(port: int, deals: int) -> str:
    """Start the bench's match; its id."""
    conns = Connections(port)
    try:
        return str((await conns.json("POST", "/v1/matches", match_body(deals)))["id"])
    finally:
        await conns.close()


async def match_view(port: int, match_id: str) -> dict[str, Any]:
    """GET /v1/matches/{id}."""
    conns = Connections(port)
    try:
        view: dict[str, Any] = await conns.json("GET", f"/v1/matches/{match_id}")
        return view
    finally:
        await conns.close()


def wait_finished(port: int, match_id: str, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The match's view once it has finished; RuntimeError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = asyncio.run(match_view(port, match_id))
        if view["status"] == "finished":
            return view
        time.sleep(0.5)
    raise RuntimeError(f"match {match_id} did not finish within {timeout:.0f} s")


def simulated_rate(deals: int, jobs: int) -> tuple[float, float]:
    """`simulate --duplicate --jobs J` on `deals` deals of the bench's match: turns a second (its own clock,
    from before its pool starts to the last game) and turns a game."""
    summary = simulate(GAME, LEVELS, deals, OPTIONS, "bench-match", progress=False, jobs=jobs, duplicate=True)
    return summary["games_per_second"] * summary["turns_per_game"], summary["turns_per_game"]


def turns_figure(procs: Processes, api: Server, store: EventStore) -> Figure:
    """match_turns_per_s against simulate's rate on as many deals, in-process on as many processes: RUNS of each,
    taken in turns (a match, then simulate), each side's median."""
    served: list[float] = []
    simulated: list[float] = []
    for _ in range(RUNS):
        moves, rate, games = match_rate(procs, api, store)
        served.append(rate)
        floor, floor_turns = simulated_rate(DEALS, MATCH_WORKERS)
        simulated.append(floor)
    note = (
        f"{DEALS} deals x {len(LEVELS)} entrants ({', '.join(LEVELS)}) = {games} Golf games of one round, "
        f"{moves} moves ({moves / games:.1f} a game), {MATCH_WORKERS} RQ workers; floor: simulate --duplicate --jobs "
        f"{MATCH_WORKERS} on {DEALS} deals of its own seeds ({floor_turns:.1f} turns a game); median of {RUNS} runs "
        f"each, taken in turns: served {_rates(served)}, simulated {_rates(simulated)}"
    )
    return Figure(
        "match_turns_per_s", statistics.median(served), "turns/s", statistics.median(simulated), TURNS_TARGET, note
    )


def match_rate(procs: Processes, api: Server, store: EventStore) -> tuple[int, float, int]:
    """One match of DEALS deals played by MATCH_WORKERS workers started for it: its moves, their rate, its games."""
    match_id = asyncio.run(start_match(api.port, DEALS))  # its first games queue their turns before any worker
    workers = start_match_workers(procs, "match-worker")
    try:
        view = wait_finished(api.port, match_id)
    finally:
        for worker in workers:
            procs.end(worker)
    records = [store.read(game["game_id"]) for game in view["games"]]
    moves, rate = moves_per_second(records)
    return moves, rate, len(records)


def start_match_workers(procs: Processes, name: str) -> list[subprocess.Popen[bytes]]:
    """MATCH_WORKERS workers for matches' games, as `make run` starts its match workers."""
    return procs.start_workers(MATCH_WORKERS, name, MATCH_PRIORITY, BOT_QUEUES=MATCH_QUEUE)


def _rates(rates: Sequence[float]) -> str:
    return "/".join(f"{rate:,.0f}" for rate in rates)


def start_house_worker(procs: Processes) -> subprocess.Popen[bytes]:
    """One worker as `make run`'s `bot-worker` (the random and greedy bots' queue, at WORKER_PRIORITY), which
    `make run` keeps running whether a match runs or not: its keeper's passes (the reconciler's every 2 s, the
    lifecycle sweep's every 30 s) then fall into the windows without the match as into those beside it, where
    with the match's workers alone they ran only beside it. Returned once RQ lists it: its start-up is not
    measured."""
    worker = procs.start_workers(1, "house-worker", BOT_QUEUES=BOT_QUEUE, WORKER_SCHEDULER="off")[0]
    wait_listed(procs, BOT_QUEUE, 1, "the house worker")
    return worker


def wait_listed(procs: Processes, queue: str, count: int, what: str) -> None:
    """Wait until RQ lists `count` workers on `queue` (they take jobs), at most WORKERS_UP_SECONDS."""
    listed = Queue(queue, connection=redis.Redis.from_url(procs.redis_url))
    wait_until(lambda: Worker.count(queue=listed) >= count, WORKERS_UP_SECONDS, what)


class LoadWorkers:
    """The matches' workers beside the open loop (openloop.MatchPlayers): MATCH_WORKERS started for each window
    with the match, stopped for each without it as `make run` stops a worker (SIGTERM: RQ's warm shutdown, its
    claimed turns queued again), so that no game waits for a dead worker's claim meanwhile."""

    def __init__(self, procs: Processes) -> None:
        self.procs = procs
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self) -> dict[str, int]:
        """Start the workers and wait until RQ lists each on the matches' queue; their pids by name."""
        self.running = start_match_workers(self.procs, "load-worker")
        wait_listed(self.procs, MATCH_QUEUE, len(self.running), "match workers")
        return {f"worker {n}": worker.pid for n, worker in enumerate(self.running)}

    def stop(self) -> None:
        """Stop the workers started last, if any run."""
        for worker in self.running:
            self.procs.end(worker)
        self.running = []


def figures(procs: Processes, api: Server, stream: Server, store: EventStore, rps_c16: float) -> list[Figure]:
    """match_turns_per_s, then the open loop at openloop.SHARE of `rps_c16` alone and in windows beside a
    LOAD_DEALS match taken in turns with windows without it (the workers are stopped at the end, leaving the
    match unfinished); the first open loop alone as actions_p99_ms_open50, as openloop.figures gives it."""
    found = [turns_figure(procs, api, store)]
    house = start_house_worker(procs)
    workers = LoadWorkers(procs)
    try:
        open_figures = openloop.figures(
            api, rps_c16, stream, procs.redis_pid, crowds=("match",), match=match_body(LOAD_DEALS), players=workers
        )
    finally:
        workers.stop()
        procs.end(house)
    return [*found, *open_figures]
