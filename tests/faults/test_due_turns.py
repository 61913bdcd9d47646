"""Bot turns and turn timeouts go through the same append (issue 28, item 1): when its reply is lost,
the move is applied once and the job knows it played (before the fix the driver's resend met a
conflict: the job took its own move for someone else's and said `conflict` or `stale`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from domain import engine
from service.play.seats import controller_of
from service.storage.event_store import _APPEND
from tests.faults.conftest import Proxied
from tests.faults.redis_proxy import Fault, FaultPlan, RedisProxy, Rule
from tests.service.helpers import stream_entries

pytestmark = pytest.mark.integration


def stored_actors(upstream: redis.Redis, game_id: str, after: int) -> list[Any]:
    """The actor of each stored record after `after`."""
    return [json.loads(fields["e"])["actor"] for _, fields in stream_entries(upstream, game_id)][after:]


def lose_the_next_append_reply(proxy: RedisProxy) -> None:
    proxy.plan = FaultPlan(7, [Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, limit=1)])


def test_a_bot_turn_whose_reply_is_lost_is_played_once(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    created = proxied.create({"game": "golf", "seats": [{"kind": "bot", "level": "greedy"}, {"kind": "human"}]})
    games = proxied.app.extensions["games"]
    loaded = games.repository.load(created["id"])
    action = controller_of(loaded.seats[0]).decide(loaded.snap, 0, games.think_ms_max)
    expected = len(engine.act(loaded.snap, 0, action)[1])
    lose_the_next_append_reply(proxy)
    assert proxied.dispatcher.drain(limit=1) == ["played"]
    assert proxy.plan.count(Fault.REPLY_LOST) == 1
    assert stored_actors(upstream, created["id"], created["version"]) == [0] * expected


def test_a_turn_timeout_whose_reply_is_lost_is_played_once(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    created = proxied.create({"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}], "turn_seconds": 5})
    lose_the_next_append_reply(proxy)
    timeouts = list(proxied.dispatcher.timeouts)
    assert timeouts == [(created["id"], created["version"])]
    assert proxied.dispatcher.fire_timeouts() == ["played"]
    assert proxy.plan.count(Fault.REPLY_LOST) == 1
    games = proxied.app.extensions["games"]
    assert games.repository.load(created["id"]).version == len(stream_entries(upstream, created["id"]))
    assert "system" in stored_actors(upstream, created["id"], created["version"])
