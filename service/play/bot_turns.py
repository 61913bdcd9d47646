"""A registered bot's due turns, as `GET /v1/bots/me/turns` and its stream hand them out (shared/API.md,
"Registered bots").

The turn scheduler (service/play/turn_scheduler.py) puts each turn in the bot's queue; here a turn is
handed out with a lease: leased turns are not handed out again until the lease ends
(BOT_TURN_LEASE_SECONDS, default 5), and from then on, until the turn is played or moot, they are (a bot
that crashed and came back gets its turns again). Each turn is built from the game as it is when handed
out: the seat's view exactly as `GET /v1/games/{id}` gives it with the bot's token, its legal actions, its
deadline (its turn timeout's) and the game's options (some policies read them; a match's game shows no record
while its deal is played, C-8). A turn whose game moved on, ended or is gone is dropped from the queue
instead; one whose game has not reached it yet (put there just before its append, which has not landed, or
never will) is not leased, so it is handed out the moment the append lands, and is dropped at its deadline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from domain import engine
from service.play.bots import bot_named_by
from service.play.errors import GameNotFound, Unauthorized
from service.play.game_repository import GameRepository
from service.play.game_view import render
from service.play.ports import BotBook, BotTurnBook
from service.play.settings import whole_setting
from service.play.turn_scheduler import turn_id

LEASE_SECONDS = 5  # a turn handed out is not handed out again for this long, unless BOT_TURN_LEASE_SECONDS says
LEASE_SECONDS_RANGE = (1, 300)
TURNS_PAGE = 10  # turns a request gets by default ...
TURNS_PAGE_MAX = 100  # ... and at most
SEEN_EVERY_SECONDS = 10.0  # a process writes that a bot asked for turns at most this often (its `online`)


def lease_seconds_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """BOT_TURN_LEASE_SECONDS: a whole number of seconds in LEASE_SECONDS_RANGE, default LEASE_SECONDS."""
    return whole_setting(environ, "BOT_TURN_LEASE_SECONDS", LEASE_SECONDS, *LEASE_SECONDS_RANGE, unit="seconds")


def rfc3339(epoch_ms: int) -> str:
    """An instant in epoch milliseconds as the service writes times: RFC 3339, UTC, to the millisecond."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class BotTurns:
    """Hands out a registered bot's due turns, each leased, built from its game as it is now."""

    def __init__(
        self,
        queues: BotTurnBook,
        book: BotBook,
        repository: GameRepository,
        lease_seconds: int = LEASE_SECONDS,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.queues = queues
        self.book = book
        self.repository = repository
        self.lease_seconds = lease_seconds
        self.now_ms = now_ms
        self._seen: dict[str, float] = {}

    def bot_of_token(self, token: str) -> str:
        """The name of the registered bot whose token this is; Unauthorized otherwise."""
        name = bot_named_by(self.book, token)
        if name is None:
            raise Unauthorized("a bot's turns need 'Authorization: Bearer <the bot's token>'")
        return name

    def hand_out(self, name: str, limit: int, every: bool = False) -> tuple[list[dict[str, Any]], int | None]:
        """At most `limit` of the bot's due turns that are not leased (`every`: leased ones too: a stream
        that reconnects), each leased from now; with when the next turn is free (epoch ms, None: none
        waits). Turns found moot are dropped from the queue and not counted."""
        self._note_seen(name)
        now = self.now_ms()
        leased, next_free = self.queues.lease(name, now, now + self.lease_seconds * 1000, limit, every)
        turns, moot, pending = [], [], []
        for turn, deadline_ms in leased:
            built = self._build(name, turn, deadline_ms, now)
            if built is None:
                moot.append(turn)
            elif built:
                turns.append(built)
            else:
                pending.append(turn)
        self.queues.withdraw(name, moot)
        self.queues.release(name, pending, now)  # not handed out: free the moment its append lands, which wakes
        return turns, next_free  # the waiters (a pending turn is not waited for: no spinning until it lands)

    def _build(self, name: str, turn: str, deadline_ms: int, now: int) -> dict[str, Any] | None:
        """The turn as handed out; None when it is moot; {} when its game has not reached it yet."""
        game_id, _, version_text = turn.rpartition(":")
        if not version_text.isdigit():
            return None
        version = int(version_text)
        try:
            loaded = self.repository.load(game_id)
        except GameNotFound:
            return None
        if loaded.version < version:
            return {} if now < deadline_ms else None
        seats = [seat for seat, bot in loaded.bots_asked() if bot == name]
        if loaded.version > version or not seats:
            return None
        seat = seats[0]
        return {
            "turn": turn_id(game_id, version),
            "game_id": game_id,
            "game": loaded.config.game,
            "rules_version": loaded.config.rules_version,
            "seat": seat,
            "version": version,
            "deadline": rfc3339(deadline_ms),
            "view": render(loaded, loaded.snap, seat),
            "legal": engine.legal_actions(loaded.snap, seat),
            "options": dict(loaded.config.options),
        }

    def _note_seen(self, name: str) -> None:
        """Keep that the bot asked for its turns (its profile's `online`), at most every SEEN_EVERY_SECONDS."""
        now = time.monotonic()
        if now - self._seen.get(name, -SEEN_EVERY_SECONDS) < SEEN_EVERY_SECONDS:
            return
        self.book.seen(name, self.now_ms())
        self._seen[name] = now
