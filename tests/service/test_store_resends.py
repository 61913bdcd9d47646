"""The store's writes after an unknown outcome (issue 28, item 1): resent only when a resend cannot
apply them twice, and told apart from a clash or a conflict by what the first call left behind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import fakeredis
import gevent  # type: ignore[import-untyped]
import pytest
import redis
from gevent.event import Event  # type: ignore[import-untyped]
from redis.backoff import NoBackoff

from service.storage.event_store import EventStore
from service.storage.outcomes import GameExists, StoreUnavailable
from service.storage.packed_games import encode_record
from service.storage.redis_clients import ReadRetry, redis_clients, sent_once
from service.storage.redis_store import RedisStore
from service.storage.scripts import RESENDS
from tests.service.helpers import stream_entries


class LostReplies:
    """A store script whose first `lose` calls run and then lose their reply (ConnectionError);
    `between` runs after each lost reply, before the caller can resend."""

    def __init__(self, script: Any, lose: int, between: Callable[[], None] = lambda: None, run: bool = True) -> None:
        self.script, self.lose, self.between, self.run = script, lose, between, run
        self.calls = 0

    def __call__(self, keys: list[str], args: list[Any]) -> Any:
        self.calls += 1
        if self.calls > self.lose:
            return self.script(keys=keys, args=args)
        if self.run:
            self.script(keys=keys, args=args)
        self.between()
        raise redis.ConnectionError("the reply was lost")


def record(seq: int, prev: str = "") -> dict[str, Any]:
    return {"seq": seq, "type": "Noted", "actor": 0, "data": {}, "at": "t", "prev_hash": prev, "hash": f"h{seq}"}


@pytest.fixture
def client() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(decode_responses=True)


@pytest.fixture
def store(client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> EventStore:
    monkeypatch.setattr("service.storage.scripts.RESEND_PAUSE_SECONDS", 0.0)
    store = RedisStore.connect(client).events
    store.create("g", {"game": "golf", "nonce": "n1"}, [record(1)])
    return store


def texts(client: fakeredis.FakeRedis) -> list[str]:
    return [fields["e"] for _, fields in stream_entries(client, "g")]


def test_a_create_whose_reply_is_lost_is_its_own_not_a_clash(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = LostReplies(store._create, 1)
    monkeypatch.setattr(store, "_create", lost)
    store.create("h", {"game": "golf", "nonce": "n2"}, [record(1)])  # no GameExists: it landed
    assert lost.calls == 2
    with pytest.raises(GameExists):
        store.create("h", {"game": "golf", "nonce": "another"}, [record(1)])
    with pytest.raises(GameExists):
        store.create("h", {"game": "golf"}, [record(1)])


def test_a_create_without_a_nonce_is_never_resent(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    lost = LostReplies(store._create, 1)
    monkeypatch.setattr(store, "_create", lost)
    with pytest.raises(StoreUnavailable):
        store.create("h", {"game": "golf"}, [record(1)])
    assert lost.calls == 1


@pytest.mark.parametrize("packed", [False, True], ids=["idem-dropped", "packed"])
def test_an_append_resent_after_its_idempotency_field_is_gone_is_found_in_the_stream(
    store: EventStore, client: fakeredis.FakeRedis, packed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Packing drops the idem hash: a resend then meets a conflict, and the stream shows the first
    call's record, so the append was applied."""

    def pack_or_drop() -> None:
        if packed:
            assert RedisStore.connect(client).packing.compact("g") == "packed"
        else:
            client.delete("game:{g}:idem")

    monkeypatch.setattr(store, "_append", LostReplies(store._append, 1, pack_or_drop))
    result = store.append("g", 1, [record(2, "h1")], ("~mine", "2"))
    assert (result.outcome, result.prior) == ("duplicate", "2")
    assert [r["seq"] for r in store.read("g")] == [1, 2]


def test_a_conflict_after_a_resend_that_is_not_ours_stays_a_conflict(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = store._append

    def someone_else_appends() -> None:
        script(keys=["game:{g}:events", "game:{g}:idem"], args=[1, "", "", encode_record(record(2))])

    monkeypatch.setattr(store, "_append", LostReplies(script, 1, someone_else_appends, run=False))
    result = store.append("g", 1, [{**record(2, "h1"), "hash": "mine"}], ("~mine", "2"))
    assert (result.outcome, result.version) == ("conflict", 2)


def test_an_append_with_a_field_is_resent_until_known(
    store: EventStore, client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = LostReplies(store._append, 1)
    monkeypatch.setattr(store, "_append", lost)
    result = store.append("g", 1, [record(2, "h1")], ("~mine", "2"))
    assert (result.outcome, result.prior, lost.calls) == ("duplicate", "2", 2)
    assert len(texts(client)) == 2


def test_an_append_without_a_field_is_never_resent(
    store: EventStore, client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = LostReplies(store._append, 1)
    monkeypatch.setattr(store, "_append", lost)
    with pytest.raises(StoreUnavailable):
        store.append("g", 1, [record(2, "h1")])
    assert lost.calls == 1 and len(texts(client)) == 2


def test_an_append_that_gets_no_reply_at_all_is_unavailable(
    store: EventStore, client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = LostReplies(store._append, RESENDS + 1)
    monkeypatch.setattr(store, "_append", lost)
    with pytest.raises(StoreUnavailable):
        store.append("g", 1, [record(2, "h1")], ("~mine", "2"))
    assert lost.calls == RESENDS + 1 and len(texts(client)) == 2  # applied once, however often resent


def test_the_driver_retries_reads_but_not_what_is_sent_once() -> None:
    retry = ReadRetry(NoBackoff(), 1)
    calls: list[int] = []

    def fails_once() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise redis.ConnectionError("cut")
        return "answer"

    assert retry.call_with_retry(fails_once, lambda error: None) == "answer"
    assert len(calls) == 2
    calls.clear()
    with sent_once(), pytest.raises(redis.ConnectionError):
        retry.call_with_retry(fails_once, lambda error: None)
    assert len(calls) == 1
    assert retry.get_retries() == 1
    with sent_once():
        assert retry.get_retries() == 0  # what a cluster client asks before its own resends


def test_the_service_clients_retry_reads_only() -> None:
    """The store's and the long-poll's clients (built without connecting) carry ReadRetry."""
    store, blocking, _ = redis_clients("redis://127.0.0.1:1/0")
    for client in (store, blocking):
        assert isinstance(client, redis.Redis)
        retry = client.connection_pool.connection_kwargs["retry"]
        assert isinstance(retry, ReadRetry) and retry.get_retries() == 1


def test_sent_once_holds_only_for_its_own_greenlet() -> None:
    """Under gunicorn's gevent worker (make run) requests are greenlets of one thread: one request's
    script must not take the driver's retry from another's read."""
    entered, checked = Event(), Event()
    seen: list[int] = []
    retry = ReadRetry(NoBackoff(), 1)

    def writing() -> None:
        with sent_once():
            entered.set()
            checked.wait()
            seen.append(retry.get_retries())

    def reading() -> None:
        entered.wait()
        seen.append(retry.get_retries())
        checked.set()

    gevent.joinall([gevent.spawn(writing), gevent.spawn(reading)])
    assert seen == [1, 0]
