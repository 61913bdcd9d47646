"""The game indexes never cost a move and never lose a game (issue 28, items 7 and 8).

The global indexes (`games:active`, `games:finished`, `games:unpacked`, `stats:games`) each live on one
master of a cluster. A client wrapper here fails the commands on those keys only, as when that master
is down: creations and moves still succeed, and once the index answers again the lifecycle sweep's
index walk puts every game back where it belongs, so that it is packed. The sweep itself is forced to
run between a game's finishing note and its final append, and is fed games that never load, so that
the races and stalls of the issue happen every time, not by chance.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, cast

import fakeredis
import flask
import pytest
import redis
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import game_service
from service.play.game_service import GameService
from service.storage.event_store import EventStore
from service.storage.game_index import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY
from service.storage.keys import GAME_COUNTS_KEY
from service.storage.redis_store import RedisStore
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.conftest import RecordingDispatcher
from tests.service.lifecycle_helpers import create, play_to_end

GRACE = 600
INDEX_KEYS = frozenset({ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY, GAME_COUNTS_KEY})
ENDING_KEYS = frozenset({FINISHED_KEY, UNPACKED_KEY})  # the master of these two is down, the others up


class IndexMasterDown:
    """A Redis client whose commands on the keys in `down` fail with ConnectionError; the rest pass."""

    def __init__(self, inner: fakeredis.FakeRedis) -> None:
        self.inner = inner
        self.down: frozenset[str] = frozenset()
        self.refused: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name == "pipeline":
            return lambda *args, **kwargs: PipelineOnMasters(self)
        attribute = getattr(self.inner, name)
        if not callable(attribute) or name == "register_script":
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            if args and isinstance(args[0], str) and args[0] in self.down:
                self.refused.append(f"{name} {args[0]}")
                raise redis.ConnectionError(f"the master of {args[0]} is down")
            return attribute(*args, **kwargs)

        return call


class PipelineOnMasters:
    """A pipeline of IndexMasterDown, as a cluster client runs one: each command on its key's master, those on a
    master that is down refused (the first refusal raised once all have run)."""

    def __init__(self, client: IndexMasterDown) -> None:
        self.client = client
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __enter__(self) -> PipelineOnMasters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.calls.clear()

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))

    def execute(self) -> list[Any]:
        replies, refusals = [], []
        for name, args, kwargs in self.calls:
            try:
                replies.append(getattr(self.client, name)(*args, **kwargs))
            except redis.ConnectionError as error:
                refusals.append(error)
        if refusals:
            raise refusals[0]
        return replies


@pytest.fixture
def wrapped(fake_redis: fakeredis.FakeRedis) -> IndexMasterDown:
    return IndexMasterDown(fake_redis)


@pytest.fixture
def app(wrapped: IndexMasterDown, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    application = create_app({"TESTING": True}, redis_client=cast(redis.Redis, wrapped), dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


def worker_service(redis_client: fakeredis.FakeRedis) -> GameService:
    """The game service of a worker process: its own cache, on the same Redis."""
    return game_service(RedisStore.connect(redis_client), RecordingDispatcher())


def sweep(redis_client: fakeredis.FakeRedis, **settings: Any) -> Lifecycle:
    """A worker's lifecycle whose clock stands GRACE + 5 s from now (every finished game is due for packing)."""
    later = time.time() + GRACE + 5
    return Lifecycle(
        worker_service(redis_client),
        RedisStore.connect(redis_client),
        LifecycleSettings(compact_after_seconds=GRACE, **settings),
        lambda: later,
    )


def game_keys(redis_client: fakeredis.FakeRedis, game_id: str) -> set[str]:
    return {key.rsplit(":", 1)[1] for key in redis_client.keys(f"game:{{{game_id}}}:*")}


# ---------------------------------------------------------------- item 8: index writes never fail a move


@pytest.mark.parametrize("down", [INDEX_KEYS, ENDING_KEYS], ids=["every-index", "finished-and-unpacked"])
def test_moves_succeed_while_an_index_master_is_down_and_the_game_is_packed_once_it_is_back(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    wrapped: IndexMasterDown,
    down: frozenset[str],
) -> None:
    wrapped.down = down
    created = create(client, "golf")  # 201 although `games:active` could not be written
    play_to_end(client, app, dispatcher, created)  # every move 200, the last one too
    game_id = created["id"]
    assert f"zadd {FINISHED_KEY}" in wrapped.refused, "the finishing note was tried and failed"
    assert fake_redis.zscore(UNPACKED_KEY, game_id) is None and fake_redis.zscore(FINISHED_KEY, game_id) is None
    assert client.get(f"/v1/games/{game_id}").get_json()["status"] == "finished"

    wrapped.down = frozenset()  # the master is back
    lifecycle = sweep(fake_redis)
    first = lifecycle.run_once()
    assert first.reindexed == [game_id] and fake_redis.zscore(UNPACKED_KEY, game_id) is not None
    assert fake_redis.zscore(FINISHED_KEY, game_id) is not None and fake_redis.zscore(ACTIVE_KEY, game_id) is None
    assert lifecycle.run_once().packed == [game_id]
    assert game_keys(fake_redis, game_id) == {"packed", "answers"}


