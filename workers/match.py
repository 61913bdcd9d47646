"""`python -m workers.match`: start a match on duplicate deals over HTTP, or follow one, and print its results.

    python -m workers.match --url URL --game golf --entrants greedy,expert,bot:acme --deals 200 [--options JSON]
    python -m workers.match --url URL --follow MATCH_ID

Entrants are house levels (or plug-in levels) by name and registered bots as `bot:<name>`. While the match runs a
progress bar on stderr counts its finished games; when it has finished, the results go to stdout: each entrant's
mean points per hand and the paired differences with their 95% intervals (rules C-8), or with `--json` the match
as `GET /v1/matches/{id}` gives it. Exit codes: 0 finished; 2 a wrong command line or a refusal of the service
(a 4xx: its problem's detail is printed); 1 the service could not be reached, failed, or the match stalled.
Ctrl-C stops following (exit 130); the match goes on in the service.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from workers.simulate_results import progress_bar

POLL_SECONDS = 1.0  # the match is read again this often while it runs
STALL_SECONDS = 600.0  # no game finished for this long: no worker plays it
UNREACHABLE_SECONDS = 120.0  # the service has not answered for this long: give up
HTTP_TIMEOUT = 30.0
RETRY_AFTER_MAX = 60.0


class Refused(Exception):
    """The service refused the request (a 4xx): the command line asks for something it will not do."""


class Unavailable(Exception):
    """The service could not be reached, failed (5xx) or the match made no progress."""


def problem_text(status: int, body: bytes) -> str:
    """A problem answer in one line: `422 invalid_match: entrants.1: no level 'nope' plays golf`."""
    try:
        problem = json.loads(body or b"{}")
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        return f"HTTP {status}"
    parts = [str(problem[key]) for key in ("code", "detail") if problem.get(key)]
    return f"{status} {': '.join(parts)}" if parts else f"HTTP {status}"


class MatchClient:
    """The match routes of one service, JSON over `urllib`."""

    def __init__(self, base_url: str, sleep: Callable[[float], None] = time.sleep) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--url wants the service's base URL, like http://127.0.0.1:8000, not {base_url!r}")
        self.base = base_url.rstrip("/")
        self.sleep = sleep

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One request and its JSON answer. A 429 or a 503 with Retry-After is asked again after it, for at most
        UNREACHABLE_SECONDS; Refused for any other 4xx, Unavailable when no answer came or for a 5xx."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        waited = 0.0
        while True:
            request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as error:
                text = problem_text(error.code, error.read())
                wait = _retry_after(error)
                if error.code in (429, 503) and wait is not None and waited + wait <= UNREACHABLE_SECONDS:
                    self.sleep(wait)
                    waited += wait
                    continue
                if 400 <= error.code < 500:
                    raise Refused(f"{method} {path}: {text}") from error
                raise Unavailable(f"{method} {path}: {text}") from error
            except (urllib.error.URLError, OSError, ValueError) as error:
                raise Unavailable(f"cannot reach the service at {self.base}: {error}") from error

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = self.call("POST", "/v1/matches", body)
        return created

    def match(self, match_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.call("GET", f"/v1/matches/{urllib.parse.quote(match_id, safe='')}")
        return found


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    value = error.headers.get("Retry-After") if error.headers else None
    if value is None:
        return None
    try:
        return min(max(float(value), 0.1), RETRY_AFTER_MAX)
    except ValueError:
        return 1.0


def entrants_of(text: str) -> list[dict[str, str]]:
    """`greedy,expert,bot:acme` as the API's entrants: levels by name, registered bots as `bot:<name>`."""
    entrants: list[dict[str, str]] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item.startswith("bot:"):
            entrants.append({"bot": item.removeprefix("bot:")})
        else:
            entrants.append({"level": item})
    return entrants


def follow(
    client: MatchClient,
    match: dict[str, Any],
    shown: bool,
    poll_seconds: float = POLL_SECONDS,
    stall_seconds: float = STALL_SECONDS,
) -> dict[str, Any]:
    """Read the match until it has finished, a progress bar counting its games; the finished match."""
    progress = match["progress"]
    moved = answered = time.monotonic()
    with progress_bar(shown) as bar:
        task = bar.add_task(
            f"{match['game']} match {match['id']}", total=progress["games_total"], completed=progress["games_finished"]
        )
        while match["status"] != "finished":
            client.sleep(poll_seconds)
            try:
                fresh = client.match(match["id"])
            except Unavailable:
                if time.monotonic() - answered > UNREACHABLE_SECONDS:
                    raise
                continue
            answered = time.monotonic()
            if fresh["progress"]["games_finished"] != match["progress"]["games_finished"]:
                moved = answered
            elif fresh["status"] != "finished" and answered - moved > stall_seconds:
                raise Unavailable(
                    f"match {match['id']}: no game finished for {stall_seconds:.0f} s: is a worker running?"
                )
            match = fresh
            bar.update(task, completed=match["progress"]["games_finished"])
    return match


READINGS = {"better": "better", "worse": "worse", "even": "not told apart", "single": "one deal: no interval"}


