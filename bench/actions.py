"""Figure 2: real game actions over HTTP at 1, 16 and 64 clients; floor: the trivial app of floor_app.py.

Each client plays its own Golf game with both (human) seats: it takes its next move from the state
in the previous action's answer, posts it with `expected_version`, and starts a new game when one
ends. Only the action POSTs are timed and counted. The floor's clients post to their own stream in
a loop. Both servers run side by side under the same gunicorn settings, and the runs alternate
(floor, then actions, at each concurrency) so that both see the same machine.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis

from bench import floor_app, moves
from bench.client import Connection, Meter, run_clients
from bench.procs import Server, cpu_seconds
from bench.report import Figure, Target

CONCURRENCY = (1, 16, 64)
WARMUP = 1.5
SECONDS = 6.0
THROUGHPUT_TARGET = {16: Target(">=", 1.0)}
P99_TARGET: dict[int, Target] = {}  # closed loop measures throughput, not latency: see openloop.py


async def new_game(conn: Connection, seed: str) -> tuple[str, list[str], dict[str, Any]]:
    """A two-seat Golf game: its id, both seats' tokens and its first state."""
    created = await conn.json("POST", "/v1/games", {**moves.GOLF_GAME, "seed": seed})
    game_id = created["id"]
    view = await conn.json("GET", f"/v1/games/{game_id}")
    return game_id, [seat["token"] for seat in created["seats"]], view


def action_client(port: int) -> Any:
    """A client coroutine factory for `run_clients`: one game, one action after another."""

    async def client(index: int, meter: Meter, clock: list[Any]) -> None:
        conn = Connection(port)
        games = 0
        game_id, tokens, view = await new_game(conn, f"bench-{index}-{games}")
        while time.perf_counter() < clock[0]:
            if view["status"] == "finished":
                games += 1
                game_id, tokens, view = await new_game(conn, f"bench-{index}-{games}")
            seat, body = moves.play(view)
            started = time.perf_counter()
            answer = await conn.json(
                "POST", f"/v1/games/{game_id}/actions", {**body, "expected_version": view["version"]}, tokens[seat]
            )
            if clock[1]:
                meter.latencies.append(time.perf_counter() - started)
            view = answer["state"]
        await conn.close()

    return client


def floor_client(port: int) -> Any:
    """A client coroutine factory for `run_clients`: the floor endpoint in a loop, on its own stream."""

    async def client(index: int, meter: Meter, clock: list[Any]) -> None:
        conn = Connection(port)
        version = floor_app.ENTRIES
        while time.perf_counter() < clock[0]:
            started = time.perf_counter()
            answer = await conn.json("POST", f"/floor/c{index}/{version}", {})
            if clock[1]:
                meter.latencies.append(time.perf_counter() - started)
            version = int(answer["version"])
        await conn.close()

    return client


def _run(count: int, client: Any, server: Server, redis_pid: int) -> tuple[Meter, str]:
    """One timed run, and the servers' CPU time per timed request."""

    def probe() -> tuple[float, float]:
        return cpu_seconds(server.pid), cpu_seconds(redis_pid)

    meter = asyncio.run(run_clients(count, WARMUP, SECONDS, client, probe))
    api, store = (seconds * 1000 / max(1, len(meter.latencies)) for seconds in meter.probed)
    return meter, f"gunicorn {api:.1f} + Redis {store:.1f} ms CPU"


def figures(client: redis.Redis, app: Server, floor: Server, redis_pid: int) -> list[Figure]:
    """Throughput and p50/p99 at each concurrency, each against the floor measured just before it."""
    out = []
    for count in CONCURRENCY:
        for index in range(count):
            floor_app.fill(client, f"c{index}")
        floor_meter, floor_cpu = _run(count, floor_client(floor.port), floor, redis_pid)
        actions, action_cpu = _run(count, action_client(app.port), app, redis_pid)
        note = f"a request: {action_cpu} (floor {floor_cpu}); load client {actions.client_cpu:.0%} of a core"
        rate = Figure(
            f"actions_rps_c{count}", actions.rate, "actions/s", floor_meter.rate, THROUGHPUT_TARGET.get(count), note
        )
        out.append(rate)
        out.append(Figure(f"actions_p50_ms_c{count}", actions.ms(0.5), "ms", floor_meter.ms(0.5)))
        p99 = Figure(f"actions_p99_ms_c{count}", actions.ms(0.99), "ms", floor_meter.ms(0.99), P99_TARGET.get(count))
        out.append(p99)
    return out
