"""scripts/run.sh (`make run`) refuses a setting it cannot use, a port in use and a folder another `make run`
holds, before it starts anything."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from bench.procs import MATCH_PRIORITY, WORKER_PRIORITY

ROOT = Path(__file__).resolve().parents[2]


def run_script(env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """scripts/run.sh in a session of its own; should it start its processes after all, they are ended."""
    process = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        pytest.fail(f"scripts/run.sh did not stop by itself:\n{out[-2000:]}\n{err[-2000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def doc_block(containing: str) -> str:
    """The fenced block of docs/operations.md that holds `containing`, without its fences."""
    blocks = re.findall(r"^```\w*\n(.*?)^```$", (ROOT / "docs" / "operations.md").read_text(), re.M | re.S)
    found = [block for block in blocks if containing in block]
    assert len(found) == 1, f"one block of docs/operations.md shows {containing!r}"
    return str(found[0])


def preflight() -> ModuleType:
    spec = importlib.util.spec_from_file_location("preflight", ROOT / "scripts" / "preflight.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NICE = "a nice value from 0 to 19"


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        *[("STREAM_PRIORITY", value, f"must be idle or {NICE}") for value in ("fast", "20", "-1", "5x")],
        *[("MATCH_PRIORITY", value, f"must be idle or {NICE}") for value in ("slow", "20", "-1", "5x")],
        *[("WORKER_PRIORITY", value, f"must be {NICE}") for value in ("idle", "20", "-1", "5x")],
    ],
)
def test_a_priority_that_is_not_one_is_refused(setting: str, value: str, message: str, tmp_path: Path) -> None:
    env = {**os.environ, setting: value, "VAR_DIR": str(tmp_path / "var"), "PORT": "18000"}
    env.pop("REDIS_URL", None)
    run = subprocess.run(["bash", "scripts/run.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 2, run.stderr
    assert f"{setting} {message} (got '{value}')" in run.stderr
    assert not (tmp_path / "var" / "run").exists(), "nothing was started"


@pytest.mark.parametrize("setting", ["WORKERS", "MATCH_WORKERS", "STREAM_WORKERS"])
@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_count_of_processes_that_is_not_one_is_refused(setting: str, value: str, tmp_path: Path) -> None:
    env = {**os.environ, setting: value, "VAR_DIR": str(tmp_path / "var"), "PORT": "18000"}
    env.pop("REDIS_URL", None)
    run = run_script(env)
    assert run.returncode == 2, run.stderr
    assert f"{setting} must be a whole number of at least 1 (got '{value}')" in run.stderr
    assert not (tmp_path / "var" / "run").exists(), "nothing was started"


def test_the_bench_starts_its_workers_at_make_runs_worker_priority() -> None:
    script = (ROOT / "scripts" / "run.sh").read_text()
    assert f'WORKER_PRIORITY="${{WORKER_PRIORITY:-{WORKER_PRIORITY}}}"' in script
    assert f'MATCH_PRIORITY="${{MATCH_PRIORITY:-{MATCH_PRIORITY}}}"' in script


@pytest.mark.parametrize("setting", ["PORT", "STREAM_PORT", "REDIS_PORT"])
def test_a_port_another_process_listens_on_is_refused_naming_that_process(setting: str, tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = int(listener.getsockname()[1])
        ports = {"PORT": free_port(), "STREAM_PORT": free_port(), "REDIS_PORT": free_port(), setting: taken}
        env = {**os.environ, "VAR_DIR": str(tmp_path / "var"), **{name: str(p) for name, p in ports.items()}}
        env.pop("REDIS_URL", None)
        run = run_script(env)
    assert run.returncode == 1, run.stderr
    message = f"make run: port {taken} on 127.0.0.1 ({setting}) is taken by pid {os.getpid()} ("
    assert message in run.stderr and "); nothing was started.\n" in run.stderr
    if setting == "REDIS_PORT":
        assert "Stop it, or leave REDIS_PORT unset (make run then takes a free one)." in run.stderr
    else:
        advice = re.search(r"Stop it, or choose free ports, e.g. PORT=(\d+) STREAM_PORT=(\d+) make run\.", run.stderr)
        assert advice, run.stderr
        assert taken not in {int(advice[1]), int(advice[2])}
    assert not (tmp_path / "var" / "metrics").exists() and not (tmp_path / "var" / "redis").exists()
    assert "supervisord" not in run.stdout + run.stderr, "nothing was started"


def test_the_refusal_docs_operations_md_shows_is_the_one_make_run_writes() -> None:
    """The doc's folder-in-use message, from the same values, is what a second `make run` prints."""
    holder = {"pid": 4242, "host": "127.0.0.1", "port": 8000, "stream_port": 8001}
    checkout = Path("/srv/card-table")
    message = preflight().folder_in_use(checkout / "var", holder, (8010, 8011), checkout=checkout)
    assert message + "\n" == doc_block("is in use by another make run")
