"""Registered bots: outside programs that play seats over HTTP with a token of their own (shared/API.md
"Registered bots"). Registration, profiles and token rotation; the seats a bot's token acts for.

A bot's token is drawn once (32 random bytes), shown once and kept only as its SHA-256 digest, compared
in constant time, as a seat's token is (service/play/loaded_game.py).

Settings (environment): BOTS_MAX caps the registered bots (default 10,000).
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from service.play.errors import BadBotSeat, BotExists, BotNotFound, BotsFull, InvalidRequest, Unauthorized
from service.play.loaded_game import seat_of_token, token_digest
from service.play.ports import BotBook, Clock
from service.play.seats import Seat, controller_of
from service.play.settings import whole_setting

log = logging.getLogger(__name__)
BOTS_MAX = 10_000
ONLINE_SECONDS = 30  # a bot that asked for its turns this recently is online
NAME = re.compile(r"[a-z0-9][a-z0-9-]{2,31}")
DESCRIPTION_MAX = 500
PAGE_MAX = 100


def bots_max_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """BOTS_MAX: a whole number, default BOTS_MAX."""
    return whole_setting(environ, "BOTS_MAX", BOTS_MAX, unit="bots")


def public(stored: Mapping[str, Any], now_ms: int | None = None) -> dict[str, Any]:
    """A bot's public profile: `online` if it asked for its turns in the last 30 s, `playing` (games it plays
    now), `played` (games it finished) and `timeouts` (moves the service made for it)."""
    seen = stored.get("seen_ms")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return {
        "name": stored["name"],
        "games": list(stored["games"]),
        "description": stored.get("description"),
        "created_at": stored["created_at"],
        "online": seen is not None and now - int(seen) < ONLINE_SECONDS * 1000,
        "playing": max(0, int(stored.get("playing", 0))),
        "played": int(stored.get("played", 0)),
        "timeouts": int(stored.get("timeouts", 0)),
    }


def bot_named_by(book: BotBook, token: str) -> str | None:
    """The name of the registered bot whose token this is (found by its digest in the token index, then
    compared in constant time with the bot's own), None when it is no bot's."""
    digest = token_digest(token)
    name = book.name_of_token(digest)
    stored = book.bot(name) if name is not None else None
    return name if stored is not None and hmac.compare_digest(digest, stored["token"]) else None


def bot_token() -> str:
    """A new bot token (32 random bytes, URL-safe base64) that does not start with `-`: a bot's program takes
    it on a command line (`--token T`), where a leading `-` reads as an option (a token in 64 would)."""
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith("-"):
            return token


class Bots:
    """The registered bots' use cases: register, read, list, rotate a token; check a game's bot seats;
    find the seat a bot's token acts for."""

    def __init__(self, book: BotBook, clock: Clock, cap: int = BOTS_MAX) -> None:
        self.book = book
        self.clock = clock
        self.cap = cap

    def register(self, name: str, games: Sequence[str], description: str | None = None) -> dict[str, Any]:
        """Register a bot; its profile with its token (shown this once). InvalidRequest for a bad name, game
        or description, BotExists, BotsFull; nothing is stored then."""
        if not NAME.fullmatch(name):
            raise InvalidRequest("invalid_request", "name: 3 to 32 of a-z, 0-9 and -, starting with a letter or digit")
        known = {game.id for game in engine.all_games()}
        if not games or any(game not in known for game in games) or len(set(games)) != len(games):
            raise InvalidRequest("invalid_request", f"games: one or more distinct game ids of {sorted(known)}")
        if description is not None and len(description) > DESCRIPTION_MAX:
            raise InvalidRequest("invalid_request", f"description: at most {DESCRIPTION_MAX} characters")
        token = bot_token()
        bot = {"name": name, "games": list(games), "description": description, "created_at": self.clock()}
        outcome = self.book.register(bot, token_digest(token), self.cap)
        if outcome == "exists":
            raise BotExists(name)
        if outcome == "full":
            raise BotsFull(self.cap)
        return {**public(bot), "token": token}

    def profile(self, name: str) -> dict[str, Any]:
        """The bot's public profile; BotNotFound."""
        stored = self.book.bot(name) if NAME.fullmatch(name) else None
        if stored is None:
            raise BotNotFound(name)
        return public(stored)

    def page(self, after: str | None, limit: int, game: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of profiles by name after `after` (of `game`'s bots only), with the name to ask after for
        the next page (None at the end)."""
        names = self.book.names(after, limit + 1, game)
        found = [self.book.bot(name) for name in names[:limit]]
        profiles = [public(stored) for stored in found if stored is not None]
        return profiles, (names[limit - 1] if len(names) > limit else None)

    def new_token(self, name: str, token: str | None) -> dict[str, Any]:
        """A new token for the bot, given its current one (which is void from then on); Unauthorized otherwise."""
        stored = self.book.bot(name) if NAME.fullmatch(name) else None
        if stored is None:
            raise BotNotFound(name)
        current = token_digest(token or "")
        if token is None or not hmac.compare_digest(current, stored["token"]):
            raise Unauthorized("a new token needs 'Authorization: Bearer <the bot's current token>'")
        new = bot_token()
        if not self.book.replace_token(name, current, token_digest(new)):
            raise Unauthorized("the bot's token was replaced meanwhile")
        return {"name": name, "token": new}

    def check_seats(self, game: str, requests: Sequence[Mapping[str, Any]]) -> None:
        """BadBotSeat unless every bot a new game's seat names is registered, for `game`, and in one seat only."""
        named = [request["bot"] for request in requests if request.get("bot") is not None]
        for name in named:
            stored = self.book.bot(name) if NAME.fullmatch(name) else None
            if stored is None:
                raise BadBotSeat(f"seats: no bot named {name!r} is registered")
            if game not in stored["games"]:
                raise BadBotSeat(f"seats: the bot {name!r} is not registered for {game}")
        if len(set(named)) != len(named):
            raise BadBotSeat("seats: a bot may hold one seat of a game only")

    def count_games(self, seats: Sequence[Seat], moment: str) -> None:
        """Count a game of these seats that `started`, `finished` or was `abandoned` in the profiles of the
        registered bots that hold them. Best effort: a failure loses only the count, never the move."""
        changes = {"started": {"playing": 1}, "finished": {"playing": -1, "played": 1}, "abandoned": {"playing": -1}}
        names = [name for seat in seats if (name := controller_of(seat).bot_name) is not None]
        for name in names:
            for field, by in changes[moment].items():
                self._count(name, field, by)

    def count_timeout(self, seat: Seat) -> None:
        """A move the service made for a registered bot's seat whose deadline passed (its `timeouts`)."""
        name = controller_of(seat).bot_name
        if name is not None:
            self._count(name, "timeouts", 1)

    def _count(self, name: str, field: str, by: int) -> None:
        try:
            self.book.count(name, field, by)
        except Exception:
            log.exception("could not count %s %+d for the bot %s", field, by, name)

    def seat_for_token(self, seats: Sequence[Seat], digests: Sequence[str | None], token: str) -> int:
        """The seat `token` acts for: a seat's own token (`digests`), else the token of the registered bot
        that holds the seat (constant-time comparisons); Unauthorized otherwise."""
        try:
            return seat_of_token(token, digests)
        except Unauthorized:
            pass
        held = [controller_of(seat).bot_name for seat in seats]
        name = bot_named_by(self.book, token) if any(held) else None
        if name is None or name not in held:
            raise Unauthorized()
        return held.index(name)
