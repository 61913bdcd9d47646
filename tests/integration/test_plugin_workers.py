"""A worker process (`python -m workers`) finds the installed bot plug-ins as it starts (docs/bots.md, "House levels
from plug-ins") and plays their levels; a plug-in that fails to load is logged and left out, and a turn a plug-in
fails is played by greedy in the worker too. Real redis-server, the tests' own plug-in package (tests/plugins) on
the worker's PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.bootstrap import build_services
from tests.conftest import BOT_PLUGINS
from tests.integration.conftest import ROOT, service_env, start_redis, stop, wait_until

pytestmark = pytest.mark.integration

LAST_LEGAL = {"kind": "bot", "level": "last-legal"}


@pytest.fixture
def redis_of_this_test(tmp_path: Path) -> Iterator[str]:
    """A redis-server for this test alone: no other test's worker takes its bot turns."""
    process, port = start_redis(tmp_path)
    yield f"redis://127.0.0.1:{port}/0"
    stop(process)


def test_a_worker_process_loads_the_plug_ins_and_plays_their_levels(
    bot_plugins: Path, redis_of_this_test: str, tmp_path: Path
) -> None:
    games = build_services({"REDIS_URL": redis_of_this_test}).games  # this process has the plug-ins too
    env = service_env(redis_of_this_test)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BOT_PLUGINS), env.get("PYTHONPATH")]))
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "workers"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            created = [games.create_game("golf", [LAST_LEGAL, LAST_LEGAL], {"rounds": 1}) for _ in range(3)]
            created.append(games.create_game("golf", [{"kind": "bot", "level": "raises"}, LAST_LEGAL], {"rounds": 1}))

            def all_finished() -> bool:
                return all(games.repository.load(game["id"]).snap.finished for game in created)

            wait_until(all_finished, 60, "the plug-ins' games to finish")
        finally:
            stop(worker)
    said = log_path.read_text(errors="replace")
    assert "bot plug-in 'broken-import' (cardtable_test_bots.broken) left out: it failed to load" in said, said
    assert "bot plug-in 'raises' (cardtable_test_bots.faulty:RAISES) raised RuntimeError" in said
    assert "not installed here" not in said, "the worker had every level the games asked for"
