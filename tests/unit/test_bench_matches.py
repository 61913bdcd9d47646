"""The pure parts of the bench's match figures: the moves a second of a match's games, and the match it starts."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench import matches, openloop
from bench.report import Target


def record(at: str, actor: Any, **extra: Any) -> dict[str, Any]:
    return {"at": at, "actor": actor, **extra}


def test_the_moves_are_the_seats_own_from_the_first_to_the_last_over_every_game() -> None:
    game = [
        record("2026-12-04T10:00:00.000Z", "system"),  # the deal: no move
        record("2026-12-04T10:00:01.000Z", 0),
        record("2026-12-04T10:00:02.000Z", 1),
        record("2026-12-04T10:00:02.500Z", "system", seat=0, reason="turn_timeout"),  # played for a seat
        record("2026-12-04T10:00:30.000Z", "system"),  # the seed revealed, long after
    ]
    other = [record("2026-12-04T10:00:03.000Z", 2), record("2026-12-04T10:00:05.000Z", 3)]
    moves, rate = matches.moves_per_second([game, other])
    assert moves == 4
    assert rate == pytest.approx(1.0)  # 4 moves over 4 s


def test_fewer_than_two_moments_give_no_rate() -> None:
    moves, rate = matches.moves_per_second([[record("2026-12-04T10:00:01.000Z", 0)], []])
    assert moves == 1 and math.isnan(rate)
    moves, rate = matches.moves_per_second([[record("2026-12-04T10:00:01Z", 0), record("2026-12-04T10:00:01Z", 1)]])
    assert moves == 2 and math.isnan(rate)


def test_the_match_is_greedy_against_random_on_one_round_of_golf_each_entrant_once() -> None:
    body = matches.match_body(200)
    entrants = [{"level": "greedy"}, {"level": "random"}]
    assert body == {"game": "golf", "options": {"rounds": 1}, "entrants": entrants, "deals": 200}


def test_the_match_figure_is_the_median_window_beside_it_against_the_median_window_without() -> None:
    latencies = [0.001 * n for n in range(1, 101)]  # the last window beside
    alone = [10.0, 40.0, 15.0, 12.0]  # before the match, between its windows and after the last
    windows = openloop.MatchWindows(beside=[30.0, 12.0, 18.0], alone=alone, finished=250, total=400)
    crowded = openloop.Crowded(latencies, 200, [], "cores used: API 0.80", client_cpu=0.12, found=windows)
    figure = openloop._match_figure(crowded)
    assert (figure.name, figure.value, figure.floor) == ("actions_p99_ms_open50_match", 18.0, 13.5)
    assert figure.target == Target("<=", 1.5)
    assert (
        "250 of its 400 games" in figure.note
        and "beside 30.0/12.0/18.0 ms, without 10.0/40.0/15.0/12.0 ms" in figure.note
    )
