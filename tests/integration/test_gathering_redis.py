"""Writes gathered into one pipeline (service/storage/gathering.py) on a real redis-server and on a Redis Cluster,
where the gathered commands' keys hash to slots on several masters."""

from __future__ import annotations

import pytest

from service.storage import keys
from service.storage.bot_registry import BotRegistry
from service.storage.game_counts import GameCounts
from service.storage.game_index import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY, GameIndex
from service.storage.gathering import Gathering
from service.storage.turn_queue import WAITING_KEY, WaitingIndex
from tests.integration.conftest import store_client

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("where", ["redis_url", "cluster_url"])
def test_a_games_notes_gathered_land_on_every_master(where: str, request: pytest.FixtureRequest) -> None:
    client, other = store_client(request.getfixturevalue(where)), store_client(request.getfixturevalue(where))
    assert isinstance(client, Gathering)
    index, waiting, counts = GameIndex(client), WaitingIndex(client), GameCounts(client)
    bots = BotRegistry(client)
    client.hset(keys.bot("gathered-bot"), "playing", 0)
    games = [f"gathered-{where}-{n}" for n in range(12)]  # ids over many slots
    for game_id in games:
        client.zadd(WAITING_KEY, {game_id: 4})
    client.script_flush()  # as after a restart: the scripts are loaded again where they are missing
    with client.gathering() as gathered:
        for game_id in games:
            gathered.mark(f"notes of {game_id}")
            index.started(game_id, 1.0)
            index.ended(game_id, 2.0)
            waiting.settle(game_id, 4)
            counts.count_game("golf", "finished")
            bots.count("gathered-bot", "played", 1)
        assert other.zscore(FINISHED_KEY, games[0]) is None, "not sent before the block ends"
    assert gathered.failures == []
    for game_id in games:
        assert client.zscore(FINISHED_KEY, game_id) == 2.0
        assert client.zscore(UNPACKED_KEY, game_id) == 2.0
        assert client.zscore(ACTIVE_KEY, game_id) is None
        assert client.zscore(WAITING_KEY, game_id) is None
    assert int(client.hget(keys.bot("gathered-bot"), "played") or 0) == len(games)
