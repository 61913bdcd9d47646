"""Open-loop figures: actions offered at a constant rate, with and without 2,500 watchers held open.

The closed-loop figures (actions.py) measure throughput: a client waits for each answer before it
sends the next request, so a slow answer also delays the requests behind it and they are never
timed as late (coordinated omission). Here every request has its time fixed in advance, at a
constant rate of half the `actions_rps_c16` measured in the same run, and its latency counts from
that time, not from when it could be sent. Each action goes to an idle game of a pool of two-seat
Golf games (waiting for an idle game counts in its latency).

`watchers_held`: 2,000 SSE streams and 500 long-polls (each asking again as soon as it is answered)
are spread over the pool's games while the actions run at the same rate and `/healthz` is asked 20
times a second (open loop too). Every watcher must receive every event of its game (within SETTLE
after the last action: a stream tier short of CPU falls behind and catches up). The watchers follow on
the stream tier's port, as `make run` deploys it (its own gunicorn, one process under SCHED_IDLE:
docs/operations.md); actions and `/healthz` go to the API's port. The watchers are held by a client
process of their own at nice 19: they stand for spectators on other hosts, and reading their events in
the action client's event loop would delay the timed actions in the client, not in the service.

`actions_p99_ms_open50_bots`: the same, with registered bots waiting for turns on the stream tier instead
of the watchers: 500 on `GET /v1/bots/me/turns?wait=30` (each asking again when answered) and 500 on
`GET /v1/bots/me/stream`, each a bot of its own with no turn due, held by a process of their own as the
watchers are (bots run on their owners' hosts).

`actions_p99_ms_open50_match`: the same, while a match of house bots (bench/matches.py) is played by the RQ
workers, in MATCH_WINDOWS windows taken in turns with windows with its workers stopped, one before each and one
after the last (the first the window before the match): the median of the p99s beside it against the median of
those without. While the workers start and stop the actions go on untimed, as people play on while a match runs.
On a shared host of two cores the open loop's p99 alone drifts from one window to the next by more than the bound
(docs/performance.md); windows in turns see the same drift on both sides, and the windows without bracket those
beside, so that a drift one way through the run moves both medians alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing
import os
import re
import statistics
import time
from collections.abc import Callable
from multiprocessing.connection import Connection as PipeEnd
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bench import moves, registered
from bench.client import Connection, HttpError, percentile
from bench.procs import Server, cpu_seconds
from bench.report import Figure, Target

T = TypeVar("T")
SHARE = 0.5  # of actions_rps_c16
POOL = 250  # games the actions go to
SECONDS = 8.0
STREAMS = 2000
LONG_POLLS = 500
HEALTH_RATE = 20.0
BOT_POLLS = 500  # registered bots waiting on a turns long-poll ...
BOT_STREAMS = 500  # ... and on their turn streams, none with a turn due
# Windows beside a match, taken in turns with windows without it, one before each (the first: the one alone) and
# one after the last. A 200-deal match lasts three: it finished 100 to 343 of its 400 games in three.
MATCH_WINDOWS = 3
WORKERS_GONE_SECONDS = 2.0  # from the match's workers stopped to the next window without them
UNTIMED_SECONDS = 0.5  # the actions go on untimed in steps of this long while the match's workers start or stop
SETTLE_BESIDE_SECONDS = 1.0  # untimed, from their first game finished: each has asked whether people play
CROWDS = ("bots", "watchers")  # what the actions are measured beside, after alone (and "match", when asked)
WATCHER_NICE = 19  # the watchers' (and waiting bots') own client process: they are on other hosts
SETTLE = 30.0  # at most this long for the last events to reach the watchers
P99_TARGET = Target("<", 20, on="value", unit="ms")
HEALTH_TARGET = Target("<", 50, on="value", unit="ms")  # issue 25
SEQ = re.compile(rb"^id: (\d+)$", re.M)
LAST_EVENT = b"\nevent: SeedRevealed\n"  # every game's last event (service/api/followers.py)
RECONNECT_SECONDS = 1.0  # as EventSource waits by default before it reconnects
# The watchers the service still holds, in every process (GET /metrics): a long-poll whose client has gone waits
# out its `wait`, a stream until its next heartbeat fails, so what is measured next waits for them to end.
WATCHERS_OPEN = re.compile(rb'^cardtable_watchers_open\{kind="(\w+)"\} (\S+)$', re.M)
BOT_KINDS = ("bot_turns", "bot_stream")  # the kinds of watcher the waiting bots are ...
GAME_KINDS = ("longpoll", "stream")  # ... and the watchers of games
DRAIN_SECONDS = 45.0


class Connections:
    """Keep-alive connections shared by all requests, most recently used first, as a client's pool: an
    idle connection is closed by gunicorn after its keep-alive timeout (2 s), so one per game would
    reconnect for almost every action."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.free: list[Connection] = []

    async def json(
        self, method: str, path: str, body: Any = None, token: str | None = None, headers: dict[str, str] | None = None
    ) -> Any:
        conn = self.free.pop() if self.free else Connection(self.port)
        answer = await conn.json(method, path, body, token, headers)
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

    def __init__(self, port: int, game_id: str, after: int, kind: str) -> None:
        self.port, self.game_id, self.after, self.kind = port, game_id, after, kind
        self.seqs: list[int] = []
        self.reconnects = 0
        self.task: asyncio.Task[None] | None = None

    @classmethod
    def of(cls, port: int, game: Game, kind: str) -> Watcher:
        """A watcher of `game` from its current version."""
        return cls(port, game.id, int(game.view["version"]), kind)

    async def stream(self, opened: asyncio.Event) -> None:
        """Follow the SSE stream as a browser's EventSource does: after a refusal (a 503 when the tier is short of
        CPU) or a cut, again a second later from the last event it got, until the game's last event."""
        while not await self._stream_once(opened):
            self.reconnects += 1
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _stream_once(self, opened: asyncio.Event) -> bool:
        """One connection of the stream; True once the game's last event came."""
        last = self.seqs[-1] if self.seqs else self.after
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(f"GET /v1/games/{self.game_id}/stream?after={last} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        opened.set()
        buffer = b""
        try:
            if not (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200"):
                return False
            while chunk := await reader.read(65536):
                buffer += chunk
                whole, _, buffer = buffer.rpartition(b"\n\n")
                self.seqs.extend(int(seq) for seq in SEQ.findall(whole))
                if LAST_EVENT in whole:
                    return True
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
        return False

    async def poll(self, opened: asyncio.Event) -> None:
        """Long-poll, each time from the last event it got; after a refusal or a cut, again a second later."""
        conn = Connection(self.port)
        last = self.after
        try:
            while True:
                request = conn.json("GET", f"/v1/games/{self.game_id}/events?after={last}&wait=30")
                opened.set()
                try:
                    events = (await request)["events"]
                except (HttpError, ConnectionError):
                    self.reconnects += 1
                    await conn.close()
                    await asyncio.sleep(RECONNECT_SECONDS)
                    continue
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


class CrowdProcess:
    """Clients held by a process of their own at WATCHER_NICE, beside the timed actions: they stand for
    spectators or bots on other hosts, so they must not share an event loop (or a CPU share) with the actions.

    `hold(*args, pipe)` runs in it: it opens the clients, sends how many it opened, waits for a message
    (what `finish` is given), then sends what it found and ends."""

    def __init__(self, name: str, hold: Any, *args: Any) -> None:
        self.name = name
        context = multiprocessing.get_context("spawn")
        self.pipe, child_end = context.Pipe()
        self.process = context.Process(target=hold, args=(*args, child_end), daemon=True)
        self.process.start()
        self.pid: int = self.process.pid or 0

    def wait_opened(self) -> int:
        """How many clients are open, once they all are."""
        opened: int = self.pipe.recv()
        return opened

    def finish(self, message: Any = None) -> Any:
        """Send `message`, and what the clients found once they are closed."""
        self.pipe.send(message)
        found = self.pipe.recv()
        self.process.join(10)
        return found


class WatcherProcess(CrowdProcess):
    """The watchers of the games, each from the version it was at."""

    def __init__(self, port: int, games: list[tuple[str, int]]) -> None:
        super().__init__("watcher client", _hold_watchers, port, games)

    def finish(self, message: Any = None) -> tuple[int, float, int]:
        """Given the final versions (game id: its last version): how many watchers got every event up to them
        within SETTLE, how long after the last action the last of them had it (seconds), and how often they
        reconnected."""
        complete, catch_up, reconnects = super().finish(message)
        return int(complete), float(catch_up), int(reconnects)


class WaitingBotProcess(CrowdProcess):
    """Registered bots with no turn due, waiting: BOT_POLLS on a turns long-poll, the rest on their turn
    streams (one token each)."""

    def __init__(self, port: int, tokens: list[str]) -> None:
        super().__init__("bot client", _hold_waiting_bots, port, tokens)

    def finish(self, message: Any = None) -> tuple[int, int, int]:
        """How many bots were still waiting at the end without having been cut or refused, how often they
        asked again after a refusal or a cut, and the turns they were given (none is due)."""
        held, reconnects, turns = super().finish(message)
        return int(held), int(reconnects), int(turns)


def _hold_watchers(port: int, games: list[tuple[str, int]], pipe: PipeEnd) -> None:
    os.nice(WATCHER_NICE)
    asyncio.run(_watch(port, games, pipe))


async def _watch(port: int, games: list[tuple[str, int]], pipe: PipeEnd) -> None:
    """Open STREAMS + LONG_POLLS watchers over `games`, report them open, wait for the final versions, then
    report how many got every event."""
    watchers = [
        Watcher(port, *games[n % len(games)], "stream" if n < STREAMS else "poll") for n in range(STREAMS + LONG_POLLS)
    ]
    for first in range(0, len(watchers), 100):  # not all at once: the listen backlog is finite
        await asyncio.gather(*(w.open() for w in watchers[first : first + 100]))
    pipe.send(len(watchers))
    finals: dict[str, int] = await asyncio.to_thread(pipe.recv)
    started = time.perf_counter()
    while (complete := sum(w.complete(finals[w.game_id]) for w in watchers)) < len(watchers):
        if time.perf_counter() > started + SETTLE:
            break
        await asyncio.sleep(0.1)
    catch_up = time.perf_counter() - started
    for watcher in watchers:
        if watcher.task is not None:
            watcher.task.cancel()
            with contextlib.suppress(BaseException):
                await watcher.task
    pipe.send((complete, catch_up, sum(w.reconnects for w in watchers)))


class WaitingBot:
    """A registered bot with no turn due, waiting on its turns long-poll (asking again when it is answered) or
    its turn stream; after a refusal or a cut, again a second later."""

    def __init__(self, port: int, token: str, kind: str) -> None:
        self.port, self.token, self.kind = port, token, kind
        self.reconnects = 0
        self.turns = 0
        self.task: asyncio.Task[None] | None = None

    async def poll(self, opened: asyncio.Event) -> None:
        conn = Connection(self.port)
        try:
            while True:
                request = conn.json("GET", "/v1/bots/me/turns?wait=30", token=self.token)
                opened.set()
                try:
                    self.turns += len((await request)["turns"])
                except (HttpError, ConnectionError):
                    self.reconnects += 1
                    await conn.close()
                    await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            await conn.close()

    async def stream(self, opened: asyncio.Event) -> None:
        head = f"GET /v1/bots/me/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.token}\r\n\r\n"
        while True:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(head.encode())
            opened.set()
            try:  # its headers come with its first message: a heartbeat, or a turn
                while chunk := await reader.read(65536):
                    if chunk.startswith(b"HTTP/1.1 ") and not chunk.startswith(b"HTTP/1.1 200"):
                        break
                    self.turns += chunk.count(b"\nevent: turn\n")
            except ConnectionError:
                pass
            finally:
                writer.close()
            self.reconnects += 1
            await asyncio.sleep(RECONNECT_SECONDS)

    async def open(self) -> None:
        opened = asyncio.Event()
        self.task = asyncio.create_task(self.poll(opened) if self.kind == "poll" else self.stream(opened))
        await opened.wait()


def _hold_waiting_bots(port: int, tokens: list[str], pipe: PipeEnd) -> None:
    os.nice(WATCHER_NICE)
    asyncio.run(_wait_as_bots(port, tokens, pipe))


async def _wait_as_bots(port: int, tokens: list[str], pipe: PipeEnd) -> None:
    """Open a waiting bot for each token (BOT_POLLS long-polls first, then streams), report them open, and at
    the word report how many were never cut, their reconnections and the turns they got."""
    bots = [WaitingBot(port, token, "poll" if n < BOT_POLLS else "stream") for n, token in enumerate(tokens)]
    for first in range(0, len(bots), 100):  # not all at once: the listen backlog is finite
        await asyncio.gather(*(bot.open() for bot in bots[first : first + 100]))
    pipe.send(len(bots))
    await asyncio.to_thread(pipe.recv)
    held = sum(1 for bot in bots if bot.reconnects == 0 and bot.task is not None and not bot.task.done())
    for bot in bots:
        if bot.task is not None:
            bot.task.cancel()
            with contextlib.suppress(BaseException):
                await bot.task
    pipe.send((held, sum(bot.reconnects for bot in bots), sum(bot.turns for bot in bots)))


@dataclasses.dataclass
class Crowded:
    """The actions at the same rate beside a crowd of clients."""

    latencies: list[float]  # action latencies (s)
    opened: int  # the crowd's clients opened
    health: list[float]  # /healthz latencies, when it was asked
    profile: str  # where the CPU went meanwhile (cores, by process group)
    client_cpu: float = 0.0  # the share of a core the action client used
    found: Any = None  # what the crowd's process reported at the end (its `finish`)


@dataclasses.dataclass
class Measured:
    """What one open-loop run saw: the actions alone, and beside each crowd measured."""

    alone: list[float]  # action latencies without a crowd (s)
    watchers: Crowded | None = None  # with the watchers held
    bots: Crowded | None = None  # with the registered bots waiting
    match: Crowded | None = None  # while a match is played


class CpuProfile:
    """The cores each process group used over a window, and the machine's idle and stolen time: where the
    CPU goes while the watchers are held."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.start = self._read()

    def _read(self) -> tuple[float, dict[str, float], list[int]]:
        ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return time.perf_counter(), {name: cpu_seconds(pid) for name, pid in self.pids.items()}, ticks

    def summary(self) -> str:
        """`name cores, ...` for each group, then idle and steal (another VM's use of this host's CPUs)."""
        wall0, cpu0, ticks0 = self.start
        wall, cpu, ticks = self._read()
        seconds = wall - wall0
        per_tick = 1 / os.sysconf("SC_CLK_TCK") / seconds
        used = [f"{name} {(cpu[name] - cpu0[name]) / seconds:.2f}" for name in self.pids]
        idle, steal = (ticks[3] - ticks0[3]) * per_tick, (ticks[7] - ticks0[7]) * per_tick
        return f"cores used: {', '.join(used)}; idle {idle:.2f}, steal {steal:.2f} of {os.cpu_count()}"


async def _beside(
    crowd: CrowdProcess, rate: float, games: list[Game], pids: dict[str, int], health_port: int | None = None
) -> Crowded:
    """The actions at `rate` once the crowd's clients are open (and `/healthz` on `health_port`, if given)."""
    opened = crowd.wait_opened()
    await asyncio.sleep(1.0)
    health = (
        None if health_port is None else asyncio.create_task(offer(HEALTH_RATE, SECONDS, health_sender(health_port)))
    )
    cpu, wall = time.process_time(), time.perf_counter()
    profile = CpuProfile({**pids, crowd.name: crowd.pid})  # the action client: client_cpu
    latencies = await offer(rate, SECONDS, action_sender(games))
    crowded = Crowded(latencies, opened, [] if health is None else await health, profile.summary())
    crowded.client_cpu = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return crowded


def watchers_open(metrics: bytes, kinds: tuple[str, ...]) -> float | None:
    """The watchers of `kinds` a /metrics page counts; None when it counts none of them."""
    counts = [float(count) for kind, count in WATCHERS_OPEN.findall(metrics) if kind.decode() in kinds]
    return sum(counts) if counts else None


async def crowd_gone(port: int, kinds: tuple[str, ...], timeout: float = DRAIN_SECONDS) -> None:
    """Wait until the service holds no watcher of `kinds` (by its /metrics on `port`), at most `timeout` seconds:
    a crowd's connections, closed by its process, are let go of at the next write to them (a heartbeat), and
    that work must not fall into what is measured next."""
    conn = Connection(port)
    deadline = time.perf_counter() + timeout
    try:
        while time.perf_counter() < deadline:
            _, text = await conn.request("GET", "/metrics")
            if watchers_open(text, kinds) == 0:
                return
            await asyncio.sleep(0.5)
    finally:
        await conn.close()


async def bots_gone(port: int, timeout: float = DRAIN_SECONDS) -> None:
    """Wait until the service holds no waiting bot (by its /metrics on `port`), at most `timeout` seconds."""
    await crowd_gone(port, BOT_KINDS, timeout)


class MatchPlayers(Protocol):
    """The workers that play a match beside the open loop, started for each window with the match and stopped
    for each window without it (bench/matches.py)."""

    def start(self) -> dict[str, int]:
        """Start the workers, once they take jobs; their pids by name."""

    def stop(self) -> None:
        """Stop them as `make run` stops a worker (it finishes its job); nothing when none runs."""


@dataclasses.dataclass
class MatchWindows:
    """The open loop in turns with and without a match's workers: each window's action p99 (ms)."""

    beside: list[float]  # with the match played, in the order taken
    alone: list[float]  # without: the first before the match was started, the others between its windows
    finished: int  # the match's games finished in the windows beside it
    total: int  # its games in all (deals x entrants)


async def _beside_match(
    conns: Connections,
    rate: float,
    games: list[Game],
    pids: dict[str, int],
    match: dict[str, Any],
    players: MatchPlayers,
    alone: list[float],
) -> Crowded:
    """The actions at `rate` in MATCH_WINDOWS windows while the match `match` (the body of POST /v1/matches) is
    played, each from SETTLE_BESIDE_SECONDS after a game finished since its workers started (the actions going on
    untimed while they start and stop), with windows with its workers stopped before each (`alone`, the window
    before the match, is the first of those) and after the last: the host's pace drifts between windows
    (docs/performance.md), and windows in turns that bracket the match's see the same drift. `found`: the
    windows' p99s and the games finished beside them."""
    path = f"/v1/matches/{(await conns.json('POST', '/v1/matches', match))['id']}"
    deals = int(match["deals"])
    windows = MatchWindows([], [percentile(alone, 0.99) * 1000], 0, deals * len(match["entrants"]))
    crowded = Crowded([], deals, [], "")
    for window in range(MATCH_WINDOWS):
        if window:
            windows.alone.append(await _without_match(rate, games))
        worker_pids = await _while_playing(rate, games, players.start)
        before = await _game_finished(conns, path)
        if before is None:  # the match is over: no more windows beside it
            await _while_playing(rate, games, players.stop)
            break
        await offer(rate, SETTLE_BESIDE_SECONDS, action_sender(games))
        cpu, wall = time.process_time(), time.perf_counter()
        profile = CpuProfile({**pids, **worker_pids})
        crowded.latencies = await offer(rate, SECONDS, action_sender(games))
        crowded.profile = profile.summary()
        crowded.client_cpu = (time.process_time() - cpu) / (time.perf_counter() - wall)
        after = (await conns.json("GET", path))["progress"]
        windows.beside.append(percentile(crowded.latencies, 0.99) * 1000)
        windows.finished += after["games_finished"] - before["games_finished"]
        await _while_playing(rate, games, players.stop)
    else:  # the last window beside the match is followed by one without, as the first is preceded by one
        windows.alone.append(await _without_match(rate, games))
    crowded.found = windows
    return crowded


async def _without_match(rate: float, games: list[Game]) -> float:
    """The actions' p99 (ms) in a window WORKERS_GONE_SECONDS after the match's workers stopped."""
    await asyncio.sleep(WORKERS_GONE_SECONDS)
    return percentile(await offer(rate, SECONDS, action_sender(games)), 0.99) * 1000


async def _while_playing(rate: float, games: list[Game], change: Callable[[], T]) -> T:
    """`change()` (the match's workers started or stopped) in a thread while the actions go on at `rate`, untimed:
    people keep playing while workers come and go, so the match's workers yield from their first game on and
    until they have stopped, as in a match that runs beside people throughout."""
    changing = asyncio.create_task(asyncio.to_thread(change))
    while not changing.done():
        await offer(rate, UNTIMED_SECONDS, action_sender(games))
    return await changing


async def _game_finished(conns: Connections, path: str, timeout: float = 120.0) -> dict[str, Any] | None:
    """The match's progress once a game of it has finished from now on (its workers are at it); None when it
    has no game left to play."""
    deadline = time.perf_counter() + timeout
    progress: dict[str, Any] = (await conns.json("GET", path))["progress"]
    start = progress["games_finished"]
    while progress["games_finished"] < progress["games_total"]:
        if progress["games_finished"] > start:
            return progress
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{path}: no game finished within {timeout:.0f} s (are the workers running?)")
        await asyncio.sleep(0.2)
        progress = (await conns.json("GET", path))["progress"]
    return None


async def _measure(
    port: int,
    rate: float,
    stream_port: int,
    pids: dict[str, int],
    crowds: tuple[str, ...] = CROWDS,
    match: dict[str, Any] | None = None,
    players: MatchPlayers | None = None,
) -> Measured:
    """Actions at `rate` alone, then beside each of `crowds` on the stream tier, each held by a process of its
    own: the registered bots waiting (`bots`), the watchers with /healthz asked (`watchers`); or the match
    `match` played by `players` (`match`)."""
    conns = Connections(port)
    games: list[Game] = []
    for first in range(0, POOL, 25):  # a few at a time, as players arrive
        games += await asyncio.gather(*(Game(conns).start(f"open-{n}") for n in range(first, min(POOL, first + 25))))
    await offer(rate, 1.0, action_sender(games))  # warm-up: every game is cached in both processes
    found = Measured(await offer(rate, SECONDS, action_sender(games)))

    if "bots" in crowds:
        names = registered.bot_names("waiting", BOT_POLLS + BOT_STREAMS)
        waiting = WaitingBotProcess(stream_port, await registered.register_bots(port, names, ["golf"]))
        found.bots = await _beside(waiting, rate, games, pids)
        found.bots.found = waiting.finish()
        await bots_gone(port)
    if "watchers" in crowds:
        watching = WatcherProcess(stream_port, [(game.id, int(game.view["version"])) for game in games])
        found.watchers = await _beside(watching, rate, games, pids, health_port=port)
        found.watchers.found = watching.finish({game.id: int(game.view["version"]) for game in games})
        await crowd_gone(port, GAME_KINDS)
    if "match" in crowds and match is not None and players is not None:
        found.match = await _beside_match(conns, rate, games, pids, match, players, found.alone)
    await conns.close()
    return found


def figures(
    api: Server,
    rps_c16: float,
    stream: Server,
    redis_pid: int,
    crowds: tuple[str, ...] = CROWDS,
    match: dict[str, Any] | None = None,
    players: MatchPlayers | None = None,
) -> list[Figure]:
    """actions_p99_ms_open50, and beside each of `crowds` on the stream tier: with registered bots waiting
    (`bots`), the action p99; with watchers held (`watchers`), the watchers served, action and /healthz p99,
    and where the CPU went; while the match `match` (a POST /v1/matches body) is played by `players`
    (`match`), the action p99 in windows taken in turns with it and without."""
    rate = SHARE * rps_c16
    pids = {"API": api.pid, "stream tier": stream.pid, "Redis": redis_pid}
    found = asyncio.run(_measure(api.port, rate, stream.port, pids, crowds, match, players))
    p99 = percentile(found.alone, 0.99) * 1000
    p50 = percentile(found.alone, 0.5) * 1000
    load = os.getloadavg()[0]
    note = (
        f"{rate:.0f} actions/s offered (50% of actions_rps_c16), {len(found.alone)} timed, p50 {p50:.1f} ms; "
        f"load {load:.1f}"
    )
    tier = f"the stream tier: {stream.workers} process{'es' if stream.workers > 1 else ''}"
    out = [Figure("actions_p99_ms_open50", p99, "ms", None, P99_TARGET, note)]
    if found.bots is not None:
        out.append(_bots_figure(found.bots, p99, tier))
    if found.watchers is not None:
        out += _watcher_figures(found.watchers, p99, tier)
    if found.match is not None:
        out.append(_match_figure(found.match))
    return out


def _beside_figure(name: str, crowded: Crowded, alone_p99: float, beside: str) -> Figure:
    """The actions' p99 beside a crowd (`beside`: what the crowd was and did) against the open loop alone."""
    return Figure(
        name,
        percentile(crowded.latencies, 0.99) * 1000,
        "ms",
        alone_p99,
        Target("<=", 1.5),
        f"same rate, {beside}; floor: actions_p99_ms_open50; "
        f"p50 {percentile(crowded.latencies, 0.5) * 1000:.1f} ms; action client {crowded.client_cpu:.0%} of a core; "
        f"load {os.getloadavg()[0]:.1f}; {crowded.profile}",
    )


def _match_figure(match: Crowded) -> Figure:
    """The median of the windows' p99s beside the match against the median of those without it."""
    windows: MatchWindows = match.found
    return Figure(
        "actions_p99_ms_open50_match",
        statistics.median(windows.beside),
        "ms",
        statistics.median(windows.alone),
        Target("<=", 1.5),
        f"same rate, in {len(windows.beside)} windows of {SECONDS:.0f} s while a {match.opened}-deal "
        f"match is played by the RQ workers ({windows.finished} of its {windows.total} games finished in them), "
        f"taken in turns with {len(windows.alone)} without its workers (before the match, between and after); the "
        f"medians of their p99s: beside {_p99s(windows.beside)} ms, without {_p99s(windows.alone)} ms; the last "
        f"window beside: p50 {percentile(match.latencies, 0.5) * 1000:.1f} ms, action client "
        f"{match.client_cpu:.0%} of a core, {match.profile}",
    )


def _p99s(values: list[float]) -> str:
    return "/".join(f"{value:.1f}" for value in values)


def _bots_figure(bots: Crowded, alone_p99: float, tier: str) -> Figure:
    held, reconnects, turns = bots.found
    beside = (
        f"{BOT_POLLS} registered bots on /v1/bots/me/turns?wait=30 and {BOT_STREAMS} on /v1/bots/me/stream "
        f"({tier}), none with a turn due: {held} of {bots.opened} held throughout, {reconnects} reconnections, "
        f"{turns} turns"
    )
    return _beside_figure("actions_p99_ms_open50_bots", bots, alone_p99, beside)


def _watcher_figures(watchers: Crowded, alone_p99: float, tier: str) -> list[Figure]:
    complete, catch_up, reconnects = watchers.found
    return [
        Figure(
            "watchers_held",
            complete,
            "watchers",
            watchers.opened,
            Target(">=", 1.0),
            f"{STREAMS} SSE streams + {LONG_POLLS} long-polls over {POOL} games ({tier}); got every event of "
            f"their game, the last {catch_up:.1f} s after the last action (at most {SETTLE:.0f}); "
            f"{reconnects} reconnections (after a 503 or a cut, as EventSource does)",
        ),
        Figure(
            "actions_p99_ms_open50_watchers",
            percentile(watchers.latencies, 0.99) * 1000,
            "ms",
            alone_p99,
            Target("<=", 1.5),
            f"same rate, watchers held; floor: actions_p99_ms_open50; "
            f"p50 {percentile(watchers.latencies, 0.5) * 1000:.1f} ms; "
            f"action client {watchers.client_cpu:.0%} of a core; load {os.getloadavg()[0]:.1f}",
        ),
        Figure(
            "healthz_p99_ms_watchers",
            percentile(watchers.health, 0.99) * 1000,
            "ms",
            None,
            HEALTH_TARGET,
            f"{HEALTH_RATE:.0f}/s while the watchers are held and the actions run; {watchers.profile}",
        ),
    ]
