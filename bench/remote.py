"""Registered bots played from outside, over HTTP: how soon a bot's waiting long-poll gets its turn, and how
many turns bridges play a second against the house bots through the RQ workers.

`remote_turn_dispatch_ms_p99`: DISPATCH_GAMES two-seat Golf games, each a person (played by this process)
against a registered bot of its own. Each bot waits on `GET /v1/bots/me/turns?wait=30` on the stream tier's
port, held by a process of its own (bots run on their owners' hosts); what it gets goes back to this process,
which plays the bot's move with the bot's token and, after the person's think time, the person's. A turn
is timed from the answer to the person's move that made the bot due (read here) to the bot's long-poll having
read it (there), both on the machine's monotonic clock.

`remote_turns_per_s`: REMOTE_BOTS registered bots, each played by a real `python -m workers.bridge --level
random` with `--concurrency REMOTE_CONCURRENCY`, in REMOTE_GAMES games of the four types whose every seat is
one of them. The turns they played (records with a seat as actor) over a window after a warm-up, against
`bot_turns_per_s` (the house bots through the RQ workers) of the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import multiprocessing
import os
import random
import re
import time
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection as PipeEnd
from typing import Any

from bench import moves, registered
from bench.client import Connection, HttpError, percentile
from bench.openloop import Connections, CpuProfile, bots_gone
from bench.procs import Processes, Server, cpu_seconds
from bench.records import is_seat, record_time
from bench.report import Figure, Target
from domain.chain import record_actor
from service.storage.event_store import EventStore

DISPATCH_GAMES = 100
THINK_SECONDS = 2.0  # a person's think time before each turn of theirs (jittered by a quarter either way)
DISPATCH_WARMUP = 5.0  # the games start within a think time of each other
DISPATCH_SECONDS = 15.0
TURN_TIMEOUT = 10.0  # a turn not received by then is counted as this late (and as missing)
DISPATCH_TARGET = Target("<", 50, on="value", unit="ms")  # issue 37
PERSON, BOT = 0, 1

REMOTE_BOTS = 4
REMOTE_CONCURRENCY = 8
REMOTE_GAMES = 48  # every seat a registered bot: the four types in turn
REMOTE_OPTIONS: dict[str, dict[str, Any]] = {"golf": {"rounds": 18}, "romme": {}, "switch": {}, "go5": {}}
REMOTE_WARMUP = 4.0  # the bridges start (a Python process each) and fetch the options of their games
REMOTE_SECONDS = 12.0
REMOTE_TARGET = Target(">=", 0.5)
LONG_WAIT = (
    4.0  # a turn this long after the one before it in its game waited for something (BOT_TURN_LEASE_SECONDS is 5)
)
SKIPPED = re.compile(r"bridge: stopped: .* (\d+) skipped \(409\)")


# ---------------------------------------------------------------- remote_turn_dispatch_ms_p99


def dispatch_latencies(
    answered: Mapping[str, float], received: Mapping[str, float], missing: float
) -> tuple[list[float], int, int]:
    """Each timed turn's latency from its move's answer (`answered`, by turn id) to its receipt by the bot
    (`received`): `missing` seconds for a turn never received; a turn received before the answer was read
    (the offer is made before the move is answered) counts 0. With how many were early, how many missing."""
    latencies, early, lost = [], 0, 0
    for turn, answer in answered.items():
        got = received.get(turn)
        if got is None:
            latencies.append(missing)
            lost += 1
        else:
            early += got < answer
            latencies.append(max(0.0, got - answer))
    return latencies, early, lost


class Receipts:
    """The turns the bots' process received, by turn id, as they come through its pipe: their time and body."""

    def __init__(self, pipe: PipeEnd) -> None:
        self.pipe = pipe
        self.received: dict[str, float] = {}
        self.turns: dict[str, dict[str, Any]] = {}
        self.summary: dict[str, int] | None = None  # the bots' process's last word
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        asyncio.get_running_loop().add_reader(pipe.fileno(), self._read)

    def _read(self) -> None:
        while self.pipe.poll():
            message = self.pipe.recv()
            if not isinstance(message, tuple):  # the bots' process's last word: its summary
                self.summary = message
                continue
            at, turn = message
            if turn["turn"] in self.received:  # handed out again after its lease: the first one counts
                continue
            self.received[turn["turn"]], self.turns[turn["turn"]] = at, turn
            waiting = self._waiting.pop(turn["turn"], None)
            if waiting is not None and not waiting.done():
                waiting.set_result(turn)

    async def turn(self, turn_id: str, timeout: float) -> dict[str, Any] | None:
        """The turn once the bot received it; None after `timeout` seconds."""
        if turn_id in self.turns or timeout <= 0:
            return self.turns.get(turn_id)
        waiting = self._waiting.setdefault(turn_id, asyncio.get_running_loop().create_future())
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), timeout)
        except TimeoutError:
            return None

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.pipe.fileno())


