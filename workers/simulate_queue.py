"""`python -m workers.simulate --via-queue URL`: the simulation's games played by a running service.

Each game is created over HTTP with every seat a bot (levels rotating as in-process, same seeds, so
the same deals), its bots are played by the service's RQ workers, and the client follows the game
with the events long-poll until its seed is revealed (the last event), then reads the result from
the spectator view. Several games are in flight at once. A creation refused with 429 (the service's
GAMES_PER_MINUTE) is retried after its Retry-After.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from workers.simulate_results import GameOutcome, progress_bar, seated, tally

WAIT_SECONDS = 20  # the events long-poll's wait per request (the API allows up to 30)
STALL_SECONDS = 120.0  # a game with no new event for this long has no worker playing it
HTTP_TIMEOUT = WAIT_SECONDS + 20.0
MAX_RETRY_AFTER = 60.0


class ServiceError(Exception):
    """The service could not be reached, refused a request, or a game stopped moving."""


class ServiceClient:
    """JSON over HTTP against one service (standard library only)."""

    def __init__(self, base_url: str) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--via-queue wants the service's base URL, like http://127.0.0.1:8000, not {base_url!r}")
        self.base = base_url.rstrip("/")

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One request; its JSON answer. A 429 waits for its Retry-After and tries again."""
        while True:
            try:
                return self._once(method, path, body)
            except urllib.error.HTTPError as error:
                if error.code == 429:
                    time.sleep(_retry_after(error))
                    continue
                raise ServiceError(f"{method} {path}: {error.code} {_problem_detail(error)}") from error
            except (urllib.error.URLError, OSError) as error:
                raise ServiceError(f"cannot reach the service at {self.base}: {error}") from error

    def _once(self, method: str, path: str, body: Any) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            return json.loads(response.read() or b"null")


def _retry_after(error: urllib.error.HTTPError) -> float:
    try:
        return min(max(float(error.headers.get("Retry-After", "1")), 0.1), MAX_RETRY_AFTER)
    except ValueError:
        return 1.0


def _problem_detail(error: urllib.error.HTTPError) -> str:
    try:
        problem = json.loads(error.read() or b"{}")
    except ValueError:
        return str(error.reason)
    return str(problem.get("detail") or error.reason) if isinstance(problem, dict) else str(error.reason)


def play_remote(
    client: ServiceClient,
    game_id: str,
    levels: Sequence[str],
    options: dict[str, Any],
    seed: str,
    stall_seconds: float = STALL_SECONDS,
) -> GameOutcome:
    """Create one all-bot game, wait until it has ended, and read its outcome."""
    body = {"game": game_id, "seats": [{"kind": "bot", "level": level} for level in levels], "options": options}
    created = client.call("POST", "/v1/games", {**body, "seed": seed})
    path = f"/v1/games/{created['id']}"
    events: list[dict[str, Any]] = []
    moved = time.monotonic()
    while not events or events[-1]["type"] != "SeedRevealed":
        new = client.call("GET", f"{path}/events?after={len(events)}&wait={WAIT_SECONDS}")["events"]
        if new:
            events += new
            moved = time.monotonic()
        elif time.monotonic() - moved > stall_seconds:
            raise ServiceError(
                f"game {created['id']} made no move for {stall_seconds:.0f} s at event {len(events)}: "
                "is a worker running?"
            )
    view = client.call("GET", path)
    result = view["result"]
    turns = sum(1 for event in events if event["actor"] != "system")
    limited = result.get("reason") == "event_limit"
    return GameOutcome(
        tuple(result["totals"]), tuple(result["winners"]), int(view["round"]), turns, (), int(view["version"]), limited
    )


def simulate_via_queue(
    base_url: str,
    game_id: str,
    levels: Sequence[str],
    games: int,
    options: dict[str, Any],
    seed: str,
    concurrency: int = 8,
    progress: bool = True,
) -> dict[str, Any]:
    """Play `games` games through the service, `concurrency` at a time; the same summary as in-process."""
    client = ServiceClient(base_url)
    outcomes: dict[int, GameOutcome] = {}
    started = time.perf_counter()
    with progress_bar(progress) as bar, ThreadPoolExecutor(max_workers=concurrency) as pool:
        task = bar.add_task(f"{game_id}: {games} games via {client.base}", total=games)
        futures = {
            pool.submit(play_remote, client, game_id, seated(levels, i), options, f"{seed}-{i}"): i
            for i in range(games)
        }
        try:
            for future in as_completed(futures):
                outcomes[futures[future]] = future.result()
                bar.advance(task)
        except BaseException:
            for future in futures:
                future.cancel()  # games not started yet; those in flight end on their own
            raise
    elapsed = time.perf_counter() - started
    return tally(game_id, levels, [outcomes[i] for i in range(games)], elapsed)