def test_a_running_game_created_while_the_active_index_was_down_is_noted_active_by_the_walk(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, wrapped: IndexMasterDown
) -> None:
    wrapped.down = frozenset({ACTIVE_KEY})
    game_id = create(client, "golf")["id"]
    assert fake_redis.zscore(ACTIVE_KEY, game_id) is None
    wrapped.down = frozenset()
    assert sweep(fake_redis).run_once().reindexed == [game_id]
    assert fake_redis.zscore(ACTIVE_KEY, game_id) is not None  # so it ends as abandoned if nobody plays
    assert sweep(fake_redis).run_once().reindexed == []  # nothing else is missing


# ---------------------------------------------------------------- item 7: the sweep neither stalls nor drops


def test_games_that_fail_to_load_do_not_hold_up_packing_for_the_others(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> None:
    """A batch (here 2) of due games that never load is put off, so the next pass packs the good one."""
    good = create(client, "golf")
    play_to_end(client, app, dispatcher, good)
    broken = []
    for n in range(3):
        game_id = create(client, "switch")["id"]
        fake_redis.hset(f"game:{{{game_id}}}:meta", "seats", "not json")  # it never loads again
        fake_redis.zadd(UNPACKED_KEY, {game_id: 1.0 + n})  # due long before the good game
        broken.append(game_id)
    lifecycle = sweep(fake_redis, batch=2)
    packed = [game_id for _ in range(3) for game_id in lifecycle.run_once().packed]
    assert packed == [good["id"]], "three passes at the same moment: the broken games were put off"
    assert "events" not in game_keys(fake_redis, good["id"])
    assert all(fake_redis.zscore(UNPACKED_KEY, game_id) is not None for game_id in broken), "still to be packed"


def test_a_game_that_keeps_failing_is_put_off_twice_as_long_each_time(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis
) -> None:
    game_id = create(client, "golf")["id"]
    fake_redis.hset(f"game:{{{game_id}}}:meta", "seats", "not json")
    fake_redis.zadd(UNPACKED_KEY, {game_id: 1.0})
    clock = [time.time() + GRACE]
    settings = LifecycleSettings(compact_after_seconds=GRACE, sweep_seconds=30)
    lifecycle = Lifecycle(worker_service(fake_redis), RedisStore.connect(fake_redis), settings, lambda: clock[0])
    delays = []
    for _ in range(4):
        lifecycle.run_once()
        score = fake_redis.zscore(UNPACKED_KEY, game_id)
        assert score is not None
        delays.append(round(score - (clock[0] - GRACE)))
        clock[0] = score + GRACE + 1  # the next pass runs once the game is due again
    assert delays == [30, 60, 120, 240]


def test_a_sweep_between_the_finishing_note_and_the_final_append_leaves_the_game_to_be_packed(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sweep loads the game after its note and before its final append lands: it sees a running
    game and takes the note out. The game must still end up noted, and be packed."""
    created = create(client, "golf")
    game_id = created["id"]
    store: EventStore = app.extensions["games"].store
    append = store.append
    eager = Lifecycle(
        app.extensions["games"],
        app.extensions["storage"],
        LifecycleSettings(compact_after_seconds=0),
        lambda: time.time() + 5,
    )
    raced: list[bool] = []

    def append_after_a_sweep(*args: Any, **kwargs: Any) -> Any:
        if fake_redis.zscore(UNPACKED_KEY, game_id) is not None and not raced:
            raced.append(not eager.run_once().packed)  # the game is not finished yet: nothing packed
            assert fake_redis.zscore(UNPACKED_KEY, game_id) is None, "the sweep took the note out"
        return append(*args, **kwargs)

    monkeypatch.setattr(store, "append", append_after_a_sweep)
    play_to_end(client, app, dispatcher, created)
    assert raced == [True], "the sweep ran between the note and the append"
    assert fake_redis.zscore(UNPACKED_KEY, game_id) is not None and fake_redis.zscore(FINISHED_KEY, game_id)
    assert sweep(fake_redis).run_once().packed == [game_id]


def test_a_game_exported_while_the_walk_notes_it_is_left_in_no_index(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    wrapped: IndexMasterDown,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk reads a game the index misses; the archive exports (deletes) it before the walk notes it:
    the walk must not leave an exported game in the indexes (its next export would call it missing)."""
    wrapped.down = ENDING_KEYS
    created = create(client, "golf")
    play_to_end(client, app, dispatcher, created)
    game_id = created["id"]
    wrapped.down = frozenset()
    lifecycle = sweep(fake_redis)
    read_last = lifecycle.store.last_record
    archive = RedisStore.connect(fake_redis).archive

    def export_right_after_the_read(walked: str) -> dict[str, Any] | None:
        last = read_last(walked)
        stored = archive.stored_game(walked)
        assert stored is not None and archive.delete(walked, stored)  # the archive's delete
        lifecycle.index.forget(walked)  # and its index update, both before the walk writes
        return last

    monkeypatch.setattr(lifecycle.store, "last_record", export_right_after_the_read)
    lifecycle.reindex(10)
    assert game_keys(fake_redis, game_id) == set()
    assert [fake_redis.zscore(key, game_id) for key in (ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY)] == [None] * 3
