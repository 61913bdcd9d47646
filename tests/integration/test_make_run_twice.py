"""Two `make run` from one checkout (issue 35, item 9; docs/operations.md, "A second `make run`").

A second `make run` whose folder (VAR_DIR) another one holds, or whose port another process listens on,
stops before it starts or empties anything: it names what is in the way and fails. Run as its message
says, with its own ports and folder, it serves beside the first with a Redis and games of its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import call, free_port
from tests.integration.test_make_run import (
    MakeRun,
    descendants_of,
    make_run_env,
    spawn_make_run,
    start_make_run,
    stop_make_run,
)
from tests.unit.test_run_script import doc_block

pytestmark = pytest.mark.integration
TWO_PEOPLE = [{"kind": "human"}, {"kind": "human"}]


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeRun]:
    run = start_make_run(tmp_path_factory.mktemp("first"))
    yield run
    stop_make_run(run)


def refused(folder: Path, **settings: str) -> tuple[int, str]:
    """A `make run` that should stop by itself at once: its exit status and output (it is ended if not)."""
    log = folder / "refused.log"
    process = spawn_make_run(make_run_env(folder, **settings), log)
    try:
        status = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        started = descendants_of(process.pid)
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the second make run did not stop by itself:\n{log.read_text(errors='replace')[-3000:]}")
    return status, log.read_text(errors="replace")


def script_pid(run: MakeRun) -> int:
    """The pid of the run's scripts/run.sh (make's child)."""
    for pid in descendants_of(run.process.pid):
        with contextlib.suppress(OSError):
            if b"scripts/run.sh" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    raise AssertionError("scripts/run.sh is not running")


def test_a_second_make_run_in_a_folder_in_use_starts_nothing_and_the_command_it_gives_runs_beside_it(
    first: MakeRun, tmp_path: Path
) -> None:
    metrics = set((first.var / "metrics").iterdir())
    assert metrics, "the first run's processes write their metrics files"
    port, stream_port = free_port(), free_port()
    status, output = refused(tmp_path, VAR_DIR=str(first.var), PORT=str(port), STREAM_PORT=str(stream_port))
    assert status != 0, output
    shown = doc_block("is in use by another make run")
    for example, value in (
        ("VAR_DIR=var/8010", f"VAR_DIR={first.var / str(port)}"),
        ("/srv/card-table/var", str(first.var)),
        ("4242", str(script_pid(first))),
        ("http://127.0.0.1:8000", first.url),
        ("PORT=8010", f"PORT={port}"),
        ("STREAM_PORT=8011", f"STREAM_PORT={stream_port}"),
    ):
        shown = shown.replace(example, value)
    assert shown in output, output
    assert metrics <= set((first.var / "metrics").iterdir()), "the first run's metrics files were kept"
    assert call("GET", f"{first.url}/readyz")[0] == 200

    command = re.search(r"^  (PORT=\S+ STREAM_PORT=\S+ VAR_DIR=\S+) make run$", output, re.MULTILINE)
    assert command, output
    second = start_make_run(tmp_path, **dict(pair.split("=", 1) for pair in command[1].split()))
    try:
        status, created = call("POST", f"{second.url}/v1/games", {"game": "golf", "seats": TWO_PEOPLE})
        assert status == 201, created
        assert call("GET", f"{second.url}/v1/games/{created['id']}")[0] == 200
        assert call("GET", f"{first.url}/v1/games/{created['id']}")[0] == 404, "the second has its own Redis"
        assert (first.var / str(port) / "redis").is_dir()
    finally:
        stop_make_run(second)
    assert call("GET", f"{first.url}/readyz")[0] == 200, "the first serves on"


def test_a_second_make_run_on_a_port_in_use_names_the_process_that_holds_it(first: MakeRun, tmp_path: Path) -> None:
    api = first.pid("api")
    status, output = refused(tmp_path, PORT=first.url.rsplit(":", 1)[1])
    assert status != 0, output
    assert f"make run: port {first.url.rsplit(':', 1)[1]} on 127.0.0.1 (PORT) is taken by pid {api} (" in output
    assert "gunicorn" in output and "nothing was started" in output
    assert re.search(r"Stop it, or choose free ports, e.g. PORT=\d+ STREAM_PORT=\d+ make run\.", output), output
    assert not (tmp_path / "var" / "metrics").exists() and "supervisord" not in output, "nothing was started"
