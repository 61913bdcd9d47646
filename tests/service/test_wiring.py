"""One wiring root (service/bootstrap.py): the API, the workers and the archive CLI are built by build_services;
a worker loads no part of the HTTP edge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import fakeredis
import pytest

import service.archive
from service import app as root
from service.app import create_app
from service.bootstrap import Services, build_services
from service.play.ports import NoDispatcher
from service.storage.turn_queue import RQDispatcher
from tests.conftest import RecordingDispatcher
from workers import context

ROOT = Path(__file__).resolve().parents[2]


def record_builds(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[Services]:
    """The services `module` builds from now on, in order."""
    built: list[Services] = []

    def recording(*args: Any, **kwargs: Any) -> Services:
        built.append(build_services(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(module, "build_services", recording)
    return built


def test_the_root_wires_one_graph(fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher) -> None:
    services = build_services({"DISPUTES_PER_SEAT": "3"}, redis_client=fake_redis, dispatcher=dispatcher)
    assert services.store_client is fake_redis and services.dispatcher is dispatcher
    assert services.games.store is services.store and services.history.store is services.store
    assert services.history.repository is services.games.repository  # the history reads the games the service holds
    assert services.index is services.games.index and services.history.disputes_per_seat == 3
    assert isinstance(build_services({}, redis_client=fake_redis).dispatcher, RQDispatcher)


def test_the_app_is_built_by_the_root(fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> None:
    built = record_builds(monkeypatch, root)
    app = create_app({"TESTING": True, "DISPUTES_PER_SEAT": 7}, redis_client=fake_redis, dispatcher=NoDispatcher())
    assert [services.games for services in built] == [app.extensions["games"]]
    assert app.extensions["history"] is built[0].history and built[0].history.disputes_per_seat == 7


def test_the_workers_use_the_roots_services(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # clients connect on first use: none is made here
    monkeypatch.delenv("QUEUE_REDIS_URL", raising=False)
    context.services.cache_clear()
    try:
        services = context.services()
        assert context.game_service() is services.games and context.dispatcher() is services.dispatcher
        assert services.store_client.connection_pool.connection_kwargs["port"] == 1
        assert context.dispatcher().connection.connection_pool.connection_kwargs["port"] == 1
        assert context.queue_url() == "redis://127.0.0.1:1/0"
    finally:
        context.services.cache_clear()


def test_the_archive_cli_uses_the_root_with_no_dispatcher(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = record_builds(monkeypatch, service.archive)
    monkeypatch.setattr(service.archive, "connect", lambda url, **options: fake_redis)
    assert service.archive.main(["import", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "0 of 0 games imported\n"
    assert len(built) == 1 and isinstance(built[0].dispatcher, NoDispatcher) and built[0].store_client is fake_redis


EDGE = ("flask", "flask_smorest", "werkzeug", "service.api", "service.app")
WORKER_START = """
import json, sys
from workers import context
context.services()
import workers.__main__, workers.bot_turns, workers.reconcile, workers.turn_timeouts
print(json.dumps(sorted(sys.modules)))
"""


def test_a_workers_services_and_its_jobs_load_no_http_edge(tmp_path: Path) -> None:
    """A worker process builds its services and imports its entry point and job modules without Flask or a route."""
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:1/0", "PYTHONPATH": str(ROOT)}  # connects on first use only
    env.pop("QUEUE_REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", WORKER_START], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "workers.context" in loaded and "service.bootstrap" in loaded
    edge = [name for name in loaded if any(name == top or name.startswith(f"{top}.") for top in EDGE)]
    assert not edge, f"a worker loads the HTTP edge: {edge}"


WORKER_READY = """
import json, sys
import workers.__main__
before = sorted(sys.modules)
games = workers.__main__.load_what_jobs_play()
from domain import engine
bots = [engine.get_game(game).bots for game in games]
print(json.dumps({"before": before, "games": games, "bots": bots, "loaded": sorted(sys.modules)}))
"""


def test_a_worker_imports_every_game_and_its_bots_before_its_first_job(tmp_path: Path) -> None:
    """Importing the worker's entry point leaves the games' bots to the first job that plays them; loading what jobs
    play imports every game's module and its bots' module before any job, so the first turns wait for no import."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER_READY], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert sorted(found["games"]) == ["go5", "golf", "romme", "switch"]
    early = [module for module in found["bots"] if module in found["before"]]
    assert not early, f"the entry point alone imports these bots (the test would prove nothing): {early}"
    missing = [module for module in found["bots"] if module not in found["loaded"]]
    assert not missing, f"bots' modules not loaded before the first job: {missing}"
