"""Registered bots for the bench: registering many over HTTP, and seating them in games."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bench.client import Connection

AT_ONCE = 25  # registrations in flight at a time


def bot_names(prefix: str, count: int) -> list[str]:
    """`count` bot names, `<prefix>-0000` on (a name is 3 to 32 of a-z, 0-9 and -)."""
    return [f"{prefix}-{n:04d}" for n in range(count)]


async def register_bots(port: int, names: Sequence[str], games: Sequence[str]) -> list[str]:
    """Register each of `names` for `games` with `POST /v1/bots` on the API's port; their tokens, in order."""
    conns = [Connection(port) for _ in range(AT_ONCE)]
    tokens: list[str] = [""] * len(names)

    async def register(lane: int) -> None:
        for n in range(lane, len(names), AT_ONCE):
            created = await conns[lane].json("POST", "/v1/bots", {"name": names[n], "games": list(games)})
            tokens[n] = str(created["token"])

    try:
        await asyncio.gather(*(register(lane) for lane in range(AT_ONCE)))
    finally:
        for conn in conns:
            await conn.close()
    return tokens


def seatings(bots: Sequence[str], seats: int, games: int) -> list[list[str]]:
    """The registered bots in the seats of each of `games` games: bot (game + seat) mod n in that seat, so that
    no bot sits twice in a game (a game refuses it: there must be at least as many bots as seats) and each
    plays each seat as often as the others over every n games."""
    if len(bots) < seats:
        raise ValueError(f"{seats} seats need {seats} bots, not {len(bots)}")
    return [[bots[(game + seat) % len(bots)] for seat in range(seats)] for game in range(games)]
