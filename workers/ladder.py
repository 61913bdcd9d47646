"""`python -m workers.ladder rebuild [--out FILE]`: every game's ladder recomputed from the match records.

Each game's finished matches, in the order they finished, are read as their match records (`Matches.record`,
the format `GET /v1/matches/{id}/record` serves) and rated from those records' games alone, ignoring the deal
scores the service keeps with each finished match (service/play/ladder.py). The output is one JSON object,
`{game: ladder}` for every game of the catalog (`[]` for a game without a finished match), as canonical JSON
(sorted keys, no spaces, UTF-8, as records are hashed); the served ladders (`GET /v1/ladder/{game}`'s `ladder`),
written the same way, are the same bytes. To stdout, or to FILE with --out. The store is REDIS_URL (or
--redis-url).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from service.bootstrap import Services, build_services, connection_settings
from service.play.ladder import serialized
from service.play.ports import NoDispatcher
from service.storage.redis_clients import connect


def main(argv: Sequence[str] | None = None, services: Services | None = None) -> int:
    """The command line; see the module's docstring. `services`: the object graph to read (tests)."""
    parser = argparse.ArgumentParser(
        prog="python -m workers.ladder", description="Recompute every game's ladder from the match records."
    )
    parser.add_argument("--redis-url", help="the event store (default: REDIS_URL, else redis://localhost:6379/0)")
    commands = parser.add_subparsers(dest="command", required=True)
    rebuild = commands.add_parser("rebuild", help="recompute every game's ladder from the match records")
    rebuild.add_argument("--out", type=Path, metavar="FILE", help="write the ladders here (default: stdout)")
    args = parser.parse_args(argv)

    if services is None:
        client = connect(args.redis_url or connection_settings()["REDIS_URL"], decode_responses=True)
        services = build_services({}, redis_client=client, dispatcher=NoDispatcher())  # it plays nothing
    text = serialized(services.ladders.rebuild())
    if args.out is None:
        print(text)
    else:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
