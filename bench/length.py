"""Figure 3: the cost of one action at game length 10, 1,000 and 5,000 events; and of a replay step.

Each game is created through the service, then made long by playing `moves.stall` through the
domain and appending the chained records in batches (the same records an API would append), so
that no API process has it cached. Then actions go to the games over HTTP, each on a new
connection, so that both gunicorn processes serve every game and each catches up on the other's
appends; the first `WARMUP` actions of each game (the cold loads among them) are not counted. The
cost is the CPU time that gunicorn and Redis spend on an action (their threads' schedstat), which
the machine's other load disturbs far less than latency; the median latency is in the note. The
games are played in rounds of `BATCH` actions, in turn, so that each length sees the same machine.

The replay figure asks a new game of 5,000 events and a new one of 10, built the same way, for
`GET /replay?at=N` at steps N drawn uniformly from each game's events, each
on a new connection, in rounds in turn like the actions, after `WARMUP` steps of each (the cold
loads, which fold the whole game once and keep its snapshots). The cost is again the CPU time of
gunicorn and Redis a step; the floor is the cost of a step in the 10-event game.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from bench import moves
from bench.client import Connection, percentile
from bench.procs import Server, cpu_seconds
from bench.report import Figure, Target
from domain import engine
from domain.chain import chain_records
from service.play.game_service import GameService, utc_now

LENGTHS = (10, 1000, 5000)
APPEND_BATCH = 500
WARMUP = 12
ROUNDS = 3
BATCH = 40
TARGET = Target("<=", 1.5)
REPLAY_TARGET = Target("<=", 2)
REPLAY_LENGTHS = (10, 5000)


def build(service: GameService, length: int) -> tuple[str, list[str]]:
    """A two-seat Golf game of `length` events: its id and tokens."""
    created = service.create_game(
        moves.GOLF_GAME["game"], moves.GOLF_GAME["seats"], moves.GOLF_GAME["options"], seed=f"bench-long-{length}"
    )
    loaded = service.repository.load(created["id"])
    snap, last_hash, version = loaded.snap, loaded.last_hash, loaded.version
    pending: list[dict[str, Any]] = []
    while version < length:
        seat, body = moves.stall(engine.view(snap, None))
        snap, events = engine.act(snap, seat, body)
        records = chain_records(events, version + 1, last_hash, utc_now())
        pending += records
        version, last_hash = version + len(records), records[-1]["hash"]
        if len(pending) >= APPEND_BATCH or version >= length:
            result = service.store.append(created["id"], version - len(pending), pending)
            if result.outcome != "ok":
                raise RuntimeError(f"could not build the game of length {length}: {result}")
            pending = []
    return created["id"], [seat["token"] for seat in created["seats"]]


async def _play(
    port: int, game_id: str, tokens: list[str], view: dict[str, Any], count: int
) -> tuple[Any, list[float]]:
    """`count` actions, each on a new connection: the last state and each action's latency."""
    latencies = []
    for _ in range(count):
        seat, body = moves.play(view)
        conn = Connection(port)
        started = time.perf_counter()
        path = f"/v1/games/{game_id}/actions"
        answer = await conn.json("POST", path, {**body, "expected_version": view["version"]}, tokens[seat])
        latencies.append(time.perf_counter() - started)
        await conn.close()
        view = answer["state"]
    return view, latencies


async def _view(port: int, game_id: str) -> Any:
    conn = Connection(port)
    view = await conn.json("GET", f"/v1/games/{game_id}")
    await conn.close()
    return view


def measure(server: Server, redis_pid: int, games: dict[int, tuple[str, list[str]]]) -> dict[int, tuple[float, float]]:
    """Per length: (CPU ms an action, median latency ms)."""
    views = {length: asyncio.run(_view(server.port, game_id)) for length, (game_id, _) in games.items()}
    for length, (game_id, tokens) in games.items():
        views[length], _ = asyncio.run(_play(server.port, game_id, tokens, views[length], WARMUP))
    cpu = dict.fromkeys(games, 0.0)
    latencies: dict[int, list[float]] = {length: [] for length in games}
    order = list(games)
    for _ in range(ROUNDS):
        for length in order:
            game_id, tokens = games[length]
            before = cpu_seconds(server.pid) + cpu_seconds(redis_pid)
            views[length], times = asyncio.run(_play(server.port, game_id, tokens, views[length], BATCH))
            cpu[length] += cpu_seconds(server.pid) + cpu_seconds(redis_pid) - before
            latencies[length] += times
        order = order[1:] + order[:1]
    return {
        length: (cpu[length] * 1000 / len(latencies[length]), percentile(latencies[length], 0.5) * 1000)
        for length in games
    }


async def _replay(port: int, game_id: str, steps: list[int]) -> list[float]:
    """One replay request a step, each on a new connection: each one's latency."""
    latencies = []
    for at in steps:
        conn = Connection(port)
        started = time.perf_counter()
        view = await conn.json("GET", f"/v1/games/{game_id}/replay?at={at}")
        latencies.append(time.perf_counter() - started)
        await conn.close()
        if view["version"] != at:
            raise RuntimeError(f"replay of {game_id} at {at} answered version {view['version']}")
    return latencies


def measure_replay(server: Server, redis_pid: int, games: dict[int, str]) -> dict[int, tuple[float, float]]:
    """Per length: (CPU ms a replay step anywhere in the game, median latency ms)."""
    rng = random.Random(5000)
    versions = {length: asyncio.run(_view(server.port, game_id))["version"] for length, game_id in games.items()}

    def steps(length: int) -> list[int]:
        return [rng.randint(1, versions[length]) for _ in range(BATCH)]

    for length, game_id in games.items():
        asyncio.run(_replay(server.port, game_id, steps(length)[:WARMUP]))
    cpu = dict.fromkeys(games, 0.0)
    latencies: dict[int, list[float]] = {length: [] for length in games}
    order = list(games)
    for _ in range(ROUNDS):
        for length in order:
            before = cpu_seconds(server.pid) + cpu_seconds(redis_pid)
            latencies[length] += asyncio.run(_replay(server.port, games[length], steps(length)))
            cpu[length] += cpu_seconds(server.pid) + cpu_seconds(redis_pid) - before
        order = order[1:] + order[:1]
    return {
        length: (cpu[length] * 1000 / len(latencies[length]), percentile(latencies[length], 0.5) * 1000)
        for length in games
    }


def figures(service: GameService, server: Server, redis_pid: int) -> list[Figure]:
    """The cost at each length against the cost at the shortest; then a replay step's."""
    games = {length: build(service, length) for length in LENGTHS}
    cost = measure(server, redis_pid, games)
    short = LENGTHS[0]
    out = []
    for length in LENGTHS[1:]:
        name = "action_cost_ratio_5000_vs_10" if length == 5000 else f"action_cost_ms_{length}"
        note = f"floor: length {short}; median latency {cost[length][1]:.1f} ms (floor {cost[short][1]:.1f} ms)"
        out.append(Figure(name, cost[length][0], "ms CPU", cost[short][0], TARGET, note))
    replay = measure_replay(server, redis_pid, {length: build(service, length)[0] for length in REPLAY_LENGTHS})
    short, long = REPLAY_LENGTHS
    note = (
        f"a step anywhere in a {long:,}-event game; floor: one in a {short}-event game; "
        f"median latency {replay[long][1]:.1f} ms (floor {replay[short][1]:.1f} ms)"
    )
    out.append(Figure("replay_cost_ratio_5000_vs_10", replay[long][0], "ms CPU", replay[short][0], REPLAY_TARGET, note))
    return out
