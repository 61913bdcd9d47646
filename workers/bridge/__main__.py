"""`python -m workers.bridge --url URL --token T (--policy M:F | --level L | --command C)`: play a bot's turns.

The token may come from CARDTABLE_BOT_TOKEN instead of `--token` (so that it is not in the process
list). SIGTERM or SIGINT stops it: no more turns are asked for, the turns under way get `--stop-seconds`
to finish (a second signal gives them up at once), and it exits 0. It exits 2 when the service refuses
the token or has no bot turns, or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType

from rich.console import Console
from rich.live import Live
from rich.logging import RichHandler

from domain.bots import LEVELS
from workers.bridge.client import ServiceClient
from workers.bridge.players import player_factory
from workers.bridge.runner import WAIT_SECONDS, Bridge

log = logging.getLogger("workers.bridge")

TOKEN_VARIABLE = "CARDTABLE_BOT_TOKEN"
PROGRESS_SECONDS = 30.0  # without a terminal, a progress line this often


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m workers.bridge", description="Play a registered bot's turns, from its turn queue over HTTP."
    )
    parser.add_argument("--url", required=True, help="the service's base URL, like http://127.0.0.1:8000")
    token_help = f"the bot's token (or {TOKEN_VARIABLE})"
    parser.add_argument("--token", default=os.environ.get(TOKEN_VARIABLE), help=token_help)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--policy", metavar="MODULE:FUNCTION", help="a Python function(view, legal) -> action")
    mode.add_argument("--level", choices=LEVELS, help="a house policy, played from the seat's view")
    mode.add_argument("--command", help="a program: one JSON turn a line on its stdin, one JSON action a line back")
    parser.add_argument("--concurrency", type=int, default=4, help="turns played at once (default 4)")
    parser.add_argument("--wait", type=int, default=WAIT_SECONDS, help="the turns long-poll's wait, 0 to 30 s")
    parser.add_argument("--stop-seconds", type=float, default=10.0, help="time the turns under way get to finish")
    parser.add_argument(
        "--log-turns", metavar="FILE", help="append each turn as received to FILE, one JSON line (for review)"
    )
    args = parser.parse_args(argv)
    if not args.token:
        parser.error(f"the bot's token is needed: --token or {TOKEN_VARIABLE}")
    if args.concurrency < 1:
        parser.error("--concurrency is at least 1")
    if not 0 <= args.wait <= 30:
        parser.error("--wait is 0 to 30 seconds")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)
    if console.is_terminal:
        logging.basicConfig(level=logging.INFO, format="%(message)s", handlers=[RichHandler(console=console)])
    else:  # a log file: one plain line a message
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    try:
        client = ServiceClient(args.url, args.token)
        make_player = player_factory(args.policy, args.level, args.command, args.token, client.game_options)
    except ValueError as error:
        console.print(f"bridge: {error}")
        return 2
    turn_log = open(args.log_turns, "a", encoding="utf-8") if args.log_turns else None  # noqa: SIM115
    bridge = Bridge(client, make_player, args.concurrency, args.wait, turn_log=turn_log)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if bridge.stop.is_set():
            bridge.abandon.set()
        bridge.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    mode = f"--policy {args.policy}" if args.policy else f"--level {args.level}" if args.level else "--command"
    console.print(f"bridge: playing {args.url} with {mode}, {args.concurrency} turns at once")
    bridge.start()
    _show_progress(bridge, console)
    console.print("bridge: stopping")
    bridge.shut_down(args.stop_seconds)
    console.print(f"bridge: stopped: {bridge.stats.summary()}")
    if turn_log is not None:
        turn_log.close()
    if bridge.fatal is not None:
        return 2
    return 0


def _show_progress(bridge: Bridge, console: Console) -> None:
    """Until the bridge is stopped: a live line on a terminal, else a log line every PROGRESS_SECONDS."""
    if console.is_terminal:
        with Live(console=console, refresh_per_second=2, transient=True) as live:
            while not bridge.stop.wait(0.5):
                live.update(f"bridge: {bridge.stats.summary()}")
        return
    next_line = time.monotonic() + PROGRESS_SECONDS
    while not bridge.stop.wait(0.5):
        if time.monotonic() >= next_line:
            console.print(f"bridge: {bridge.stats.summary()}")
            next_line += PROGRESS_SECONDS


if __name__ == "__main__":
    sys.exit(main())
