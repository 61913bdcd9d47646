"""`python -m workers.simulate --via-queue URL` against gunicorn, a real redis-server and a real worker."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import redis

from tests.integration.conftest import ROOT

pytestmark = pytest.mark.integration

GAMES = 4


def game_count(redis_url: str) -> int:
    with redis.Redis.from_url(redis_url) as client:
        return sum(1 for _ in client.scan_iter("game:{*}:meta"))


def test_via_queue_plays_every_game_through_the_service_and_sums_them_up(
    api_url: str, redis_url: str, worker: subprocess.Popen[bytes]
) -> None:
    before = game_count(redis_url)
    command = [sys.executable, "-m", "workers.simulate", "--game", "golf", "--games", str(GAMES)]
    command += ["--seats", "greedy,random", "--options", '{"rounds": 1}', "--json"]
    command += ["--via-queue", api_url, "--concurrency", "4"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) == {
        "game",
        "games",
        "games_per_second",
        "rounds_per_game",
        "turns_per_game",
        "events_per_game",
        "events_max",
        "event_limit_ends",
        "seats",
    }
    assert summary["game"] == "golf" and summary["games"] == GAMES
    assert summary["rounds_per_game"] == 1 and summary["turns_per_game"] > 0 and summary["games_per_second"] > 0
    assert [(s["seat"], s["level"]) for s in summary["seats"]] == [(0, "greedy"), (1, "random")]
    wins = sum(s["wins"] for s in summary["seats"])
    assert GAMES <= wins <= 2 * GAMES, "every game has one winner or a shared win"
    for seat in summary["seats"]:
        assert seat["win_rate"] == seat["wins"] / GAMES
        assert seat["ci95"][0] <= seat["win_rate"] <= seat["ci95"][1]
        assert isinstance(seat["mean_score"], float)
    assert game_count(redis_url) == before + GAMES, "each game was created in the service"
