"""Finished games out of Redis into files, and back in (the command line: service/archive.py).

Each file is the game's portable record, exactly as GET /v1/games/{id}/record gives it (so
`python -m domain.verify <id>.json.gz` checks it), plus one member `private` that the record does not
have: what the service needs to serve the game again and that must not be published: the game's meta
(seat token digests, the seed, creation facts) and its disputes. Remove `private` before sharing a file.
"""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import os
import re
import string
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from domain.verify import read_record, verify
from service.play import game_header
from service.play.game_history import GameHistory
from service.play.ports import epoch_of
from service.play.seats import holds_token
from service.storage.archive_store import StoredGame
from service.storage.game_index import GameIndex
from service.storage.outcomes import RestoreRefused, StoreUnavailable
from service.storage.packed_games import Entry, encode_record
from service.storage.redis_store import RedisStore

log = logging.getLogger(__name__)

PRIVATE_FORMAT = "cardtable-archive-private/1"
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DISPUTE_ID = re.compile(r"^[1-9][0-9]{0,8}-0$")
BATCH = 500


class Archive:
    """Export and import of finished games between the event store and `.json.gz` files."""

    def __init__(self, history: GameHistory, store: RedisStore) -> None:
        """`history`: the records and audits the files hold; `store`: the adapters games are read, deleted
        and restored with, and their index."""
        self.store = store.archive
        self.index: GameIndex = store.index
        self.history = history

    # ------------------------------------------------------------ export

    def export(self, before: datetime, folder: Path) -> dict[str, str]:
        """Every finished game that ended before `before`: game id -> what happened to it."""
        folder.mkdir(parents=True, exist_ok=True)
        outcomes: dict[str, str] = {}
        while True:
            # Exported and missing games have left the index, so only kept ones (or fewer, should the
            # sweep take one out meanwhile) come before the games not seen yet: list from the start.
            kept = sum(1 for outcome in outcomes.values() if outcome.startswith("kept"))
            listed = self.index.finished_before(before.timestamp(), BATCH + kept)
            batch = [game_id for game_id in listed if game_id not in outcomes]
            if not batch:
                return outcomes
            for game_id in batch:
                outcomes[game_id] = self._export_guarded(game_id, folder)

    def _export_guarded(self, game_id: str, folder: Path) -> str:
        """export_game; a game that breaks it (stored before a check that now refuses its data) is kept and
        logged, and the export goes on with the next: one bad game never holds up the rest."""
        try:
            return self.export_game(game_id, folder)
        except StoreUnavailable:
            raise
        except Exception as error:
            log.exception("archive: could not export %s", game_id)
            return f"kept: it could not be exported ({type(error).__name__}: {error})"

    def export_game(self, game_id: str, folder: Path) -> str:
        """Write one game's file, check it, then delete the game from Redis; says what happened."""
        stored = self.store.stored_game(game_id)
        if stored is None:
            self.index.forget(game_id)
            return "missing"
        if not stored.entries:
            return "kept: it has no stored events"
        record = self.history.record(game_id)
        if record["status"] != "finished":
            return "kept: still running"
        if not verify(record).ok:
            return "kept: its record does not verify"
        document = {**record, "private": _private_part(record, stored)}
        path = folder / f"{game_id}.json.gz"
        _write(path, document)
        back = read_record(str(path))
        if back != json.loads(json.dumps(document)) or not verify(back).ok or _restorable(back) != _parts(stored):
            return "kept: the written file did not read back the same"
        refusal = _refusal(record, *_parts(stored))
        if refusal is not None:
            return f"kept: its file would not import ({refusal})"
        try:
            deleted = self.store.delete(game_id, stored)
        except StoreUnavailable:  # the index keeps it: the next export finds it deleted (`missing`) or exports it
            return "kept: Redis could not be reached to delete it; its file is written (export again)"
        if not deleted:
            return "kept: it changed while it was exported (export again)"
        self.index.forget(game_id)
        return "exported"

    # ------------------------------------------------------------ import

    def import_file(self, path: Path) -> tuple[str, str]:
        """Bring one game back from its file: (game id, what happened)."""
        try:
            document = read_record(str(path))
            game_id = str(document.get("id", ""))
            meta, entries, disputes = _restorable(document)
        except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as error:
            return path.name, f"refused: not an archive file ({error})"
        if not GAME_ID.match(game_id):
            return path.name, "refused: the record's id is not a game id"
        record = {key: value for key, value in document.items() if key != "private"}
        if record.get("status") != "finished" or not verify(record).ok:
            return game_id, "refused: the record does not verify"
        refusal = _refusal(record, meta, entries, disputes)
        if refusal is not None:
            return game_id, f"refused: {refusal}"
        try:
            if not self.store.restore(game_id, meta, entries, disputes):
                if not self.store.holds_restored(game_id, meta, entries, disputes):
                    return game_id, "kept: a game with this id exists already"
                # this file's own game, from an import whose outcome was not known: make sure it is indexed
                self.index.restored(game_id, epoch_of(record["events"][-1]["at"]))
                return game_id, "kept: a game with this id exists already (this file's game, imported before)"
        except RestoreRefused as error:
            return game_id, f"refused: {error}"
        except StoreUnavailable:
            return game_id, "not known: Redis could not be reached to learn whether it was stored (import again)"
        self.index.restored(game_id, epoch_of(record["events"][-1]["at"]))
        return game_id, "imported"


