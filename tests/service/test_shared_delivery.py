"""An event is encoded once per process for all its watchers, and long-polls are answered from the shared feed.

Every stream of a game is handed the very same bytes object for a batch of events; long-polls woken by
one event get one body, encoded once, byte for byte the body of GET /events, and while the game's
feed is live a long-poll reads nothing from the store itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.api import followers
from service.api.blueprint import watchers
from tests.conftest import auth, create_golf

TWO_HUMANS = [{"kind": "human"}, {"kind": "human"}]
LONG_POLLS = 4


def reveal(client: FlaskClient, created: dict[str, Any], seat: int) -> int:
    """Seat `seat` turns up two cards; the game's version after it."""
    action = {"type": "reveal", "positions": [0, 1]}
    answer = client.post(
        f"/v1/games/{created['id']}/actions", json=action, headers=auth(created["seats"][seat]["token"])
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)
    version: int = answer.get_json()["version"]
    return version


def wait_for_waiters(app: flask.Flask, count: int) -> None:
    """Block until `count` waiters follow games in the app (polled on the feeds' own count, no sleep-and-hope)."""
    with app.app_context():
        hub = watchers()
    for _ in range(2000):
        if hub.waiting() >= count:
            return
        threading.Event().wait(0.005)
    raise AssertionError(f"only {hub.waiting()} of {count} waiters")


@pytest.fixture
def kept_feed(app: flask.Flask, client: FlaskClient) -> Iterator[tuple[dict[str, Any], int]]:
    """A two-human game whose feed is live and has seen one event (a stream's reader keeps it so)."""
    created = create_golf(client, TWO_HUMANS)
    with app.app_context():
        hub = watchers()
    with hub.follow(created["id"]) as keeper:
        version = reveal(client, created, 0)
        assert keeper.next(version - 1, 5)  # the reader has published the event
        yield created, version


def test_long_polls_woken_by_one_event_read_nothing_and_share_one_encoded_body(
    app: flask.Flask,
    client: FlaskClient,
    fake_redis: fakeredis.FakeRedis,
    kept_feed: tuple[dict[str, Any], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created, version = kept_feed
    polling: set[int] = set()
    reads: list[str] = []
    encodings: list[int] = []
    xrange, respond = fake_redis.xrange, app.json.response

    def counted_xrange(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() in polling:
            reads.append(str(args[0]))
        return xrange(*args, **kwargs)

    def counted_response(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() in polling:
            encodings.append(threading.get_ident())
        return respond(*args, **kwargs)

    monkeypatch.setattr(fake_redis, "xrange", counted_xrange)
    monkeypatch.setattr(app.json, "response", counted_response)
    bodies: list[bytes] = []

    def long_poll() -> None:
        polling.add(threading.get_ident())
        answer = app.test_client().get(f"/v1/games/{created['id']}/events?after={version}&wait=10")
        assert answer.status_code == 200 and answer.mimetype == "application/json"
        bodies.append(answer.get_data())

    threads = [threading.Thread(target=long_poll) for _ in range(LONG_POLLS)]
    for thread in threads:
        thread.start()
    wait_for_waiters(app, 1 + LONG_POLLS)
    reveal(client, created, 1)
    for thread in threads:
        thread.join(10)
    expected = client.get(f"/v1/games/{created['id']}/events?after={version}").get_data()
    assert bodies == [expected] * LONG_POLLS
    assert len(flask.json.loads(expected)["events"]) == 1
    assert reads == []  # answered from the feed: no XRANGE of their own
    assert len(encodings) == 1  # one body for all of them


def test_every_stream_of_a_game_is_handed_the_same_bytes_for_a_batch(
    client: FlaskClient, kept_feed: tuple[dict[str, Any], int]
) -> None:
    created, version = kept_feed
    chunks: list[list[bytes]] = [[], []]

    def read(into: list[bytes]) -> None:
        response = client.application.test_client().get(
            f"/v1/games/{created['id']}/stream?after={version}", buffered=False
        )
        for chunk in response.response:
            assert isinstance(chunk, bytes)
            if not chunk.startswith(b":"):  # heartbeats aside
                into.append(chunk)
                break
        response.close()

    threads = [threading.Thread(target=read, args=(into,)) for into in chunks]
    for thread in threads:
        thread.start()
    wait_for_waiters(client.application, 3)
    reveal(client, created, 1)
    for thread in threads:
        thread.join(10)
    first, second = chunks[0][0], chunks[1][0]
    assert first.startswith(f"id: {version + 1}\n".encode())
    assert first is second  # encoded once, written to both


def test_a_long_batch_is_encoded_for_its_waiter_alone_and_not_kept(
    app: flask.Flask, kept_feed: tuple[dict[str, Any], int]
) -> None:
    """A waiter far behind gets its own encoding: the feed keeps only short batches, so that a process's
    memory holds no copies of whole games."""
    created, _ = kept_feed
    with app.app_context():
        hub = watchers()
    records = [{"seq": seq, "hash": f"h{seq}"} for seq in range(1, followers.SHARED_BATCH + 2)]
    encodings: list[int] = []

    def encode(batch: list[dict[str, Any]]) -> bytes:
        encodings.append(len(batch))
        return b"x"

    for _ in range(2):
        hub.encoded(created["id"], "events", records, encode)
        hub.encoded(created["id"], "events", records[: followers.SHARED_BATCH], encode)
    assert encodings == [len(records), followers.SHARED_BATCH, len(records)]
