"""The simulation CLI end to end (in-process, no Redis)."""

from __future__ import annotations

import json

import pytest

from workers import simulate


def test_wilson_interval_matches_known_values() -> None:
    low, high = simulate.wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert simulate.wilson_interval(0, 10)[0] == 0.0
    assert simulate.wilson_interval(10, 10)[1] == 1.0


def test_cli_json_reports_every_seat_and_greedy_beats_random(capsys: pytest.CaptureFixture[str]) -> None:
    code = simulate.main(
        ["--game", "golf", "--games", "20", "--seats", "greedy,random", "--options", '{"rounds": 1}', "--json"]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["game"] == "golf" and summary["games"] == 20
    assert [s["level"] for s in summary["seats"]] == ["greedy", "random"]
    greedy, random_ = summary["seats"]
    assert greedy["wins"] + random_["wins"] >= 20, "every game has at least one winner"
    assert greedy["win_rate"] > random_["win_rate"]
    assert greedy["ci95"][0] <= greedy["win_rate"] <= greedy["ci95"][1]
    assert greedy["mean_score"] < random_["mean_score"], "Golf: lower is better"
    assert summary["rounds_per_game"] == 1 and summary["turns_per_game"] > 0 and summary["games_per_second"] > 0


def test_same_seed_same_result(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--game", "golf", "--games", "4", "--seats", "random,random,random", "--options", '{"rounds": 1}', "--json"]
    simulate.main(args)
    first = json.loads(capsys.readouterr().out)
    simulate.main(args)
    second = json.loads(capsys.readouterr().out)
    assert first["seats"] == second["seats"]


@pytest.mark.parametrize(
    "args",
    [
        ["--game", "golf", "--seats", "greedy,nobody"],
        ["--game", "nogame", "--seats", "random,random"],
        ["--game", "golf", "--seats", "random"],
        ["--game", "golf", "--seats", "random,random", "--options", "[1]"],
        ["--game", "golf", "--seats", "random,random", "--options", '{"rounds": 99}'],
    ],
)
def test_bad_arguments_exit_2_with_a_message(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate.main(args) == 2
    assert capsys.readouterr().err.startswith("simulate: ")
