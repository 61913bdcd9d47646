"""`python -m workers.match` against the service (gunicorn and an RQ worker on a Redis of the test's own): a
two-deal Golf match started, followed and its results printed as the service computed them; and the refusal
docs/bots.md shows, as the service words it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from typing import Any

import pytest

from tests.integration.conftest import ROOT, call

pytestmark = pytest.mark.integration
DOC_URL = "http://127.0.0.1:8000"


def match_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workers.match", *argv],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_two_deal_match_is_started_followed_and_its_results_printed(api_url: str, worker: Any) -> None:
    ran = match_cli(
        "--url", api_url, "--game", "golf", "--entrants", "random,greedy", "--deals", "2", "--options", '{"rounds": 1}'
    )
    assert ran.returncode == 0, ran.stderr
    found = re.search(r"^match (\S+): ", ran.stderr, re.MULTILINE)
    assert found, ran.stderr
    status, match = call("GET", f"{api_url}/v1/matches/{found[1]}")
    assert status == 200 and match["status"] == "finished", match
    assert match["deals"] == 2 and match["options"] == {"rounds": 1}
    lines = ran.stdout.splitlines()
    assert lines[0] == f"golf match {match['id']}: 2 deals, 4 games"
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    best_first = sorted(match["results"], key=lambda r: r["mean_points_per_hand"])
    shown = [  # entrant, hands, points per hand, timeouts
        [r["entrant"], str(r["hands"]), f"{r['mean_points_per_hand']:.2f}", str(r["timeouts"])] for r in best_first
    ]
    assert rows[:2] == shown
    for result in best_first:
        for pair in result["paired"]:
            low, high = pair["ci95"]
            expected = [result["entrant"], pair["vs"], f"{pair['mean']:+.2f}", f"{low:+.2f} to {high:+.2f}"]
            assert expected in [row[:4] for row in rows[2:]], rows
    assert lines[-2:] == [f"seed {match['seed']}", f"nonce {match['nonce']}"]


def test_the_refusal_the_doc_shows_is_the_services(api_url: str) -> None:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    section = text[text.index("### Running a match") :]
    command = next(line for line in section.splitlines() if line.startswith("python -m workers.match"))
    shown = next(line for line in section.splitlines() if line.startswith("match: refused: "))
    argv = [api_url if word == DOC_URL else word for word in shlex.split(command)[3:]]
    argv[argv.index("--entrants") + 1] = "greedy,expret"  # as the doc says
    ran = match_cli(*argv)
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.strip() == shown


def test_following_a_match_that_is_not_there_exits_2(api_url: str) -> None:
    ran = match_cli("--url", api_url, "--follow", "no-such-match")
    assert ran.returncode == 2
    assert "GET /v1/matches/no-such-match: 404 match_not_found" in ran.stderr
