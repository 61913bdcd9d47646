"""Long-polls on many games never take Redis's last connections.

Each followed game holds one blocking XREAD, one connection, for as long as it is followed. Before the
bound, a process followed as many games as it was asked to (its reader pool was 10,000, Redis's default
`maxclients`): long-polls on enough games took every connection Redis would accept, and a worker (or
any process) that then connected was refused. Forced here on a redis-server with `maxclients` 16 and
20 long-polls on 20 games, started one after the other, against an app bounded to FOLLOWED_GAMES_MAX 4.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import redis

from service.app import create_app
from tests.conftest import RecordingDispatcher, create_golf
from tests.integration.conftest import start_redis, stop, wait_until

pytestmark = pytest.mark.integration

MAX_CLIENTS = 16
GAMES = 20
FOLLOWED = 4


def test_long_polls_on_more_games_than_redis_takes_clients_leave_it_connections(tmp_path: Path) -> None:
    process, port = start_redis(tmp_path, "--maxclients", str(MAX_CLIENTS))
    try:
        url = f"redis://127.0.0.1:{port}/0"
        dispatcher = RecordingDispatcher()
        settings = {"TESTING": True, "REDIS_URL": url, "QUEUE_REDIS_URL": None, "FOLLOWED_GAMES_MAX": FOLLOWED}
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.service = app.extensions["games"]
        client = app.test_client()
        games = [create_golf(client, [{"kind": "human"}, {"kind": "human"}]) for _ in range(GAMES)]
        hub = app.extensions["watchers"]
        answers: list[Any] = []

        def poll(game: dict[str, Any]) -> None:
            answers.append(client.get(f"/v1/games/{game['id']}/events?after={game['version']}&wait=4"))

        threads = [threading.Thread(target=poll, args=(game,)) for game in games]
        for started, thread in enumerate(threads, 1):
            thread.start()  # one at a time: the requests' own store connections are then few, and reused
            wait_until(lambda n=started: len(answers) + hub.waiting() == n, 10, "the long-poll answered or waiting")
        newcomer = redis.Redis(port=port, socket_timeout=2)
        try:
            assert newcomer.ping(), "a new connection (a worker's, say) was refused: the watchers hold them all"
        finally:
            newcomer.close()
        for thread in threads:
            thread.join()
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [200] * FOLLOWED + [503] * (GAMES - FOLLOWED)
        refused = [answer.get_json() for answer in answers if answer.status_code == 503]
        assert {body["code"] for body in refused} == {"followers_full"}
    finally:
        stop(process)
