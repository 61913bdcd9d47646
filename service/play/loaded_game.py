"""A game as the service holds it: its seats and its state at a version, with who may act now."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from domain import engine
from service.play.errors import Unauthorized
from service.play.seats import Seat, controller_of
from service.storage.keys import BOT_QUEUE, MATCH_QUEUE

CALL_GRACE_SECONDS = 3  # how long a bot due waits while a person may act out of turn (a Go5 call)


def token_digest(token: str) -> str:
    """Tokens are kept only as SHA-256 digests."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def seat_of_token(token: str, digests: Sequence[str | None]) -> int:
    """The seat whose token digest is the token's; Unauthorized otherwise (constant-time comparison with
    every seat's)."""
    presented = token_digest(token)
    found = None
    for seat, digest in enumerate(digests):
        if digest is not None and hmac.compare_digest(presented, digest):
            found = seat
    if found is None:
        raise Unauthorized()
    return found


@dataclasses.dataclass(frozen=True)
class MatchPlace:
    """Where a match's game sits in it: the match, the deal and the rotation (C-8)."""

    match: str
    deal: int
    rotation: int

    def public(self) -> dict[str, Any]:
        return {"match": self.match, "deal": self.deal, "rotation": self.rotation}


@dataclasses.dataclass(frozen=True)
class LoadedGame:
    """A game as loaded: its creation facts and its snapshot at the latest version."""

    id: str
    seats: tuple[Seat, ...]
    token_digests: tuple[str | None, ...]
    config: engine.GameConfig
    seed_source: str
    snap: engine.Snapshot[Any]
    last_hash: str
    turn_seconds: int | None = None  # a human seat that does not act in time has a move played for it
    place: MatchPlace | None = None  # a match's game: which match, deal and rotation

    @property
    def version(self) -> int:
        return self.snap.version

    def seat_for_token(self, token: str) -> int:
        """The seat whose token this is; Unauthorized otherwise (constant-time comparison with every seat's)."""
        return seat_of_token(token, self.token_digests)

    def turn_queue_of(self, seat: Seat) -> str | None:
        """The queue a seat's due turn goes on: its controller's (service/play/seats.py), except that in a match's
        game the quick house bots play on MATCH_QUEUE: nobody waits for them, and `make run` plays that queue on
        workers that take only the CPU no one else wants (docs/operations.md, "Matches' workers")."""
        queue = controller_of(seat).turn_queue
        return MATCH_QUEUE if queue == BOT_QUEUE and self.place is not None else queue

    def bot_queue(self) -> str | None:
        """The queue the turn of the bot to act goes on (`turn_queue_of`); None when no bot acts now or its turn
        is not queued (a registered bot's)."""
        bot = self.bot_to_act()
        return self.turn_queue_of(bot) if bot is not None else None

    def bot_to_act(self) -> Seat | None:
        """The first seat that may act now whose turn the service asks for (a bot's), if any."""
        for seat in self.snap.to_act():
            if controller_of(self.seats[seat]).turn_queue is not None:
                return self.seats[seat]
        return None

    def humans_to_act(self) -> list[int]:
        """The seats that may act now and act with a token of their own (the people's)."""
        return [seat for seat in self.snap.to_act() if controller_of(self.seats[seat]).holds_token]

    def bots_asked(self) -> list[tuple[int, str]]:
        """The seats that may act now and are played by registered bots (their turn goes in the bot's own
        turn queue), with the bots' names."""
        named = ((seat, controller_of(self.seats[seat]).bot_name) for seat in self.snap.to_act())
        return [(seat, name) for seat, name in named if name is not None]

    def on_clock(self) -> list[int]:
        """The seats that may act now and are on a turn timeout's clock (people in a game with
        `turn_seconds`, registered bots always)."""
        return [seat for seat in self.snap.to_act() if self._clock_of(seat) is not None]

    def timeout_seconds(self) -> int | None:
        """The length of the turn timeout's clock due now (the shortest of the seats on it), None when none is."""
        clocks = [clock for seat in self.snap.to_act() if (clock := self._clock_of(seat)) is not None]
        return min(clocks) if clocks else None

    def timeout_due(self) -> bool:
        """A seat on a turn timeout's clock is to act: a turn timeout must be on the clock."""
        return bool(self.on_clock())

    def workers_may_wait(self) -> bool:
        """Whether the game can ever wait for the workers (a bot seat, or turn timeouts)."""
        return self.turn_seconds is not None or any(
            controller_of(seat).turn_queue is not None or controller_of(seat).clock_seconds(None) is not None
            for seat in self.seats
        )

    def _clock_of(self, seat: int) -> int | None:
        return controller_of(self.seats[seat]).clock_seconds(self.turn_seconds)

    def person_may_call(self) -> bool:
        """A person may act out of turn now (a Go5 call, V-13): a bot due waits CALL_GRACE_SECONDS
        first, as a player at the table gives the others a moment to call."""
        return any(controller_of(self.seats[seat]).holds_token for seat in self.snap.out_of_turn())

    def bot_delay_seconds(self) -> int:
        """How long a bot due now waits before it acts: CALL_GRACE_SECONDS while a person may call."""
        return CALL_GRACE_SECONDS if self.person_may_call() else 0
