"""`watcher_cpu_us_per_event`: the CPU a stream process spends on each event it delivers to a watcher.

The stream tier as `make run` starts it (gunicorn serving the app, gevent, here one process so that
its CPU time is the tier's) and the floor (bench/floor_stream.py: one gevent process that `sendall`s
each batch's bytes, encoded once, to every socket of the game) each hold the same SSE watchers,
`STREAMS_PER_GAME` on each of `GAMES` games; actions are then played through the API's own port.
The figure is the stream process's CPU time over that window divided by the events its watchers
received (every watcher must receive every event of its game, or the figure is not a figure); the
floor is the same quotient for the floor process, in the same window, for the same events.

In the same run, the notes give: a woken long-poll's CPU per delivered event (the same games
followed by long-polls on the stream process, each asking again at once as the bench's open-loop
watchers do), and the API's CPU per action (gunicorn's, which serves no watcher here).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable

from bench.openloop import Connections, Game, Watcher, action_sender, offer
from bench.procs import Server, cpu_seconds
from bench.report import Figure, Target

GAMES = 20
STREAMS_PER_GAME = 20
POLLS_PER_GAME = 10
RATE = 40.0  # actions a second, through the API port
SECONDS = 5.0
SETTLE = 15.0
TARGET = Target("<=", 3.0)


async def _open(watchers: list[Watcher]) -> None:
    for first in range(0, len(watchers), 100):  # not all at once: the listen backlog is finite
        await asyncio.gather(*(w.open() for w in watchers[first : first + 100]))
    await asyncio.sleep(1.0)  # each has reached its game's reader


async def _settle(watchers: list[Watcher], games: list[Game]) -> int:
    """Wait until every watcher has every event of its game (or SETTLE passes); how many have."""
    finals = {game.id: int(game.view["version"]) for game in games}
    deadline = time.perf_counter() + SETTLE
    while (complete := sum(w.complete(finals[w.game_id]) for w in watchers)) < len(watchers):
        if time.perf_counter() > deadline:
            break
        await asyncio.sleep(0.1)
    return complete


async def _close(watchers: list[Watcher]) -> None:
    for watcher in watchers:
        if watcher.task is not None:
            watcher.task.cancel()
            with contextlib.suppress(BaseException):
                await watcher.task


async def _window(
    probes: list[Callable[[], float]], play: Callable[[], Awaitable[None]], settle: Callable[[], Awaitable[int]]
) -> tuple[list[float], int]:
    """The CPU seconds each probe's process spent while the actions ran and reached the watchers."""
    before = [probe() for probe in probes]
    await play()
    complete = await settle()
    return [probe() - then for probe, then in zip(probes, before, strict=True)], complete


async def _measure(api: Server, stream: Server, floor_port: int, floor_pid: int) -> dict[str, float]:
    conns = Connections(api.port)
    games = [await Game(conns).start(f"watch-{n}") for n in range(GAMES)]

    async def play() -> None:
        await offer(RATE, SECONDS, action_sender(games))

    streams = [Watcher.of(stream.port, game, "stream") for game in games for _ in range(STREAMS_PER_GAME)]
    floors = [Watcher.of(floor_port, game, "stream") for game in games for _ in range(STREAMS_PER_GAME)]
    await _open(streams + floors)
    started = [int(game.view["version"]) for game in games]
    (stream_cpu, floor_cpu, api_cpu), complete = await _window(
        [lambda: cpu_seconds(stream.pid), lambda: cpu_seconds(floor_pid), lambda: cpu_seconds(api.pid)],
        play,
        lambda: _settle(streams + floors, games),
    )
    events = sum(int(game.view["version"]) - first for game, first in zip(games, started, strict=True))
    stream_events = sum(len(w.seqs) for w in streams)
    floor_events = sum(len(w.seqs) for w in floors)
    await _close(streams + floors)

    polls = [Watcher.of(stream.port, game, "poll") for game in games for _ in range(POLLS_PER_GAME)]
    await _open(polls)
    (poll_cpu,), poll_complete = await _window([lambda: cpu_seconds(stream.pid)], play, lambda: _settle(polls, games))
    poll_events = sum(len(w.seqs) for w in polls)
    await _close(polls)
    await conns.close()
    return {
        "stream_us": stream_cpu * 1e6 / max(1, stream_events),
        "floor_us": floor_cpu * 1e6 / max(1, floor_events),
        "poll_us": poll_cpu * 1e6 / max(1, poll_events),
        "action_us": api_cpu * 1e6 / max(1, events),
        "complete": complete + poll_complete,
        "watchers": len(streams) + len(floors) + len(polls),
        "events": events,
    }


def figures(api: Server, stream: Server, floor_port: int, floor_pid: int) -> list[Figure]:
    """watcher_cpu_us_per_event against its floor; the long-poll's and the action's cost in the notes."""
    found = asyncio.run(_measure(api, stream, floor_port, floor_pid))
    load = os.getloadavg()[0]
    note = (
        f"{GAMES * STREAMS_PER_GAME} SSE streams on one stream process, {GAMES} games; long-poll "
        f"{found['poll_us']:.0f} µs/event ({GAMES * POLLS_PER_GAME} long-polls); API {found['action_us']:.0f} µs "
        f"CPU per event; {found['complete']:.0f}/{found['watchers']:.0f} watchers got every event; load {load:.1f}"
    )
    if found["complete"] < found["watchers"]:
        note = "NOT EVERY WATCHER GOT EVERY EVENT; " + note
    return [Figure("watcher_cpu_us_per_event", found["stream_us"], "µs CPU", found["floor_us"], TARGET, note)]
