"""`python -m workers.match` (workers/match.py) against a fake of the match routes: the request it sends, the
progress it follows, the results it prints, its exit codes; and docs/bots.md "Running a match": each command
the doc shows runs, and prints the results the doc shows."""

from __future__ import annotations

import copy
import json
import re
import shlex
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from workers import match as cli

ROOT = Path(__file__).resolve().parents[2]
DOC_URL = "http://127.0.0.1:8000"
MATCH_ID = "Xq3n8R1TzA2b"


def pair(vs: str, mean: float, low: float, high: float) -> dict[str, Any]:
    return {"vs": vs, "mean": mean, "ci95": [low, high]}


# the results of docs/bots.md's example: 200 Golf deals of greedy, expert and a registered bot
DOC_RESULTS = [
    {
        "entrant": "greedy",
        "hands": 600,
        "mean_points_per_hand": 5.75,
        "paired": [pair("expert", 0.84, 0.38, 1.30), pair("bot:acme-golfer", -0.05, -0.45, 0.35)],
        "timeouts": 0,
    },
    {
        "entrant": "expert",
        "hands": 600,
        "mean_points_per_hand": 4.91,
        "paired": [pair("greedy", -0.84, -1.30, -0.38), pair("bot:acme-golfer", -0.89, -1.37, -0.41)],
        "timeouts": 0,
    },
    {
        "entrant": "bot:acme-golfer",
        "hands": 600,
        "mean_points_per_hand": 5.80,
        "paired": [pair("expert", 0.89, 0.41, 1.37), pair("greedy", 0.05, -0.35, 0.45)],
        "timeouts": 3,
    },
]
DOC_SEED = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
DOC_NONCE = "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c"


class FakeMatches:
    """The match routes as workers/match.py uses them, on a free local port.

    `POST /v1/matches` answers 201 with a running match (or `refusal`, a problem, when set); `GET
    /v1/matches/{id}` shows one more finished game each time it is read (none while `stalled`) and, once all
    have, the match finished with `results`, its seed and nonce; other ids are 404 `match_not_found`. The first
    `busy` reads are 429 with `Retry-After: 2`. Every request body is kept."""

    def __init__(self, results: list[dict[str, Any]] = DOC_RESULTS, games_per_read: int = 150) -> None:
        self.results = results
        self.games_per_read = games_per_read
        self.refusal: tuple[int, dict[str, Any]] | None = None
        self.stalled = False
        self.busy = 0
        self.bodies: list[dict[str, Any]] = []
        self.reads = 0
        self.match: dict[str, Any] | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                kind = "application/problem+json" if status >= 400 else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                if self.path != "/v1/matches":
                    self.answer(404, {"code": "not_found", "detail": "no such route"})
                elif fake.refusal is not None:
                    self.answer(*fake.refusal)
                else:
                    fake.match = fake.running(body)
                    self.answer(201, fake.match, {"Location": f"/v1/matches/{MATCH_ID}"})

            def do_GET(self) -> None:
                if fake.busy:
                    fake.busy -= 1
                    self.answer(429, {"code": "rate_limited", "detail": "slow down"}, {"Retry-After": "2"})
                elif self.path != f"/v1/matches/{MATCH_ID}" or fake.match is None:
                    self.answer(404, {"code": "match_not_found", "detail": f"no match with id {self.path[12:]!r}"})
                else:
                    fake.reads += 1
                    self.answer(200, fake.read())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def running(self, body: dict[str, Any]) -> dict[str, Any]:
        total = body["deals"] * len(body["entrants"])
        return {
            "id": MATCH_ID,
            "game": body["game"],
            "options": body.get("options", {}),
            "entrants": body["entrants"],
            "deals": body["deals"],
            "games_total": total,
            "status": "running",
            "better": "lower",
            "progress": {"games_finished": 0, "games_total": total},
            "games": [],
            "results": [],
            "seed_commitment": "c0ffee",
            "created_at": "2026-01-01T12:00:00.000Z",
        }

    def read(self) -> dict[str, Any]:
        match = self.match
        assert match is not None
        progress = match["progress"]
        if not self.stalled:
            progress["games_finished"] = min(progress["games_total"], progress["games_finished"] + self.games_per_read)
        if progress["games_finished"] == progress["games_total"]:
            match.update(status="finished", results=self.results, seed=DOC_SEED, nonce=DOC_NONCE)
        return copy.deepcopy(match)

    def __enter__(self) -> FakeMatches:
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeMatches]:
    with FakeMatches() as server:
        yield server


