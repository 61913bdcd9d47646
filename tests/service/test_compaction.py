"""Compaction (service/storage/packing.py `compact`, service/upkeep/lifecycle.py): a finished game is packed
into one compressed value after the grace period, and every read endpoint answers exactly as before; a crash in
the middle of packing loses nothing."""

from __future__ import annotations

import json
import time
import zlib
from typing import Any, cast

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.storage.game_index import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY
from service.storage.outcomes import CompactionError
from service.storage.packed_games import unpack
from service.storage.packing import PackedStore
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import all_events, assert_problem
from tests.service.lifecycle_helpers import GAME_IDS, answers, create, play_to_end
from workers.reconcile import Keeper, Reconciler

GRACE = 600


def game_keys(redis_client: fakeredis.FakeRedis, game_id: str) -> set[str]:
    return {key.rsplit(":", 1)[1] for key in redis_client.keys(f"game:{{{game_id}}}:*")}


def sweep_at(app: flask.Flask, seconds_from_now: float) -> Any:
    """One lifecycle pass as if it ran `seconds_from_now` from now."""
    later = time.time() + seconds_from_now
    return Lifecycle(
        app.extensions["games"],
        app.extensions["storage"],
        LifecycleSettings(compact_after_seconds=GRACE),
        lambda: later,
    ).run_once()


@pytest.fixture
def finished(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, request: pytest.FixtureRequest
) -> dict[str, Any]:
    created = create(client, request.param)
    play_to_end(client, app, dispatcher, created)
    dispute = {"seq": 2, "reason": "the deal looks odd"}
    headers = auth(created["seats"][0]["token"])
    posted = client.post(f"/v1/games/{created['id']}/disputes", json=dispute, headers=headers)
    assert posted.status_code == 201, posted.get_json()
    return created


