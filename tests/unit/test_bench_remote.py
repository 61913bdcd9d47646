"""The pure parts of the bench's registered-bot figures: a turn's dispatch latency from the two clocks, the
turns counted in a window, the bots' names and seats, and the count of waiting bots read from /metrics."""

from __future__ import annotations

import re
from typing import Any

import prometheus_client
import pytest

from bench import openloop, registered, remote
from bench.records import record_time
from service.api.bot_routes import NAME_PATTERN


def test_a_turn_is_timed_from_its_moves_answer_and_one_never_received_counts_as_the_timeout() -> None:
    answered = {"g:3": 10.0, "g:7": 20.0, "h:4": 30.0}
    received = {"g:3": 10.004, "g:7": 19.999, "other:1": 1.0}  # g:7 came before its answer was read
    latencies, early, missing = remote.dispatch_latencies(answered, received, missing=10.0)
    assert latencies == [pytest.approx(0.004), 0.0, 10.0]
    assert (early, missing) == (1, 1)


def record(at: str, actor: Any, **extra: Any) -> dict[str, Any]:
    return {"at": at, "actor": actor, **extra}


def test_the_turns_in_the_window_are_the_seats_own_and_a_timeouts_are_counted_apart() -> None:
    game = [
        record("2026-12-04T10:00:00.000Z", "system"),  # a deal: no seat's turn
        record("2026-12-04T10:00:01.000Z", 0),
        record("2026-12-04T10:00:02.000Z", 1),
        record("2026-12-04T10:00:03.000Z", "system", seat=0, reason="turn_timeout"),
        record("2026-12-04T10:00:09.000Z", 1),  # after the window
    ]
    other = [record("2026-12-04T10:00:00.500Z", 2), record("2026-12-04T10:00:02.500Z", True)]
    start = record_time(record("2026-12-04T10:00:00.500Z", 0))
    assert remote.turns_between([game, other], start, start + 3) == (3, 1)


def test_a_turn_that_came_long_after_the_turn_before_it_in_its_game_is_counted() -> None:
    game = [
        record("2026-12-04T10:00:00.000Z", 0),
        record("2026-12-04T10:00:05.000Z", "system"),  # no seat's turn: not the turn before
        record("2026-12-04T10:00:05.100Z", 1),  # 5.1 s after seat 0's
        record("2026-12-04T10:00:05.200Z", 0),
        record("2026-12-04T10:00:20.000Z", 1),  # after the window
    ]
    start = record_time(record("2026-12-04T10:00:01.000Z", 0))
    assert remote.waits_over([game], 4.0, start, start + 10) == 1
    assert remote.waits_over([game], 6.0, start, start + 30) == 1
    assert remote.waits_over([game], 4.0, start + 5, start + 10) == 0


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


def test_the_waiting_bots_and_the_games_watchers_are_read_from_the_services_metrics_page() -> None:
    registry = prometheus_client.CollectorRegistry()
    gauge = prometheus_client.Gauge("cardtable_watchers_open", "watchers", ["kind"], registry=registry)
    gauge.labels("stream").set(7)

    def counted(kinds: tuple[str, ...]) -> float | None:
        return openloop.watchers_open(prometheus_client.generate_latest(registry), kinds)

    assert counted(openloop.BOT_KINDS) is None  # no bot has waited yet
    gauge.labels("bot_turns").set(3)
    gauge.labels("bot_stream").set(2)
    assert counted(openloop.BOT_KINDS) == 5
    gauge.labels("bot_turns").set(0)
    gauge.labels("bot_stream").set(0)
    assert counted(openloop.BOT_KINDS) == 0
    gauge.labels("longpoll").set(4)
    assert counted(openloop.GAME_KINDS) == 11
