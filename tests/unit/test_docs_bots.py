"""docs/bots.md, "Write your own bot": each bridge command it shows plays a game against the fake of the
registered-bots contract (tests/bridge_fake.py) and stops with exit 0 on SIGTERM; the line a command
reads is the one it shows; the figures it gives are the bridge's."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from tests.bridge_fake import TOKEN, FakeService
from tests.unit.test_bridge import bridge_on
from workers.bridge import __main__ as bridge_cli
from workers.bridge.command import MAX_LINE_BYTES, CommandPlayer
from workers.bridge.runner import Backoff

ROOT = Path(__file__).resolve().parents[2]
DOC_URL = "http://127.0.0.1:8000"


def section() -> str:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    start = text.index("## Write your own bot")
    return text[start : text.index("\n## ", start + 1)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(), re.DOTALL)


def bridge_commands() -> list[str]:
    return [line for block in blocks("sh") for line in block.splitlines() if "workers.bridge" in line]


def test_the_doc_shows_the_three_modes() -> None:
    commands = bridge_commands()
    assert [mode for mode in ("--level", "--policy", "--command") if any(mode in c for c in commands)] == [
        "--level",
        "--policy",
        "--command",
    ]


@pytest.mark.parametrize("command", bridge_commands())
def test_each_bridge_command_of_the_doc_plays_a_game_and_stops_on_sigterm(command: str) -> None:
    env = {
        **os.environ,
        "CARDTABLE_BOT_TOKEN": TOKEN,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    with FakeService() as fake:
        game_id = fake.add_game()
        bridge = subprocess.Popen(
            ["bash", "-c", command.replace(DOC_URL, fake.url)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            fake.wait_until(lambda: fake.finished(game_id) or bridge.poll() is not None, timeout=60)
        finally:
            os.killpg(bridge.pid, signal.SIGTERM)
            _, err = bridge.communicate(timeout=30)
    assert fake.finished(game_id), err
    assert fake.games[game_id].timeouts == 0, err
    assert bridge.returncode == 0, err
    assert f"bridge: stopped: {len(fake.games[game_id].played)} turns played in 1 games" in err


def test_a_command_reads_the_line_the_doc_shows(tmp_path: Path) -> None:
    (shown,) = blocks("json")
    shown_keys = re.findall(r'"(\w+)":', shown.split('"view"')[0]) + ["view", "legal", "deadline"]
    assert shown.index('"view"') < shown.index('"legal"') < shown.index('"deadline"')
    seen = tmp_path / "line.json"
    bot = tmp_path / "bot.py"
    bot.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            from pathlib import Path
            for line in sys.stdin:
                Path({str(seen)!r}).write_text(line)
                print(json.dumps(json.loads(line)["legal"][0]), flush=True)
            """
        )
    )
    with FakeService() as fake:
        game_id = fake.add_game()
        turn_view = fake.render(fake.games[game_id], 0)
        version = fake.games[game_id].snap.version
        with bridge_on(fake, lambda: CommandPlayer(f"{sys.executable} {bot}")):
            fake.wait_until(lambda: len(fake.games[game_id].played) >= 1)
    first = json.loads(seen.read_text())
    assert list(first) == shown_keys == ["turn", "game", "seat", "view", "legal", "deadline"]
    assert first["game"] == "golf" and first["seat"] == 0
    assert first["turn"].split(":")[0] == game_id
    assert int(first["turn"].split(":")[1]) >= version
    assert first["legal"] == first["view"]["you"]["legal"]
    assert set(first["view"]) == set(turn_view)
    assert datetime.fromisoformat(first["deadline"]).tzinfo is not None


def test_the_figures_the_doc_gives_are_the_bridges() -> None:
    text = " ".join(section().split())
    backoff = Backoff()
    assert f"after {backoff.base / 2:g} to {backoff.base:g} s" in text
    assert f"at most {backoff.cap / 2:g} to {backoff.cap:g} s" in text
    defaults = bridge_cli.parse_args(["--url", DOC_URL, "--token", "t", "--level", "random"])
    assert f"`--concurrency N` (default {defaults.concurrency})" in text
    assert f"`--stop-seconds` (default {defaults.stop_seconds:g})" in text
    assert f"every {bridge_cli.PROGRESS_SECONDS:g} s" in text
    assert f"longer than {MAX_LINE_BYTES // 1024} KiB" in text


def test_the_loop_the_doc_shows_is_the_standard_library_bots_own() -> None:
    """The doc quotes stdlib_bot.py's loop; the file is what the test suite runs against the service
    (tests/integration/test_bot_examples.py)."""
    (shown,) = blocks("python")
    assert shown in (ROOT / "docs" / "examples" / "stdlib_bot.py").read_text(encoding="utf-8")
    assert any("docs/examples/stdlib_bot.py" in line for block in blocks("sh") for line in block.splitlines())