@pytest.mark.parametrize("finished", GAME_IDS, indirect=True)
def test_every_read_endpoint_answers_the_same_after_compaction(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    game_id = finished["id"]
    before = answers(client, finished)
    assert before["spectator GET "][1]["status"] == "finished"
    assert game_keys(fake_redis, game_id) == {"events", "meta", "idem", "recent", "disputes"}
    assert fake_redis.zscore(UNPACKED_KEY, game_id) is not None and fake_redis.zscore(ACTIVE_KEY, game_id) is None

    assert sweep_at(app, GRACE - 5).packed == []  # not before the grace period is over
    assert sweep_at(app, GRACE + 5).packed == [game_id]

    assert game_keys(fake_redis, game_id) == {"packed", "disputes", "answers"}
    assert fake_redis.zscore(UNPACKED_KEY, game_id) is None and fake_redis.zscore(FINISHED_KEY, game_id) is not None
    after = answers(client, finished)
    assert after.keys() == before.keys()
    for what, answer in before.items():
        assert after[what] == answer, what
    assert sweep_at(app, GRACE + 60).packed == []  # nothing left to pack


@pytest.mark.parametrize("finished", ["switch"], indirect=True)
def test_a_second_process_reads_the_packed_game_the_same(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    before = answers(client, finished)
    assert app.extensions["storage"].packing.compact(finished["id"]) == "packed"
    other = flask_app(fake_redis)
    after = answers(other.test_client(), finished)
    assert after == before


def flask_app(redis_client: fakeredis.FakeRedis) -> flask.Flask:
    return create_app({"TESTING": True}, redis_client=redis_client, dispatcher=RecordingDispatcher())


@pytest.mark.parametrize("finished", ["golf"], indirect=True)
def test_a_packed_game_keeps_taking_disputes(client: FlaskClient, app: flask.Flask, finished: dict[str, Any]) -> None:
    game_id, token = finished["id"], finished["seats"][0]["token"]
    assert app.extensions["storage"].packing.compact(game_id) == "packed"
    posted = client.post(f"/v1/games/{game_id}/disputes", json={"seq": 3, "reason": "later"}, headers=auth(token))
    assert posted.status_code == 201, posted.get_json()
    listed = client.get(f"/v1/games/{game_id}/disputes").get_json()["disputes"]
    assert [d["seq"] for d in listed] == [2, 3] and all(d["event_ok"] for d in listed)


@pytest.mark.parametrize("finished", ["golf"], indirect=True)
def test_the_hashes_are_not_stored_in_the_packed_game_but_rebuilt_exactly(
    app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    game_id = finished["id"]
    stream = fake_redis.xrange(f"game:{{{game_id}}}:events")
    assert app.extensions["storage"].packing.compact(game_id) == "packed"
    value = fake_redis.execute_command("GET", f"game:{{{game_id}}}:packed", NEVER_DECODE=[])
    text = zlib.decompress(value).decode()
    hashes = [json.loads(fields["e"])["hash"] for _, fields in stream]
    assert sum(h in text for h in hashes) == 1  # only the chain's head is kept
    assert unpack(value).entries == tuple((entry_id, fields["e"]) for entry_id, fields in stream)


@pytest.mark.parametrize("finished", ["romme"], indirect=True)
def test_a_damaged_stream_is_packed_as_it_is_and_the_audit_still_names_the_bad_event(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    game_id = finished["id"]
    fake_redis.xdel(f"game:{{{game_id}}}:events", "5-0")  # an event deleted: the ids skip 5
    before = answers(client, finished)
    assert before["spectator GET /audit"][1]["first_bad_seq"] == 5
    assert app.extensions["storage"].packing.compact(game_id) == "packed"
    assert game_keys(fake_redis, game_id) == {"packed", "disputes", "answers"}
    assert answers(client, finished) == before


@pytest.mark.parametrize("finished", ["go5"], indirect=True)
@pytest.mark.parametrize("crash_in", ["_read_packed", "_drop_unpacked"])
def test_a_crash_in_the_middle_of_packing_loses_nothing(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: fakeredis.FakeRedis,
    finished: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    crash_in: str,
) -> None:
    """After the packed value is written (before it is read back, or before the stream is dropped) the
    process dies: the stream, meta and idempotency answers are all still there, every endpoint answers
    the same, and the next pass finishes the job."""
    game_id = finished["id"]
    store: PackedStore = app.extensions["storage"].packing
    before = answers(client, finished)
    stream = fake_redis.xrange(f"game:{{{game_id}}}:events")

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise SystemExit("the process dies here")

    monkeypatch.setattr(store, crash_in, crash)
    with pytest.raises(SystemExit):
        store.compact(game_id)
    assert game_keys(fake_redis, game_id) == {"events", "meta", "idem", "recent", "disputes", "packed"}
    assert fake_redis.xrange(f"game:{{{game_id}}}:events") == stream
    assert answers(client, finished) == before

    monkeypatch.undo()
    assert sweep_at(app, GRACE + 5).packed == [game_id]
    assert game_keys(fake_redis, game_id) == {"packed", "disputes", "answers"}
    assert answers(client, finished) == before


@pytest.mark.parametrize("finished", ["golf"], indirect=True)
def test_a_packed_value_that_reads_back_wrong_drops_nothing(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: fakeredis.FakeRedis,
    finished: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store: PackedStore = app.extensions["storage"].packing
    before = answers(client, finished)
    monkeypatch.setattr(store, "_read_packed", lambda game_id: b"not what was written")
    with pytest.raises(CompactionError):
        store.compact(finished["id"])
    assert game_keys(fake_redis, finished["id"]) >= {"events", "meta", "idem"}
    assert answers(client, finished) == before


@pytest.mark.parametrize("finished", ["switch"], indirect=True)
def test_an_idempotent_retry_after_compaction_is_refused_and_appends_nothing(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, finished: dict[str, Any]
) -> None:
    """Idempotency-Key answers are kept until the game is packed (docs/storage.md); a retry after that
    is told the game has ended, and never acts twice."""
    game_id, token = finished["id"], finished["seats"][0]["token"]
    version = client.get(f"/v1/games/{game_id}").get_json()["version"]
    assert app.extensions["storage"].packing.compact(game_id) == "packed"
    retry = client.post(
        f"/v1/games/{game_id}/actions", json={"type": "draw"}, headers={**auth(token), "Idempotency-Key": "move-0"}
    )
    assert_problem(retry, 422, "game_finished")
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == version


def test_a_running_game_is_not_packed_by_the_sweep(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis
) -> None:
    created = create(client, "golf")
    fake_redis.zadd(UNPACKED_KEY, {created["id"]: 1.0})  # an intent whose final append lost
    fake_redis.zadd(FINISHED_KEY, {created["id"]: 1.0})
    assert sweep_at(app, GRACE + 5).packed == []
    assert game_keys(fake_redis, created["id"]) == {"events", "meta"}
    assert fake_redis.zscore(UNPACKED_KEY, created["id"]) is None
    assert fake_redis.zscore(FINISHED_KEY, created["id"]) is None


def test_the_lifecycle_settings_come_from_the_environment() -> None:
    settings = LifecycleSettings.from_env(
        {"COMPACT_AFTER_SECONDS": "60", "ABANDON_AFTER_DAYS": "7", "LIFECYCLE_SWEEP_SECONDS": "5"}
    )
    assert (settings.compact_after_seconds, settings.abandon_after_days, settings.sweep_seconds) == (60, 7, 5)
    assert LifecycleSettings.from_env({}) == LifecycleSettings(600, 30, 30)
    for bad in ({"ABANDON_AFTER_DAYS": "0"}, {"COMPACT_AFTER_SECONDS": "1e3"}, {"LIFECYCLE_SWEEP_SECONDS": "-1"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            LifecycleSettings.from_env(bad)


@pytest.mark.parametrize("finished", ["golf"], indirect=True)
def test_the_workers_run_one_lifecycle_sweep_per_interval_between_them(
    app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    later = time.time() + GRACE + 5
    settings = LifecycleSettings(compact_after_seconds=GRACE, sweep_seconds=60)
    lifecycle = Lifecycle(app.extensions["games"], app.extensions["storage"], settings, lambda: later)
    keepers = [Keeper(fake_redis, cast(Reconciler, None), lifecycle=lifecycle) for _ in range(2)]
    first = keepers[0].sweep()
    assert first is not None and first.packed == [finished["id"]]
    assert keepers[1].sweep() is None  # the other worker's pass covers this interval
    assert Keeper(fake_redis, cast(Reconciler, None)).sweep() is None  # no lifecycle, no sweep


def test_an_idle_hint_for_a_game_that_acted_since_only_moves_the_hint(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis
) -> None:
    created = create(client, "golf")
    game_id = created["id"]
    fake_redis.zadd(ACTIVE_KEY, {game_id: 0.0})  # the index thinks the game has been idle for ages
    later = time.time() + 10 * 86400  # its last event is ten days old then: not idle for thirty
    outcome = Lifecycle(
        app.extensions["games"], app.extensions["storage"], LifecycleSettings(abandon_after_days=30), lambda: later
    ).run_once()
    assert outcome.abandoned == []
    assert client.get(f"/v1/games/{game_id}").get_json()["status"] == "active"
    hint = fake_redis.zscore(ACTIVE_KEY, game_id)
    assert hint is not None and abs(hint - time.time()) < 120  # moved on to its last event


@pytest.mark.parametrize("finished", ["go5"], indirect=True)
def test_a_finished_game_whose_end_was_not_noted_is_found_among_the_idle_and_packed(
    app: flask.Flask, fake_redis: fakeredis.FakeRedis, finished: dict[str, Any]
) -> None:
    game_id = finished["id"]
    fake_redis.zrem(FINISHED_KEY, game_id)
    fake_redis.zrem(UNPACKED_KEY, game_id)
    fake_redis.zadd(ACTIVE_KEY, {game_id: 0.0})  # as after a crash between the final append and the index
    settings = LifecycleSettings(compact_after_seconds=GRACE, abandon_after_days=30)
    later = time.time() + 31 * 86400
    first = Lifecycle(app.extensions["games"], app.extensions["storage"], settings, lambda: later).run_once()
    assert first.abandoned == [] and fake_redis.zscore(ACTIVE_KEY, game_id) is None
    assert fake_redis.zscore(UNPACKED_KEY, game_id) is not None
    assert Lifecycle(app.extensions["games"], app.extensions["storage"], settings, lambda: later).run_once().packed == [
        game_id
    ]
    assert game_keys(fake_redis, game_id) == {"packed", "disputes", "answers"}


def test_a_game_is_not_abandoned_when_its_player_moves_after_the_sweep_found_it_idle(
    client: FlaskClient, app: flask.Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep decides a game is idle on one load; the person moves right after (forced here, after the
    sweep's read of the last event); the abandonment must be refused at the version it was decided on,
    not appended after the move (issue 35, item 8)."""
    created = create(client, "golf")
    game_id, token = created["id"], created["seats"][0]["token"]
    store = app.extensions["games"].store
    read = store.read
    moved: list[int] = []

    def read_then_the_person_moves(*args: Any, **kwargs: Any) -> Any:
        records = read(*args, **kwargs)
        if not moved:
            moved.append(0)  # once: the move below reads the store too
            answer = client.post(
                f"/v1/games/{game_id}/actions", json={"type": "reveal", "positions": [0, 1]}, headers=auth(token)
            )
            moved[0] = answer.status_code
        return records

    monkeypatch.setattr(store, "read", read_then_the_person_moves)
    later = time.time() + 31 * 86400
    outcome = Lifecycle(
        app.extensions["games"], app.extensions["storage"], LifecycleSettings(abandon_after_days=30), lambda: later
    ).run_once()

    assert moved == [200]
    assert outcome.abandoned == []
    view = client.get(f"/v1/games/{game_id}").get_json()
    assert view["status"] == "active"
    last = all_events(client, game_id)[-1]
    assert last["type"] != "GameAbandoned" and last["actor"] == 0
