"""The storage lifecycle on a real redis-server: an idle game ends as abandoned and is packed; finished
games are exported to `.json.gz` files with `python -m service.archive`, verified, deleted, and imported
back so that every endpoint answers as before."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import flask
import pytest
import redis

from service.app import create_app
from service.upkeep.archive import Archive
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.conftest import RecordingDispatcher, auth
from tests.integration.conftest import ROOT, start_redis, stop, store_client
from tests.service.lifecycle_helpers import answers, create, play_to_end

pytestmark = pytest.mark.integration
DAY = 86400


@pytest.fixture(scope="module")
def lifecycle_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of this module's own (the sweep here ends every idle game it finds)."""
    process, port = start_redis(tmp_path_factory.mktemp("lifecycle-redis"), "--maxmemory-policy", "noeviction")
    yield f"redis://127.0.0.1:{port}/0"
    stop(process)


def new_app(url: str) -> tuple[flask.Flask, RecordingDispatcher]:
    dispatcher = RecordingDispatcher()
    app = create_app(
        {"TESTING": True}, redis_client=redis.Redis.from_url(url, decode_responses=True), dispatcher=dispatcher
    )
    dispatcher.service = app.extensions["games"]
    return app, dispatcher


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def export_finished(url: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The archive CLI's export of every game finished before tomorrow into `folder`."""
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    return run(
        "-m", "service.archive", "--redis-url", url, "export", "--finished-before", tomorrow, "--to", str(folder)
    )


def game_keys(client: redis.Redis, game_id: str) -> set[str]:
    return {key.rsplit(":", 1)[1] for key in client.keys(f"game:{{{game_id}}}:*")}


def test_an_idle_game_ends_as_abandoned_is_packed_and_verifies(lifecycle_redis_url: str, tmp_path: Path) -> None:
    app, dispatcher = new_app(lifecycle_redis_url)
    client = app.test_client()
    raw = redis.Redis.from_url(lifecycle_redis_url, decode_responses=True)
    created = create(client, "romme")
    game_id, token = created["id"], created["seats"][0]["token"]
    dispatcher.drain()
    running = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    assert running["status"] == "active" and 0 in running["to_act"]
    service = app.extensions["games"]

    def sweep(days_from_now: float) -> Any:
        later = time.time() + days_from_now * DAY
        store = app.extensions["storage"]
        return Lifecycle(service, store, LifecycleSettings(abandon_after_days=30), lambda: later).run_once()

    assert sweep(29).abandoned == []  # not idle long enough
    assert client.get(f"/v1/games/{game_id}").get_json()["status"] == "active"
    assert sweep(31).abandoned == [game_id]

    view = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    assert view["status"] == "finished" and view["to_act"] == [] and view["actions"] == []
    assert view["result"]["abandoned"] is True and view["result"]["winners"] == []
    assert view["result"]["reason"] == "no action for 30 days"
    events = client.get(f"/v1/games/{game_id}/events?after={running['version']}").get_json()["events"]
    assert [e["type"] for e in events] == ["GameAbandoned", "SeedRevealed"]
    assert events[0]["data"] == {"reason": "no action for 30 days"} and events[1]["data"]["seed"] == "life-romme"
    assert game_keys(raw, game_id) == {"packed", "answers"}
    assert client.get(f"/v1/games/{game_id}/audit").get_json()["complete"] is True
    record_file = tmp_path / "record.json"
    record_file.write_text(json.dumps(client.get(f"/v1/games/{game_id}/record").get_json()))
    verified = run("-m", "domain.verify", str(record_file))
    assert verified.returncode == 0 and verified.stdout.strip().endswith("PASS"), verified.stdout
    assert sweep(62).abandoned == []  # an abandoned game is finished: never abandoned twice


def test_export_then_import_round_trips_every_endpoint(lifecycle_redis_url: str, tmp_path: Path) -> None:
    app, dispatcher = new_app(lifecycle_redis_url)
    client = app.test_client()
    raw = redis.Redis.from_url(lifecycle_redis_url, decode_responses=True)
    games = [create(client, game_id) for game_id in ("golf", "go5")]
    for created in games:
        play_to_end(client, app, dispatcher, created)
        headers = auth(created["seats"][0]["token"])
        assert (
            client.post(
                f"/v1/games/{created['id']}/disputes", json={"seq": 2, "reason": "x"}, headers=headers
            ).status_code
            == 201
        )
    assert app.extensions["storage"].packing.compact(games[0]["id"]) == "packed"  # one packed, one not yet
    running = create(client, "switch")  # not finished: stays
    before = {created["id"]: answers(client, created) for created in games}

    folder = tmp_path / "archive"
    exported = export_finished(lifecycle_redis_url, folder)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    for created in games:
        game_id = created["id"]
        assert f"{game_id}: exported" in exported.stdout
        verified = run("-m", "domain.verify", str(folder / f"{game_id}.json.gz"))
        assert verified.returncode == 0 and verified.stdout.strip().endswith("PASS"), verified.stdout
        assert game_keys(raw, game_id) == set()
        assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert client.get(f"/v1/games/{running['id']}").get_json()["status"] == "active"

    imported = run("-m", "service.archive", "--redis-url", lifecycle_redis_url, "import", str(folder))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    fresh, _ = new_app(lifecycle_redis_url)
    for created in games:
        assert game_keys(raw, created["id"]) == {"packed", "disputes"}
        for reader in (client, fresh.test_client()):
            assert answers(reader, created) == before[created["id"]]

    again = run("-m", "service.archive", "--redis-url", lifecycle_redis_url, "import", str(folder))
    assert again.returncode == 1 and "exists already" in again.stdout


def test_export_keeps_a_game_whose_record_does_not_verify(lifecycle_redis_url: str, tmp_path: Path) -> None:
    app, dispatcher = new_app(lifecycle_redis_url)
    client = app.test_client()
    raw = redis.Redis.from_url(lifecycle_redis_url, decode_responses=True)
    created = create(client, "golf")
    play_to_end(client, app, dispatcher, created)
    game_id = created["id"]
    raw.xdel(f"game:{{{game_id}}}:events", "4-0")  # damaged in Redis
    exported = export_finished(lifecycle_redis_url, tmp_path)
    assert exported.returncode == 1 and f"{game_id}: kept" in exported.stdout, exported.stdout + exported.stderr
    assert "events" in game_keys(raw, game_id) and not (tmp_path / f"{game_id}.json.gz").exists()


def test_the_archive_command_explains_itself() -> None:
    shown = run("-m", "service.archive", "--help")
    assert shown.returncode == 0 and "export" in shown.stdout and "import" in shown.stdout
    export = run("-m", "service.archive", "export", "--help")
    assert export.returncode == 0 and "--finished-before" in export.stdout and "--to" in export.stdout
    bad = run("-m", "service.archive", "export", "--finished-before", "last tuesday", "--to", "x")
    assert bad.returncode == 2 and "not an ISO date" in bad.stderr


def test_packing_and_export_work_on_a_redis_cluster(cluster_url: str, tmp_path: Path) -> None:
    """Each script touches one game's keys (one slot); the indexes are commands of their own."""
    dispatcher = RecordingDispatcher()
    cluster = store_client(cluster_url)
    app = create_app({"TESTING": True}, redis_client=cluster, dispatcher=dispatcher)  # type: ignore[arg-type]
    dispatcher.service = app.extensions["games"]
    client = app.test_client()
    created = create(client, "switch")
    play_to_end(client, app, dispatcher, created)
    game_id = created["id"]
    before = answers(client, created)
    assert Lifecycle(
        app.extensions["games"], app.extensions["storage"], LifecycleSettings(compact_after_seconds=0)
    ).pack(game_id)
    assert cluster.exists(f"game:{{{game_id}}}:packed") and not cluster.exists(f"game:{{{game_id}}}:events")
    assert answers(client, created) == before
    archive = Archive(app.extensions["history"], app.extensions["storage"])
    assert archive.export_game(game_id, tmp_path) == "exported"
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(tmp_path / f"{game_id}.json.gz") == (game_id, "imported")
    assert answers(client, created) == before