@dataclasses.dataclass
class Window:
    """The timed window (monotonic seconds) and what the games saw in it."""

    start: float
    end: float
    answered: dict[str, float] = dataclasses.field(default_factory=dict)  # turn id: its move's answer read
    actions: int = 0  # the person's and the bots' moves answered

    def holds(self, moment: float) -> bool:
        return self.start <= moment <= self.end


class PersonGame:
    """A game of a person (played here) against a registered bot (its turns come through the bot's process)."""

    def __init__(self, conns: Connections, bot: str, bot_token: str) -> None:
        self.conns, self.bot, self.bot_token = conns, bot, bot_token
        self.id, self.token = "", ""
        self.view: dict[str, Any] = {}

    async def start(self, seed: str) -> PersonGame:
        body = {**moves.GOLF_GAME, "seed": seed, "seats": [{"kind": "human"}, {"kind": "bot", "bot": self.bot}]}
        created = await self.conns.json("POST", "/v1/games", body)
        self.id, self.token = created["id"], created["seats"][PERSON]["token"]
        self.view = await self.conns.json("GET", f"/v1/games/{self.id}", token=self.token)
        return self

    async def play(self, receipts: Receipts, window: Window) -> bool:
        """Play both seats until the window is over; the answers of the person's moves that made the bot due
        within it go into `window.answered`. True if it stopped for a turn of the bot's that never came."""
        rng = random.Random(self.id)
        await asyncio.sleep(rng.uniform(0, THINK_SECONDS))  # people do not all sit down at once
        while time.monotonic() < window.end and self.view["status"] == "active":
            to_act = self.view["to_act"]
            if PERSON in to_act:
                if self.view["table"]["drawn_by"] != PERSON:  # a new turn of the person's: it thinks first
                    await asyncio.sleep(THINK_SECONDS * rng.uniform(0.75, 1.25))
                _, body = moves.play(self.view, PERSON)
                answer = await self._act(body, self.token)
                read = time.monotonic()
                self.view = answer["state"]
                window.actions += window.holds(read)
                # timed when the bot alone is due now and was not before: a turn the person could also take
                # (a new round's initial flips) may be withdrawn before the bot has it, when the person goes first
                if self.view["to_act"] == [BOT] and BOT not in to_act and window.holds(read):
                    window.answered[f"{self.id}:{self.view['version']}"] = read
                continue
            turn = await receipts.turn(f"{self.id}:{self.view['version']}", TURN_TIMEOUT)
            if turn is None:
                return True  # the game waits for a turn that never came: it is left
            _, body = moves.play(turn["view"], BOT)
            self.view = (await self._act(body, self.bot_token, turn["turn"]))["state"]
            window.actions += window.holds(time.monotonic())
        return False

    async def _act(self, body: dict[str, Any], token: str, turn: str | None = None) -> Any:
        headers = {"Idempotency-Key": turn} if turn is not None else None
        path = f"/v1/games/{self.id}/actions"
        return await self.conns.json("POST", path, {**body, "expected_version": self.view["version"]}, token, headers)


def _receive_turns(port: int, tokens: list[str], pipe: PipeEnd) -> None:
    asyncio.run(_long_poll_turns(port, tokens, pipe))


async def _long_poll_turns(port: int, tokens: list[str], pipe: PipeEnd) -> None:
    """Each bot's long-poll on `port`, asking again as soon as it is answered; each turn goes up the pipe with
    when it was read. At the word: the long-polls answered and the errors."""
    answered, errors = [0], [0]

    async def bot(token: str) -> None:
        conn = Connection(port)
        try:
            while True:
                try:
                    turns = (await conn.json("GET", "/v1/bots/me/turns?wait=30", token=token))["turns"]
                except (HttpError, ConnectionError):
                    errors[0] += 1
                    await conn.close()
                    await asyncio.sleep(1.0)
                    continue
                at = time.monotonic()
                answered[0] += 1
                for turn in turns:
                    pipe.send((at, turn))
        finally:
            await conn.close()

    tasks = [asyncio.create_task(bot(token)) for token in tokens]
    await asyncio.to_thread(pipe.recv)
    for task in tasks:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    pipe.send({"answered": answered[0], "errors": errors[0]})


