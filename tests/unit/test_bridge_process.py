"""`python -m workers.bridge` as a process against the fake of the registered-bots contract
(tests/bridge_fake.py): SIGTERM stops it cleanly (exit 0, the turn under way finished, its command gone),
a refused token exits 2, and it runs without anything of `service/` loaded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.bridge_fake import TOKEN, FakeService

ROOT = Path(__file__).resolve().parents[2]


def start_bridge(
    fake: FakeService, *mode: str, python: tuple[str, ...] = ("-m", "workers.bridge")
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *python, "--url", fake.url, "--token", TOKEN, "--wait", "1", *mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(bridge: subprocess.Popen[str], signum: int = signal.SIGTERM) -> tuple[int, str]:
    bridge.send_signal(signum)
    _, err = bridge.communicate(timeout=30)
    return bridge.returncode, err


def test_sigterm_stops_the_bridge_cleanly_and_nothing_of_the_service_was_loaded(tmp_path: Path) -> None:
    """A fresh process plays `--level greedy` turns; at its exit, it lists the modules it loaded."""
    loaded = tmp_path / "modules.json"
    script = textwrap.dedent(
        f"""
        import atexit, json, runpy, sys
        atexit.register(lambda: open({str(loaded)!r}, "w").write(json.dumps(sorted(sys.modules))))
        sys.argv[0] = "workers.bridge"
        runpy.run_module("workers.bridge", run_name="__main__", alter_sys=True)
        """
    )
    with FakeService() as fake:
        game_id = fake.add_game()
        bridge = start_bridge(fake, "--level", "greedy", python=("-c", script))
        fake.wait_until(lambda: len(fake.games[game_id].played) >= 2)
        code, err = stop(bridge)
    assert code == 0, err
    assert "bridge: stopped: " in err
    modules = json.loads(loaded.read_text())
    assert "domain.bots.golf" in modules
    assert [m for m in modules if m == "service" or m.startswith("service.")] == []


def test_sigterm_lets_the_turn_under_way_finish_then_stops_the_command(tmp_path: Path) -> None:
    """The command is thinking when SIGTERM comes: its answer is still posted, then it is stopped."""
    go = tmp_path / "go"
    pid_file = tmp_path / "pid"
    bot = tmp_path / "bot.py"
    bot.write_text(
        textwrap.dedent(
            f"""
            import json, os, sys, time
            from pathlib import Path
            Path({str(pid_file)!r}).write_text(str(os.getpid()))
            for line in sys.stdin:
                while not Path({str(go)!r}).exists():
                    time.sleep(0.02)
                print(json.dumps(json.loads(line)["legal"][0]), flush=True)
            """
        )
    )
    handed = threading.Event()
    with FakeService() as fake:
        fake.on_handout = lambda turn: handed.set()
        game_id = fake.add_game()
        turn_id = fake.games[game_id].turn_id
        bridge = start_bridge(fake, "--concurrency", "1", "--command", f"{sys.executable} {bot}")
        assert handed.wait(30)
        fake.wait_until(pid_file.exists)
        bridge.send_signal(signal.SIGTERM)
        assert bridge.stderr is not None
        seen = [bridge.stderr.readline()]
        while seen[-1] and "bridge: stopping" not in seen[-1]:  # the bridge has stopped asking for turns
            seen.append(bridge.stderr.readline())
        with pytest.raises(subprocess.TimeoutExpired):  # it waits for the turn under way
            bridge.wait(timeout=1.0)
        go.write_text("")
        _, rest = bridge.communicate(timeout=30)
        err = "".join(seen) + rest
    assert bridge.returncode == 0, err
    assert [r.headers["idempotency-key"] for r in fake.actions()] == [turn_id]
    assert "1 turns played in 1 games" in err
    assert not _running(int(pid_file.read_text()))


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_a_token_the_service_refuses_stops_the_bridge_with_exit_code_2() -> None:
    with FakeService() as fake:
        bridge = subprocess.run(
            [sys.executable, "-m", "workers.bridge", "--url", fake.url, "--token", "wrong", "--level", "random"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert bridge.returncode == 2
    assert "refuses the bot's token (401 unauthorized" in bridge.stderr


def test_the_token_may_come_from_the_environment(tmp_path: Path) -> None:
    env: dict[str, Any] = {**os.environ, "CARDTABLE_BOT_TOKEN": TOKEN}
    with FakeService() as fake:
        game_id = fake.add_game()
        bridge = subprocess.Popen(
            [sys.executable, "-m", "workers.bridge", "--url", fake.url, "--level", "random"],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        fake.wait_until(lambda: fake.finished(game_id))
        code, err = stop(bridge, signal.SIGINT)
    assert code == 0, err
    assert fake.games[game_id].timeouts == 0
