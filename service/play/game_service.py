"""The command path: creating games and acting in them; every action, a person's or a bot's, is decided by
the rules and stored by one compare-and-append (GameService)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from domain import engine
from domain.chain import canonical_json, chain_records
from domain.errors import DomainError
from domain.events import Event
from domain.options import EventLimits
from domain.shuffle import is_valid_seed, new_nonce, new_server_seed
from service.play.errors import (
    IdempotencyKeyReused,
    InvalidRequest,
    NoFreeGameId,
    RulesRefusal,
    Unauthorized,
    VersionConflict,
    refusal,
    token_needed,
)
from service.play.event_limits import event_limits_from_env
from service.play.game_repository import GameRepository
from service.play.game_view import render
from service.play.job_queue import BotDispatcher
from service.play.loaded_game import CALL_GRACE_SECONDS, LoadedGame, token_digest
from service.play.seats import Seat, controller_of, new_seat, think_ms_max_from_env
from service.play.turn_scheduler import TurnScheduler
from service.storage.event_store import AppendResult, EventStore, GameExists, StoreUnavailable
from service.storage.game_index import GameIndex, epoch_of
from service.storage.snapshots import SnapshotCache

__all__ = ["CALL_GRACE_SECONDS", "GameService", "LoadedGame", "Seat", "utc_now"]
log = logging.getLogger(__name__)
RETRIES_WITHOUT_VERSION = 5
TURN_SECONDS_RANGE = (1, 86400)  # a game's optional turn timeout (`turn_seconds`)
NO_TOKEN = token_needed("an action")
INTERNAL_FIELD_PREFIX = "~"  # idempotency fields the service makes (a client's start with its seat)


def utc_now() -> str:
    """The service clock: ISO 8601 in UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class GameService:
    """Creates games and runs actions through the rules; reads games through its GameRepository."""

    def __init__(
        self,
        store: EventStore,
        dispatcher: BotDispatcher,
        clock: Callable[[], str] = utc_now,
        index: GameIndex | None = None,
        snapshots: SnapshotCache | None = None,
        think_ms_max: int | None = None,
        repository: GameRepository | None = None,
        event_limits: EventLimits | None = None,
    ) -> None:
        """`think_ms_max`: the cap on an expert's think time a move (default: EXPERT_THINK_MS_MAX, 2000);
        `snapshots` go to the repository made here unless one is given; `event_limits`: a new game's
        default and largest `max_events` (C-9; default: MAX_EVENTS_DEFAULT and MAX_EVENTS_LIMIT)."""
        self.event_limits = event_limits if event_limits is not None else event_limits_from_env()
        self.store = store
        self.repository = repository if repository is not None else GameRepository(store, snapshots)
        self.turns = TurnScheduler(dispatcher, think_ms_max if think_ms_max is not None else think_ms_max_from_env())
        self.clock = clock
        self.index = index if index is not None else GameIndex(store.client)

    @property
    def dispatcher(self) -> BotDispatcher:
        """Where bot turns and turn timeouts are asked for (service/play/job_queue.py)."""
        return self.turns.dispatcher

    # ------------------------------------------------------------ create

    def create_game(
        self,
        game: str,
        seats: Sequence[Mapping[str, Any]],
        options: Mapping[str, Any],
        seed: str | None = None,
        decks: Sequence[Sequence[str]] = (),
        turn_seconds: int | None = None,
    ) -> dict[str, Any]:
        """Validate, deal and store a new game; returns the creation response with tokens."""
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
        seat_list = tuple(new_seat(i, request, game, self.turns.think_ms_max) for i, request in enumerate(seats))
        source = "creator" if seed is not None else "server"
        return self._store_new_game(config, seat_list, source, snap, events, turn_seconds)

    def _store_new_game(
        self,
        config: engine.GameConfig,
        seats: tuple[Seat, ...],
        seed_source: str,
        snap: engine.Snapshot[Any],
        events: list[Event],
        turn_seconds: int | None,
    ) -> dict[str, Any]:
        tokens = [secrets.token_urlsafe(32) if controller_of(seat).holds_token else None for seat in seats]
        digests = [token_digest(t) if t else None for t in tokens]
        commitment = _commitment_of(events)
        records = chain_records(events, 1, commitment, self.clock())
        meta = {
            "game": config.game,
            "seats": json.dumps([s.public() for s in seats]),
            "tokens": json.dumps(digests),
            "options": json.dumps(dict(config.options)),
            "seed": config.seed,
            **({"nonce": config.nonce} if config.nonce is not None else {}),
            "rules_version": str(config.rules_version),
            "seed_source": seed_source,
            "decks": json.dumps([list(d) for d in config.decks]),
            "created_at": records[0]["at"],
            **({"turn_seconds": str(turn_seconds)} if turn_seconds is not None else {}),
        }
        for _ in range(3):
            game_id = secrets.token_urlsafe(9)
            loaded = LoadedGame(
                game_id, seats, tuple(digests), config, seed_source, snap, records[-1]["hash"], turn_seconds
            )
            self.turns.note_waiting(loaded)
            self._index_write("note as started", game_id, self.index.started, epoch_of(records[0]["at"]))
            try:
                self.store.create(game_id, meta, records)
                break
            except GameExists:
                continue
        else:
            raise NoFreeGameId()
        self.repository.remember(loaded)
        self._count(config.game, "started")
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
        seat = self.repository.seat_for_token(game_id, token)
        if seat is None:
            raise Unauthorized(NO_TOKEN)
        return self._command(game_id, seat, body, expected_version, idempotency_key, self.repository.load(game_id))

    def submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Decide and append one action of `seat` (act's path once the seat is known)."""
        return self._command(game_id, seat, body, expected_version, idempotency_key)

    def act_at(
        self, loaded: LoadedGame, seat: int, body: Mapping[str, Any], system_reason: str | None = None
    ) -> LoadedGame:
        """A due turn (service/play/due_turns.py): `seat`'s action decided on `loaded` and appended only
        at its version; returns the game after it, VersionConflict when the game moved on. What follows
        is left to the caller to schedule. `system_reason` (a turn timeout): the system plays the seat's
        action, recorded with actor "system", the seat and the reason."""
        response, new = self._decide(loaded, seat, body, system_reason)
        stored = str(new.version)
        result = self._append(loaded, new, response["events"], (internal_idempotency_field(), stored), False)
        if not _applied(result, stored):
            raise VersionConflict(loaded.version, result.version)
        return new

    def _command(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None,
        idempotency_key: str | None,
        loaded: LoadedGame | None = None,
    ) -> dict[str, Any]:
        """submit, with a client's Idempotency-Key answered once; `loaded`: the game as act just
        loaded it, which the first attempt decides on instead of reading the stream again."""
        idem = self._idempotency(game_id, seat, body, idempotency_key)
        if idem is not None:
            prior = self.store.idempotent_answer(game_id, idem[0])
            if prior is not None:
                return _stored_answer(prior, idem[1])
        try:
            return self._submit(game_id, seat, body, expected_version, idem, loaded)
        except (VersionConflict, RulesRefusal, IdempotencyKeyReused):
            # A retry racing its own first request: the first one appended after our look-up above, so
            # this one was decided on the state after it (a conflict, or a rule's refusal). The first answer wins.
            if idem is None:
                raise
            prior = self.store.idempotent_answer(game_id, idem[0])
            if prior is None:
                raise
            return _stored_answer(prior, idem[1])

    def _submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None,
        idem: tuple[str, str] | None,
        current: LoadedGame | None = None,
    ) -> dict[str, Any]:
        usable = current is not None and expected_version in (None, current.version)
        field = idem[0] if idem else internal_idempotency_field()
        for attempt in range(RETRIES_WITHOUT_VERSION):
            loaded = current if attempt == 0 and usable and current is not None else self.repository.load(game_id)
            if expected_version is not None and expected_version != loaded.version:
                raise VersionConflict(expected_version, loaded.version)
            response, new = self._decide(loaded, seat, body)
            # a client's key keeps the whole answer (a retry replays it); an internal one only the version
            stored = json.dumps({"body": idem[1], "response": response}) if idem else str(new.version)
            result = self._append(loaded, new, response["events"], (field, stored), True)
            if _applied(result, stored):
                return response
            if result.outcome == "duplicate":
                assert idem is not None and result.prior is not None
                return _stored_answer(result.prior, idem[1])
            if expected_version is not None:
                raise VersionConflict(expected_version, result.version)
        raise VersionConflict(loaded.version, loaded.version + 1)

    def _append(
        self,
        loaded: LoadedGame,
        new: LoadedGame,
        records: list[dict[str, Any]],
        idempotency: tuple[str, str],
        schedule_bots: bool,
    ) -> AppendResult:
        """Compare-and-append `records` at `loaded`'s version, with the bookkeeping around it. With
        `schedule_bots`, what follows is noted before and scheduled after; without, the caller (a
        chain of due turns) schedules once, after its last turn."""
        if schedule_bots:
            self.turns.note_waiting(new)
        self._note_ending(new, records)
        result = self.store.append(loaded.id, loaded.version, records, idempotency)
        if _applied(result, idempotency[1]):
            self._ended(new)
            self.repository.appended(loaded, new)
            if new.snap.finished:
                self._count(new.config.game, "finished")
            self.turns.cancel_timeout(loaded)
            if schedule_bots:
                self.turns.schedule(new)
        return result

    def _count(self, game: str, moment: str) -> None:
        """Count a game that started or finished, for the metrics; a failure loses only the count."""
        try:
            self.store.count_game(game, moment)
        except StoreUnavailable:
            log.warning("could not count a %s game as %s", game, moment)

    def _decide(
        self, loaded: LoadedGame, seat: int, body: Mapping[str, Any], system_reason: str | None = None
    ) -> tuple[dict[str, Any], LoadedGame]:
        try:
            snap, events = engine.act(loaded.snap, seat, body)
        except DomainError as error:
            raise refusal(error) from error
        records = chain_records(events, loaded.version + 1, loaded.last_hash, self.clock(), system_reason)
        new = dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])
        return {"version": snap.version, "events": records, "state": render(new, snap, seat)}, new

    # ------------------------------------------------------------ the end of a game

    def _note_ending(self, new: LoadedGame, records: list[dict[str, Any]]) -> None:
        """Before an append that ends the game: note it as finished (an intent, so that no finished
        game escapes compaction if this process stops right after the append). Best effort: an index
        that cannot be reached never fails the action (_ended notes it again, the sweep's walk after)."""
        if new.snap.finished:
            self._index_write("note as finishing", new.id, self.index.finishing, epoch_of(records[-1]["at"]))

    def _ended(self, new: LoadedGame) -> None:
        """After an append that ended the game: note it as finished again (a sweep may have taken the
        intent out while the append was on its way) and, once that is stored, no longer active. Best
        effort: the lifecycle sweep's index walk puts back a finished game that an index misses."""
        if not new.snap.finished:
            return
        at = epoch_of(self.clock())  # the intent's time stays when it is still there
        if self._index_write("note as finished", new.id, self.index.finishing, at, True):
            self._index_write("take out of the active games", new.id, self.index.finished)

    def _index_write(self, what: str, game_id: str, write: Callable[..., None], *args: Any) -> bool:
        """One write to the game indexes; a failure is logged, never raised (True if it was written)."""
        try:
            write(game_id, *args)
        except Exception:
            log.exception("could not %s the game %s in the game index", what, game_id)
            return False
        return True

    def abandon(self, game_id: str, reason: str, version: int | None = None) -> list[dict[str, Any]]:
        """End a running game as abandoned (GameAbandoned, then the seed's reveal) through a
        compare-and-append at the version it was decided on; returns the records appended. `version`:
        only at that version (where the caller found the game idle); VersionConflict when it moved on."""
        loaded = self.repository.load(game_id)
        if version is not None and loaded.version != version:
            raise VersionConflict(version, loaded.version)
        try:
            snap, events = engine.abandon(loaded.snap, reason)
        except DomainError as error:
            raise refusal(error) from error
        records = chain_records(events, loaded.version + 1, loaded.last_hash, self.clock())
        new = dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])
        self._note_ending(new, records)
        stored = str(new.version)
        result = self.store.append(game_id, loaded.version, records, (internal_idempotency_field(), stored))
        if not _applied(result, stored):
            raise VersionConflict(loaded.version, result.version)
        self._ended(new)
        self.repository.remember(new)
        self.turns.cancel_timeout(loaded)
        self.turns.schedule(new)
        return records

    @staticmethod
    def _idempotency(game_id: str, seat: int, body: Mapping[str, Any], key: str | None) -> tuple[str, str] | None:
        if key is None:
            return None
        digest = hashlib.sha256(canonical_json(dict(body)).encode("utf-8")).hexdigest()
        return f"{seat}:{key}", digest


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


def _stored_answer(prior: str, body_digest: str) -> dict[str, Any]:
    stored = json.loads(prior)
    if stored["body"] != body_digest:
        raise IdempotencyKeyReused()
    response: dict[str, Any] = stored["response"]
    return response