@pytest.fixture(autouse=True)
def wide_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables as an 80-column terminal shows them."""
    monkeypatch.setenv("COLUMNS", "80")


def run(argv: list[str], slept: list[float] | None = None) -> int:
    """The command line in this process, its waits recorded instead of slept."""
    return cli.main(argv, sleep=(slept if slept is not None else []).append)


START = ["--game", "golf", "--entrants", "greedy,expert,bot:acme-golfer", "--deals", "200"]


def test_it_starts_the_match_it_is_asked_for_follows_it_and_prints_the_results(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str]
) -> None:
    slept: list[float] = []
    assert run(["--url", fake.url, *START, "--options", '{"rounds": 1}', "--seed", "s-1"], slept) == 0
    assert fake.bodies == [
        {
            "game": "golf",
            "entrants": [{"level": "greedy"}, {"level": "expert"}, {"bot": "acme-golfer"}],
            "deals": 200,
            "options": {"rounds": 1},
            "seed": "s-1",
        }
    ]
    assert fake.reads == 4 and slept == [cli.POLL_SECONDS] * 4  # 150 of 600 games a read
    out, err = capsys.readouterr()
    assert f"match {MATCH_ID}: {fake.url}/#/match/{MATCH_ID}" in err
    lines = out.splitlines()
    assert lines[0] == f"golf match {MATCH_ID}: 200 deals, 600 games"
    assert lines[1] == "points per hand (lower is better), best first:"
    ranked = [line.split("│")[1].strip() for line in lines if line.startswith("│") and "600" in line]
    assert ranked == ["expert", "greedy", "bot:acme-golfer"]
    assert "│ expert          │ greedy          │ -0.84 │ -1.30 to -0.38 │ better         │" in lines
    assert "│ greedy          │ bot:acme-golfer │ -0.05 │ -0.45 to +0.35 │ not told apart │" in lines
    assert lines[-2:] == [f"seed {DOC_SEED}", f"nonce {DOC_NONCE}"]


def test_json_prints_the_finished_match_as_the_service_gives_it(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--url", fake.url, *START, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "finished" and printed["results"] == DOC_RESULTS and printed["seed"] == DOC_SEED


def test_follow_reads_a_running_match_until_it_has_finished(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.match = fake.running({"game": "golf", "entrants": [{"level": "a"}, {"level": "b"}], "deals": 300})
    assert run(["--url", fake.url, "--follow", MATCH_ID]) == 0
    assert fake.bodies == [] and fake.reads == 4  # 150 more of 600 games each read
    assert capsys.readouterr().out.startswith(f"golf match {MATCH_ID}: 300 deals, 600 games\n")


def test_a_refusal_exits_2_with_the_problems_detail_and_prints_no_results(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str]
) -> None:
    detail = "entrants.2: no bot 'acme-golfer' is registered for golf"
    fake.refusal = (422, {"code": "invalid_match", "detail": detail})
    assert run(["--url", fake.url, *START]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"match: refused: POST /v1/matches: 422 invalid_match: {detail}" in err
    assert run(["--url", fake.url, "--follow", "nope"]) == 2
    assert "GET /v1/matches/nope: 404 match_not_found: no match with id 'nope'" in capsys.readouterr().err


def test_a_429_is_asked_again_after_its_retry_after(fake: FakeMatches) -> None:
    fake.busy = 2
    slept: list[float] = []
    assert run(["--url", fake.url, *START], slept) == 0
    assert slept[:3] == [cli.POLL_SECONDS, 2.0, 2.0] and fake.reads == 4


def test_a_match_whose_games_stop_finishing_is_given_up_with_exit_1(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.stalled = True
    assert cli.main(["--url", fake.url, *START, "--poll", "0.01", "--stall-seconds", "0.2"]) == 1
    assert "no game finished for 0 s: is a worker running?" in capsys.readouterr().err


def test_a_service_that_cannot_be_reached_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMatches() as gone:
        url = gone.url
    assert run(["--url", url, *START]) == 1
    assert f"match: cannot reach the service at {url}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--game", "golf", "--entrants", "greedy,expert"], "--deals is needed to start a match"),
        (["--follow", MATCH_ID, "--game", "golf"], "--follow: not with --game"),
        ([*START, "--options", "{rounds: 1}"], "--options: not JSON"),
        ([*START, "--options", "[1]"], "--options: must be a JSON object"),
        ([*START, "--poll", "0"], "--poll and --stall-seconds are more than 0"),
    ],
)
def test_a_wrong_command_line_exits_2_and_names_its_flag(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    assert run(["--url", fake.url, *argv]) == 2
    assert problem in capsys.readouterr().err
    assert fake.bodies == []


def test_a_url_that_is_not_a_service_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--url", "127.0.0.1:8000", *START]) == 2
    assert "--url wants the service's base URL" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("better", "interval", "reads"),
    [
        ("lower", [-1.3, -0.4], "better"),
        ("lower", [0.4, 1.3], "worse"),
        ("higher", [0.4, 1.3], "better"),
        ("higher", [-1.3, -0.4], "worse"),
        ("lower", [-0.4, 0.3], "not told apart"),
        ("higher", [0.0, 0.3], "not told apart"),
        ("lower", None, "one deal: no interval"),
    ],
)
def test_a_paired_difference_reads_by_its_interval_and_the_games_better(
    better: str, interval: list[float] | None, reads: str
) -> None:
    """C-8: an interval clear of 0 tells two entrants apart, on the side the game's C-7 calls better."""
    assert cli.reading({"vs": "x", "mean": 0.0, "ci95": interval}, better) == reads


# ---------------------------------------------------------------- docs/bots.md, "Running a match"


def doc_section() -> str:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    start = text.index("### Running a match")
    return text[start : text.index("\n##", start + 1)]


def doc_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", doc_section(), re.DOTALL)


def doc_commands() -> list[list[str]]:
    return [shlex.split(line) for block in doc_blocks("sh") for line in block.splitlines() if "workers.match" in line]


def test_the_doc_shows_a_start_and_a_follow() -> None:
    commands = doc_commands()
    assert [c[:3] for c in commands] == [["python", "-m", "workers.match"]] * 2
    assert "--follow" not in commands[0] and commands[1][-2:] == ["--follow", MATCH_ID]


@pytest.mark.parametrize("command", doc_commands(), ids=["start", "follow"])
def test_each_command_of_the_doc_prints_the_results_the_doc_shows(
    fake: FakeMatches, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    if "--follow" in command:
        fake.match = fake.running(
            {"game": "golf", "entrants": [{"level": "greedy"}, {"level": "expert"}, {"bot": "acme"}], "deals": 200}
        )
    argv = [fake.url if word == DOC_URL else word for word in command[3:]]
    assert run(argv) == 0
    shown = doc_blocks("text")[0]
    assert capsys.readouterr().out == shown
