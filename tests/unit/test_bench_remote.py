"""The pure parts of the bench's registered-bot figures: the bots' names and seats, and the count of waiting
bots read from /metrics."""

from __future__ import annotations

import re
from typing import Any

import prometheus_client
import pytest

from bench import openloop, registered
from service.api.bot_routes import NAME_PATTERN


def record(at: str, actor: Any, **extra: Any) -> dict[str, Any]:
    return {"at": at, "actor": actor, **extra}


def test_bot_names_are_names_the_service_takes() -> None:
    names = registered.bot_names("waiting", 1000)
    assert len(set(names)) == 1000
    assert all(re.fullmatch(NAME_PATTERN, name) for name in names)


def test_no_bot_sits_twice_in_a_game_and_each_plays_each_seat_as_often() -> None:
    bots = registered.bot_names("bridge", 4)
    games = registered.seatings(bots, 4, 48)
    assert all(len(set(seats)) == 4 for seats in games)
    for seat in range(4):
        assert sorted(game[seat] for game in games) == sorted(bots * 12)


def test_seating_more_seats_than_bots_is_refused() -> None:
    with pytest.raises(ValueError, match="4 seats need 4 bots"):
        registered.seatings(["a-bot", "b-bot", "c-bot"], 4, 1)


def test_the_waiting_bots_are_read_from_the_services_metrics_page() -> None:
    registry = prometheus_client.CollectorRegistry()
    gauge = prometheus_client.Gauge("cardtable_watchers_open", "watchers", ["kind"], registry=registry)
    gauge.labels("stream").set(7)
    assert openloop.bots_waiting(prometheus_client.generate_latest(registry)) is None  # no bot has waited yet
    gauge.labels("bot_turns").set(3)
    gauge.labels("bot_stream").set(2)
    assert openloop.bots_waiting(prometheus_client.generate_latest(registry)) == 5
    gauge.labels("bot_turns").set(0)
    gauge.labels("bot_stream").set(0)
    assert openloop.bots_waiting(prometheus_client.generate_latest(registry)) == 0
