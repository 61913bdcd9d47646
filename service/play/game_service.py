"""The command path: every action, a person's or a bot's, goes through GameService.submit."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from domain import engine
from domain.chain import canonical_json, chain_records, record_actor
from domain.errors import DomainError
from domain.events import Event
from domain.shuffle import is_valid_seed, new_nonce, new_server_seed
from service.api.problems import ApiError, from_domain, not_found, version_conflict
from service.play.due_turns import CHAIN_SECONDS, CHAIN_TURNS, BotTurns, effective_think_ms, think_ms_max_from_env
from service.play.job_queue import BotDispatcher
from service.play.loaded_game import CALL_GRACE_SECONDS, LoadedGame, Seat
from service.storage.event_store import AppendResult, EventStore, GameExists, StoreUnavailable
from service.storage.game_index import GameIndex, epoch_of
from service.storage.snapshots import SnapshotCache

__all__ = ["CALL_GRACE_SECONDS", "CHAIN_SECONDS", "CHAIN_TURNS", "GameService", "LoadedGame", "Seat", "utc_now"]
log = logging.getLogger(__name__)
CACHE_SIZE = 2048
RETRIES_WITHOUT_VERSION = 5
DEFAULT_BOT = "greedy"
TURN_SECONDS_RANGE = (1, 86400)  # a game's optional turn timeout (`turn_seconds`)
INTERNAL_FIELD_PREFIX = "~"  # idempotency fields the service makes (a client's start with its seat)


def utc_now() -> str:
    """The service clock: ISO 8601 in UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def token_digest(token: str) -> str:
    """Tokens are kept only as SHA-256 digests."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class GameService:
    """Creates games, loads them (cached by version) and runs actions through the rules."""

    def __init__(
        self,
        store: EventStore,
        dispatcher: BotDispatcher,
        clock: Callable[[], str] = utc_now,
        index: GameIndex | None = None,
        snapshots: SnapshotCache | None = None,
        think_ms_max: int | None = None,
    ) -> None:
        """`think_ms_max`: the cap on an expert's think time a move (default: EXPERT_THINK_MS_MAX, 2000)."""
        self.store = store
        self.bots = BotTurns(dispatcher, think_ms_max if think_ms_max is not None else think_ms_max_from_env())
        self.clock = clock
        self.index = index if index is not None else GameIndex(store.client)
        self._cache: OrderedDict[str, LoadedGame] = OrderedDict()
        self._lock = threading.Lock()
        self.snapshots = snapshots if snapshots is not None else SnapshotCache(store=store)

    @property
    def dispatcher(self) -> BotDispatcher:
        """Where bot turns and turn timeouts are asked for (service/play/job_queue.py)."""
        return self.bots.dispatcher

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
            raise ApiError(400, "invalid_seed", "a seed is 1 to 128 printable ASCII characters (C-4)")
        low, high = TURN_SECONDS_RANGE
        if turn_seconds is not None and not low <= turn_seconds <= high:
            raise ApiError(400, "invalid_request", f"turn_seconds must be {low} to {high}, or null for no timeout")
        seat_list = tuple(
            Seat(
                i,
                s["kind"],
                s.get("name") or _default_name(s, i),
                s.get("level", DEFAULT_BOT) if s["kind"] == "bot" else None,
                effective_think_ms(s.get("level", DEFAULT_BOT), s.get("think_ms"), self.bots.think_ms_max)
                if s["kind"] == "bot"
                else s.get("think_ms"),
            )
            for i, s in enumerate(seats)
        )
        try:
            config = engine.make_config(
                game, len(seat_list), options, seed or new_server_seed(), decks, nonce=new_nonce()
            )
            snap, events = engine.start(config)
        except DomainError as error:
            raise from_domain(error) from error
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
        tokens = [secrets.token_urlsafe(32) if seat.kind == "human" else None for seat in seats]
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
            self.bots.note_waiting(loaded)
            self._index_write("note as started", game_id, self.index.started, epoch_of(records[0]["at"]))
            try:
                self.store.create(game_id, meta, records)
                break
            except GameExists:
                continue
        else:
            raise ApiError(503, "store_unavailable", "could not allocate a game id")
        self._remember(loaded)
        self._count(config.game, "started")
        self.bots.schedule(loaded)
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

    # ------------------------------------------------------------ load

    def load(self, game_id: str) -> LoadedGame:
        """The game at its latest version: cached state (or its latest snapshot) plus any newer events."""
        with self._lock:
            cached = self._cache.get(game_id)
        if cached is None:
            cached = self._from_snapshot(self.load_header(game_id), None)
        try:
            # from the cached last event on: if that is gone or changed (a store that lost writes),
            # the cache is ahead of the store and the game is rebuilt from what the store holds
            newer = self.store.read(game_id, after=max(cached.version - 1, 0))
            if cached.version and (not newer or newer[0]["hash"] != cached.last_hash):
                self.snapshots.forget(game_id)
                cached = self.load_header(game_id)
                newer = self.store.read(game_id, after=0)
            elif cached.version:
                newer = newer[1:]
        except ValueError as error:  # an entry that is not JSON
            raise _damaged(game_id, cached.version + 1, error) from error
        if newer:
            cached = self._advance(cached, newer)
            self._remember(cached)
        return cached

    def state_at(self, game: LoadedGame, at: int) -> engine.Snapshot[Any]:
        """The game after event `at` (1 to its version): folded from the nearest snapshot at or
        before `at`, reading only the events after it; 500 `stream_damaged` when they do not replay."""
        if at == game.version:
            return game.snap
        start = self._from_snapshot(game, at)
        try:
            wanted = at - start.version
            records = self.store.read(game.id, after=max(start.version - 1, 0), count=wanted + (start.version > 0))
            if start.version and (not records or records[0]["hash"] != start.last_hash):
                self.snapshots.forget(game.id)  # the stream changed under the snapshot: from scratch
                start = self._from_snapshot(game, 0)
                records = self.store.read(game.id, after=0, count=at)
            elif start.version:
                records = records[1:]
        except (ValueError, KeyError, TypeError) as error:  # an entry that is not a record's JSON
            raise _damaged(game.id, start.version + 1, error) from error
        if len(records) != at - start.version:
            raise _damaged(game.id, start.version + len(records) + 1, LookupError("events missing"))
        return self._advance(start, records).snap if records else start.snap

    def _from_snapshot(self, game: LoadedGame, at: int | None) -> LoadedGame:
        """The game at its latest snapshot at or before `at` (any, with None), else before its first event."""
        kept = self.snapshots.nearest(game.id, at if at is not None else 2**63, game.config)
        if kept is None:
            initial = engine.Snapshot(game.snap.game, game.config, game.snap.game.initial_state(game.config))
            return dataclasses.replace(game, snap=initial, last_hash="")
        return dataclasses.replace(game, snap=kept.snap, last_hash=kept.last_hash)

    def load_header(self, game_id: str) -> LoadedGame:
        """The game's creation facts with none of its events applied; 404 when there is none."""
        meta = self.store.meta(game_id)
        if meta is None:
            raise not_found(game_id)
        seats = tuple(Seat(**s) for s in json.loads(meta["seats"]))
        config = engine.GameConfig(
            game=meta["game"],
            players=len(seats),
            options=json.loads(meta["options"]),
            seed=meta["seed"],
            decks=tuple(tuple(d) for d in json.loads(meta["decks"])),
            rules_version=int(meta.get("rules_version", 1)),  # a game made before versioned rules: 1
            nonce=meta.get("nonce"),  # None for a game made before the nonce (C-4)
        )
        game = engine.get_game(config.game)
        snap: engine.Snapshot[Any] = engine.Snapshot(game, config, game.initial_state(config))
        digests = tuple(json.loads(meta["tokens"]))
        turn_seconds = int(meta["turn_seconds"]) if meta.get("turn_seconds") else None
        return LoadedGame(game_id, seats, digests, config, meta["seed_source"], snap, "", turn_seconds)

    def _advance(self, loaded: LoadedGame, records: list[dict[str, Any]]) -> LoadedGame:
        catalog = loaded.snap.game.catalog
        snap = loaded.snap
        every = self.snapshots.every
        try:
            for record in records:
                snap = engine.advance(snap, catalog.build(record["type"], record_actor(record), record["data"]))
                if snap.version % every == 0:  # keep a snapshot at every multiple (service/storage/snapshots.py)
                    self.snapshots.keep(loaded.id, snap, record["hash"])
        except (AssertionError, KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise _damaged(loaded.id, snap.version + 1, error) from error
        return dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])

    def _remember(self, loaded: LoadedGame) -> None:
        with self._lock:
            current = self._cache.get(loaded.id)
            if current is None or current.version <= loaded.version:
                self._cache[loaded.id] = loaded
            self._cache.move_to_end(loaded.id)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    # ------------------------------------------------------------ read

    def seat_for_token(self, loaded: LoadedGame, token: str) -> int:
        """The seat whose token this is; 401 otherwise (constant-time comparison)."""
        presented = token_digest(token)
        found = None
        for seat, digest in enumerate(loaded.token_digests):
            if digest is not None and hmac.compare_digest(presented, digest):
                found = seat
        if found is None:
            raise ApiError(401, "unauthorized", "this token is not valid for a seat of this game")
        return found

    def render(
        self, loaded: LoadedGame, snap: engine.Snapshot[Any], seat: int | None, reveal_all: bool = False
    ) -> dict[str, Any]:
        """The API view of a game for a seat or a spectator; with `reveal_all`, every card (finished games)."""
        view = engine.full_view(snap) if reveal_all else engine.view(snap, seat)
        view.pop("options")  # the game's options are in its record and its creation answer
        scores = view.pop("scores")
        seats = [dict(s.public(), score=scores[s.seat]) for s in loaded.seats]
        game = {"id": loaded.id, "game": loaded.config.game, "stacked": loaded.config.stacked}
        return {**game, **view, "seats": seats, "turn_seconds": loaded.turn_seconds}

    def require_game(self, game_id: str) -> None:
        """404 unless the game exists."""
        if self.store.meta(game_id) is None:
            raise not_found(game_id)

    # ------------------------------------------------------------ act

    def submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        schedule_bots: bool = True,
        system_reason: str | None = None,
        loaded: LoadedGame | None = None,
    ) -> dict[str, Any]:
        """Decide and append one action of `seat`; the one path for people and bots.

        `schedule_bots=False` (a bot job that goes on to play the next bot turn itself) leaves
        the bot bookkeeping after the append to the caller. `system_reason` (a turn timeout): the
        system plays the seat's action, recorded with actor "system", the seat and the reason.
        `loaded`: the game as the caller loaded it while handling this request; the first attempt
        decides on it instead of reading the stream again (the append still checks its version).
        """
        idem = self._idempotency(game_id, seat, body, idempotency_key)
        if idem is not None:
            prior = self.store.idempotent_answer(game_id, idem[0])
            if prior is not None:
                return _replay(prior, idem[1])
        try:
            return self._submit(game_id, seat, body, expected_version, idem, schedule_bots, system_reason, loaded)
        except ApiError as error:
            # A retry racing its own first request: the first one appended after our look-up above, so
            # this one was decided on the state after it (409, or a rule's 422). The first answer wins.
            if idem is None or error.status not in (409, 422):
                raise
            prior = self.store.idempotent_answer(game_id, idem[0])
            if prior is None:
                raise
            return _replay(prior, idem[1])

    def _submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None,
        idem: tuple[str, str] | None,
        schedule_bots: bool,
        system_reason: str | None = None,
        current: LoadedGame | None = None,
    ) -> dict[str, Any]:
        usable = current is not None and current.id == game_id and expected_version in (None, current.version)
        field = idem[0] if idem else internal_idempotency_field()
        for attempt in range(RETRIES_WITHOUT_VERSION):
            loaded = current if attempt == 0 and usable and current is not None else self.load(game_id)
            if expected_version is not None and expected_version != loaded.version:
                raise version_conflict(expected_version, loaded.version)
            try:
                response, new = self._decide(loaded, seat, body, system_reason)
            except ApiError:
                if loaded is current and self.load(game_id).version != loaded.version:
                    continue  # the caller's copy was behind: decide again on the game as it is now
                raise
            # a client's key keeps the whole answer (a retry replays it); an internal one only the version
            stored = json.dumps({"body": idem[1], "response": response}) if idem else str(new.version)
            if schedule_bots:
                self.bots.note_waiting(new)
            self._note_ending(new, response["events"])
            result = self.store.append(game_id, loaded.version, response["events"], (field, stored))
            if _applied(result, stored):
                self._ended(new)
                self._remember(new)
                self.snapshots.keep_crossing(loaded.version, new.id, new.snap, new.last_hash)
                if new.snap.finished:
                    self._count(new.config.game, "finished")
                self.bots.cancel_timeout(loaded)
                if schedule_bots:
                    self.bots.schedule(new)
                return response
            if result.outcome == "duplicate":
                assert idem is not None and result.prior is not None
                return _replay(result.prior, idem[1])
            if expected_version is not None:
                raise version_conflict(expected_version, result.version)
        raise version_conflict(loaded.version, loaded.version + 1)

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
            raise from_domain(error) from error
        records = chain_records(events, loaded.version + 1, loaded.last_hash, self.clock(), system_reason)
        new = dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])
        return {"version": snap.version, "events": records, "state": self.render(new, snap, seat)}, new

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

    def abandon(self, game_id: str, reason: str) -> list[dict[str, Any]]:
        """End a running game as abandoned (GameAbandoned, then the seed's reveal) through a
        compare-and-append at the version it was decided on; returns the records appended."""
        loaded = self.load(game_id)
        try:
            snap, events = engine.abandon(loaded.snap, reason)
        except DomainError as error:
            raise from_domain(error) from error
        records = chain_records(events, loaded.version + 1, loaded.last_hash, self.clock())
        new = dataclasses.replace(loaded, snap=snap, last_hash=records[-1]["hash"])
        self._note_ending(new, records)
        stored = str(new.version)
        result = self.store.append(game_id, loaded.version, records, (internal_idempotency_field(), stored))
        if not _applied(result, stored):
            raise version_conflict(loaded.version, result.version)
        self._ended(new)
        self._remember(new)
        self.bots.cancel_timeout(loaded)
        self.bots.schedule(new)
        return records

    @staticmethod
    def _idempotency(game_id: str, seat: int, body: Mapping[str, Any], key: str | None) -> tuple[str, str] | None:
        if key is None:
            return None
        digest = hashlib.sha256(canonical_json(dict(body)).encode("utf-8")).hexdigest()
        return f"{seat}:{key}", digest

    # ------------------------------------------------------------ bots (service/play/due_turns.py)

    def play_bot_turn(
        self,
        game_id: str,
        version: int,
        max_turns: int = CHAIN_TURNS,
        max_seconds: float = CHAIN_SECONDS,
        due_at: float | None = None,
    ) -> str:
        """Play the bot turn due at `version` and the bot turns right after it (BotTurns.play_chain)."""
        return self.bots.play_chain(self, game_id, version, max_turns, max_seconds, due_at)


