"""What the play layer needs from the world outside it, as small protocols: the store's adapters
(service/storage/, on Redis) and the turn queue (service/storage/turn_queue.py, on RQ) implement them, and
service/bootstrap.py wires them in. Nothing here knows Redis or RQ."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from service.storage.keys import BOT_QUEUE
from service.storage.outcomes import AppendResult

Clock = Callable[[], str]  # the service clock: ISO 8601 in UTC, to the millisecond (game_service.utc_now)


class EventLog(Protocol):
    """A game's events and its header: one log per game, appended to only at the version it was read at."""

    def create(self, game_id: str, meta: Mapping[str, str], records: list[dict[str, Any]]) -> None:
        """Store a new game's header (service/play/game_header.py) and first records at once; GameExists if taken."""

    def append(
        self,
        game_id: str,
        expected_version: int,
        records: list[dict[str, Any]],
        idempotency: tuple[str, str] | None = None,
    ) -> AppendResult:
        """Append only if the log is still at `expected_version`; the (field, value) is kept with it, and a
        later append with that field answers `duplicate` with the value."""

    def idempotent_answer(self, game_id: str, field: str) -> str | None:
        """The value kept with an append under `field`, if any."""

    def meta(self, game_id: str) -> dict[str, str] | None:
        """The game's header as stored, None when there is no such game."""

    def read(self, game_id: str, after: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """Records with seq > after (at most `count`), in order."""

    def last_record(self, game_id: str) -> dict[str, Any] | None:
        """The game's last record; None when it has none."""

    def read_raw(self, game_id: str) -> list[str]:
        """Every stored record's text as it is (for audits of a possibly damaged log)."""


class KeptAnswers(Protocol):
    """Answers made once from a game that can no longer change (a packed game) and kept beside it."""

    def packed_answer(self, game_id: str, name: str) -> bytes | None:
        """The answer kept under `name`, if one was made from the game as it is now."""

    def keep_answer(self, game_id: str, name: str, answer: bytes) -> bool:
        """Keep `answer` under `name` if the game can no longer change; True if kept."""


class DisputeLog(Protocol):
    """Disputes filed by seats, beside a game and never in its log."""

    def add_dispute(self, game_id: str, seat: int, per_seat: int, dispute: Mapping[str, Any]) -> str | None:
        """The dispute's id, None when `seat` has `per_seat` already; GameGone when the game is gone."""

    def disputes(self, game_id: str, after: int = 0, count: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The disputes numbered after `after` (at most `count`), with their ids, oldest first."""

    def count_disputes(self, game_id: str, seat: int) -> int:
        """How many disputes `seat` has filed in the game."""


class TicketBook(Protocol):
    """Single-use stream tickets, kept by their digest with an expiry."""

    def put_ticket(self, game_id: str, digest: str, seat: int, seconds: int) -> None:
        """Keep a ticket (by its digest) for `seat` of the game, for `seconds`."""

    def take_ticket(self, game_id: str, digest: str) -> int | None:
        """The seat of a ticket, which is gone from then on; None when unknown, used or expired."""


class GameNotes(Protocol):
    """The games by their stage of life, as the command path notes them (best effort: never fails a move)."""

    def started(self, game_id: str, at: float) -> None:
        """A game is about to be stored."""

    def finishing(self, game_id: str, at: float, unless_noted: bool = False) -> None:
        """An append is about to end the game (or has, with `unless_noted`)."""

    def ended(self, game_id: str, at: float, unless_noted: bool = False) -> None:
        """The game's final append is stored: noted as finished at `at` (or when noted before, with
        `unless_noted`) and no longer active."""


class GameCounter(Protocol):
    """Games counted as they start and finish, for the metrics; and whether people are playing now."""

    def count_game(self, game: str, moment: str) -> None:
        """Count a game of type `game` that has `moment` (started, finished)."""

    def note_people_playing(self, seconds: float) -> None:
        """Note that people are playing, for `seconds` from now."""

    def people_playing(self) -> bool:
        """Whether people acted within the time their last note gave."""


class TurnDispatcher(Protocol):
    """Where due turns go: a bot's turn, a person's turn timeout, and the record of games that wait for one."""

    def schedule(self, game_id: str, version: int, delay_seconds: int = 0, queue: str = BOT_QUEUE) -> None:
        """A bot must act in `game_id` at `version`, not before `delay_seconds` from now, in `queue`'s lane (the
        caller notes the game as waiting for it, with `expect`)."""

    def expect(self, game_id: str, version: int) -> None:
        """An append is about to leave a turn due at `version` (noted before the append)."""

    def settle(self, game_id: str, version: int) -> None:
        """No turn is due in `game_id` at `version`."""

    def unnoted(self, game_ids: list[str]) -> list[str]:
        """Those of `game_ids` that are not noted as waiting."""

    def schedule_timeout(self, game_id: str, version: int, seconds: int) -> None:
        """A person is to act at `version`: play for them after `seconds` unless the game moved on."""

    def cancel_timeout(self, game_id: str, version: int) -> None:
        """The game moved on from `version`: that version's timeout is moot."""


