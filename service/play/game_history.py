"""The read side for review and disputes: replay at any step, the portable record, audits."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from domain import engine
from domain.verify import FIRST_RECORD_FORMAT, RECORD_FORMAT, verify
from service.play.bots import Bots
from service.play.errors import EventOutOfRange, GameNotFound, PlayError, TooManyDisputes
from service.play.game_repository import GameRepository
from service.play.game_view import render
from service.play.loaded_game import LoadedGame
from service.play.ports import Clock, DisputeLog, EventLog, KeptAnswers
from service.storage.outcomes import GameGone, StoreUnavailable

log = logging.getLogger(__name__)
DISPUTES_PER_SEAT = 20  # default; the app reads DISPUTES_PER_SEAT from its config or the environment
DISPUTES_PAGE = 50  # disputes a page by default ...
DISPUTES_PAGE_MAX = 200  # ... and at most


@dataclasses.dataclass(frozen=True)
class DisputePage:
    """A page of a game's disputes, and the number to list the next page after (None on the last)."""

    disputes: list[dict[str, Any]]
    next_after: int | None


class GameHistory:
    """Replays, records, audits and disputes of stored games."""

    def __init__(
        self,
        repository: GameRepository,
        store: EventLog,
        answers: KeptAnswers,
        disputes: DisputeLog,
        clock: Clock,
        disputes_per_seat: int = DISPUTES_PER_SEAT,
        bots: Bots | None = None,
    ) -> None:
        """`store`: the games' events; `answers`: where the answers of a game that can no longer change are
        kept; `disputes`: the games' disputes, at most `disputes_per_seat` a seat in a game; `bots`: the
        registered bots, whose tokens act for the seats they hold (None: seat tokens only)."""
        self.repository = repository
        self.store = store
        self.answers = answers
        self.dispute_log = disputes
        self.clock = clock
        self.disputes_per_seat = disputes_per_seat
        self.bots = bots
        self.embargo: Callable[[str], None] = lambda game_id: None  # refuses a game closed to all but its seats

    # ------------------------------------------------------------ replay

    def replay(self, game_id: str, at: int | None, token: str | None) -> dict[str, Any]:
        """The game after event `at`: a seat's view, the spectator's, or (finished) everything.

        Folded from the nearest snapshot at or before `at` (service/storage/snapshots.py)."""
        loaded = self.repository.load(game_id)
        seat = self._seat_for(loaded, token) if token else None
        if seat is None and loaded.place is not None:
            self.embargo(game_id)
        at = loaded.version if at is None else at
        if not 1 <= at <= loaded.version:
            raise EventOutOfRange(loaded.version, at)
        return {"at": at, **self._view_at(loaded, at, seat, loaded.snap.finished)}

    def _seat_for(self, game: LoadedGame, token: str) -> int:
        """The seat `token` acts for: a seat's own, or a registered bot's that holds the seat; Unauthorized."""
        if self.bots is None:
            return game.seat_for_token(token)
        return self.bots.seat_for_token(game.seats, game.token_digests, token)

    def _view_at(self, game: LoadedGame, at: int, seat: int | None, finished: bool) -> dict[str, Any]:
        """The game after event `at`; with no seat and a finished game, everything."""
        snap = self.repository.state_at(game, at)
        if seat is None and finished:
            return render(game, snap, None, reveal_all=True)
        return render(game, snap, seat)

    # ------------------------------------------------------------ record

    def record(self, game_id: str) -> dict[str, Any]:
        """The portable record; the seed and stacked decks only once the game has ended. A packed game's is
        made once and kept beside it (`_answer`)."""
        self.embargo(game_id)
        return self._answer(game_id, "record", self._fresh_record)

    def events(self, game_id: str) -> list[dict[str, Any]]:
        """The game's recorded events, as its record holds them, without the rest of the record (no fold): what a
        match's results are computed from."""
        self.embargo(game_id)
        return self.store.read(game_id)

    def has_ended(self, game_id: str) -> bool | None:
        """Whether the game has ended, its last record the seed's reveal (one read, no fold); None when it was
        never stored."""
        last = self.store.last_record(game_id)
        return None if last is None else engine.ends_the_game(last)

    def _fresh_record(self, game_id: str) -> dict[str, Any]:
        loaded = self.repository.load(game_id)
        records = self.store.read(game_id)
        return self._record(loaded, records)

    def _answer(self, game_id: str, name: str, make: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """`make(game_id)`, made once for a packed game: kept beside its packed value (KeptAnswers.keep_answer)
        under `name`, marked with the code that made it, and served from there while the packed value and
        the code are the same.
        A game that is not packed (running, or ended a moment ago) is answered afresh each time."""
        code = answers_code().encode("ascii") + b"\n"
        kept = self.answers.packed_answer(game_id, name)
        if kept is not None and kept.startswith(code):
            answer: dict[str, Any] = json.loads(kept[len(code) :])
            return answer
        answer = make(game_id)
        try:
            self.answers.keep_answer(game_id, name, code + json.dumps(answer, separators=(",", ":")).encode("utf-8"))
        except StoreUnavailable as error:  # answered all the same; the next request makes it again
            log.warning("game %s: its %s not kept: %s", game_id, name, error)
        return answer

    def _record(self, loaded: LoadedGame, records: list[Any]) -> dict[str, Any]:
        config = loaded.config
        out: dict[str, Any] = {
            **_format(config),
            "id": loaded.id,
            "game": config.game,
            "options": dict(config.options),
            "seats": [s.public() for s in loaded.seats],
            "stacked": config.stacked,
            "seed_commitment": _commitment(records),
            "seed_source": loaded.seed_source,
            "status": "finished" if loaded.snap.finished else "active",
            "version": loaded.version,
            "turn_seconds": loaded.turn_seconds,
            **({"match": loaded.place.public()} if loaded.place is not None else {}),
            "events": records,
        }
        if loaded.snap.finished:
            out["seed"] = config.seed
            if config.nonce is not None:
                out["nonce"] = config.nonce
            out["decks"] = [list(deck) for deck in config.decks]
        return out

    # ------------------------------------------------------------ audit

    def _header(self, game_id: str) -> LoadedGame:
        """The game's creation facts (meta) with none of its events applied.

        Audits and disputes must answer for a damaged stream too, where folding the stored
        events (what `GameRepository.load` does) can fail.
        """
        return self.repository.load_header(game_id)

    def audit(self, game_id: str) -> dict[str, Any]:
        """Every check of the verifier on the stream as stored now, with the server's seed. A packed game's
        is made once and kept beside it (`_answer`): its stream can no longer change."""
        return self._answer(game_id, "audit", self._fresh_audit)

    def _fresh_audit(self, game_id: str) -> dict[str, Any]:
        header = self._header(game_id)
        return self._audit(header, [_parse(text) for text in self.store.read_raw(game_id)])

    @staticmethod
    def _audit(header: LoadedGame, records: list[Any]) -> dict[str, Any]:
        config = header.config
        record = {
            **_format(config),
            "game": config.game,
            "options": dict(config.options),
            "seats": [s.public() for s in header.seats],
            "stacked": config.stacked,
            "decks": [list(deck) for deck in config.decks],
            "seed_commitment": config.commitment,  # the true one, whatever the stream says
            "events": records,
        }  # no `version` or `status`: the stream itself is what is checked
        running = not any(isinstance(r, dict) and engine.ends_the_game(r) for r in records)
        return verify(record, seed=config.seed, redact=running, nonce=config.nonce).as_dict()

    # ------------------------------------------------------------ disputes

    def file_dispute(self, game_id: str, token: str, seq: int, reason: str) -> dict[str, Any]:
        """A seat disputes event `seq`; stored beside the game, never in its stream.

        The audit's verdict and the spectator's views around the event are computed here, once,
        and stored with the dispute: listing disputes then costs no audit and, for a spectator,
        no fold. A seat files at most `disputes_per_seat` disputes per game (422 otherwise).
        """
        header = self._header(game_id)
        seat = self._seat_for(header, token)
        if self.dispute_log.count_disputes(game_id, seat) >= self.disputes_per_seat:  # before the audit
            raise self._too_many()
        records = [_parse(text) for text in self.store.read_raw(game_id)]
        if not 1 <= seq <= len(records):
            raise EventOutOfRange(len(records), seq)
        verdict = self._audit(header, records)
        bad = verdict["first_bad_seq"]
        game, finished = self._game_and_status(header)
        dispute = {
            "seat": seat,
            "seq": seq,
            "reason": reason,
            "at": self.clock(),
            "verdict": verdict,
            "event_ok": bad is None or bad > seq,
        }
        views = {"full": finished, **self._views(game, seq, None, finished)}
        try:
            dispute_id = self.dispute_log.add_dispute(
                game_id, seat, self.disputes_per_seat, {**dispute, "views": views}
            )
        except GameGone as error:
            raise GameNotFound(game_id) from error
        if dispute_id is None:
            raise self._too_many()
        return {"id": dispute_id, "number": _number(dispute_id), **dispute}

    def _too_many(self) -> TooManyDisputes:
        return TooManyDisputes(self.disputes_per_seat)

    def disputes(self, game_id: str, token: str | None, after: int = 0, limit: int = DISPUTES_PAGE) -> DisputePage:
        """A page of the game's disputes: those numbered after `after`, at most `limit`, each with
        the verdict stored when it was filed and the caller's views just before and after its event.

        A view that the stored events cannot give (damaged before it, or the event is gone) is
        `{"error": <the refusal as data>}` instead (PlayError.as_data).
        """
        header = self._header(game_id)
        seat = self._seat_for(header, token) if token else None
        page = self.dispute_log.disputes(game_id, after, limit + 1)
        game, finished = self._game_and_status(header) if page else (header, False)
        audit_now = functools.cache(lambda: self.audit(game_id))  # only for disputes filed without a verdict
        listed = [
            self._review(game, dispute_id, dispute, seat, finished, audit_now) for dispute_id, dispute in page[:limit]
        ]
        return DisputePage(listed, listed[-1]["number"] if len(page) > limit else None)

    def _review(
        self,
        game: LoadedGame,
        dispute_id: str,
        dispute: dict[str, Any],
        seat: int | None,
        finished: bool,
        audit_now: Callable[[], dict[str, Any]],
    ) -> dict[str, Any]:
        """A stored dispute as listed: the stored spectator views where they are the caller's, else
        views folded from the nearest snapshots (a seat's own view; a game ended since filing)."""
        stored = dict(dispute)
        views = stored.pop("views", None)
        if seat is not None or not isinstance(views, dict) or views.get("full") != finished:
            views = self._views(game, stored["seq"], seat, finished)
        if "verdict" not in stored:  # filed before verdicts were stored with disputes: the audit now
            stored["verdict"] = audit_now()
            bad = stored["verdict"]["first_bad_seq"]
            stored["event_ok"] = bad is None or bad > stored["seq"]
        return {
            "id": dispute_id,
            "number": _number(dispute_id),
            **stored,
            "before": views["before"],
            "after": views["after"],
        }

    def _game_and_status(self, header: LoadedGame) -> tuple[LoadedGame, bool]:
        """The game as loaded and whether it has ended; a stream that does not replay counts as
        running (it shows no hidden card) and its views are folded from its header."""
        try:
            loaded = self.repository.load(header.id)
        except PlayError:
            return header, False
        return loaded, bool(loaded.snap.finished)

    def _views(self, game: LoadedGame, seq: int, seat: int | None, finished: bool) -> dict[str, Any]:
        before = self._view_or_error(game, seq - 1, seat, finished) if seq > 1 else None
        return {"before": before, "after": self._view_or_error(game, seq, seat, finished)}

    def _view_or_error(self, game: LoadedGame, at: int, seat: int | None, finished: bool) -> dict[str, Any]:
        try:
            return self._view_at(game, at, seat, finished)
        except PlayError as error:
            return {"error": error.as_data()}


@functools.cache
def answers_code() -> str:
    """A digest of the code that makes the kept answers (this module and every module of domain/, the
    verifier and the games' rules among them): an answer kept by other code is made again."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for path in sorted(Path(str(engine.__file__)).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _number(dispute_id: str) -> int:
    """A dispute's number in its game: the first part of its entry id."""
    return int(dispute_id.split("-", 1)[0])


def _format(config: engine.GameConfig) -> dict[str, Any]:
    """A record's format, and its rules version where the format states one: a game made before
    the nonce keeps the format it was made in (no nonce, no rules version: version 1)."""
    if config.nonce is None:
        return {"format": FIRST_RECORD_FORMAT}
    return {"format": RECORD_FORMAT, "rules_version": config.rules_version}


def _commitment(records: list[Any]) -> str:
    if records and isinstance(records[0], dict):
        return str(records[0].get("data", {}).get("seed_commitment", ""))
    return ""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"unreadable": text[:200]}
