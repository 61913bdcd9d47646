"""The lifecycle sweep's index walk on a real redis-server and on a Redis Cluster (issue 28, item 8):
it finds every stored game, on every master, and puts back those an index misses."""

from __future__ import annotations

import time

import pytest

from service.app import create_app
from service.storage.game_index import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.conftest import RecordingDispatcher
from tests.integration.conftest import store_client
from tests.service.lifecycle_helpers import create, play_to_end

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("where", ["redis_url", "cluster_url"])
def test_the_walk_puts_back_games_missing_from_their_index_on_every_master(
    where: str, request: pytest.FixtureRequest
) -> None:
    store = store_client(request.getfixturevalue(where))
    dispatcher = RecordingDispatcher()
    app = create_app({"TESTING": True}, redis_client=store, dispatcher=dispatcher)  # type: ignore[arg-type]
    dispatcher.service = app.extensions["games"]
    client = app.test_client()
    games = {kind: create(client, kind)["id"] for kind in ("golf", "switch", "go5")}  # their ids spread over slots
    ended = create(client, "golf")
    play_to_end(client, app, dispatcher, ended)
    for game_id in games.values():
        store.zrem(ACTIVE_KEY, game_id)  # as if the index write at creation failed
    store.zrem(UNPACKED_KEY, ended["id"])  # as if the finishing notes failed
    store.zrem(FINISHED_KEY, ended["id"])
    later = time.time() + 5
    lifecycle = Lifecycle(
        app.extensions["games"], app.extensions["storage"], LifecycleSettings(compact_after_seconds=0), lambda: later
    )
    found = lifecycle.reindex(100_000)  # the whole walk, other tests' games included
    assert set(games.values()) | {ended["id"]} <= set(found)
    assert all(store.zscore(ACTIVE_KEY, game_id) is not None for game_id in games.values())
    assert store.zscore(UNPACKED_KEY, ended["id"]) is not None and store.zscore(FINISHED_KEY, ended["id"]) is not None
    assert lifecycle.reindex(100_000) == [], "a second walk finds nothing missing"
    assert ended["id"] in lifecycle.run_once().packed