@dataclasses.dataclass
class Dispatched:
    """What the dispatch run saw."""

    latencies: list[float]  # of the timed turns (s)
    early: int  # received before their move's answer was read
    missing: int  # never received
    stalled: int  # games left waiting for a turn
    actions: float  # moves answered a second in the window
    polls: dict[str, int]  # the bots' process's long-polls answered and errors
    profile: str  # where the CPU went in the window


async def _profile(pids: dict[str, int], window: Window) -> str:
    """The CPU each process group used over the window."""
    await asyncio.sleep(max(0.0, window.start - time.monotonic()))
    profile = CpuProfile(pids)
    await asyncio.sleep(max(0.0, window.end - time.monotonic()))
    return profile.summary()


async def _dispatch(api_port: int, stream_port: int, pids: dict[str, int]) -> Dispatched:
    conns = Connections(api_port)
    names = registered.bot_names("dispatch", DISPATCH_GAMES)
    tokens = await registered.register_bots(api_port, names, ["golf"])
    games: list[PersonGame] = []
    for first in range(0, DISPATCH_GAMES, 25):
        batch = range(first, min(DISPATCH_GAMES, first + 25))
        games += await asyncio.gather(*(PersonGame(conns, names[n], tokens[n]).start(f"dispatch-{n}") for n in batch))
    context = multiprocessing.get_context("spawn")
    pipe, child_end = context.Pipe()
    bots = context.Process(target=_receive_turns, args=(stream_port, tokens, child_end), daemon=True)
    bots.start()
    receipts = Receipts(pipe)
    start = time.monotonic() + DISPATCH_WARMUP
    window = Window(start, start + DISPATCH_SECONDS)
    profile = asyncio.create_task(_profile({**pids, "bot client": bots.pid or 0}, window))
    stalled = await asyncio.gather(*(game.play(receipts, window) for game in games))
    for turn, answered in window.answered.items():  # the turns of the window's last moves may still be coming
        await receipts.turn(turn, answered + TURN_TIMEOUT - time.monotonic())
    latencies, early, missing = dispatch_latencies(window.answered, receipts.received, TURN_TIMEOUT)
    pipe.send("stop")
    while receipts.summary is None:
        await asyncio.sleep(0.05)
    receipts.close()
    bots.join(10)
    await conns.close()
    actions = window.actions / DISPATCH_SECONDS
    return Dispatched(latencies, early, missing, sum(stalled), actions, receipts.summary, await profile)


def dispatch_figure(api: Server, stream: Server, redis_pid: int) -> Figure:
    """remote_turn_dispatch_ms_p99: a person's move answered to the bot's waiting long-poll having the turn."""
    pids = {"API": api.pid, "stream tier": stream.pid, "Redis": redis_pid}
    found = asyncio.run(_dispatch(api.port, stream.port, pids))
    latencies = found.latencies
    tier = f"{stream.workers} process{'es' if stream.workers > 1 else ''}"
    note = (
        f"{DISPATCH_GAMES} Golf games, a person against a registered bot of its own in each, the person thinking "
        f"{THINK_SECONDS:g} s a turn ({found.actions:.0f} moves/s in all); each bot long-polls "
        f"/v1/bots/me/turns?wait=30 on the stream tier ({tier}); {len(latencies)} turns timed over "
        f"{DISPATCH_SECONDS:g} s, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"{sum(1 for latency in latencies if latency >= 1)} of them 1 s or more, {found.early} received before the "
        f"move's answer was read (counted 0), {found.missing} never received (counted {TURN_TIMEOUT:g} s), "
        f"{found.stalled} games left waiting; {found.polls['answered']} long-polls answered, "
        f"{found.polls['errors']} errors; load {os.getloadavg()[0]:.1f}; {found.profile}"
    )
    return Figure("remote_turn_dispatch_ms_p99", percentile(latencies, 0.99) * 1000, "ms", None, DISPATCH_TARGET, note)


# ---------------------------------------------------------------- remote_turns_per_s


def turns_between(games: Sequence[Sequence[Mapping[str, Any]]], start: float, end: float) -> tuple[int, int]:
    """The turns the seats played themselves (records with a seat as actor) from `start` to `end` (seconds
    since the epoch, the records' `at`), and those the service played for a seat (a turn timeout's)."""
    played = timed_out = 0
    for records in games:
        for record in records:
            if not start <= record_time(record) <= end:
                continue
            if is_seat(record["actor"]):
                played += 1
            elif is_seat(record_actor(record)):
                timed_out += 1
    return played, timed_out


