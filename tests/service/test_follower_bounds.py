"""Watchers are bounded: a process follows at most FOLLOWED_GAMES_MAX games at once (one Redis
connection each), and one client holds at most WATCHES_PER_CLIENT open streams and long-polls in it.
(The lock-out of Redis they prevent is forced on a real redis-server in
tests/integration/test_follower_bounds.py.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem
from tests.service.test_shared_delivery import wait_for_waiters

TWO_HUMANS = [{"kind": "human"}, {"kind": "human"}]
HELD = 2


@pytest.fixture
def bounded(fake_redis: fakeredis.FakeRedis) -> flask.Flask:
    """The app following at most HELD games, each client holding at most HELD watches."""
    dispatcher = RecordingDispatcher()
    settings = {"TESTING": True, "FOLLOWED_GAMES_MAX": HELD, "WATCHES_PER_CLIENT": HELD}
    app = create_app(settings, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = app.extensions["games"]
    return app


def long_polls(client: FlaskClient, paths: list[str], answers: list[Any], address: str) -> list[threading.Thread]:
    """One long-poll of 2 s per path from `address`, each in a thread of its own; answers collected."""

    def poll(path: str) -> None:
        answers.append(client.get(path, environ_base={"REMOTE_ADDR": address}))

    threads = [threading.Thread(target=poll, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    return threads


@pytest.fixture
def held(bounded: flask.Flask) -> Iterator[tuple[FlaskClient, list[dict[str, Any]]]]:
    """HELD long-polls of one client (10.0.0.1) waiting on HELD games; a third game not followed."""
    client = bounded.test_client()
    games = [create_golf(client, TWO_HUMANS) for _ in range(HELD + 1)]
    answers: list[Any] = []
    paths = [f"/v1/games/{game['id']}/events?after={game['version']}&wait=2" for game in games[:HELD]]
    threads = long_polls(client, paths, answers, "10.0.0.1")
    wait_for_waiters(bounded, HELD)
    yield client, games
    for thread in threads:
        thread.join()
    assert [answer.status_code for answer in answers] == [200] * HELD


def test_a_client_past_its_open_watches_is_429_until_one_ends(
    held: tuple[FlaskClient, list[dict[str, Any]]],
) -> None:
    client, games = held
    one = {"REMOTE_ADDR": "10.0.0.1"}
    for path in (
        f"/v1/games/{games[0]['id']}/events?after={games[0]['version']}&wait=1",
        f"/v1/games/{games[0]['id']}/stream",
    ):
        refused = client.get(path, environ_base=one)
        body = assert_problem(refused, 429, "rate_limited")
        assert "open streams and long-polls per client" in body["detail"]
        assert refused.headers["Retry-After"] == "5"
    # a read without waiting holds nothing, and another client is not counted with this one
    assert client.get(f"/v1/games/{games[0]['id']}/events?after=0", environ_base=one).status_code == 200
    other = client.get(
        f"/v1/games/{games[0]['id']}/events?after={games[0]['version']}&wait=0.1",
        environ_base={"REMOTE_ADDR": "10.0.0.2"},
    )
    assert other.status_code == 200


def test_a_game_past_the_processs_followed_games_is_503_and_its_ticket_is_not_spent(
    held: tuple[FlaskClient, list[dict[str, Any]]], fake_redis: fakeredis.FakeRedis
) -> None:
    client, games = held
    extra = games[HELD]
    another = {"REMOTE_ADDR": "10.0.0.2"}
    refused = client.get(f"/v1/games/{extra['id']}/events?after={extra['version']}&wait=1", environ_base=another)
    assert_problem(refused, 503, "followers_full")
    assert refused.headers["Retry-After"] == "5"
    game = f"/v1/games/{extra['id']}"
    ticket = client.post(f"{game}/stream-tickets", headers=auth(extra["seats"][0]["token"])).get_json()["ticket"]
    assert_problem(client.get(f"{game}/stream?ticket={ticket}", environ_base=another), 503, "followers_full")
    assert fake_redis.keys(f"game:{{{extra['id']}}}:ticket:*"), "the refused stream spent its ticket"
    # a game already followed takes another waiter
    followed = client.get(
        f"/v1/games/{games[0]['id']}/events?after={games[0]['version']}&wait=0.1", environ_base=another
    )
    assert followed.status_code == 200


def test_a_closed_stream_gives_its_clients_watch_back(bounded: flask.Flask) -> None:
    client = bounded.test_client()
    game = create_golf(client, TWO_HUMANS)
    one = {"REMOTE_ADDR": "10.0.0.1"}
    streams = [client.get(f"/v1/games/{game['id']}/stream", environ_base=one, buffered=False) for _ in range(HELD)]
    assert [stream.status_code for stream in streams] == [200] * HELD
    refused = client.get(f"/v1/games/{game['id']}/stream", environ_base=one, buffered=False)
    refused.close()  # a stream answered 200 (unbounded) ends here instead of being read for good
    assert refused.status_code == 429
    streams[0].close()
    again = client.get(f"/v1/games/{game['id']}/stream", environ_base=one, buffered=False)
    assert again.status_code == 200
    for stream in (again, *streams[1:]):
        stream.close()
