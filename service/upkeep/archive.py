"""`python -m service.upkeep.archive`: finished games out of Redis into files, and back in.

  export --finished-before DATE --to DIR
      Every finished game that ended before DATE (an ISO date or date-time; UTC unless it says
      otherwise) is written to DIR/<id>.json.gz, read back and verified, and only then deleted from
      Redis (all of its keys, disputes included; only if it did not change meanwhile).
  import PATH [PATH ...]
      Brings games back from such files (or every *.json.gz in a folder), packed, so that every
      endpoint answers as before. A game that exists already is left alone.

Each file is the game's portable record, exactly as GET /v1/games/{id}/record gives it (so
`python -m domain.verify <id>.json.gz` checks it), plus one member `private` that the record does not
have: what the service needs to serve the game again and that must not be published: the game's meta
(seat token digests, the seed, creation facts) and its disputes. Remove `private` before sharing a file.
The event store is REDIS_URL (or --redis-url). Exit code 0 when every game went through, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domain.verify import read_record, verify
from service.play.game_history import GameHistory
from service.play.game_service import GameService
from service.play.job_queue import NoDispatcher
from service.storage.event_store import EventStore, StoredGame
from service.storage.game_index import GameIndex, epoch_of
from service.storage.packed_games import Entry, encode_record
from service.storage.redis_clients import DEFAULT_REDIS_URL, connect

PRIVATE_FORMAT = "cardtable-archive-private/1"
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
BATCH = 500


class Archive:
    """Export and import of finished games between the event store and `.json.gz` files."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.store = service.store
        self.index: GameIndex = service.index
        self.history = GameHistory(service)

    # ------------------------------------------------------------ export

    def export(self, before: datetime, folder: Path) -> dict[str, str]:
        """Every finished game that ended before `before`: game id -> what happened to it."""
        folder.mkdir(parents=True, exist_ok=True)
        outcomes: dict[str, str] = {}
        while True:
            skipped = sum(1 for outcome in outcomes.values() if outcome != "exported")
            batch = self.index.finished_before(before.timestamp(), BATCH, offset=skipped)
            batch = [game_id for game_id in batch if game_id not in outcomes]
            if not batch:
                return outcomes
            for game_id in batch:
                outcomes[game_id] = self.export_game(game_id, folder)

    def export_game(self, game_id: str, folder: Path) -> str:
        """Write one game's file, check it, then delete the game from Redis; says what happened."""
        stored = self.store.stored_game(game_id)
        if stored is None:
            self.index.forget(game_id)
            return "missing"
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
        if not self.store.delete(game_id, stored):
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
        if not self.store.restore(game_id, meta, entries, disputes):
            return game_id, "kept: a game with this id exists already"
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
    """Meta, entries and disputes of an archive file."""
    private = document["private"]
    if private.get("format") != PRIVATE_FORMAT:
        raise ValueError(f"its private part is not {PRIVATE_FORMAT}")
    meta = {str(key): str(value) for key, value in private["meta"].items()}
    if "entries" in private:
        entries = tuple((str(entry_id), str(text)) for entry_id, text in private["entries"])
    else:
        entries = _entries_of(document["events"])
    disputes = tuple((str(dispute_id), dict(fields)) for dispute_id, fields in private["disputes"])
    return meta, entries, disputes


def _parts(stored: StoredGame) -> tuple[dict[str, str], tuple[Entry, ...], tuple[tuple[str, Any], ...]]:
    return stored.meta, stored.entries, stored.disputes


def _write(path: Path, document: dict[str, Any]) -> None:
    """Write the file whole or not at all (a temporary file, synced, then renamed)."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as handle:
        handle.write(gzip.compress(json.dumps(document, ensure_ascii=False).encode("utf-8")))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _date(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an ISO date or date-time: {text!r}") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _files(paths: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        out += sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; see the module's docstring."""
    parser = argparse.ArgumentParser(
        prog="python -m service.upkeep.archive",
        description="Export finished games from Redis to <id>.json.gz files, and import them back.",
        epilog="Each file is the game's record (python -m domain.verify checks it) plus a `private` part "
        "(token digests, meta, disputes) that is not to be shared. See docs/storage.md.",
    )
    parser.add_argument("--redis-url", help="the event store (default: REDIS_URL, else redis://localhost:6379/0)")
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write finished games to files, then delete them from Redis")
    export.add_argument("--finished-before", type=_date, required=True, metavar="DATE", help="ISO date or date-time")
    export.add_argument("--to", type=Path, required=True, metavar="DIR", help="folder for the <id>.json.gz files")
    restore = commands.add_parser("import", help="bring games back from <id>.json.gz files")
    restore.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="files, or folders of *.json.gz")
    args = parser.parse_args(argv)

    client = connect(args.redis_url or os.environ.get("REDIS_URL", DEFAULT_REDIS_URL), decode_responses=True)
    archive = Archive(GameService(EventStore(client), NoDispatcher()))
    if args.command == "export":
        outcomes = archive.export(args.finished_before, args.to)
    else:
        outcomes = dict(archive.import_file(path) for path in _files(args.paths))
    for game_id, outcome in outcomes.items():
        print(f"{game_id}: {outcome}")
    done = "exported" if args.command == "export" else "imported"
    count = sum(1 for outcome in outcomes.values() if outcome == done)
    print(f"{count} of {len(outcomes)} games {done}")
    return 0 if count == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
