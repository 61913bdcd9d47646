"""Store clients that gather a thread's writes into one pipeline (service/storage/gathering.py), on fakeredis."""

from __future__ import annotations

import logging
import threading

import fakeredis
import pytest
import redis

from service.storage.game_index import FINISHED_KEY, UNPACKED_KEY, GameIndex
from service.storage.gathering import ReplyNotKept, StoreRedis
from service.storage.turn_queue import WaitingIndex


@pytest.fixture
def server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


def gathering_client(server: fakeredis.FakeServer) -> StoreRedis:
    return StoreRedis(connection_pool=fakeredis.FakeRedis(server=server, decode_responses=True).connection_pool)


def plain(server: fakeredis.FakeServer) -> redis.Redis:
    return fakeredis.FakeRedis(server=server, decode_responses=True)


def test_commands_in_the_block_are_sent_at_its_end_in_order(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    with client.gathering() as gathered:
        client.rpush("order", "a")
        client.hincrby("counts", "golf", 1)
        client.rpush("order", "b")
        assert other.exists("order", "counts") == 0, "nothing is sent before the block ends"
    assert other.lrange("order", 0, -1) == ["a", "b"]
    assert other.hget("counts", "golf") == "1"
    assert gathered.failures == []


def test_other_threads_and_this_one_after_the_block_send_at_once(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    with client.gathering():
        thread = threading.Thread(target=client.set, args=("elsewhere", "1"))
        thread.start()
        thread.join()
        assert other.get("elsewhere") == "1", "another thread's command is not gathered"
    client.set("after", "1")
    assert other.get("after") == "1"


def test_reading_a_gathered_reply_is_refused(server: fakeredis.FakeServer) -> None:
    client = gathering_client(server)
    with client.gathering(), pytest.raises(ReplyNotKept):
        if client.exists("bot:acme"):  # a read gathered by mistake fails loudly
            pass


def test_an_adapters_own_pipeline_joins_the_gathered_commands(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    with client.gathering():
        GameIndex(client).ended("g1", 5.0)
        assert other.zscore(FINISHED_KEY, "g1") is None
    assert other.zscore(FINISHED_KEY, "g1") == 5.0
    assert other.zscore(UNPACKED_KEY, "g1") == 5.0


def test_a_script_redis_lost_is_loaded_and_run_once(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    index = WaitingIndex(client)
    other.zadd("bots:waiting", {"g1": 3})
    other.script_flush()  # as after a restart: Redis holds no script
    with client.gathering() as gathered:
        index.settle("g1", 3)
    assert other.zscore("bots:waiting", "g1") is None
    assert gathered.failures == []


def test_a_failed_write_is_named_by_its_mark_and_the_others_are_applied(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    other.set("text", "not a sorted set")
    with client.gathering() as gathered:
        gathered.mark("note one")
        client.set("one", "1")
        gathered.mark("note two")
        client.zadd("text", {"g1": 1})
        gathered.mark("note three")
        client.set("three", "3")
    assert [label for label, _ in gathered.failures] == ["note two"]
    assert isinstance(gathered.failures[0][1], redis.ResponseError)
    assert other.get("one") == "1" and other.get("three") == "3"


def test_when_redis_cannot_be_reached_every_write_of_the_block_failed() -> None:
    client = StoreRedis(host="127.0.0.1", port=1, socket_connect_timeout=0.5)
    with client.gathering() as gathered:
        gathered.mark("note one")
        client.set("one", "1")
        gathered.mark("note two")
        client.set("two", "2")
    assert [label for label, _ in gathered.failures] == ["note one", "note two"]
    assert all(isinstance(error, redis.ConnectionError) for _, error in gathered.failures)


def test_writes_sent_ahead_go_in_front_of_the_next_command_whose_reply_is_answered(
    server: fakeredis.FakeServer,
) -> None:
    client, other = gathering_client(server), plain(server)
    with client.ahead():
        client.rpush("order", "intent")
    assert other.exists("order") == 0, "held until the next command"
    assert client.rpush("order", "append") == 2, "the next command's own reply"
    assert other.lrange("order", 0, -1) == ["intent", "append"]
    assert client.rpush("order", "later") == 3, "sent ahead once only"


def test_a_write_sent_ahead_that_fails_is_logged_and_the_next_command_goes_on(
    server: fakeredis.FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    client, other = gathering_client(server), plain(server)
    other.set("text", "not a sorted set")
    with client.ahead() as gathered:
        gathered.mark("note g1 as finishing")
        client.zadd("text", {"g1": 1})
    with caplog.at_level(logging.ERROR, logger="service.storage.gathering"):
        assert client.set("appended", "1")
    assert other.get("appended") == "1"
    assert [record.getMessage().split(":")[0] for record in caplog.records] == [
        "could not note g1 as finishing (a write sent ahead of the next one)"
    ]


def test_the_next_commands_own_error_is_raised(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    other.set("text", "not a sorted set")
    with client.ahead():
        client.set("intent", "1")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        client.zadd("text", {"g1": 1})
    assert other.get("intent") == "1"


def test_an_adapters_own_pipeline_after_writes_sent_ahead_goes_after_them(server: fakeredis.FakeServer) -> None:
    client, other = gathering_client(server), plain(server)
    with client.ahead():
        client.zadd(FINISHED_KEY, {"g1": 1.0})
    GameIndex(client).ended("g1", 7.0, unless_noted=True)  # keeps a note that is there: the intent came first
    assert other.zscore(FINISHED_KEY, "g1") == 1.0
