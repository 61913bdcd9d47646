"""The command lines: `--help` on each, one error at a time named by its flag, make verify's codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from domain import engine, verify
from workers import simulate

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "records" / "cardtable-record-2" / "go5-seeded.json"


@pytest.mark.parametrize(
    ("module", "shown"),
    [
        ("workers.simulate", "--game"),
        ("domain.verify", "Exit codes: 0 PASS, 1 FAIL or INCOMPLETE, 2 no record"),
        ("service.archive", "usage: "),
        ("bench", "usage: python -m bench"),
        ("workers", "usage: python -m workers"),
        ("workers.bridge", "--command COMMAND"),
    ],
)
def test_help_works_on_every_cli(module: str, shown: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout


def test_simulate_names_an_unknown_game_and_lists_the_games(capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate.main(["--game", "chess", "--seats", "greedy,greedy"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("simulate: --game: unknown game 'chess'") and "bot" not in error
    for game in engine.all_games():
        assert game.id in error


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--game", "golf", "--seats", "greedy,greedy", "--games", "0", "--jobs", "0"], "--games"),
        (["--game", "golf", "--seats", "greedy,nobody", "--options", "[1]"], "--seats"),
        (["--game", "golf", "--seats", "random"], "--seats"),
        (["--game", "golf", "--seats", "random,random", "--options", "[1]", "--jobs", "0"], "--options"),
        (["--game", "golf", "--seats", "random,random", "--options", '{"rounds": 99}'], "--options"),
        (["--game", "golf", "--seats", "random,random", "--samples", "0", "--think-ms", "0"], "--samples"),
    ],
)
def test_simulate_reports_one_error_with_its_flag(
    args: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert simulate.main(args) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"simulate: {flag}: "), lines


def test_verify_help_is_not_taken_for_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify.main(["--help"]) == 0
    out = capsys.readouterr()
    assert "python -m domain.verify RECORD.json" in out.out and "cannot read" not in out.err
    assert verify.main(["--verbose"]) == 2
    assert capsys.readouterr().err.startswith("usage: ")


def _make_verify(record: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VENV": str(Path(sys.executable).parents[1])}
    return subprocess.run(
        ["make", "-s", "verify", f"RECORD={record}"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def test_make_verify_shows_the_verifiers_exit_code(tmp_path: Path) -> None:
    passing = _make_verify(RECORD)
    assert passing.returncode == 0 and passing.stdout.rstrip().endswith("PASS"), passing.stderr
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    record["events"][-1]["hash"] = "0" * 64
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(record), encoding="utf-8")
    failing = _make_verify(tampered)
    assert "FAIL" in failing.stdout and "verify: exit code 1 (" in failing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    assert "verify: exit code 2 (" in _make_verify(broken).stderr
