"""The read side for review and disputes: replay at any step, the portable record, audits."""

from __future__ import annotations

import json
from typing import Any

from domain import engine
from domain.shuffle import commitment
from domain.verify import RECORD_FORMAT, verify
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
        return {"at": at, **self._view_at(loaded, at, seat)}

    def _view_at(self, loaded: LoadedGame, at: int, seat: int | None) -> dict[str, Any]:
        if not 1 <= at <= loaded.version:
            raise ApiError(422, "event_out_of_range", f"this game has events 1 to {loaded.version}, not {at}")
        records = self.store.read(loaded.id, 0, count=at)
        catalog = loaded.snap.game.catalog
        snap = engine.fold(loaded.config, (catalog.build(r["type"], r["actor"], r["data"]) for r in records))
        if seat is None and loaded.snap.finished:
            full = engine.full_view(snap)
            scores = full.pop("scores")
            seats = [dict(s.public(), score=scores[s.seat]) for s in loaded.seats]
            return {
                "id": loaded.id,
                "game": loaded.config.game,
                "stacked": loaded.config.stacked,
                **full,
                "seats": seats,
            }
        return self.games.render(loaded, snap, seat)

    # ------------------------------------------------------------ record

    def record(self, game_id: str) -> dict[str, Any]:
        """The portable record; the seed and stacked decks only once the game has ended."""
        loaded = self.games.load(game_id)
        records = self.store.read(game_id)
        return self._record(loaded, records)

    def _record(self, loaded: LoadedGame, records: list[Any]) -> dict[str, Any]:
        config = loaded.config
        out: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "id": loaded.id,
            "game": config.game,
            "options": dict(config.options),
            "seats": [s.public() for s in loaded.seats],
            "stacked": config.stacked,
            "seed_commitment": _commitment(records),
            "seed_source": loaded.seed_source,
            "status": "finished" if loaded.snap.finished else "active",
            "version": loaded.version,
            "events": records,
        }
        if loaded.snap.finished:
            out["seed"] = config.seed
            out["decks"] = [list(deck) for deck in config.decks]
        return out

    # ------------------------------------------------------------ audit

    def audit(self, game_id: str) -> dict[str, Any]:
        """Every check of the verifier on the stream as stored now, with the server's seed."""
        loaded = self.games.load(game_id)
        records = [_parse(text) for text in self.store.read_raw(game_id)]
        record = self._record(loaded, records)
        record["seed_commitment"] = commitment(loaded.config.seed)  # the true one, whatever the stream says
        return verify(record, seed=loaded.config.seed).as_dict()

    # ------------------------------------------------------------ disputes

    def file_dispute(self, game_id: str, token: str, seq: int, reason: str) -> dict[str, Any]:
        """A seat disputes event `seq`; stored beside the game, never in its stream."""
        loaded = self.games.load(game_id)
        seat = self.games.seat_for_token(loaded, token)
        if not 1 <= seq <= loaded.version:
            raise ApiError(422, "event_out_of_range", f"this game has events 1 to {loaded.version}, not {seq}")
        if self.store.count_disputes(game_id) >= MAX_DISPUTES:
            raise ApiError(422, "too_many_disputes", f"a game holds at most {MAX_DISPUTES} disputes")
        dispute = {"seat": seat, "seq": seq, "reason": reason, "at": self.games.clock()}
        dispute_id = self.store.add_dispute(game_id, dispute)
        return {"id": dispute_id, **dispute}

    def disputes(self, game_id: str, token: str | None) -> dict[str, Any]:
        """Every dispute with the game just before and just after its event, and the audit's verdict."""
        loaded = self.games.load(game_id)
        seat = self.games.seat_for_token(loaded, token) if token else None
        verdict = self.audit(game_id)
        listed = []
        for dispute_id, dispute in self.store.disputes(game_id):
            seq = dispute["seq"]
            before = self._view_at(loaded, seq - 1, seat) if seq > 1 else None
            bad = verdict["first_bad_seq"]
            listed.append(
                {
                    "id": dispute_id,
                    **dispute,
                    "before": before,
                    "after": self._view_at(loaded, seq, seat),
                    "event_ok": bad is None or bad > seq,
                }
            )
        return {"verdict": verdict, "disputes": listed}


def _commitment(records: list[Any]) -> str:
    if records and isinstance(records[0], dict):
        return str(records[0].get("data", {}).get("seed_commitment", ""))
    return ""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"unreadable": text[:200]}
