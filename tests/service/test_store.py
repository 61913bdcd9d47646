"""service/storage/event_store.py directly on fakeredis: compare-and-append, ids, keys, secrets at rest."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from typing import Any

import fakeredis
import pytest
from flask.testing import FlaskClient

from service.api.followers import Watchers
from service.storage.event_store import EventStore
from service.storage.outcomes import GameExists, StoreUnavailable
from service.storage.redis_store import RedisStore
from service.storage.stream_tickets import StreamTickets
from tests.conftest import auth, create_golf
from tests.service.helpers import redis_dump

META = {"game": "golf", "seed": "the-secret-seed", "tokens": "[]"}


def record(seq: int, kind: str = "Thing", **data: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "actor": "system", "data": data, "prev_hash": "p", "hash": f"h{seq}"}


@pytest.fixture
def store(fake_redis: Any) -> EventStore:
    return RedisStore.connect(fake_redis).events


@pytest.fixture
def two(store: EventStore) -> EventStore:
    """A store holding game `g1` with two records."""
    store.create("g1", META, [record(1), record(2)])
    return store


def test_create_stores_meta_and_records_under_hash_tagged_keys(two: EventStore, fake_redis: Any) -> None:
    assert set(fake_redis.keys("*")) == {"game:{g1}:events", "game:{g1}:meta"}
    assert fake_redis.hgetall("game:{g1}:meta") == META
    assert two.meta("g1") == META
    assert two.read("g1") == [record(1), record(2)]
    assert [entry_id for entry_id, _ in fake_redis.xrange("game:{g1}:events")] == ["1-0", "2-0"]
    assert json.loads(fake_redis.xrange("game:{g1}:events")[0][1]["e"]) == record(1)


def test_unknown_games_read_as_nothing(store: EventStore, fake_redis: Any) -> None:
    assert store.meta("nope") is None
    assert store.read("nope") == []
    assert store.last_seq("nope") == 0
    assert Watchers(store).wait("nope", 0, 0) == []
    assert StreamTickets(fake_redis).take_ticket("nope", "0" * 64) is None


def test_create_of_an_existing_id_raises_and_changes_nothing(two: EventStore, fake_redis: Any) -> None:
    before = redis_dump(fake_redis)
    with pytest.raises(GameExists):
        two.create("g1", {"game": "other", "seed": "x"}, [record(1, "Other")])
    assert redis_dump(fake_redis) == before


def test_create_refuses_when_only_the_stream_exists(store: EventStore, fake_redis: Any) -> None:
    fake_redis.xadd("game:{g2}:events", {"e": "{}"}, id="1-0")
    with pytest.raises(GameExists):
        store.create("g2", META, [record(1)])
    assert not fake_redis.exists("game:{g2}:meta")


def test_append_at_the_current_version(two: EventStore, fake_redis: Any) -> None:
    result = two.append("g1", 2, [record(3), record(4)])
    assert (result.outcome, result.version) == ("ok", 4)
    assert [entry_id for entry_id, _ in fake_redis.xrange("game:{g1}:events")] == ["1-0", "2-0", "3-0", "4-0"]
    assert two.read("g1", after=2) == [record(3), record(4)]
    assert two.read("g1", after=3) == [record(4)]
    assert two.read("g1", after=4) == []


@pytest.mark.parametrize("stale", [0, 1, 3, 10])
def test_append_at_a_stale_version_is_a_conflict_and_writes_nothing(
    two: EventStore, fake_redis: Any, stale: int
) -> None:
    before = redis_dump(fake_redis)
    result = two.append("g1", stale, [record(stale + 1)], ("0:key", "answer"))
    assert (result.outcome, result.version) == ("conflict", 2)
    assert redis_dump(fake_redis) == before


def test_append_with_an_idempotency_key_stores_the_answer_once(two: EventStore, fake_redis: Any) -> None:
    first = two.append("g1", 2, [record(3)], ("0:k", "first answer"))
    assert (first.outcome, first.version) == ("ok", 3)
    assert fake_redis.hgetall("game:{g1}:idem") == {"0:k": "first answer"}
    assert two.idempotent_answer("g1", "0:k") == "first answer"
    assert two.idempotent_answer("g1", "1:k") is None
    before = redis_dump(fake_redis)
    for version in (3, 2):  # at the current version and at a stale one: the stored answer wins
        again = two.append("g1", version, [record(version + 1)], ("0:k", "second answer"))
        assert (again.outcome, again.prior) == ("duplicate", "first answer")
    assert redis_dump(fake_redis) == before
    other_seat = two.append("g1", 3, [record(4)], ("1:k", "seat 1"))
    assert (other_seat.outcome, other_seat.version) == ("ok", 4)


def test_appends_race_one_wins(two: EventStore) -> None:
    assert two.append("g1", 2, [record(3, "A")]).outcome == "ok"
    loser = two.append("g1", 2, [record(3, "B")])
    assert (loser.outcome, loser.version) == ("conflict", 3)
    assert [r["type"] for r in two.read("g1")] == ["Thing", "Thing", "A"]


def test_wait_returns_at_once_times_out_or_wakes_up(two: EventStore) -> None:
    watchers = Watchers(two)
    started = time.monotonic()
    assert watchers.wait("g1", 0, 5) == [record(1), record(2)]
    assert watchers.wait("g1", 2, 0) == []
    assert time.monotonic() - started < 1
    started = time.monotonic()
    assert watchers.wait("g1", 2, 0.2) == []
    assert time.monotonic() - started >= 0.15

    def later() -> None:
        time.sleep(0.2)
        two.append("g1", 2, [record(3)])

    thread = threading.Thread(target=later)
    thread.start()
    assert watchers.wait("g1", 2, 5) == [record(3)]
    thread.join()
    assert two.last_seq("g1") == 3 and two.read_blocking("g1", 2, 10) == [record(3)]


def test_a_ticket_is_taken_once(two: EventStore, fake_redis: Any) -> None:
    tickets = StreamTickets(fake_redis)
    tickets.put_ticket("g1", "ab" * 32, 1, 60)
    assert 0 < fake_redis.ttl(f"game:{{g1}}:ticket:{'ab' * 32}") <= 60
    assert tickets.take_ticket("g1", "ab" * 32) == 1
    assert tickets.take_ticket("g1", "ab" * 32) is None


def test_ping_and_unreachable_redis() -> None:
    server = fakeredis.FakeServer()
    store = RedisStore.connect(fakeredis.FakeRedis(server=server, decode_responses=True)).events
    store.create("g1", META, [record(1)])
    assert store.ping() is True
    server.connected = False
    try:
        assert store.ping() is False
        for call in (
            lambda: store.create("g2", META, [record(1)]),
            lambda: store.meta("g1"),
            lambda: store.read("g1"),
            lambda: store.read_blocking("g1", 0, 100),
            lambda: store.last_seq("g1"),
            lambda: Watchers(store).wait("g1", 0, 0.1),
            lambda: store.append("g1", 1, [record(2)]),
            lambda: store.idempotent_answer("g1", "0:k"),
        ):
            with pytest.raises(StoreUnavailable):
                call()
    finally:
        server.connected = True
    assert store.read("g1") == [record(1)]
    assert store.meta("g2") is None


# ---------------------------------------------------------------- what the service keeps in Redis


def test_service_keys_are_hash_tagged_per_game(client: FlaskClient, fake_redis: Any) -> None:
    created = create_golf(client, seats=[{"kind": "human"}, {"kind": "human"}])
    token = created["seats"][0]["token"]
    headers = {**auth(token), "Idempotency-Key": "k"}
    response = client.post(
        f"/v1/games/{created['id']}/actions", json={"type": "reveal", "positions": [0, 1]}, headers=headers
    )
    assert response.status_code == 200
    game_id = re.escape(created["id"])
    assert set(fake_redis.keys("games:*")) == {"games:active"}  # the lifecycle's index (service/storage/game_index.py)
    keys = fake_redis.keys("game:*")
    assert {key.rsplit(":", 1)[1] for key in keys} == {"events", "meta", "idem"}
    for key in keys:
        assert re.fullmatch(rf"game:\{{{game_id}\}}:(events|meta|idem)", key), key
    assert [entry_id for entry_id, _ in fake_redis.xrange(f"game:{{{created['id']}}}:events")] == ["1-0", "2-0", "3-0"]


def test_seed_is_kept_in_the_meta_hash_only(client: FlaskClient, fake_redis: Any) -> None:
    seed = "only-in-the-meta-hash"
    created = create_golf(client, seats=[{"kind": "human"}, {"kind": "human"}], seed=seed)
    game_id = created["id"]
    for seat in created["seats"]:
        headers = {**auth(seat["token"]), "Idempotency-Key": "reveal"}
        response = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "reveal", "positions": [0, 1]}, headers=headers
        )
        assert response.status_code == 200
    meta = fake_redis.hgetall(f"game:{{{game_id}}}:meta")
    assert meta["seed"] == seed and meta["seed_source"] == "creator"
    dump = redis_dump(fake_redis)
    del dump[f"game:{{{game_id}}}:meta"]["seed"]
    assert seed not in json.dumps(dump)
    entries = fake_redis.xrange(f"game:{{{game_id}}}:events")
    assert len(entries) == 4 and all(seed not in fields["e"] for _, fields in entries)


def test_tokens_are_stored_only_as_hashes(client: FlaskClient, fake_redis: Any) -> None:
    seats = [{"kind": "human"}, {"kind": "bot"}, {"kind": "human"}]
    created = create_golf(client, seats=seats)
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"] if "token" in seat]
    assert len(tokens) == 2
    for token in tokens:
        headers = {**auth(token), "Idempotency-Key": "reveal"}
        response = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "reveal", "positions": [2, 3]}, headers=headers
        )
        assert response.status_code == 200
        assert client.get(f"/v1/games/{game_id}", headers=auth(token)).status_code == 200
    everything = json.dumps(redis_dump(fake_redis))
    for token in tokens:
        assert token not in everything, "a raw token is stored in Redis"
    stored = json.loads(fake_redis.hget(f"game:{{{game_id}}}:meta", "tokens"))
    assert stored[1] is None
    digests = [digest for digest in stored if digest is not None]
    assert len(digests) == 2 and all(re.fullmatch(r"[0-9a-f]{64}", d) for d in digests)
    assert {hashlib.sha256(t.encode()).hexdigest() for t in tokens} == set(digests)