def reading(pair: dict[str, Any], better: str) -> str:
    """How a paired difference reads: better or worse (its interval clear of 0), not told apart (it holds 0)."""
    if not pair["ci95"]:
        return READINGS["single"]
    low, high = pair["ci95"]
    if low <= 0 <= high:
        return READINGS["even"]
    return READINGS["better" if (high < 0) == (better == "lower") else "worse"]


def print_results(match: dict[str, Any], console: Console) -> None:
    """The finished match's results: the entrants best first, then every paired difference."""
    better = match["better"]
    results = sorted(
        match["results"], key=lambda r: (r["mean_points_per_hand"] or 0.0) * (1 if better == "lower" else -1)
    )
    console.print(f"{match['game']} match {match['id']}: {match['deals']} deals, {match['games_total']} games")
    console.print(f"points per hand ({better} is better), best first:")
    table = Table()
    table.add_column("entrant")
    table.add_column("hands", justify="right")
    table.add_column("points per hand", justify="right")
    table.add_column("timeouts", justify="right")
    for result in results:
        points = result["mean_points_per_hand"]
        shown = "–" if points is None else f"{points:.2f}"
        table.add_row(result["entrant"], str(result["hands"]), shown, str(result.get("timeouts", "–")))
    console.print(table)
    console.print("paired differences of points per hand, deal by deal:")
    pairs = Table()
    pairs.add_column("entrant")
    pairs.add_column("minus")
    pairs.add_column("mean", justify="right")
    pairs.add_column("95% interval", justify="right")
    pairs.add_column("reading")
    for result in results:
        for pair in result["paired"]:
            interval = pair["ci95"]
            shown = f"{interval[0]:+.2f} to {interval[1]:+.2f}" if interval else "(one deal)"
            pairs.add_row(result["entrant"], pair["vs"], f"{pair['mean']:+.2f}", shown, reading(pair, better))
    console.print(pairs)
    if match.get("seed"):
        console.print(f"seed {match['seed']}")
        console.print(f"nonce {match['nonce']}")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m workers.match",
        description="Start a match on duplicate deals through a running service, or follow one, and print its results.",
    )
    parser.add_argument("--url", required=True, help="the service's base URL, like http://127.0.0.1:8000")
    parser.add_argument("--follow", metavar="MATCH_ID", help="follow this match instead of starting one")
    parser.add_argument("--game", help="game id, e.g. golf")
    parser.add_argument("--entrants", help="levels and registered bots, comma-separated: greedy,expert,bot:acme")
    parser.add_argument("--deals", type=int, help="deals to play, 1 to 1000")
    parser.add_argument("--options", default="{}", help="the games' options as JSON, e.g. '{\"rounds\": 1}'")
    parser.add_argument("--seed", help="the match's seed (default: drawn by the service, secret until the end)")
    parser.add_argument("--json", action="store_true", help="print the finished match as JSON instead of tables")
    parser.add_argument("--poll", type=float, default=POLL_SECONDS, help="seconds between reads (default 1)")
    parser.add_argument(
        "--stall-seconds",
        type=float,
        default=STALL_SECONDS,
        help=f"give up when no game finished for this long (default {STALL_SECONDS:.0f})",
    )
    return parser.parse_args(argv)


def request_of(args: argparse.Namespace) -> dict[str, Any] | str:
    """The match to start, as the API's request; or what is wrong with the command line."""
    if args.follow:
        given = [flag for flag in ("game", "entrants", "deals", "seed") if getattr(args, flag) is not None]
        return f"--follow: not with --{given[0]}" if given else {}
    for flag in ("game", "entrants", "deals"):
        if getattr(args, flag) is None:
            return f"--{flag} is needed to start a match (or --follow MATCH_ID)"
    try:
        options = json.loads(args.options)
    except ValueError as error:
        return f"--options: not JSON ({error})"
    if not isinstance(options, dict):
        return "--options: must be a JSON object, e.g. {}"
    body: dict[str, Any] = {
        "game": args.game,
        "entrants": entrants_of(args.entrants),
        "deals": args.deals,
        "options": options,
    }
    if args.seed is not None:
        body["seed"] = args.seed
    return body


def main(argv: Sequence[str] | None = None, sleep: Callable[[float], None] = time.sleep) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    errors = Console(stderr=True, soft_wrap=True)
    body = request_of(args)
    if isinstance(body, str):
        errors.print(f"match: {body}", markup=False)
        return 2
    if args.poll <= 0 or args.stall_seconds <= 0:
        errors.print("match: --poll and --stall-seconds are more than 0", markup=False)
        return 2
    match_id = args.follow
    try:
        client = MatchClient(args.url, sleep)
        match = client.match(args.follow) if args.follow else client.create(body)
        match_id = match["id"]
        errors.print(f"match {match_id}: {client.base}/#/match/{match_id}", markup=False)
        match = follow(client, match, not args.json, args.poll, args.stall_seconds)
    except ValueError as error:
        errors.print(f"match: {error}", markup=False)
        return 2
    except Refused as error:
        errors.print(f"match: refused: {error}", markup=False)
        return 2
    except Unavailable as error:
        errors.print(f"match: {error}", markup=False)
        return 1
    except KeyboardInterrupt:
        again = f"--follow {match_id}" if match_id else "--follow"
        errors.print(f"match: stopped following; the match goes on (follow it again with {again})", markup=False)
        return 130
    if args.json:
        print(json.dumps(match))
    else:
        print_results(match, Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
