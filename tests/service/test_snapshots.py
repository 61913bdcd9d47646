"""Replay from snapshots (service/storage/snapshots.py): every state a snapshot gives is the state a fold
from scratch gives, at every step of games of all four types, and a step folds at most the events
since its snapshot."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.chain import record_actor
from service.bootstrap import game_service
from service.play.game_service import GameService
from service.storage.redis_store import RedisStore
from service.storage.snapshots import SnapshotCache
from tests.conftest import RecordingDispatcher
from tests.unit.test_verify import bot_level, small_options

GAME_IDS = [game.id for game in engine.all_games()]


class FoldCounter:
    """Counts engine.advance calls: one per event folded."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = engine.advance

        def counted(snap: engine.Snapshot[Any], event: Any) -> engine.Snapshot[Any]:
            self.calls += 1
            return real(snap, event)

        monkeypatch.setattr(engine, "advance", counted)

    def during(self, action: Any) -> tuple[int, Any]:
        before = self.calls
        result = action()
        return self.calls - before, result


def service_on(redis: fakeredis.FakeRedis, every: int = 256, size: int = 4096) -> GameService:
    dispatcher = RecordingDispatcher()
    service = game_service(RedisStore.connect(redis), dispatcher, snapshots=SnapshotCache(every, size))
    dispatcher.service = service
    return service


def played_game(redis: fakeredis.FakeRedis, game_id: str, seed: str) -> str:
    """An all-bot game of `game_id`, played to its end; returns its id."""
    service = service_on(redis)
    game = engine.get_game(game_id)
    players = game.min_players
    seats = [{"kind": "bot", "level": bot_level(game_id, i)} for i in range(players)]
    created = service.create_game(game_id, seats, small_options(game.describe()), seed)
    assert service.turns.dispatcher.service is service
    service.turns.dispatcher.drain()  # type: ignore[attr-defined]
    assert service.repository.load(created["id"]).snap.finished
    return str(created["id"])


def scratch_states(service: GameService, game_id: str) -> list[engine.Snapshot[Any]]:
    """The game after each event, folding from scratch (engine.fold is this loop): index n holds
    the state after event n."""
    header = service.repository.load_header(game_id)
    catalog = header.snap.game.catalog
    events = [catalog.build(r["type"], record_actor(r), r["data"]) for r in service.store.read(game_id)]
    states = [engine.fold(header.config, [])]
    for event in events:
        states.append(engine.advance(states[-1], event))
    assert same(states[-1], engine.fold(header.config, events))
    return states


def same(left: engine.Snapshot[Any], right: engine.Snapshot[Any]) -> bool:
    return (left.version, left.seed_revealed, left.state) == (right.version, right.seed_revealed, right.state)


