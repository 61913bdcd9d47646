"""`python -m service.archive`: finished games out of Redis into files, and back in.

  export --finished-before DATE --to DIR
      Every finished game that ended before DATE (an ISO date or date-time; UTC unless it says
      otherwise) is written to DIR/<id>.json.gz, read back and verified, and only then deleted from
      Redis (all of its keys, disputes included; only if it did not change meanwhile).
  import PATH [PATH ...]
      Brings games back from such files (or every *.json.gz in a folder), packed, so that every
      endpoint answers as before. A game that exists already is left alone. A file is imported
      only if its `private` part agrees with its record (the meta's creation facts, seed and nonce
      are the record's; the stored entries are exactly the record's events; the disputes are
      well-formed, in order); otherwise it is refused and nothing is written.

Each file is the game's record plus a `private` member (service/upkeep/archive.py says what it holds).
The event store is REDIS_URL (or --redis-url). Exit code 0 when every game went through, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from service.bootstrap import build_services, connection_settings
from service.play.ports import NoDispatcher
from service.storage.redis_clients import connect
from service.upkeep.archive import Archive


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
        prog="python -m service.archive",
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

    client = connect(args.redis_url or connection_settings()["REDIS_URL"], decode_responses=True)
    services = build_services({}, redis_client=client, dispatcher=NoDispatcher())  # it enqueues no bot turn
    archive = Archive(services.history, services.storage)
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
