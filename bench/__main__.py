"""`python -m bench` (`make bench`): every figure against its floor, measured in one run on this machine.

Starts its own redis-server (as `make run` does: append-only file, fsync always) on a free port in
a temporary folder, its own gunicorn processes and RQ workers, and stops them all at the end. Prints
a table and writes var/bench.json (one entry per figure: name, value, unit, floor, ratio, target).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

import redis
from rich.console import Console

from bench import (
    actions,
    bots,
    experts,
    fold,
    length,
    matches,
    memory,
    openloop,
    reads,
    reconcile,
    remote,
    report,
    watchers,
)
from bench.procs import ROOT, Processes, Server, processes, stream_workers_default
from service.bootstrap import game_history, game_service
from service.play.game_service import GameService
from service.storage.redis_store import RedisStore
from service.storage.turn_queue import RQDispatcher

APP = "service.app:create_app()"
FLOOR_APP = "bench.floor_app:create_app()"
STREAM_PRIORITY = "idle"  # SCHED_IDLE, as scripts/run.sh starts it
MATCHES_TITLE = "a match's turns through the workers against simulate, and the open loop beside a 200-deal match ..."
REMOTE_TITLE = "registered bots: a turn to a waiting long-poll, and bridges playing over HTTP ..."


def run(console: Console, folder: Path) -> list[report.Figure]:
    """Every figure, in the order of the issue: fold, actions (closed and open loop), matches, registered bots,
    cost against length, bots, the reconciler, memory. The matches come before the registered bots: their
    workers would play the bridges' games' turns at their deadlines."""
    with processes(folder) as procs:
        raw, store, service = _store_and_service(procs)
        console.print(f"redis-server at {procs.redis_url}, logs in {folder}")

        console.print("bot turns through the RQ workers, and no-op jobs ...")
        bot_figure, games = bots.figure(procs, raw, service, store.events)
        console.print("greedy turns alone and beside 8 expert games ...")
        expert_figure = experts.figure(procs, raw, service, store.events)
        console.print("folding the finished games ...")
        fold_figures = fold.figures(service, games)
        memory_figures = memory.figures(raw, game_history(store, service), store.packing, games)
        console.print("a reconciler pass at 10, 1,000 and 10,000 waiting games ...")
        reconcile_figures = reconcile.figures(raw)

        app = procs.start_gunicorn(APP, "api")
        floor = procs.start_gunicorn(FLOOR_APP, "floor")
        console.print("actions over HTTP at 1, 16 and 64 clients, and the floor app ...")
        action_figures = actions.figures(raw, app, floor, procs.redis_pid)
        rps_c16 = next(figure.value for figure in action_figures if figure.name == "actions_rps_c16")
        stream = start_stream_tier(procs)
        console.print(
            f"open loop at {openloop.SHARE:.0%} of that rate, alone, with 1,000 registered bots waiting and with "
            "2,500 watchers held ..."
        )
        open_figures = openloop.figures(app, rps_c16, stream, procs.redis_pid)
        console.print(MATCHES_TITLE)
        match_figures = [  # the open loop alone is measured again beside the match: the floor of its figure
            figure
            for figure in matches.figures(procs, app, stream, store.events, rps_c16)
            if figure.name != "actions_p99_ms_open50"
        ]
        console.print(REMOTE_TITLE)
        remote_figures = remote.figures(procs, app, stream, store.events, bot_figure.value)
        console.print("the cost of an action at 10, 1,000 and 5,000 events ...")
        length_figures = length.figures(service, app, procs.redis_pid)
        console.print(reads.TITLE)
        read_figures = reads.figures(service, store.packing, app, procs.redis_pid)
        watcher_figures = watcher_cpu(console, procs, app, stream)
    return [
        *fold_figures,
        *action_figures,
        *open_figures,
        *match_figures,
        *remote_figures,
        *watcher_figures,
        *length_figures,
        *read_figures,
        bot_figure,
        expert_figure,
        *reconcile_figures,
        *memory_figures,
    ]


def start_stream_tier(procs: Processes, workers: int | None = None) -> Server:
    """The stream tier as `make run` starts it: `workers` processes (default: STREAM_WORKERS's default for this
    machine's cores, as scripts/run.sh has it), under SCHED_IDLE."""
    count = stream_workers_default() if workers is None else workers
    return procs.start_gunicorn(APP, "stream", workers=count, priority=STREAM_PRIORITY)


def watcher_cpu(console: Console, procs: Processes, app: Server, stream: Server) -> list[report.Figure]:
    """watcher_cpu_us_per_event: a stream-tier process against the raw-write floor (one gevent process), so a
    tier of one process (`stream` if it is one, else one started for it)."""
    if stream.workers != 1:
        stream = start_stream_tier(procs, workers=1)
    floor = procs.start_floor_stream(STREAM_PRIORITY)  # the same share of the CPU as the tier
    console.print("CPU per event delivered to watchers, against raw socket writes of the same bytes ...")
    return watchers.figures(app, stream, floor.port, floor.pid)


def run_openloop_only(console: Console, folder: Path, rate: float) -> list[report.Figure]:
    """Only the open-loop figures at `rate` actions a second (`python -m bench --only openloop --rate N`)."""
    with processes(folder) as procs:
        procs.start_redis()
        app = procs.start_gunicorn(APP, "api")
        stream = start_stream_tier(procs)
        console.print(f"open loop at {rate:.0f} actions/s, alone and with 2,500 watchers held ...")
        return openloop.figures(app, rate / openloop.SHARE, stream, procs.redis_pid, crowds=("watchers",))


def run_remote_only(console: Console, folder: Path, rate: float) -> list[report.Figure]:
    """Only the registered bots' figures (`python -m bench --only remote`): the house bots' turns through the
    workers just before the bridges' (their floor), a turn's dispatch to a waiting bot (after the workers have
    stopped: they would play its games' turn timeouts), and the open loop at `rate` actions a second alone and
    with 1,000 registered bots waiting."""
    with processes(folder) as procs:
        raw, store, service = _store_and_service(procs)
        app = procs.start_gunicorn(APP, "api")
        stream = start_stream_tier(procs)
        console.print("bot turns through the RQ workers, and no-op jobs, then bridges playing over HTTP ...")
        bot_figure, _ = bots.figure(procs, raw, service, store.events)  # just before the bridges: the same load
        turns = remote.turns_figure(procs, app, stream, store.events, bot_figure.value)
        console.print("a turn to a registered bot's waiting long-poll ...")
        dispatch = remote.dispatch_figure(app, stream, procs.redis_pid)
        asyncio.run(openloop.bots_gone(app.port))
        console.print(f"open loop at {rate:.0f} actions/s, alone and with 1,000 registered bots waiting ...")
        open_figures = openloop.figures(app, rate / openloop.SHARE, stream, procs.redis_pid, crowds=("bots",))
    return [bot_figure, turns, dispatch, *open_figures]


def run_matches_only(console: Console, folder: Path, rate: float) -> list[report.Figure]:
    """Only the matches' figures (`python -m bench --only matches`), the open loop at `rate` actions a second."""
    with processes(folder) as procs:
        _, store, _ = _store_and_service(procs)
        app = procs.start_gunicorn(APP, "api")
        stream = start_stream_tier(procs)
        console.print(MATCHES_TITLE)
        return matches.figures(procs, app, stream, store.events, rate / openloop.SHARE)


def run_watchers_only(console: Console, folder: Path) -> list[report.Figure]:
    """Only the watcher figure (`python -m bench --only watchers`): a quicker loop while working on it."""
    with processes(folder) as procs:
        procs.start_redis()
        app = procs.start_gunicorn(APP, "api")
        return watcher_cpu(console, procs, app, start_stream_tier(procs, workers=1))


def run_reads_only(console: Console, folder: Path) -> list[report.Figure]:
    """Only the figures of reads against game length (`python -m bench --only reads`)."""
    with processes(folder) as procs:
        _, store, service = _store_and_service(procs)
        app = procs.start_gunicorn(APP, "api")
        console.print(reads.TITLE)
        return reads.figures(service, store.packing, app, procs.redis_pid)


def run_actions_only(console: Console, folder: Path) -> list[report.Figure]:
    """Only what an action costs against its floors (`python -m bench --only actions`): the closed-loop
    actions against the floor app, and an action's CPU against game length."""
    with processes(folder) as procs:
        raw, _, service = _store_and_service(procs)
        app = procs.start_gunicorn(APP, "api")
        floor = procs.start_gunicorn(FLOOR_APP, "floor")
        console.print("actions over HTTP at 1, 16 and 64 clients, and the floor app ...")
        figures = actions.figures(raw, app, floor, procs.redis_pid)
        console.print("the cost of an action at 10, 1,000 and 5,000 events ...")
        return [*figures, *length.figures(service, app, procs.redis_pid)]


def _store_and_service(procs: Processes) -> tuple[redis.Redis, RedisStore, GameService]:
    """The bench's own redis-server, the store's adapters on it and the command use cases."""
    raw = procs.start_redis()
    store = RedisStore.connect(redis.Redis.from_url(procs.redis_url, decode_responses=True))
    return raw, store, game_service(store, RQDispatcher(raw))


ONLY_PARTS = ("watchers", "openloop", "reads", "actions", "remote", "matches")  # what `--only` may measure alone


def _raise_file_limit() -> None:
    """Thousands of open watchers need as many sockets, here and in the gunicorn processes started from here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "bench.json", help="where to write the figures")
    parser.add_argument(
        "--markdown", action="store_true", help="also print the table as Markdown (docs/performance.md)"
    )
    parser.add_argument("--only", choices=ONLY_PARTS, help="measure only these figures")
    parser.add_argument(
        "--rate", type=float, default=150.0, help="with --only openloop, remote or matches: actions offered a second"
    )
    args = parser.parse_args()
    _raise_file_limit()
    console = Console() if Console().is_terminal else Console(width=200)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        if args.only == "watchers":
            figures = run_watchers_only(console, Path(folder))
        elif args.only == "reads":
            figures = run_reads_only(console, Path(folder))
        elif args.only == "actions":
            figures = run_actions_only(console, Path(folder))
        elif args.only == "openloop":
            figures = run_openloop_only(console, Path(folder), args.rate)
        elif args.only == "remote":
            figures = run_remote_only(console, Path(folder), args.rate)
        elif args.only == "matches":
            figures = run_matches_only(console, Path(folder), args.rate)
        else:
            figures = run(console, Path(folder))
    report.print_table(figures, console)
    report.write_json(figures, args.json)
    if args.markdown:
        print(report.markdown(figures))
    console.print(f"wrote {args.json} ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
