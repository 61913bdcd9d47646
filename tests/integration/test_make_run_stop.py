"""`make run` stops its workers whatever Redis does, and they never outlive supervisord (issue 28, item 9).

`make run` here uses a Redis of the test's own (REDIS_URL), which the test freezes once everything is up
(SIGSTOP: connections stay open and nothing answers). Stopping `make run` then stops every worker by
itself, within 10 s of its SIGTERM (supervisord's log says "exit status", not "terminated by SIGKILL":
its stopwaitsecs for the workers is 10); and when supervisord itself is killed with SIGKILL, every
worker and its RQ scheduler is gone within 10 s; so are Redis and the API, which supervisord starts
with a parent-death signal (scripts/run.sh, PDEATHSIG); and `make run` then fails, saying that
supervisord ended by itself.
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

from tests.integration.conftest import start_redis, stop, wait_until
from tests.integration.test_make_run import MakeRun, alive, descendants_of, start_make_run, stop_make_run

pytestmark = pytest.mark.integration
STOP_BOUND_SECONDS = 10.0  # issue 28: a worker is gone within 10 s of SIGTERM, or of its supervisor's death
WORKER_PROGRAMS = ("worker:worker-0", "worker:worker-1", "bot-worker", "match-worker:match-worker-0")


@pytest.fixture
def frozen_redis_run(tmp_path: Path) -> Iterator[tuple[MakeRun, subprocess.Popen[bytes]]]:
    """`make run` with two workers on a Redis of the test's own, running; the test freezes the Redis."""
    (tmp_path / "redis").mkdir()
    redis_process, port = start_redis(tmp_path / "redis")
    run = start_make_run(tmp_path, workers=2, REDIS_URL=f"redis://127.0.0.1:{port}/0")
    everything = run.descendants()
    try:
        # a worker forks RQ's scheduler once it has the scheduler's lock: wait for one to run
        wait_until(lambda: len(workers_and_schedulers(run)) >= 5, 60, "the workers and an RQ scheduler to run")
        yield run, redis_process
    finally:
        with contextlib.suppress(ProcessLookupError):
            redis_process.send_signal(signal.SIGCONT)
        stop_make_run(run)
        for pid in everything | run.descendants():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        stop(redis_process)


def workers_and_schedulers(run: MakeRun) -> set[int]:
    pids = {run.pid(name) for name in WORKER_PROGRAMS}
    return pids | {child for pid in pids for child in descendants_of(pid)}


def test_stopping_make_run_stops_every_worker_by_itself_while_redis_does_not_answer(
    frozen_redis_run: tuple[MakeRun, subprocess.Popen[bytes]],
) -> None:
    run, redis_process = frozen_redis_run
    workers = workers_and_schedulers(run)
    redis_process.send_signal(signal.SIGSTOP)
    stop_make_run(run)
    assert not [pid for pid in workers if alive(pid)]
    log = (run.var / "run" / "supervisord.log").read_text()
    for name in ("worker-0", "worker-1", "bot-worker", "match-worker-0"):
        assert re.search(rf"stopped: {name} \(exit status \d+\)", log), f"{name} did not stop by itself:\n{log}"


def test_the_workers_leave_when_supervisord_is_killed_while_redis_does_not_answer(
    frozen_redis_run: tuple[MakeRun, subprocess.Popen[bytes]],
) -> None:
    run, redis_process = frozen_redis_run
    workers = workers_and_schedulers(run)
    assert len(workers) >= 5, "four workers and at least one RQ scheduler"
    supervisord = int((run.var / "run" / "supervisord.pid").read_text())
    redis_process.send_signal(signal.SIGSTOP)
    os.kill(supervisord, signal.SIGKILL)
    wait_until(lambda: not any(alive(pid) for pid in workers), STOP_BOUND_SECONDS, "the orphaned workers to leave")


def test_nothing_outlives_a_killed_supervisord(tmp_path: Path) -> None:
    """Redis, the API (gunicorn and its workers), the workers and their schedulers: all leave."""
    run = start_make_run(tmp_path, workers=2)
    everything = run.descendants()
    try:
        supervisord = int((run.var / "run" / "supervisord.pid").read_text())
        programs = {run.pid(name) for name in (*WORKER_PROGRAMS, "redis", "api")}
        children = descendants_of(supervisord)
        assert programs < children, "the programs, RQ's schedulers and gunicorn's workers"
        os.kill(supervisord, signal.SIGKILL)
        wait_until(
            lambda: not any(alive(pid) for pid in children), STOP_BOUND_SECONDS, "supervisord's children to leave"
        )
        run.process.wait(timeout=30)
        assert run.process.returncode != 0, "make run fails when supervisord ends without being asked"
        assert "make run: supervisord ended by itself (exit status 137)" in run.output()
    finally:
        stop_make_run(run)
        for pid in everything:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