@pytest.fixture(scope="module")
def games() -> Iterator[dict[str, tuple[fakeredis.FakeRedis, str, list[engine.Snapshot[Any]]]]]:
    """One finished game of each type, with the states a fold from scratch gives at every step."""
    out = {}
    for game_id in GAME_IDS:
        redis = fakeredis.FakeRedis(decode_responses=True)
        played = played_game(redis, game_id, f"snapshots-{game_id}")
        out[game_id] = (redis, played, scratch_states(service_on(redis), played))
    yield out


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(every=st.integers(1, 40), order_seed=st.integers(0, 2**32 - 1), cold_first=st.booleans())
def test_snapshots_give_exactly_the_states_a_fold_from_scratch_gives_at_every_step(
    games: dict[str, tuple[fakeredis.FakeRedis, str, list[engine.Snapshot[Any]]]],
    monkeypatch: pytest.MonkeyPatch,
    game_id: str,
    every: int,
    order_seed: int,
    cold_first: bool,
) -> None:
    redis, played, scratch = games[game_id]
    service = service_on(redis, every=every)
    counter = FoldCounter(monkeypatch)
    version = len(scratch) - 1
    steps = list(range(1, version + 1))
    random.Random(order_seed).shuffle(steps)
    game = service.repository.load(played) if cold_first else service.repository.load_header(played)
    if cold_first:
        assert same(game.snap, scratch[version])
    for at in steps:
        folded, snap = counter.during(lambda at=at: service.repository.state_at(game, at))
        assert same(snap, scratch[at]), f"{game_id}: the state at {at} (snapshots every {every}) differs"
        if cold_first:  # the load kept a snapshot at every multiple: no step folds more than the rest
            assert folded <= every - 1 or at == version, (at, folded)
    # once every step was asked for, any step folds at most every - 1 events
    for at in random.Random(order_seed + 1).sample(range(1, version + 1), min(version, 20)):
        folded, snap = counter.during(lambda at=at: service.repository.state_at(game, at))
        assert same(snap, scratch[at]) and folded <= every - 1, (at, folded)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_load_without_the_cached_game_folds_only_from_its_latest_snapshot(
    games: dict[str, tuple[fakeredis.FakeRedis, str, list[engine.Snapshot[Any]]]],
    monkeypatch: pytest.MonkeyPatch,
    game_id: str,
) -> None:
    redis, played, scratch = games[game_id]
    service = service_on(redis, every=16)
    counter = FoldCounter(monkeypatch)
    cold, loaded = counter.during(lambda: service.repository.load(played))
    assert cold == len(scratch) - 1 and same(loaded.snap, scratch[-1])
    service.repository._cache.clear()  # the game fell out of the cache of latest states
    again, reloaded = counter.during(lambda: service.repository.load(played))
    assert again <= 15 and same(reloaded.snap, scratch[-1]), again


def test_a_changed_stream_is_not_replayed_from_a_stale_snapshot(
    games: dict[str, tuple[fakeredis.FakeRedis, str, list[engine.Snapshot[Any]]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each snapshot checks the hash of its last event against the stream before it is used."""
    source, played, scratch = games["golf"]
    redis = fakeredis.FakeRedis(decode_responses=True)
    meta, key = f"game:{{{played}}}:meta", f"game:{{{played}}}:events"
    redis.hset(meta, mapping=source.hgetall(meta))
    for entry_id, fields in source.xrange(key):
        redis.xadd(key, fields, id=entry_id)
    service = service_on(redis, every=8)
    game = service.repository.load(played)
    entries = redis.xrange(key)
    redis.delete(key)
    for entry_id, fields in entries:  # event 8 with another hash, as a rewrite of the stream leaves it
        text = fields["e"].replace('"hash":"', '"hash":"0', 1) if entry_id == "8-0" else fields["e"]
        redis.xadd(key, {"e": text}, id=entry_id)
    counter = FoldCounter(monkeypatch)
    folded, snap = counter.during(lambda: service.repository.state_at(game, 12))
    assert same(snap, scratch[12]) and folded == 12, "the snapshot at 8 no longer fits: from scratch"
    kept = service.repository.snapshots.nearest(played, 12)
    assert kept is not None and kept.version == 8 and kept.last_hash.startswith("0"), "kept anew from the stream"


def test_the_cache_holds_at_most_its_size_and_drops_the_least_recently_used(
    games: dict[str, tuple[fakeredis.FakeRedis, str, list[engine.Snapshot[Any]]]],
) -> None:
    scratch = games["switch"][2]
    cache = SnapshotCache(every=4, size=5)
    for version in (4, 8, 12, 16):
        cache.keep("a", scratch[version], f"h{version}")
    assert cache.nearest("a", 15) is not None and cache.nearest("a", 15).version == 12  # type: ignore[union-attr]
    cache.keep("b", scratch[4], "b4")
    cache.keep("b", scratch[8], "b8")
    assert len(cache) == 5
    assert cache.nearest("a", 7) is None, "the least recently used snapshot (a@4) went first"
    assert cache.nearest("a", 12) is not None and cache.nearest("b", 100).last_hash == "b8"  # type: ignore[union-attr]
    cache.forget("a")
    assert cache.nearest("a", 100) is None and len(cache) == 2