def waits_over(games: Sequence[Sequence[Mapping[str, Any]]], seconds: float, start: float, end: float) -> int:
    """The seats' own turns from `start` to `end` that came `seconds` or more after the turn before them in
    their game (a turn left leased, say)."""
    count = 0
    for records in games:
        times = [record_time(record) for record in records if is_seat(record["actor"])]
        count += sum(1 for before, at in itertools.pairwise(times) if start <= at <= end and at - before >= seconds)
    return count


async def _remote_games(port: int) -> tuple[list[str], list[str]]:
    """Register the bots for the four games and create REMOTE_GAMES games, each seat one of them: the games'
    ids and the bots' tokens."""
    names = registered.bot_names("bridge", REMOTE_BOTS)
    tokens = await registered.register_bots(port, names, list(REMOTE_OPTIONS))
    conns = Connections(port)
    kinds = list(REMOTE_OPTIONS)
    seats = registered.seatings(names, REMOTE_BOTS, REMOTE_GAMES)

    async def create(n: int) -> str:
        game = kinds[n % len(kinds)]
        body = {
            "game": game,
            "options": REMOTE_OPTIONS[game],
            "seed": f"bridges-{n}",
            "seats": [{"kind": "bot", "bot": name} for name in seats[n]],
        }
        return str((await conns.json("POST", "/v1/games", body))["id"])

    ids = list(await asyncio.gather(*(create(n) for n in range(REMOTE_GAMES))))
    await conns.close()
    return ids, tokens


def turns_figure(procs: Processes, api: Server, stream: Server, store: EventStore, house_rate: float) -> Figure:
    """remote_turns_per_s: bridges playing registered bots' turns over HTTP, against bot_turns_per_s."""
    games, tokens = asyncio.run(_remote_games(api.port))
    url = f"http://127.0.0.1:{api.port}"
    bridges = [
        procs.start_bridge(f"bridge-{n}", url, token, "--level", "random", "--concurrency", str(REMOTE_CONCURRENCY))
        for n, token in enumerate(tokens)
    ]
    try:
        time.sleep(REMOTE_WARMUP)
        profile = CpuProfile({"API": api.pid, "stream tier": stream.pid, "Redis": procs.redis_pid})
        bridge_cpu = sum(cpu_seconds(bridge.pid) for bridge in bridges)
        start = time.time()
        time.sleep(REMOTE_SECONDS)
        end = time.time()
        bridge_cpu = (sum(cpu_seconds(bridge.pid) for bridge in bridges) - bridge_cpu) / (end - start)
        used = profile.summary()
    finally:
        for bridge in bridges:
            procs.end(bridge)
    records = [store.read(game) for game in games]
    played, timed_out = turns_between(records, start, end)
    waited = waits_over(records, LONG_WAIT, start, end)
    logs = [
        (procs.folder / f"bridge-{n}.log").read_text(encoding="utf-8", errors="replace") for n in range(len(bridges))
    ]
    skipped = sum(int(found) for log in logs for found in SKIPPED.findall(log))
    finished = sum(1 for game in records if game and game[-1]["type"] == "SeedRevealed")
    note = (
        f"{REMOTE_BOTS} registered bots, each a `python -m workers.bridge --level random --concurrency "
        f"{REMOTE_CONCURRENCY}` given the API's address, in {REMOTE_GAMES} games (the four types in turn, every "
        f"seat one of them), over {REMOTE_SECONDS:g} s after {REMOTE_WARMUP:g} s; {waited} turns came "
        f"{LONG_WAIT:g} s or more after the one before in their game, {timed_out} were played at their deadline "
        f"instead, {skipped} skipped by the bridges (409: the game moved on), {finished} games finished; floor: "
        f"bot_turns_per_s; {used}, bridges {bridge_cpu:.2f}"
    )
    return Figure("remote_turns_per_s", played / (end - start), "turns/s", house_rate, REMOTE_TARGET, note)


def figures(procs: Processes, api: Server, stream: Server, store: EventStore, house_rate: float) -> list[Figure]:
    """remote_turn_dispatch_ms_p99 and remote_turns_per_s (`house_rate`: bot_turns_per_s of the same run); then
    waits until the service has let the bots' long-polls go, lest they weigh on the figures after."""
    found = [dispatch_figure(api, stream, procs.redis_pid), turns_figure(procs, api, stream, store, house_rate)]
    asyncio.run(bots_gone(api.port))
    return found
