"""docs/bots.md's bots, run as the doc shows them against the service (gunicorn and an RQ worker on a Redis of
the test's own): the standard-library bot (docs/examples/stdlib_bot.py) and the Node.js one through the bridge's
`--command` (docs/examples/random_bot.js) each play their seat of a Golf game to its end, every move their own."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ROOT, call, stop, wait_until

pytestmark = pytest.mark.integration
EXAMPLES = ROOT / "docs" / "examples"


def seat_a_bot(api_url: str, name: str) -> tuple[str, dict[str, Any]]:
    """Register the bot `name` and seat it in a one-round Golf game against a house greedy bot."""
    status, bot = call("POST", f"{api_url}/v1/bots", {"name": name, "games": ["golf"]})
    assert status == 201, bot
    seats = [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "bot": name}]
    status, game = call("POST", f"{api_url}/v1/games", {"game": "golf", "seats": seats, "options": {"rounds": 1}})
    assert status == 201, game
    return bot["token"], game


def assert_played_by_its_bot(api_url: str, game: dict[str, Any], process: subprocess.Popen[bytes]) -> None:
    def finished() -> bool:
        assert process.poll() is None, "the bot stopped"
        return call("GET", f"{api_url}/v1/games/{game['id']}")[1]["status"] == "finished"

    try:
        wait_until(finished, 120, "the bot's game to finish")
    finally:
        stop(process)
    status, record = call("GET", f"{api_url}/v1/games/{game['id']}/record")
    assert status == 200, record
    moves = [event for event in record["events"] if event["actor"] == 1]
    assert moves, "the bot moved"
    assert not [event for event in record["events"] if event.get("reason") == "turn_timeout"], "every move its own"


def test_the_standard_library_bot_of_the_doc_plays_its_game_to_the_end(api_url: str, worker: Any) -> None:
    token, game = seat_a_bot(api_url, "stdlib-bot")
    bot = subprocess.Popen([sys.executable, str(EXAMPLES / "stdlib_bot.py"), api_url, token], cwd=ROOT)
    assert_played_by_its_bot(api_url, game, bot)


def test_the_nodejs_bot_of_the_doc_plays_through_the_bridge(api_url: str, worker: Any, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js runs the doc's second example (scripts/install.sh installs it)"
    token, game = seat_a_bot(api_url, "node-bot")
    command = f"{node} {EXAMPLES / 'random_bot.js'}"
    bridge = subprocess.Popen(
        [sys.executable, "-m", "workers.bridge", "--url", api_url, "--token", token, "--command", command],
        cwd=ROOT,
        stderr=(tmp_path / "bridge.log").open("wb"),
    )
    assert_played_by_its_bot(api_url, game, bridge)
