"""Stored snapshots are used only when this code wrote them and their bytes are intact
(service/storage/snapshot_codec.py, service/storage/snapshots.py): a stale, changed, unmarked or undecodable snapshot
is dropped and the game is folded from its events, so every answer is a fold from scratch's."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from service.app import create_app
from service.storage import snapshot_codec
from service.storage.redis_store import RedisStore
from service.storage.snapshot_codec import SnapshotDecodeError, code_version, decode, encode, sealed
from tests.conftest import RecordingDispatcher
from tests.service.lifecycle_helpers import answers, create, play_to_end
from tests.service.test_snapshot_store import played, service_on
from tests.service.test_snapshots import same, scratch_states


def snapshots_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:snapshots"


def cold_app(redis: fakeredis.FakeRedis) -> flask.Flask:
    """A new API process on the same Redis: nothing folded yet."""
    return create_app({"TESTING": True}, redis_client=redis, dispatcher=RecordingDispatcher())


def body_of(blob: bytes) -> dict[str, Any]:
    """The JSON body of a stored snapshot (after its marks, when it has them)."""
    compressed = blob.partition(b"\n")[2] if blob.startswith(b"cardtable-snapshot") else blob
    body: dict[str, Any] = json.loads(zlib.decompress(compressed))
    return body


def unmarked(body: dict[str, Any]) -> bytes:
    """A snapshot as stored before snapshots had marks: the compressed body alone."""
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"))


@dataclasses.dataclass(frozen=True)
class MovedState:
    """A game state whose module has been renamed since its snapshot was written."""

    round: int = 1


MovedState.__module__ = "domain.golf_renamed"


@pytest.fixture(autouse=True)
def fresh_code_versions() -> Iterator[None]:
    """Each test starts and ends with no code version computed (some compute one from edited sources)."""
    code_version.cache_clear()
    yield
    code_version.cache_clear()


@pytest.fixture
def golf_game(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> Iterator[tuple[dict[str, Any], list[engine.Snapshot[Any]], list[str]]]:
    """A golf game played to its end through the API, with no stored snapshot (it is shorter than
    SNAPSHOT_EVERY); its states from a fold from scratch and the hash of each event (index n: event n+1)."""
    created = create(client, "golf")
    play_to_end(client, app, dispatcher, created)
    assert not fake_redis.exists(snapshots_key(created["id"]))
    service = app.extensions["games"]
    hashes = [record["hash"] for record in service.store.read(created["id"])]
    yield created, scratch_states(service, created["id"]), hashes


def test_a_stale_snapshot_whose_last_event_hash_matches_is_not_trusted(
    fake_redis: fakeredis.FakeRedis, golf_game: tuple[dict[str, Any], list[engine.Snapshot[Any]], list[str]]
) -> None:
    created, states, hashes = golf_game
    game_id, version = created["id"], len(states) - 1
    truth = answers(cold_app(fake_redis).test_client(), created)  # no stored snapshot: a fold from scratch

    def plant_stale() -> None:
        """At a few versions, an earlier state under that version's number and last event hash, as a
        snapshot written by code that folded differently would be (before snapshots had marks)."""
        for at in (version // 3, version // 2, version):
            stale = {**body_of(encode(states[at - 5], hashes[at - 1])), "version": at}
            fake_redis.hset(snapshots_key(game_id), str(at), unmarked(stale))

    plant_stale()
    assert answers(cold_app(fake_redis).test_client(), created) == truth
    assert not fake_redis.exists(snapshots_key(game_id)), "the stale snapshots are dropped"
    for at in (version // 2, version - 1):  # a replay step of a process that has not loaded the game
        plant_stale()
        response = cold_app(fake_redis).test_client().get(f"/v1/games/{game_id}/replay?at={at}")
        assert (response.status_code, response.get_json()) == truth[f"spectator GET /replay?at={at}"], at


def test_a_snapshot_naming_a_module_that_is_gone_is_dropped_not_a_500(
    fake_redis: fakeredis.FakeRedis, golf_game: tuple[dict[str, Any], list[engine.Snapshot[Any]], list[str]]
) -> None:
    created, states, hashes = golf_game
    game_id, version = created["id"], len(states) - 1
    truth = answers(cold_app(fake_redis).test_client(), created)
    moved = encode(dataclasses.replace(states[version], state=MovedState()), hashes[-1])
    blobs = {"written by this code": moved, "without marks": unmarked(body_of(moved))}
    for what, blob in blobs.items():
        fake_redis.hset(snapshots_key(game_id), str(version), blob)
        cold = cold_app(fake_redis).test_client()
        view = cold.get(f"/v1/games/{game_id}")  # a cold load: was a 500 (ModuleNotFoundError)
        assert (view.status_code, view.get_json()) == truth["spectator GET "], what
        assert answers(cold, created) == truth, what
        assert not fake_redis.exists(snapshots_key(game_id)), what


def golf_config() -> engine.GameConfig:
    return engine.GameConfig(game="golf", players=2, options={}, seed="s")


@pytest.mark.parametrize(
    "state",
    [
        {"$dc": "domain.golf_renamed:GolfState", "f": {}},  # ModuleNotFoundError
        {"$dc": "domain.golf:GolfState", "f": []},  # AttributeError
        {"$d": [[{"$t": [1]}, 2], [[1], 2]]},  # an unhashable key: TypeError
        {"$fs": [[1]]},  # TypeError
        {"$t": [{"$config": 1}], "$dc": "domain.golf:GolfState"},  # KeyError
    ],
)
def test_decoding_raises_nothing_but_snapshot_decode_error(state: Any) -> None:
    body = {"version": 1, "seed_revealed": False, "abandoned": None, "last_hash": "x", "state": state}
    for bad in (body, {**body, "version": "one"}, {key: body[key] for key in list(body)[1:]}):
        with pytest.raises(SnapshotDecodeError):
            decode(sealed("golf", bad), golf_config())


def test_a_body_nested_too_deep_or_inflating_too_far_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    nested = zlib.compress(b'{"version":1,"state":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    marks = (snapshot_codec.FORMAT, code_version("golf").encode(), hashlib.sha256(nested).hexdigest().encode())
    with pytest.raises(SnapshotDecodeError):  # RecursionError
        decode(b" ".join(marks) + b"\n" + nested, golf_config())
    monkeypatch.setattr(snapshot_codec, "MAX_BODY_BYTES", 100)
    with pytest.raises(SnapshotDecodeError, match="too large"):
        decode(sealed("golf", {"state": "x" * 200}), golf_config())


def test_a_snapshot_written_by_other_domain_code_is_dropped_and_the_game_folded_from_its_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "golf")
    scratch = scratch_states(service_on(redis), game)
    hashes = [record["hash"] for record in RedisStore.connect(redis).events.read(game)]
    fields = redis.hkeys(snapshots_key(game))
    assert fields, "the command path stored snapshots"
    real_source = snapshot_codec._source

    def engine_edited(name: str) -> bytes:
        return real_source(name) + (b"\n# a comment added\n" if name == "domain.engine" else b"")

    ours = code_version("golf")
    monkeypatch.setattr(snapshot_codec, "_source", engine_edited)
    code_version.cache_clear()
    assert code_version("golf") != ours
    for field in fields:  # the true states at their true hashes, written by the other code
        redis.hset(snapshots_key(game), field, encode(scratch[int(field)], hashes[int(field) - 1]))
    monkeypatch.undo()
    code_version.cache_clear()
    assert code_version("golf") == ours
    blob = RedisStore.connect(redis).snapshots.snapshot(game, int(fields[0]))
    assert blob is not None
    with pytest.raises(SnapshotDecodeError, match="other code"):
        decode(blob, scratch[0].config)
    assert same(service_on(redis).repository.load(game).snap, scratch[-1])
    assert not redis.exists(snapshots_key(game)), "snapshots of other code are dropped"


def test_the_code_version_covers_every_module_the_games_fold_imports_and_nothing_else() -> None:
    golf = snapshot_codec._domain_sources("domain.golf")
    assert {"domain.golf", "domain.engine", "domain.cards", "domain.events", "domain.shuffle"} <= set(golf)
    assert not any(name.startswith("domain.bots") or name in ("domain.romme", "domain.verify") for name in golf)
    assert "domain.romme_melds" in snapshot_codec._domain_sources("domain.romme")
    assert len({code_version(game.id) for game in engine.all_games()}) == len(engine.all_games())


def test_a_snapshot_whose_bytes_changed_is_refused() -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "switch")
    scratch = scratch_states(service_on(redis), game)
    blob = encode(scratch[20], "hash-20")
    marks, _, _ = blob.partition(b"\n")
    changed = unmarked({**body_of(blob), "seed_revealed": True})  # a valid body, under the old digest
    for bad in (marks + b"\n" + changed, blob[:-1], blob + b"\0", blob.replace(b"/2 ", b"/3 ", 1)):
        with pytest.raises(SnapshotDecodeError):
            decode(bad, scratch[0].config)
    assert same(decode(blob, scratch[0].config)[0], scratch[20])
    field = max(int(f) for f in redis.hkeys(snapshots_key(game)))
    stored = RedisStore.connect(redis).snapshots.snapshot(game, field)
    assert stored is not None
    marks, _, _ = stored.partition(b"\n")
    redis.hset(snapshots_key(game), str(field), marks + b"\n" + unmarked({**body_of(stored), "abandoned": "left"}))
    loaded = service_on(redis).repository.load(game)
    assert same(loaded.snap, scratch[-1]) and loaded.snap.abandoned == scratch[-1].abandoned
    assert not redis.exists(snapshots_key(game))


def test_a_snapshot_stored_under_another_version_is_refused() -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "golf")
    scratch = scratch_states(service_on(redis), game)
    hashes = [record["hash"] for record in RedisStore.connect(redis).events.read(game)]
    redis.delete(snapshots_key(game))
    version = len(scratch) - 1
    redis.hset(snapshots_key(game), str(version - 10), encode(scratch[version - 2], hashes[version - 3]))
    fresh = service_on(redis)
    assert same(fresh.repository.state_at(fresh.repository.load_header(game), version - 5), scratch[version - 5])
    assert not redis.exists(snapshots_key(game))


def test_the_code_version_is_computed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "go5")
    scratch = scratch_states(service_on(redis), game)
    modules = sorted(snapshot_codec._domain_sources("domain.go5"))
    code_version.cache_clear()
    reads: list[str] = []
    real_source = snapshot_codec._source

    def counted(name: str) -> bytes:
        reads.append(name)
        return real_source(name)

    monkeypatch.setattr(snapshot_codec, "_source", counted)
    for snap in scratch[:50]:
        back, _ = decode(encode(snap, "h"), snap.config)
        assert same(back, snap)
    assert sorted(reads) == modules, "each module's source read once"
