"""The command path: creating games and acting in them; every action, a person's or a bot's, is decided by
the rules and stored by one compare-and-append (GameService)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from domain import engine
from domain.chain import canonical_json, chain_records
from domain.errors import DomainError
from domain.events import Event
from domain.options import EventLimits
from domain.shuffle import is_valid_seed, new_nonce, new_server_seed
from service.play import game_header
from service.play.best_effort import BestEffort
from service.play.bots import Bots
from service.play.errors import (
    BadBotSeat,
    GameNotFound,
    IdempotencyKeyReused,
    InvalidRequest,
    NoFreeGameId,
    RulesRefusal,
    Unauthorized,
    VersionConflict,
    refusal,
    token_needed,
)
from service.play.game_repository import GameRepository
from service.play.game_view import render
from service.play.loaded_game import CALL_GRACE_SECONDS, LoadedGame, MatchPlace, token_digest
from service.play.match_pace import MatchPace
from service.play.ports import Clock, EventLog, GameCounter, GameNotes, epoch_of
from service.play.seats import Seat, controller_of, new_seat
from service.play.turn_scheduler import TurnScheduler
from service.storage.outcomes import AppendResult, GameExists

__all__ = ["CALL_GRACE_SECONDS", "GameService", "LoadedGame", "Seat", "utc_now"]
log = logging.getLogger(__name__)
RETRIES_WITHOUT_VERSION = 5
DUE_BATCH_TURNS = 32  # due turns stored in one append at most (a game of one round of Golf: one append) ...
DUE_BATCH_SECONDS = 0.02  # ... decided within this long of the first one's start
TURN_SECONDS_RANGE = (1, 86400)  # a game's optional turn timeout (`turn_seconds`)
NO_TOKEN = token_needed("an action")
INTERNAL_FIELD_PREFIX = "~"  # idempotency fields the service makes (a client's start with its seat)


def utc_now() -> str:
    """The service clock: ISO 8601 in UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class GameService:
    """The command use cases: create a game, act in it (a person by token, or a seat), play the turns
    that are due, abandon it. Its collaborators are given (service/bootstrap.py wires them)."""

    def __init__(
        self,
        store: EventLog,
        repository: GameRepository,
        index: GameNotes,
        counts: GameCounter,
        turns: TurnScheduler,
        think_ms_max: int,
        event_limits: EventLimits,
        clock: Clock = utc_now,
        bots: Bots | None = None,
        best_effort: BestEffort | None = None,
        match_pace: MatchPace | None = None,
    ) -> None:
        """`store`: the games' events and headers; `index`: where games are noted by their stage of life;
        `counts`: games counted as they start and finish; `think_ms_max`: the cap on an expert's think time a
        move; `event_limits`: a new game's default and largest `max_events` (C-9); `bots`: the registered bots
        (None: no seat may name one); `best_effort`: how the notes no move waits for are written (the game's
        start and end in the index, the counts; default: at once); `match_pace`: how a match's games yield to
        people's (service/play/match_pace.py; default: its default share)."""
        self.store = store
        self.repository = repository
        self.index = index
        self.turns = turns
        self.think_ms_max = think_ms_max
        self.event_limits = event_limits
        self.clock = clock
        self.counts = counts
        self.bots = bots
        self.best_effort = best_effort or BestEffort()
        self.match_pace = match_pace or MatchPace(counts)
        self.when_ended: list[Callable[[LoadedGame], None]] = []  # told of each game this process ends

    # ------------------------------------------------------------ create

    def create_game(
        self,
        game: str,
        seats: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        seed: str | None = None,
        decks: Sequence[Sequence[str]] = (),
        turn_seconds: int | None = None,
        game_id: str | None = None,
        place: MatchPlace | None = None,
    ) -> dict[str, Any]:
        """Validate, deal and store a new game; returns the creation response with tokens. `game_id`: the
        game's id, given (GameExists when it is taken), else drawn; `place`: a match's game, where it sits."""
        if seed is not None and not is_valid_seed(seed):
            raise InvalidRequest("invalid_seed", "a seed is 1 to 128 printable ASCII characters (C-4)")
        low, high = TURN_SECONDS_RANGE
        if turn_seconds is not None and not low <= turn_seconds <= high:
            raise InvalidRequest("invalid_request", f"turn_seconds must be {low} to {high}, or null for no timeout")
        try:
            config = engine.make_config(
                game, len(seats), options, seed or new_server_seed(), decks, nonce=new_nonce(), limits=self.event_limits
            )
            snap, events = engine.start(config)
        except DomainError as error:
            raise refusal(error) from error
        if any(request.get("bot") is not None for request in seats):
            if self.bots is None:
                raise BadBotSeat("seats: this service seats no registered bots")
            self.bots.check_seats(game, seats)
        seat_list = tuple(new_seat(i, request, game, self.think_ms_max) for i, request in enumerate(seats))
        source = "creator" if seed is not None else "server"
        return self._store_new_game(config, seat_list, source, snap, events, turn_seconds, game_id, place)

    def _store_new_game(
        self,
        config: engine.GameConfig,
        seats: tuple[Seat, ...],
        seed_source: str,
        snap: engine.Snapshot[Any],
        events: list[Event],
        turn_seconds: int | None,
        given_id: str | None = None,
        place: MatchPlace | None = None,
    ) -> dict[str, Any]:
        tokens = [secrets.token_urlsafe(32) if controller_of(seat).holds_token else None for seat in seats]
        digests = [token_digest(t) if t else None for t in tokens]
        commitment = _commitment_of(events)
        records = chain_records(events, 1, commitment, self.clock())
        meta = game_header.encode(config, seats, digests, seed_source, records[0]["at"], turn_seconds, place)
        for _ in range(1 if given_id is not None else 3):
            game_id = given_id or secrets.token_urlsafe(9)
            loaded = LoadedGame(
                game_id, seats, tuple(digests), config, seed_source, snap, records[-1]["hash"], turn_seconds, place
            )
            self.turns.note_waiting(loaded)
            self.best_effort.write(
                f"note {game_id} as started", self.index.started, game_id, epoch_of(records[0]["at"])
            )
            try:
                self.store.create(game_id, meta, records)
                break
            except GameExists:
                if given_id is not None:
                    raise
                continue
        else:
            raise NoFreeGameId()
        self.repository.remember(loaded)
        self._count(config.game, seats, "started")
        self.turns.schedule(loaded)
        return {
            "id": game_id,
            "game": config.game,
            "version": snap.version,
            "rules_version": config.rules_version,
            "seed_commitment": commitment,
            "seed_source": seed_source,
            "stacked": config.stacked,
            "turn_seconds": turn_seconds,
            "seats": [dict(s.public(), **({"token": t} if t else {})) for s, t in zip(seats, tokens, strict=True)],
        }

    # ------------------------------------------------------------ act

    def act(
        self,
        game_id: str,
        token: str | None,
        body: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """A person's action, as the API has it: the token's seat acts in the game as it is now
        (`expected_version`: only at that version; `idempotency_key`: a retry gets the first answer).
        An unknown game (GameNotFound) is refused before a missing or foreign token (Unauthorized), and
        both from the game's meta alone: the game is loaded only for a token of one of its seats."""
        seat = self.seat_for_token(game_id, token)
        loaded = self.repository.load(game_id)
        if loaded.place is None:  # a match's own games are not people's
            self.match_pace.person_acted(self.best_effort)
        return self.submit(game_id, seat, body, expected_version, idempotency_key, loaded)

    def seat_for_token(self, game_id: str, token: str | None) -> int:
        """The seat `token` acts for in the game: one of its seats' own tokens, else a registered bot's
        that holds a seat; GameNotFound first, then Unauthorized. A seat's token is checked on the game's
        meta alone; a bot's only when that fails."""
        try:
            seat = self.repository.seat_for_token(game_id, token)
        except Unauthorized:
            if self.bots is None or token is None:
                raise
            header = self.repository.load_header(game_id)
            return self.bots.seat_for_token(header.seats, header.token_digests, token)
        if seat is None:
            raise Unauthorized(NO_TOKEN)
        return seat

    def submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        loaded: LoadedGame | None = None,
    ) -> dict[str, Any]:
        """`seat`'s action, decided on the game as it is now and appended at that version (act's path once
        the seat is known); a client's Idempotency-Key is answered once. `loaded`: the game as just
        loaded, which the first attempt decides on instead of reading the stream again."""
        key = _client_key(seat, body, idempotency_key)
        if key is not None and (prior := self._prior_answer(game_id, key)) is not None:
            return prior
        try:
            return self._decide_and_append(game_id, seat, body, expected_version, key, loaded)
        except (VersionConflict, RulesRefusal, IdempotencyKeyReused):
            # A retry racing its own first request: the first one appended after our look-up above, so
            # this one was decided on the state after it (a conflict, or a rule's refusal). The first answer wins.
            prior = self._prior_answer(game_id, key) if key is not None else None
            if prior is None:
                raise
            return prior

    def play_due_turns(self, game_id: str, version: int, turns: Turns) -> str:
        """Play the turns due at `version` and those right after it, as `turns` picks them.

        Each turn is decided on the game as the turns before it left it, and stored by a compare-and-append
        at the version the first unstored one was decided on (`store_due_turns`), so a second run of the same
        (game, version) can never play twice and a person who acted first wins. Turns decided in quick
        succession are stored together (a batch: at most DUE_BATCH_TURNS, decided within DUE_BATCH_SECONDS
        of the batch's first decision's start), one append and one fsync for a run of quick bots, while a
        slow decision (an expert's think) is stored as soon as it is made. The loop ends when `turns` has
        no next one, when someone else appended (they scheduled what follows), or at the end of the game;
        then the last state is scheduled as after any append (one job, not one per version played). Says
        what happened: played, `turns.stale` (the version moved before the first move) or `turns.idle`
        (nothing was due).
        """
        loaded = self.repository.load(game_id)
        if loaded.version != version:
            return "stale"
        played = 0
        try:
            while True:
                batch, more = self._next_due_batch(loaded, turns, played)
                if batch:
                    try:
                        self.store_due_turns(loaded, batch)
                    except VersionConflict:  # someone else appended at this version and scheduled what follows
                        return "played" if played else turns.stale
                    for due in batch:
                        turns.done(due.before, due.seat)
                    played += len(batch)
                    loaded = batch[-1].step.game
                if not more or loaded.snap.finished:
                    break
        except Exception:
            if played:
                self.turns.schedule(loaded)  # best effort; the reconciler covers a failure
            raise
        self.turns.schedule(loaded)
        return "played" if played else turns.idle

    def _next_due_batch(self, loaded: LoadedGame, turns: Turns, played: int) -> tuple[list[DueTurn], bool]:
        """The next due turns to store together, each decided on the game as the one before it left it: until
        `turns` has no next one, the game ends, DUE_BATCH_TURNS are decided or DUE_BATCH_SECONDS have passed
        since the first began; and whether `turns` may have more after them."""
        batch: list[DueTurn] = []
        started = time.monotonic()
        current = loaded
        while (turn := turns.next(current, played + len(batch))) is not None:
            seat, action, reason = turn
            step = self.decide_due_turn(current, seat, action, reason)
            batch.append(DueTurn(current, seat, step))
            current = step.game
            full = len(batch) >= DUE_BATCH_TURNS or time.monotonic() - started >= DUE_BATCH_SECONDS
            if full or current.snap.finished:
                return batch, True
        return batch, False

    def decide_due_turn(
        self, loaded: LoadedGame, seat: int, action: Mapping[str, Any], system_reason: str | None = None
    ) -> Step:
        """A due turn (service/play/due_turns.py): `seat`'s action decided on `loaded`, as records to store
        (`store_due_turns`) and the game after them. `system_reason` (a turn timeout): the system plays the
        seat's action, recorded with actor "system", the seat and the reason."""
        return self._decide(loaded, lambda snap: engine.act(snap, seat, action), system_reason)

    def store_due_turns(self, loaded: LoadedGame, batch: Sequence[DueTurn]) -> None:
        """Store due turns decided one after another from `loaded`, in one append only at its version;
        VersionConflict when the game moved on. What follows is left to the caller to schedule."""
        records = [record for due in batch for record in due.step.records]
        self._append_at(loaded, Step(records, batch[-1].step.game))

    def load(self, game_id: str) -> LoadedGame:
        """The game as it stands now (GameNotFound when there is none)."""
        return self.repository.load(game_id)

    def note_lost_turns(self, running: list[str]) -> set[str]:
        """Of these running games, note those that the waiting index misses while a bot or a turn timeout
        is due (its index write and its job were both lost), so that the reconciler asks for the turn; a
        game that is gone is left out. Returns the games noted."""
        noted = set()
        for game_id in self.turns.unnoted(running):
            try:
                loaded = self.repository.load(game_id)
            except GameNotFound:
                continue
            if self.turns.note_waiting(loaded):
                noted.add(game_id)
        return noted

    def abandon(self, game_id: str, reason: str, version: int | None = None) -> list[dict[str, Any]]:
        """End a running game as abandoned (GameAbandoned, then the seed's reveal) through a
        compare-and-append at the version it was decided on; returns the records appended. `version`:
        only at that version (where the caller found the game idle); VersionConflict when it moved on."""
        loaded = self.repository.load(game_id)
        if version is not None and loaded.version != version:
            raise VersionConflict(version, loaded.version)
        step = self._decide(loaded, lambda snap: engine.abandon(snap, reason))
        self.turns.note_waiting(step.game)
        self._append_at(loaded, step)
        self.turns.schedule(step.game)
        return step.records

    def _decide_and_append(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None,
        key: ClientKey | None,
        current: LoadedGame | None,
    ) -> dict[str, Any]:
        """Decide `seat`'s action and append it; without an expected version, decided again on the game
        as it is when another append came first (at most RETRIES_WITHOUT_VERSION times)."""
        usable = current is not None and expected_version in (None, current.version)
        field = key.field if key else internal_idempotency_field()
        for attempt in range(RETRIES_WITHOUT_VERSION):
            loaded = current if attempt == 0 and usable and current is not None else self.repository.load(game_id)
            if expected_version is not None and expected_version != loaded.version:
                raise VersionConflict(expected_version, loaded.version)
            step = self._decide(loaded, lambda snap: engine.act(snap, seat, body))
            response = {
                "version": step.game.version,
                "events": step.records,
                "state": render(step.game, step.game.snap, seat),
            }
            # a client's key keeps the whole answer (a retry gets it again); an internal one only the version
            stored = json.dumps({"body": key.body_digest, "response": response}) if key else str(step.game.version)
            self.turns.note_waiting(step.game)
            result = self._append(loaded, step, (field, stored))
            if _applied(result, stored):
                self.turns.schedule(step.game)
                return response
            if result.outcome == "duplicate":
                assert key is not None and result.prior is not None
                return _stored_answer(result.prior, key.body_digest)
            if expected_version is not None:
                raise VersionConflict(expected_version, result.version)
        raise VersionConflict(loaded.version, loaded.version + 1)

    def _prior_answer(self, game_id: str, key: ClientKey) -> dict[str, Any] | None:
        """The answer stored under a client's Idempotency-Key, if any (IdempotencyKeyReused for another body)."""
        prior = self.store.idempotent_answer(game_id, key.field)
        return None if prior is None else _stored_answer(prior, key.body_digest)

    def _decide(
        self,
        loaded: LoadedGame,
        decision: Callable[[engine.Snapshot[Any]], tuple[engine.Snapshot[Any], list[Event]]],
        system_reason: str | None = None,
    ) -> Step:
        """The rules' `decision` on `loaded` (engine.act, engine.abandon) as the records to append and the
        game after them; the rules' refusal as the play layer's."""
        try:
            snap, events = decision(loaded.snap)
        except DomainError as error:
            raise refusal(error) from error
        records = chain_records(events, loaded.version + 1, loaded.last_hash, self.clock(), system_reason)
        return Step(records, dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"]))

    def _append_at(self, loaded: LoadedGame, step: Step) -> None:
        """Append `step` only at `loaded`'s version, with an idempotency field of its own; VersionConflict
        when the game moved on."""
        stored = str(step.game.version)
        result = self._append(loaded, step, (internal_idempotency_field(), stored))
        if not _applied(result, stored):
            raise VersionConflict(loaded.version, result.version)

    def _append(self, loaded: LoadedGame, step: Step, idempotency: tuple[str, str]) -> AppendResult:
        """Compare-and-append `step` at `loaded`'s version, with the bookkeeping around it (the game's
        end in the indexes, the cache, the metrics, the turn timeout it ends). What follows is noted
        and scheduled by the caller: each action's, a chain of due turns once after its last."""
        new = step.game
        self._note_ending(new, step.records)
        result = self.store.append(loaded.id, loaded.version, step.records, idempotency)
        if _applied(result, idempotency[1]):
            self._ended(new)
            self.repository.appended(loaded, new)
            if new.snap.finished:
                self._count(new.config.game, new.seats, "finished" if new.snap.abandoned is None else "abandoned")
            self.turns.moved_on(loaded)
        return result

    def _count(self, game: str, seats: Sequence[Seat], moment: str) -> None:
        """Count a game that started or finished, for the metrics and its registered bots' profiles (a best-effort
        write: a failure loses only the count)."""
        self.best_effort.write(f"count a {game} game as {moment}", self.counts.count_game, game, moment)
        if self.bots is not None and any(controller_of(seat).bot_name for seat in seats):
            self.best_effort.write(
                f"count a {game} game as {moment} for its bots", self.bots.count_games, seats, moment
            )

    # ------------------------------------------------------------ the end of a game

    def _note_ending(self, new: LoadedGame, records: list[dict[str, Any]]) -> None:
        """Before an append that ends the game: note it as finished (an intent, so that no finished
        game escapes compaction if this process stops right after the append; sent in front of the append, in
        one round trip). Best effort: an index that cannot be reached never fails the action (_ended notes it
        again, the sweep's walk after)."""
        if new.snap.finished:
            at = epoch_of(records[-1]["at"])
            self.best_effort.ahead(f"note {new.id} as finishing", self.index.finishing, new.id, at)

    def _ended(self, new: LoadedGame) -> None:
        """After an append that ended the game: note it as finished again (a sweep may have taken the
        intent out while the append was on its way) and no longer active, in one round trip. A best-effort
        write: the lifecycle sweep's index walk puts back a finished game that an index misses."""
        if not new.snap.finished:
            return
        at = epoch_of(self.clock())  # the intent's time stays when it is still there
        self.best_effort.write(f"note {new.id} as finished", self.index.ended, new.id, at, True)
        for listener in self.when_ended:  # best effort: what a listener does is repaired by its own pass
            try:
                listener(new)
            except Exception:
                log.exception("a listener failed on the end of the game %s", new.id)


def internal_idempotency_field() -> str:
    """An append's own idempotency field, made once per action that brings no Idempotency-Key: it makes
    the append safe to resend when its reply is lost (service/storage/event_store.py). `~` keeps it apart from a
    client's fields (`<seat>:<key>`)."""
    return f"{INTERNAL_FIELD_PREFIX}{secrets.token_hex(8)}"


def _applied(result: AppendResult, stored: str) -> bool:
    """This append was applied: `ok`, or `duplicate` of its own field and value (a resend after the
    first call's reply was lost)."""
    return result.outcome == "ok" or (result.outcome == "duplicate" and result.prior == stored)


def _commitment_of(events: list[Event]) -> str:
    created = events[0]
    assert isinstance(created, engine.GameCreated)
    return created.seed_commitment


class Turns(Protocol):
    """Which due turns one job plays, and how (service/play/due_turns.py): a chain of bot turns, or a
    turn timeout's moves."""

    stale: str  # the outcome when the version the job was for is gone before its first move
    idle: str  # the outcome when nothing was due

    def next(self, loaded: LoadedGame, played: int) -> tuple[int, dict[str, Any], str | None] | None:
        """The next turn on `loaded` after `played` turns: (seat, action, system reason), or None to stop."""

    def done(self, loaded: LoadedGame, seat: int) -> None:
        """`seat`'s turn at `loaded` was stored."""


@dataclasses.dataclass(frozen=True)
class Step:
    """One decided step of a game: the records it appends and the game after them."""

    records: list[dict[str, Any]]
    game: LoadedGame


@dataclasses.dataclass(frozen=True)
class DueTurn:
    """A due turn decided and not yet stored: the game it was decided on, the seat and its step."""

    before: LoadedGame
    seat: int
    step: Step


@dataclasses.dataclass(frozen=True)
class ClientKey:
    """A client's Idempotency-Key in a game: its field (`<seat>:<key>`) and the digest of its request's body."""

    field: str
    body_digest: str


def _client_key(seat: int, body: Mapping[str, Any], key: str | None) -> ClientKey | None:
    if key is None:
        return None
    return ClientKey(f"{seat}:{key}", hashlib.sha256(canonical_json(dict(body)).encode("utf-8")).hexdigest())


def _stored_answer(prior: str, body_digest: str) -> dict[str, Any]:
    stored = json.loads(prior)
    if stored["body"] != body_digest:
        raise IdempotencyKeyReused()
    response: dict[str, Any] = stored["response"]
    return response