def internal_idempotency_field() -> str:
    """An append's own idempotency field, made once per action that brings no Idempotency-Key: it makes
    the append safe to resend when its reply is lost (service/storage/event_store.py). `~` keeps it apart from a
    client's fields (`<seat>:<key>`)."""
    return f"{INTERNAL_FIELD_PREFIX}{secrets.token_hex(8)}"


def _applied(result: AppendResult, stored: str) -> bool:
    """This append was applied: `ok`, or `duplicate` of its own field and value (a resend after the
    first call's reply was lost)."""
    return result.outcome == "ok" or (result.outcome == "duplicate" and result.prior == stored)


def _damaged(game_id: str, version: int, error: Exception) -> ApiError:
    log.error("game %s: the stored stream does not replay at version %s: %r", game_id, version, error)
    return ApiError(500, "stream_damaged", "the stored game does not replay; GET its /audit for the first bad event")


def _default_name(seat: Mapping[str, Any], index: int) -> str:
    return f"{seat.get('level', DEFAULT_BOT)} bot {index}" if seat["kind"] == "bot" else f"Player {index}"


def _commitment_of(events: list[Event]) -> str:
    created = events[0]
    assert isinstance(created, engine.GameCreated)
    return created.seed_commitment


def _replay(prior: str, body_digest: str) -> dict[str, Any]:
    stored = json.loads(prior)
    if stored["body"] != body_digest:
        raise ApiError(
            422,
            "idempotency_key_reused",
            "this Idempotency-Key was used for a different request in this game",
        )
    response: dict[str, Any] = stored["response"]
    return response
