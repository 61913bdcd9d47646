"""`simulate --duplicate`: every deal played once per rotation of the players, and the paired statistics."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from domain import engine
from domain.duplicate_deals import mean_interval
from workers import simulate
from workers.simulate_results import GameOutcome, duplicate_tally

ROOT = Path(__file__).resolve().parents[2]
ONE_HAND = {"golf": {"rounds": 1}, "romme": {"target": 1}, "switch": {"target": 1}, "go5": {"target": 1}}


def test_every_rotation_of_a_deal_plays_the_same_first_cards(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    played: list[tuple[list[str], str]] = []
    dealt: list[dict[str, Any]] = []
    play_game, start = simulate.play_game, engine.start

    def recording_play(game_id: str, levels: list[str], *rest: Any) -> GameOutcome:
        played.append((list(levels), rest[1]))
        return play_game(game_id, levels, *rest)

    def recording_start(config: engine.GameConfig) -> tuple[engine.Snapshot[Any], list[Any]]:
        snap, events = start(config)
        dealt.append(engine.full_view(snap))
        return snap, events

    monkeypatch.setattr(simulate, "play_game", recording_play)
    monkeypatch.setattr(engine, "start", recording_start)
    args = ["--game", "golf", "--games", "3", "--seats", "greedy,random,random", "--options", '{"rounds": 1}']
    assert simulate.main([*args, "--duplicate", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)

    assert summary["duplicate"] is True and summary["deals"] == 3 and summary["games"] == 9 and summary["hands"] == 9
    assert len(played) == len(dealt) == 9
    groups = [range(d * 3, d * 3 + 3) for d in range(3)]
    for group in groups:
        assert len({played[i][1] for i in group}) == 1, "one seed for the whole group"
        assert all(dealt[i] == dealt[group[0]] for i in group), "the same cards dealt in every rotation"
        seatings = [played[i][0] for i in group]
        assert sorted(seatings) == sorted([["greedy", "random", "random"], ["random", "greedy", "random"],
                                           ["random", "random", "greedy"]])  # fmt: skip
    grids = [dealt[i]["table"]["grids"] for i in (0, 3, 6)]
    assert all(slot["card"] for grid in grids[0] for slot in grid["slots"]), "the first cards are dealt"
    assert grids[0] != grids[1] != grids[2], "each deal its own cards"


@pytest.mark.parametrize("game_id", sorted(ONE_HAND))
def test_points_per_hand_are_the_round_scores_the_totals_add(game_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    """With one hand a game, the points per hand (the game's round scoring event) are the game's totals."""
    game = engine.get_game(game_id)
    seats = ",".join(["greedy"] + ["random"] * (game.min_players - 1))
    options = json.dumps(ONE_HAND[game_id])
    args = ["--game", game_id, "--games", "2", "--seats", seats, "--options", options, "--duplicate"]
    assert simulate.main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["points_per_hand_better"] == ("lower" if game.lowest_wins else "higher")
    assert summary["hands"] == summary["games"] == 2 * game.min_players
    for seat in summary["seats"]:
        assert seat["mean_points_per_hand"] == pytest.approx(seat["mean_score"])
        assert seat["hand_wins"] == seat["wins"], "one hand a game: its winners are the game's"
    greedy, random_ = summary["seats"][:2]
    assert greedy["paired_diff_ci95"][0]["mean"] == pytest.approx(-random_["paired_diff_ci95"][0]["mean"])


def hand_made_run() -> list[GameOutcome]:
    """Players a and b, three deals, two rotations each (game 2d: a at seat 0; game 2d + 1: b at seat 0).

    Points per hand, by player:  deal 0: a 3, 2 / b 5, 4          -> a 2.5, b 4.5: a - b = -2
                                 deal 1: a 1, 2 / b 8, 3          -> a 1.5, b 5.5: a - b = -4
                                 deal 2: a 2, 4, 5 / b 4, 2, 5    -> a 11/3, b 11/3: a - b = 0
    """
    return [
        GameOutcome((3, 5), (0,), 1, 10, ((3, 5),)),
        GameOutcome((4, 2), (1,), 1, 10, ((4, 2),)),
        GameOutcome((1, 8), (0,), 1, 10, ((1, 8),)),
        GameOutcome((3, 2), (1,), 1, 10, ((3, 2),)),
        GameOutcome((6, 6), (0, 1), 2, 10, ((2, 4), (4, 2))),
        GameOutcome((5, 5), (0, 1), 1, 10, ((5, 5),)),
    ]


def test_paired_statistics_of_a_hand_made_run() -> None:
    summary = duplicate_tally("golf", ["a", "b"], hand_made_run(), 1.0, lowest_wins=True)
    a, b = summary["seats"]
    assert (summary["deals"], summary["games"], summary["hands"]) == (3, 6, 7)
    # a's points 3 2 1 2 2 4 5 = 19 over 7 hands; b's 5 4 8 3 4 2 5 = 31
    assert a["mean_points_per_hand"] == pytest.approx(19 / 7) and b["mean_points_per_hand"] == pytest.approx(31 / 7)
    # differences per deal -2, -4, 0: mean -2, sample deviation 2, margin 1.96 * 2 / sqrt(3) = 2.2632
    ((a_vs_b),) = a["paired_diff_ci95"]
    assert a_vs_b["seat"] == 1 and a_vs_b["level"] == "b" and a_vs_b["mean"] == pytest.approx(-2)
    assert a_vs_b["ci95"] == pytest.approx([-4.2632, 0.2632], abs=1e-4)
    assert b["paired_diff_ci95"][0]["ci95"] == pytest.approx([-0.2632, 4.2632], abs=1e-4)
    # hands won (lowest points, ties shared): a all but the (4, 2) of game 4, b that one and the tie
    assert (a["hand_wins"], b["hand_wins"]) == (6, 2)
    assert a["hand_win_rate"] == pytest.approx(6 / 7) and a["hand_ci95"][0] < 6 / 7 < a["hand_ci95"][1]
    assert (a["wins"], b["wins"]) == (6, 2) and a["win_rate"] == 1.0


def test_deal_spreads_and_games_needed_ratio_of_a_hand_made_run() -> None:
    """Deal scores a 5/2, 3/2, 11/3 and b 9/2, 11/2, 11/3 (hand_made_run): the standard deviations over the
    deals, and var(a - b) / (var(a) + var(b)) with the paired differences' variance 4."""
    summary = duplicate_tally("golf", ["a", "b"], hand_made_run(), 1.0, lowest_wins=True)
    a, b = summary["seats"]
    var_a, var_b = 127 / 108, 91 / 108  # a: mean 23/9, squares 1/324 + 361/324 + 400/324 over 2; b alike
    assert a["deal_score_sd"] == pytest.approx(math.sqrt(var_a)) and b["deal_score_sd"] == pytest.approx(
        math.sqrt(var_b)
    )
    ((a_vs_b),) = a["paired_diff_ci95"]
    ((b_vs_a),) = b["paired_diff_ci95"]
    assert a_vs_b["sd"] == pytest.approx(2.0) and b_vs_a["sd"] == pytest.approx(2.0)
    assert a_vs_b["games_needed_ratio"] == pytest.approx(4 / (var_a + var_b)) == b_vs_a["games_needed_ratio"]
    # a minus b per game, points per hand: -2, -2, -7, -1, 0 (game 4: 3 - 3), 0: mean -2, variance 34 / 5
    assert a_vs_b["game_sd"] == pytest.approx(math.sqrt(34 / 5)) == b_vs_a["game_sd"]
    # two games a deal: 2 · 4 / (34 / 5)
    assert a_vs_b["games_needed_ratio_at_one_table"] == pytest.approx(40 / 34)


def test_one_deal_has_no_spread() -> None:
    summary = duplicate_tally("golf", ["a", "b"], hand_made_run()[:2], 1.0, lowest_wins=True)
    a, _ = summary["seats"]
    assert a["deal_score_sd"] is None
    ((a_vs_b),) = a["paired_diff_ci95"]
    assert a_vs_b["mean"] == -2.0 and a_vs_b["game_sd"] == 0.0  # both games -2
    for unmeasured in ("ci95", "sd", "games_needed_ratio", "games_needed_ratio_at_one_table"):
        assert a_vs_b[unmeasured] is None


def test_higher_points_win_hands_when_the_highest_total_wins() -> None:
    summary = duplicate_tally("go5", ["a", "b"], hand_made_run(), 1.0, lowest_wins=False)
    assert summary["points_per_hand_better"] == "higher"
    assert [seat["hand_wins"] for seat in summary["seats"]] == [2, 6]


def test_mean_interval_by_hand() -> None:
    mean, interval = mean_interval([1.0, 2.0, 6.0])
    # mean 3; deviations -2, -1, 3: variance 14 / 2 = 7; margin 1.96 * sqrt(7 / 3)
    assert mean == 3.0 and interval == pytest.approx((3 - 1.96 * math.sqrt(7 / 3), 3 + 1.96 * math.sqrt(7 / 3)))
    assert mean_interval([4.0]) == (4.0, None)


def test_the_table_says_which_way_is_better(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--game", "go5", "--games", "2", "--seats", "greedy,random", "--options", '{"target": 1}', "--duplicate"]
    assert simulate.main(args) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "higher is better" in shown and "2 deals" in shown and "paired difference" in shown


def test_duplicate_through_the_queue_is_refused_naming_both_flags(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--game", "golf", "--seats", "greedy,random", "--duplicate", "--via-queue", "http://127.0.0.1:7501"]
    assert simulate.main(args) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("simulate: --duplicate: ") and "--via-queue" in lines[0], lines


def make_simulate_command(*variables: str) -> list[str]:
    done = subprocess.run(
        ["make", "-n", "simulate", "GAME=golf", "GAMES=2", "SEATS=greedy,random", *variables],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.replace("\\\n", " ").splitlines()
    return next(line for line in lines if "workers.simulate" in line).split()


def test_make_simulate_passes_duplicate() -> None:
    assert "--duplicate" in make_simulate_command("DUPLICATE=1")
    assert "--duplicate" not in make_simulate_command()
