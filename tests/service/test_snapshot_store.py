"""Snapshots kept in the store (service/storage/snapshot_codec.py, service/storage/snapshots.py): a process that has not
folded a game yet starts from the stored snapshot, gets exactly the states a fold from scratch gives,
and never builds anything but a game state of domain/ from what Redis holds."""

from __future__ import annotations

import zlib

import fakeredis
import pytest

from domain import engine
from service.bootstrap import game_service
from service.play.game_service import GameService
from service.storage.redis_store import RedisStore
from service.storage.snapshot_codec import SnapshotDecodeError, decode, encode, sealed
from service.storage.snapshots import SnapshotCache
from tests.conftest import RecordingDispatcher
from tests.service.test_snapshots import GAME_IDS, FoldCounter, same, scratch_states
from tests.unit.test_verify import bot_level, small_options

EVERY = 16


@pytest.fixture(autouse=True)
def appends_of_at_most_every_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot is kept where an append crosses a multiple of EVERY: bot chains here append at most EVERY turns
    at a time, so that the games below keep one every EVERY events or so."""
    monkeypatch.setattr("service.play.game_service.DUE_BATCH_TURNS", EVERY)


def service_on(redis: fakeredis.FakeRedis) -> GameService:
    """One API process: its own caches, snapshots every EVERY events kept in the store too."""
    store = RedisStore.connect(redis)
    dispatcher = RecordingDispatcher()
    service = game_service(store, dispatcher, snapshots=SnapshotCache(EVERY, store=store.snapshots))
    dispatcher.service = service
    return service


def played(redis: fakeredis.FakeRedis, game_id: str) -> str:
    """An all-bot game played to its end through the command path."""
    service = service_on(redis)
    game = engine.get_game(game_id)
    seats = [{"kind": "bot", "level": bot_level(game_id, i)} for i in range(game.min_players)]
    created = service.create_game(game_id, seats, small_options(game.describe()), f"stored-{game_id}")
    service.turns.dispatcher.drain()  # type: ignore[attr-defined]
    return str(created["id"])


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_state_of_a_game_encodes_and_decodes_to_itself(game_id: str) -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    service = service_on(redis)
    states = scratch_states(service, played(redis, game_id))
    config = states[0].config
    for snap in states:
        blob = encode(snap, f"hash-{snap.version}")
        back, last_hash = decode(blob, config)
        assert same(back, snap) and last_hash == f"hash-{snap.version}", snap.version
        assert back.abandoned == snap.abandoned and back.config is config
        assert engine.view(back, 0) == engine.view(snap, 0)
        assert config.seed.encode() not in zlib.decompress(blob.partition(b"\n")[2]), "the secret seed is never written"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_new_process_loads_and_replays_from_the_stored_snapshots(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, game_id)
    scratch = scratch_states(service_on(redis), game)
    version = len(scratch) - 1
    assert version > EVERY and redis.hlen(f"game:{{{game}}}:snapshots") >= version // EVERY - 1
    counter = FoldCounter(monkeypatch)
    cold = service_on(redis)  # a process that has never seen the game
    folded, loaded = counter.during(lambda: cold.repository.load(game))
    assert same(loaded.snap, scratch[-1]) and folded < 2 * EVERY, folded  # an action appends a few events
    for at in (1, EVERY - 1, EVERY + 3, version // 2, version - 1):
        fresh = service_on(redis)
        header = fresh.repository.load_header(game)
        folded, snap = counter.during(lambda fresh=fresh, header=header, at=at: fresh.repository.state_at(header, at))
        assert same(snap, scratch[at]) and folded < 2 * EVERY, (at, folded)


def test_a_stored_snapshot_that_names_other_code_is_refused_and_the_fold_goes_on() -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "golf")
    scratch = scratch_states(service_on(redis), game)
    config = scratch[0].config
    hostile = {"version": EVERY, "seed_revealed": False, "abandoned": None, "last_hash": "x"}
    for name in ("os:system", "subprocess:Popen", "domain.engine:GameConfig.__init__", "domain.golf:nothing"):
        blob = sealed("golf", {**hostile, "state": {"$dc": name, "f": {}}})  # with this code's marks
        with pytest.raises(SnapshotDecodeError):
            decode(blob, config)
    key = f"game:{{{game}}}:snapshots"
    for field in redis.hkeys(key):
        redis.hset(key, field, sealed("golf", {**hostile, "state": {"$dc": "os:system", "f": {}}}))
    loaded = service_on(redis).repository.load(game)
    assert same(loaded.snap, scratch[-1]), "an unusable stored snapshot only costs a longer fold"
    assert not redis.exists(key), "and is dropped"


def test_a_changed_stream_drops_the_stored_snapshots() -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "golf")
    key, events = f"game:{{{game}}}:snapshots", f"game:{{{game}}}:events"
    first = min(int(field) for field in redis.hkeys(key))
    entries = redis.xrange(events)
    redis.delete(events)
    for entry_id, fields in entries:  # the snapshot's last event with another hash
        text = fields["e"].replace('"hash":"', '"hash":"0', 1) if entry_id == f"{first}-0" else fields["e"]
        redis.xadd(events, {"e": text}, id=entry_id)
    service = service_on(redis)
    service.repository.state_at(service.repository.load_header(game), first)
    assert not redis.exists(key), "snapshots of a stream that changed are gone"


def test_packing_a_finished_game_drops_its_snapshots() -> None:
    redis = fakeredis.FakeRedis(decode_responses=True)
    game = played(redis, "switch")
    key = f"game:{{{game}}}:snapshots"
    assert redis.exists(key)
    before = service_on(redis).repository.load(game)
    assert RedisStore.connect(redis).packing.compact(game) == "packed"
    assert not redis.exists(key)
    assert same(service_on(redis).repository.load(game).snap, before.snap)
