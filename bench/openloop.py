"""Open-loop figures: actions offered at a constant rate, with and without 2,500 watchers held open.

The closed-loop figures (actions.py) measure throughput: a client waits for each answer before it
sends the next request, so a slow answer also delays the requests behind it and they are never
timed as late (coordinated omission). Here every request has its time fixed in advance, at a
constant rate of half the `actions_rps_c16` measured in the same run, and its latency counts from
that time, not from when it could be sent. Each action goes to an idle game of a pool of two-seat
Golf games (waiting for an idle game counts in its latency).

`watchers_held`: 2,000 SSE streams and 500 long-polls (each asking again as soon as it is answered)
are spread over the pool's games while the actions run at the same rate and `/healthz` is asked 20
times a second (open loop too). Every watcher must receive every event of its game. The watchers
follow on the stream tier's port, as `make run` deploys it (its own gunicorn, one process at nice
10: docs/operations.md); actions and `/healthz` go to the API's port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from typing import Any

from bench import moves
from bench.client import Connection, percentile
from bench.report import Figure, Target

SHARE = 0.5  # of actions_rps_c16
POOL = 250  # games the actions go to
SECONDS = 8.0
STREAMS = 2000
LONG_POLLS = 500
HEALTH_RATE = 20.0
SETTLE = 15.0  # at most this long for the last events to reach the watchers
P99_TARGET = Target("<", 20, on="value", unit="ms")
HEALTH_TARGET = Target("<", 50, on="value", unit="ms")  # issue 25
SEQ = re.compile(rb"^id: (\d+)$", re.M)


class Connections:
    """Keep-alive connections shared by all requests, most recently used first, as a client's pool: an
    idle connection is closed by gunicorn after its keep-alive timeout (2 s), so one per game would
    reconnect for almost every action."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.free: list[Connection] = []

    async def json(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        conn = self.free.pop() if self.free else Connection(self.port)
        answer = await conn.json(method, path, body, token)
        self.free.append(conn)
        return answer

    async def close(self) -> None:
        for conn in self.free:
            await conn.close()


class Game:
    """One game of the pool, played over the shared connections."""

    def __init__(self, conns: Connections) -> None:
        self.conn = conns
        self.id = ""
        self.tokens: list[str] = []
        self.view: dict[str, Any] = {}

    async def start(self, seed: str) -> Game:
        created = await self.conn.json("POST", "/v1/games", {**moves.GOLF_GAME, "seed": seed})
        self.id, self.tokens = created["id"], [seat["token"] for seat in created["seats"]]
        self.view = await self.conn.json("GET", f"/v1/games/{self.id}")
        return self

    async def act(self) -> None:
        seat, body = moves.play(self.view)
        path = f"/v1/games/{self.id}/actions"
        answer = await self.conn.json(
            "POST", path, {**body, "expected_version": self.view["version"]}, self.tokens[seat]
        )
        self.view = answer["state"]


async def offer(rate: float, seconds: float, send: Any) -> list[float]:
    """Call `send()` at `rate` per second for `seconds`, each at its scheduled time; latencies from that time."""
    latencies: list[float] = []

    async def one(due: float) -> None:
        await send()
        latencies.append(time.perf_counter() - due)

    start = time.perf_counter() + 0.05
    tasks = []
    for n in range(int(rate * seconds)):
        due = start + n / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    return latencies


def action_sender(games: list[Game]) -> Any:
    """A `send` for `offer`: the next action in an idle game of the pool."""
    idle: asyncio.Queue[Game] = asyncio.Queue()
    for game in games:
        if game.view["status"] == "active":
            idle.put_nowait(game)

    async def send() -> None:
        game = await idle.get()
        try:
            await game.act()
        finally:
            if game.view["status"] == "active":
                idle.put_nowait(game)

    return send


def health_sender(port: int) -> Any:
    """A `send` for `offer`: GET /healthz on a free connection of its own pool."""
    conns = Connections(port)

    async def send() -> None:
        await conns.json("GET", "/healthz")

    return send


class Watcher:
    """A stream or a long-poll of one game, from its version when opened; the seqs it received."""

    def __init__(self, port: int, game: Game, kind: str) -> None:
        self.port, self.game, self.kind = port, game, kind
        self.after = int(game.view["version"])
        self.seqs: list[int] = []
        self.task: asyncio.Task[None] | None = None

    async def stream(self, opened: asyncio.Event) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        path = f"/v1/games/{self.game.id}/stream?after={self.after}"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        opened.set()
        buffer = b""
        try:
            while chunk := await reader.read(65536):
                buffer += chunk
                whole, _, buffer = buffer.rpartition(b"\n\n")
                self.seqs.extend(int(seq) for seq in SEQ.findall(whole))
        finally:
            writer.close()

    async def poll(self, opened: asyncio.Event) -> None:
        conn = Connection(self.port)
        last = self.after
        try:
            while True:
                request = conn.json("GET", f"/v1/games/{self.game.id}/events?after={last}&wait=30")
                opened.set()
                events = (await request)["events"]
                self.seqs.extend(event["seq"] for event in events)
                last = events[-1]["seq"] if events else last
        finally:
            await conn.close()

    async def open(self) -> None:
        opened = asyncio.Event()
        self.task = asyncio.create_task(self.stream(opened) if self.kind == "stream" else self.poll(opened))
        await opened.wait()

    def complete(self, version: int) -> bool:
        """It received every event after its start up to `version`, each once, in order."""
        return self.seqs == list(range(self.after + 1, version + 1))


async def _measure(
    port: int, rate: float, watch_port: int
) -> tuple[list[float], list[float], list[float], int, int, float]:
    """(actions without watchers, actions with, /healthz with, watchers complete, watchers opened, the share of
    a core this load client used while the watchers were held: it reads every watcher's events too)."""
    conns = Connections(port)
    games: list[Game] = []
    for first in range(0, POOL, 25):  # a few at a time, as players arrive
        games += await asyncio.gather(*(Game(conns).start(f"open-{n}") for n in range(first, min(POOL, first + 25))))
    await offer(rate, 1.0, action_sender(games))  # warm-up: every game is cached in both processes
    alone = await offer(rate, SECONDS, action_sender(games))

    watchers = [
        Watcher(watch_port, games[n % POOL], "stream" if n < STREAMS else "poll") for n in range(STREAMS + LONG_POLLS)
    ]
    for first in range(0, len(watchers), 100):  # not all at once: the listen backlog is finite
        await asyncio.gather(*(w.open() for w in watchers[first : first + 100]))
    await asyncio.sleep(1.0)
    health = asyncio.create_task(offer(HEALTH_RATE, SECONDS, health_sender(port)))
    cpu, wall = time.process_time(), time.perf_counter()
    crowded = await offer(rate, SECONDS, action_sender(games))
    health_latencies = await health
    client_cpu = (time.process_time() - cpu) / (time.perf_counter() - wall)
    finals = {game.id: int(game.view["version"]) for game in games}
    deadline = time.perf_counter() + SETTLE
    while (complete := sum(w.complete(finals[w.game.id]) for w in watchers)) < len(watchers):
        if time.perf_counter() > deadline:
            break
        await asyncio.sleep(0.25)
    for watcher in watchers:
        if watcher.task is not None:
            watcher.task.cancel()
            with contextlib.suppress(BaseException):
                await watcher.task
    await conns.close()
    return alone, crowded, health_latencies, complete, len(watchers), client_cpu


def figures(port: int, rps_c16: float, watch_port: int) -> list[Figure]:
    """actions_p99_ms_open50, and with watchers held on `watch_port`: the watchers served, action and /healthz p99."""
    rate = SHARE * rps_c16
    alone, crowded, health, complete, opened, client_cpu = asyncio.run(_measure(port, rate, watch_port))
    p99 = percentile(alone, 0.99) * 1000
    p50 = percentile(alone, 0.5) * 1000
    load = os.getloadavg()[0]
    note = (
        f"{rate:.0f} actions/s offered (50% of actions_rps_c16), {len(alone)} timed, p50 {p50:.1f} ms; load {load:.1f}"
    )
    crowded_p99 = percentile(crowded, 0.99) * 1000
    return [
        Figure("actions_p99_ms_open50", p99, "ms", None, P99_TARGET, note),
        Figure(
            "watchers_held",
            complete,
            "watchers",
            opened,
            Target(">=", 1.0),
            f"{STREAMS} SSE streams + {LONG_POLLS} long-polls over {POOL} games; got every event of their game",
        ),
        Figure(
            "actions_p99_ms_open50_watchers",
            crowded_p99,
            "ms",
            p99,
            Target("<=", 1.5),
            f"same rate, watchers held; floor: actions_p99_ms_open50; p50 {percentile(crowded, 0.5) * 1000:.1f} ms; "
            f"load client {client_cpu:.0%} of a core; load {os.getloadavg()[0]:.1f}",
        ),
        Figure(
            "healthz_p99_ms_watchers",
            percentile(health, 0.99) * 1000,
            "ms",
            None,
            HEALTH_TARGET,
            f"{HEALTH_RATE:.0f}/s while the watchers are held and the actions run",
        ),
    ]
