"""The read side for review and disputes: replay at any step, the portable record, audits."""

from __future__ import annotations

import json
from typing import Any

from domain import engine
from domain.chain import record_actor
from domain.verify import FIRST_RECORD_FORMAT, RECORD_FORMAT, verify
from service.commands import GameService, LoadedGame
from service.problems import ApiError

MAX_DISPUTES = 1000


class GameHistory:
    """Replays, records, audits and disputes of stored games."""

    def __init__(self, games: GameService) -> None:
        self.games = games
        self.store = games.store

    # ------------------------------------------------------------ replay

    def replay(self, game_id: str, at: int | None, token: str | None) -> dict[str, Any]:
        """The game after event `at`: a seat's view, the spectator's, or (finished) everything."""
        loaded = self.games.load(game_id)
        seat = self.games.seat_for_token(loaded, token) if token else None
        at = loaded.version if at is None else at
        if not 1 <= at <= loaded.version:
            raise ApiError(422, "event_out_of_range", f"this game has events 1 to {loaded.version}, not {at}")
        records = [_parse(text) for text in self.store.read_raw(game_id)]
        return {"at": at, **self._view_at(loaded, records, at, seat, loaded.snap.finished)}

    def _view_at(
        self, game: LoadedGame, records: list[Any], at: int, seat: int | None, finished: bool
    ) -> dict[str, Any]:
        """The game after event `at` of `records`; with no seat and a finished game, everything."""
        if not 1 <= at <= len(records):
            raise ApiError(422, "event_out_of_range", f"this game has events 1 to {len(records)}, not {at}")
        snap = fold_records(game, records[:at])
        if seat is None and finished:
            return self.games.render(game, snap, None, reveal_all=True)
        return self.games.render(game, snap, seat)

    # ------------------------------------------------------------ record

    def record(self, game_id: str) -> dict[str, Any]:
        """The portable record; the seed and stacked decks only once the game has ended."""
        loaded = self.games.load(game_id)
        records = self.store.read(game_id)
        return self._record(loaded, records)

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
        events (what `GameService.load` does) can fail.
        """
        return self.games.load_header(game_id)

    def audit(self, game_id: str) -> dict[str, Any]:
        """Every check of the verifier on the stream as stored now, with the server's seed."""
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
        running = not any(isinstance(r, dict) and r.get("type") == "SeedRevealed" for r in records)
        return verify(record, seed=config.seed, redact=running, nonce=config.nonce).as_dict()

    # ------------------------------------------------------------ disputes

    def file_dispute(self, game_id: str, token: str, seq: int, reason: str) -> dict[str, Any]:
        """A seat disputes event `seq`; stored beside the game, never in its stream."""
        header = self._header(game_id)
        seat = self.games.seat_for_token(header, token)
        version = len(self.store.read_raw(game_id))
        if not 1 <= seq <= version:
            raise ApiError(422, "event_out_of_range", f"this game has events 1 to {version}, not {seq}")
        if self.store.count_disputes(game_id) >= MAX_DISPUTES:
            raise ApiError(422, "too_many_disputes", f"a game holds at most {MAX_DISPUTES} disputes")
        dispute = {"seat": seat, "seq": seq, "reason": reason, "at": self.games.clock()}
        dispute_id = self.store.add_dispute(game_id, dispute)
        return {"id": dispute_id, **dispute}

    def disputes(self, game_id: str, token: str | None) -> dict[str, Any]:
        """Every dispute with the game just before and just after its event, and the audit's verdict.

        A view that the stored events cannot give (damaged before it, or the event is gone) is
        `{"error": <problem>}` instead.
        """
        header = self._header(game_id)
        seat = self.games.seat_for_token(header, token) if token else None
        records = [_parse(text) for text in self.store.read_raw(game_id)]
        verdict = self._audit(header, records)
        try:
            finished = bool(fold_records(header, records).finished)
        except ApiError:
            finished = False  # a damaged stream shows no hidden card
        bad = verdict["first_bad_seq"]
        listed = []
        for dispute_id, dispute in self.store.disputes(game_id):
            seq = dispute["seq"]
            listed.append(
                {
                    "id": dispute_id,
                    **dispute,
                    "before": self._view_or_error(header, records, seq - 1, seat, finished) if seq > 1 else None,
                    "after": self._view_or_error(header, records, seq, seat, finished),
                    "event_ok": bad is None or bad > seq,
                }
            )
        return {"verdict": verdict, "disputes": listed}

    def _view_or_error(
        self, game: LoadedGame, records: list[Any], at: int, seat: int | None, finished: bool
    ) -> dict[str, Any]:
        try:
            return self._view_at(game, records, at, seat, finished)
        except ApiError as error:
            return {"error": error.body()}


def fold_records(game: LoadedGame, records: list[Any]) -> engine.Snapshot[Any]:
    """The stored events applied in order; a problem (not a crash) when they do not apply."""
    catalog = game.snap.game.catalog
    try:
        return engine.fold(game.config, (catalog.build(r["type"], record_actor(r), r["data"]) for r in records))
    except Exception as error:  # any failure to apply stored events means the stream is damaged
        raise ApiError(
            500,
            "stream_damaged",
            f"the stored events 1 to {len(records)} of this game do not replay ({type(error).__name__}); "
            "GET its /audit for the first bad event",
        ) from error


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