def _private_part(record: dict[str, Any], stored: StoredGame) -> dict[str, Any]:
    """What the record lacks to serve the game again: meta, disputes, and the stream's own texts when
    the record's events do not re-encode to them exactly."""
    private: dict[str, Any] = {
        "format": PRIVATE_FORMAT,
        "meta": stored.meta,
        "disputes": [[dispute_id, fields] for dispute_id, fields in stored.disputes],
    }
    if _entries_of(record["events"]) != stored.entries:
        private["entries"] = [list(entry) for entry in stored.entries]
    return private


def _entries_of(events: Sequence[Any]) -> tuple[Entry, ...]:
    return tuple((f"{seq}-0", encode_record(event)) for seq, event in enumerate(events, start=1))


def _restorable(document: dict[str, Any]) -> tuple[dict[str, str], tuple[Entry, ...], tuple[tuple[str, Any], ...]]:
    """Meta, entries and disputes of an archive file; TypeError when one is not made of texts."""
    private = document["private"]
    if private.get("format") != PRIVATE_FORMAT:
        raise ValueError(f"its private part is not {PRIVATE_FORMAT}")
    meta = _texts(private["meta"], "its meta")
    if "entries" in private:
        entries = tuple((_text(entry_id), _text(text)) for entry_id, text in private["entries"])
    else:
        entries = _entries_of(document["events"])
    disputes = tuple((_text(dispute_id), _texts(fields, "a dispute")) for dispute_id, fields in private["disputes"])
    return meta, entries, disputes


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a text")
    return value


def _texts(mapping: Any, what: str) -> dict[str, str]:
    if not isinstance(mapping, dict):
        raise TypeError(f"{what} is not an object")
    return {_text(key): _text(value) for key, value in mapping.items()}


def _refusal(
    record: dict[str, Any], meta: dict[str, str], entries: Sequence[Entry], disputes: Sequence[tuple[str, Any]]
) -> str | None:
    """Why the private part of an archive file does not fit its (verified) record; None when it fits."""
    try:
        return _meta_misfit(record, meta) or _entries_misfit(record, entries) or _disputes_misfit(record, disputes)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as error:
        return f"its private part is not well-formed ({error!r})"


def _meta_misfit(record: dict[str, Any], meta: dict[str, str]) -> str | None:
    """Why the meta does not state the record's creation facts; None when it does."""
    required, optional = game_header.META_REQUIRED, game_header.META_OPTIONAL
    if not required <= meta.keys() <= required | optional:
        return f"its meta has the fields {sorted(meta)}, not the game's creation facts"
    stated = game_header.facts(meta)
    seats = stated["seats"]
    tokens = game_header.token_digests(meta)
    recorded = {**{key: record.get(key) for key in stated}, "rules_version": record.get("rules_version", 1)}
    recorded["created_at"] = record["events"][0]["at"]
    differ = sorted(key for key, value in stated.items() if value != recorded[key])
    if differ:
        return f"its meta does not state the record's {', '.join(differ)}"
    humans = [holds_token(seat) for seat in seats]
    if not isinstance(tokens, list) or [_is_digest(token) for token in tokens] != humans:
        return "its meta does not hold one token digest for each human seat (and none for a bot)"
    return None


def _is_digest(token: Any) -> bool:
    return isinstance(token, str) and len(token) == 64 and set(token) <= set(string.hexdigits.lower())


def _entries_misfit(record: dict[str, Any], entries: Sequence[Entry]) -> str | None:
    """Why the stored entries are not exactly the record's events; None when they are."""
    ids = [entry_id for entry_id, _ in entries]
    if ids != [f"{seq}-0" for seq in range(1, len(record["events"]) + 1)]:
        return "its entries are not numbered 1 to the record's last event"
    if [json.loads(text) for _, text in entries] != record["events"]:
        return "its entries are not the record's events"
    return None


def _disputes_misfit(record: dict[str, Any], disputes: Sequence[tuple[str, Any]]) -> str | None:
    """Why the disputes are not well-formed (ids `<n>-0` increasing; a seat and a dispute object each)."""
    numbers = [int(dispute_id.partition("-")[0]) for dispute_id, _ in disputes if DISPUTE_ID.match(dispute_id)]
    if len(numbers) != len(disputes) or any(a >= b for a, b in itertools.pairwise(numbers)):
        return "its dispute ids are not `<n>-0` in increasing order"
    seats = {str(seat) for seat in range(len(record["seats"]))}
    for dispute_id, fields in disputes:
        if fields.keys() != {"s", "d"} or fields["s"] not in seats or not isinstance(json.loads(fields["d"]), dict):
            return f"its dispute {dispute_id} is not a seat's dispute"
    return None


def _parts(stored: StoredGame) -> tuple[dict[str, str], tuple[Entry, ...], tuple[tuple[str, Any], ...]]:
    return stored.meta, stored.entries, stored.disputes


def _write(path: Path, document: dict[str, Any]) -> None:
    """Write the file whole or not at all (a temporary file, synced, then renamed)."""
    data = gzip.compress(json.dumps(document, ensure_ascii=False).encode("utf-8"))
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