class NoDispatcher:
    """A turn dispatcher that schedules nothing and notes nothing (for tools that only read)."""

    def schedule(self, game_id: str, version: int, delay_seconds: int = 0, queue: str = BOT_QUEUE) -> None:
        return None

    def expect(self, game_id: str, version: int) -> None:
        return None

    def settle(self, game_id: str, version: int) -> None:
        return None

    def unnoted(self, game_ids: list[str]) -> list[str]:
        return []

    def schedule_timeout(self, game_id: str, version: int, seconds: int) -> None:
        return None

    def cancel_timeout(self, game_id: str, version: int) -> None:
        return None


def epoch_of(at: str) -> float:
    """Seconds since the epoch of a service timestamp (the Clock's ISO 8601, UTC)."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


class BotBook(Protocol):
    """Registered bots, by name (service/storage/bot_registry.py)."""

    def register(self, bot: Mapping[str, Any], digest: str, cap: int) -> str:
        """Add the bot with its token's digest, all or nothing: `ok`, `exists` (name taken) or `full` (`cap`
        reached)."""

    def bot(self, name: str) -> dict[str, Any] | None:
        """The bot's stored fields (`token`: its token's digest); None when there is no such bot."""

    def names(self, after: str | None, count: int, game: str | None = None) -> list[str]:
        """At most `count` names after `after`, in order; of `game`'s bots only."""

    def replace_token(self, name: str, current: str, new: str) -> bool:
        """Put the digest `new` in place of `current`; False when `current` is no longer the bot's."""

    def name_of_token(self, digest: str) -> str | None:
        """The name of the bot whose token has this digest, if any."""

    def index_tokens(self) -> int:
        """Index every bot's token the token index lacks; how many were added."""

    def count(self, name: str, field: str, by: int) -> None:
        """Add `by` to one of the bot's counts: `playing`, `played` or `timeouts`."""

    def seen(self, name: str, at_ms: int) -> None:
        """The bot asked for its turns at `at_ms` (epoch ms)."""


class BotTurnBook(Protocol):
    """Each registered bot's queue of due turns (`<game id>:<version>`), with leases and deadlines
    (service/storage/bot_turns.py)."""

    def offer(self, name: str, turn: str, now_ms: int, deadline_ms: int, wake: bool) -> bool:
        """Put `turn` in the bot's queue, free now, unless it is there; `wake`: tell its waiters. True if added."""

    def lease(
        self, name: str, now_ms: int, until_ms: int, limit: int, every: bool = False
    ) -> tuple[list[tuple[str, int]], int | None]:
        """At most `limit` turns free at `now_ms` (`every`: leased ones too) with their deadlines, leased until
        `until_ms`; and when the first turn left is free (None: none is left)."""

    def release(self, name: str, turns: Sequence[str], now_ms: int) -> None:
        """Make `turns` free again at `now_ms`, leased as they are."""

    def withdraw(self, name: str, turns: Sequence[str]) -> None:
        """Take `turns` out of the bot's queue."""


class MatchBook(Protocol):
    """Matches: their headers, their games' states, their finished deals, the indexes
    (service/storage/matches.py)."""

    def create(self, match_id: str, fields: Mapping[str, Any], created_ms: int) -> bool:
        """Store a new running match; False if the id is taken."""

    def index_running(self, match_id: str, created_ms: int) -> None:
        """The match in the lists of all and of running matches."""

    def meta(self, match_id: str) -> dict[str, str] | None:
        """The match's header as stored, None when there is none."""

    def game_states(self, match_id: str, deals: range | None = None, count: int = 0) -> dict[tuple[int, int], str]:
        """Each started game's state by (deal, rotation): of every deal, or of `deals`' games (`count` a deal)."""

    def opened_below(self, match_id: str, deal: int) -> None:
        """Every deal below `deal` is done and opened (never lowered)."""

    def note_games(
        self, match_id: str, finished: Sequence[tuple[int, int]], started: Sequence[tuple[int, int]]
    ) -> list[tuple[int, int]]:
        """Note games, by (deal, rotation), as finished, and as started those not noted finished, in one step; the
        games noted started now."""

    def end_game(
        self, match_id: str, ended: tuple[int, int], following: tuple[int, int] | None, deals: int
    ) -> tuple[int, tuple[int, int] | None] | None:
        """A game's end noted and what follows it started, reading none of the other games: the count of finished
        games and the game noted started now (None where the match keeps no counts; (0, None) where it is not
        running)."""

    def finish(self, match_id: str, results: Any, finished_ms: int, deal_scores: Any = None) -> bool:
        """Mark the match finished with its results (and its deal scores); True if it finished now."""

    def index_finished(self, match_id: str, game: str, finished_ms: int) -> None:
        """The match among its game's finished ones, and no longer running."""

    def running(self) -> list[str]:
        """The running matches, oldest first."""

    def newest(self, before: float | None, count: int) -> list[tuple[str, float]]:
        """Matches created before `before` (ms), newest first, with their creation times."""

    def finished_of(self, game: str) -> list[str]:
        """A game's finished matches, in the order they finished."""


class Embargo(Protocol):
    """The games of a match whose deal is still being played (service/storage/matches.py)."""

    def update(self, opened: Sequence[str], closed: Mapping[str, tuple[str, int]]) -> None:
        """The `opened` games' deal is done: they open to everyone; the `closed` games (id -> match, deal) are closed
        to all but their seats' own views until their deal is done. One round trip."""

    def embargoed(self, game_id: str) -> tuple[str, int] | None:
        """The match and deal of a game closed until its deal is done; None for an open game."""
