"""Reads bounded by their answer: an events page, a repeated audit, a tokenless action and a record, on a
game just under the `max_events` default (C-9: the longest a game of default options may grow) against one
of 10 events.

The games are built as bench/length.py builds them (Golf, `moves.stall` played through the domain and appended
in batches: no API process has them cached). The events page is asked of the running games: `limit=10` events
after a seq drawn uniformly from each game (the whole 10-event game). The other figures are asked of the same
games once ended (abandoned, as the sweep ends an idle game) and packed, as a finished game is read: `/audit`
again and again (the first one of each game, which makes the answer kept beside it, is not counted), an action
without a token (401), and `/record`, whose cost is per event of the game. Each request goes on a new
connection, in rounds of `BATCH` taken in turn by both games, after `WARMUP` requests of each; the cost is the
CPU time of gunicorn and Redis (their threads' schedstat), as in bench/length.py.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from bench.client import Connection
from bench.length import build
from bench.procs import Server, cpu_seconds
from bench.report import Figure, Target
from domain.options import MAX_EVENTS_DEFAULT
from service.play.game_service import GameService
from service.storage.packing import PackedStore

LONG, SHORT = MAX_EVENTS_DEFAULT - 100, 10
TITLE = f"reads of a game of {LONG:,} events against one of {SHORT}: a page, an audit, a record, no token ..."
PAGE = 10
WARMUP = 4
ROUNDS = 3
BATCH = 30
RECORD_BATCH = 6  # a record of 20,000 events is about 8 MB: fewer of them
TARGET = Target("<=", 1.5)
Request = tuple[str, str, str | None, int]  # method, path, token, expected status


async def _ask(port: int, requests: list[Request]) -> None:
    """Each request on a new connection; its status must be the one expected."""
    for method, path, token, status in requests:
        conn = Connection(port)
        got, data = await conn.request(
            method, path, {"type": "draw", "from": "stock"} if method == "POST" else None, token
        )
        await conn.close()
        if got != status:
            raise RuntimeError(f"{method} {path}: {got} (expected {status}) {data[:200]!r}")


def cost(
    server: Server, redis_pid: int, games: dict[int, str], requests: Callable[[int, str], list[Request]]
) -> dict[int, float]:
    """Per game length: the CPU ms of gunicorn and Redis a request (`requests(length, game_id)` makes a batch)."""
    for length, game_id in games.items():
        asyncio.run(_ask(server.port, requests(length, game_id)[:WARMUP]))
    cpu = dict.fromkeys(games, 0.0)
    count = dict.fromkeys(games, 0)
    order = list(games)
    for _ in range(ROUNDS):
        for length in order:
            batch = requests(length, games[length])
            before = cpu_seconds(server.pid) + cpu_seconds(redis_pid)
            asyncio.run(_ask(server.port, batch))
            cpu[length] += cpu_seconds(server.pid) + cpu_seconds(redis_pid) - before
            count[length] += len(batch)
        order = order[1:] + order[:1]
    return {length: cpu[length] * 1000 / count[length] for length in games}


def figures(service: GameService, packing: PackedStore, server: Server, redis_pid: int) -> list[Figure]:
    """The four figures, each the long game against the 10-event one."""
    built = {length: build(service, length)[0] for length in (LONG, SHORT)}
    rng = random.Random(35)

    def page(length: int, game_id: str) -> list[Request]:
        afters = [rng.randint(0, length - PAGE) for _ in range(BATCH)]
        return [("GET", f"/v1/games/{game_id}/events?after={after}&limit={PAGE}", None, 200) for after in afters]

    pages = cost(server, redis_pid, built, page)
    events = {}
    for length, game_id in built.items():
        service.abandon(game_id, "the bench is done with it")
        if packing.compact(game_id) != "packed":
            raise RuntimeError(f"could not pack the game of {length} events")
        events[length] = len(service.store.read(game_id))

    def audit(length: int, game_id: str) -> list[Request]:
        return [("GET", f"/v1/games/{game_id}/audit", None, 200)] * BATCH

    def tokenless(length: int, game_id: str) -> list[Request]:
        return [("POST", f"/v1/games/{game_id}/actions", None, 401)] * BATCH

    def record(length: int, game_id: str) -> list[Request]:
        return [("GET", f"/v1/games/{game_id}/record", None, 200)] * RECORD_BATCH

    audits = cost(server, redis_pid, built, audit)
    actions = cost(server, redis_pid, built, tokenless)
    records = {length: ms / events[length] for length, ms in cost(server, redis_pid, built, record).items()}
    games = f"a game of {events[LONG]:,} events against one of {events[SHORT]}"
    return [
        Figure(
            f"events_page_cost_ratio_{LONG}_vs_{SHORT}",
            pages[LONG],
            "ms CPU",
            pages[SHORT],
            TARGET,
            f"{PAGE} events; {games}",
        ),
        Figure(
            f"audit_repeat_cost_ratio_{LONG}_vs_{SHORT}",
            audits[LONG],
            "ms CPU",
            audits[SHORT],
            TARGET,
            f"packed; {games}",
        ),
        Figure(
            f"tokenless_action_cost_ratio_{LONG}_vs_{SHORT}",
            actions[LONG],
            "ms CPU",
            actions[SHORT],
            TARGET,
            f"packed; {games}",
        ),
        Figure(
            f"record_cost_per_event_ratio_{LONG}_vs_{SHORT}",
            records[LONG] * 1000,
            "µs CPU",
            records[SHORT] * 1000,
            TARGET,
            f"packed, per event; {games}",
        ),
    ]
