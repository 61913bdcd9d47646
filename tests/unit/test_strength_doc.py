"""docs/strength.md: its table agrees with the duplicate runs' JSON in docs/strength/, and each shown command runs."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from domain import engine
from domain.bots.expert import default_budget
from workers import simulate

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "strength.md"
RUNS = ROOT / "docs" / "strength"
PREFIX = ["python", "-m", "workers.simulate"]
GAME_IDS = [game.id for game in engine.all_games()]


def interval(low: float, high: float) -> str:
    return f"[{low:.1%}, {high:.1%}]"


def row(name: str, summary: dict[str, Any]) -> str:
    """The table row of one run, from its JSON summary."""
    seats = summary["seats"]
    first = seats[0]
    cells = [
        f"[{name}](strength/{name}.json)",
        summary["game"],
        ",".join(seat["level"] for seat in seats),
        budget_cell(summary.get("expert_budget")),
        str(summary["deals"]),
        str(summary["hands"]),
        summary["points_per_hand_better"],
        " / ".join(f"{seat['mean_points_per_hand']:.2f}" for seat in seats),
        "<br>".join(
            f"{diff['mean']:+.2f} [{diff['ci95'][0]:+.2f}, {diff['ci95'][1]:+.2f}]"
            for diff in first["paired_diff_ci95"]
        ),
        "<br>".join(f"{seat['hand_win_rate']:.1%} {interval(*seat['hand_ci95'])}" for seat in seats),
        "<br>".join(f"{seat['win_rate']:.1%} {interval(*seat['ci95'])}" for seat in seats),
        f"{summary['games'] / summary['games_per_second'] / 60:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


def budget_cell(budget: dict[str, Any] | None) -> str:
    """The expert's budget as the table shows it: samples a move and the time cap a move."""
    if budget is None:
        return "-"
    cap = "no time cap" if budget["think_ms"] is None else f"{budget['think_ms']} ms"
    return f"{budget['samples']} samples, {cap}"


def on_the_better_side(summary: dict[str, Any], diff: dict[str, Any]) -> bool:
    """A paired interval of the first level lies wholly on its better side of 0 (below it where lower is better)."""
    sign = -1 if summary["points_per_hand_better"] == "lower" else 1
    return min(sign * bound for bound in diff["ci95"]) > 0


def runs() -> dict[str, dict[str, Any]]:
    found = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(RUNS.glob("*.json"))}
    assert found, "no runs in docs/strength/"
    return found


def table_rows(text: str) -> dict[str, str]:
    """The table's rows by the run they name."""
    rows = re.findall(r"^\| \[([\w-]+)\]\(strength/[\w-]+\.json\) \|.*$", text, re.MULTILINE)
    lines = [line for line in text.splitlines() if line.startswith("| [")]
    assert len(rows) == len(lines), "every row names its run"
    return dict(zip(rows, lines, strict=True))


def commands(text: str) -> dict[str, list[str]]:
    """The shown command of each run, as its words."""
    shown = re.findall(r"^- `([\w-]+)`: `([^`]+)`$", text, re.MULTILINE)
    return {name: shlex.split(command) for name, command in shown}


def test_the_table_shows_every_run_as_its_json_says() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows, found = table_rows(text), runs()
    assert sorted(rows) == sorted(found), "one row for each docs/strength/*.json and no other"
    for name, summary in found.items():
        assert rows[name] == row(name, summary), f"the row of {name} should read:\n{row(name, summary)}"


def test_every_run_is_a_duplicate_run_made_by_its_shown_command() -> None:
    shown, found = commands(DOC.read_text(encoding="utf-8")), runs()
    assert sorted(shown) == sorted(found), "one command for each run"
    for name, words in shown.items():
        assert words[:3] == PREFIX and words[-2:] == [">", f"docs/strength/{name}.json"], words
        args = simulate.parse_args(words[3:-2])
        levels = args.seats.split(",")
        assert simulate.first_problem(args, levels) is None, name
        summary = found[name]
        assert args.duplicate and args.json and summary["duplicate"] is True, name
        assert (args.game, args.games, levels) == (
            summary["game"],
            summary["deals"],
            [s["level"] for s in summary["seats"]],
        )
        assert summary["games"] == args.games * len(levels) and args.jobs in (1, 2)
        if "expert" in levels:
            assert summary["expert_budget"] == simulate.budget_record(simulate.expert_budget(args)), name


def test_the_reading_holds_greedy_beats_random() -> None:
    """The doc's reading: greedy beats random in every game, each paired interval wholly on greedy's better
    side of 0 (the expert against greedy: the test of issue 27's measure below)."""
    read = {name: summary for name, summary in runs().items() if name.endswith("-greedy-random")}
    assert sorted(read) == sorted(f"{game_id}-greedy-random" for game_id in GAME_IDS)
    for name, summary in read.items():
        for diff in summary["seats"][0]["paired_diff_ci95"]:
            assert on_the_better_side(summary, diff), (name, diff)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_each_game_has_a_row_at_its_experts_default_budget(game_id: str) -> None:
    """Issue 27: the row `<game>-expert-greedy` is the expert the service plays: the game's default budget,
    timed by the clock."""
    summary = runs()[f"{game_id}-expert-greedy"]
    assert summary["game"] == game_id
    default = dataclasses.replace(default_budget(game_id), clock=time.monotonic)
    assert summary["expert_budget"] == simulate.budget_record(default)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_at_its_default_budget_the_expert_beats_every_greedy_seat_over_2000_hands(game_id: str) -> None:
    """Issue 27's measure: every paired interval between the expert and a greedy seat lies on the expert's
    side of 0 (Golf and Switch: fewer points per hand; Rommé and Go5: more)."""
    summary = runs()[f"{game_id}-expert-greedy"]
    assert summary["hands"] >= 2000
    expert, *others = summary["seats"]
    assert expert["level"] == "expert" and {seat["level"] for seat in others} == {"greedy"}
    assert len(expert["paired_diff_ci95"]) == len(others)
    for diff in expert["paired_diff_ci95"]:
        assert on_the_better_side(summary, diff), diff


def test_the_reading_holds_the_romme_expert_needs_its_budget() -> None:
    """The doc's reading: at 100 ms a move the Rommé expert leads greedy on the mean, and the interval holds 0."""
    (diff,) = runs()["romme-expert-greedy-100ms"]["seats"][0]["paired_diff_ci95"]
    assert diff["mean"] > 0 and diff["ci95"][0] < 0 < diff["ci95"][1]


def test_the_reading_holds_the_switch_expert_adds_fewer_points_than_each_greedy_seat() -> None:
    """The doc's reading, S-10: over at least 2,000 Switch hands the expert's paired interval against
    each of the three greedy seats lies wholly below 0 (fewer points per hand is better)."""
    summary = runs()["switch-expert-greedy"]
    assert summary["hands"] >= 2000 and summary["points_per_hand_better"] == "lower"
    expert, *greedy = summary["seats"]
    assert expert["level"] == "expert" and [seat["level"] for seat in greedy] == ["greedy"] * 3
    diffs = expert["paired_diff_ci95"]
    assert len(diffs) == 3
    for diff in diffs:
        assert diff["ci95"][1] < 0, diff
    assert all(expert["mean_points_per_hand"] < seat["mean_points_per_hand"] for seat in greedy)


RATIO_HEADING = "## Duplicate deals against independent deals"


def ratio_row(name: str, summary: dict[str, Any]) -> str:
    """The row of one game's ratio run in the table of duplicate against independent deals, from its JSON."""
    first, *others = summary["seats"]
    games_per_deal = len(summary["seats"])
    lines: list[list[str]] = []
    for diff in first["paired_diff_ci95"]:
        other = others[diff["seat"] - 1]
        paired, independent = diff["sd"] ** 2, first["deal_score_sd"] ** 2 + other["deal_score_sd"] ** 2
        assert diff["games_needed_ratio"] == pytest.approx(paired / independent), name
        one_game = diff["game_sd"] ** 2
        assert diff["games_needed_ratio_at_one_table"] == pytest.approx(games_per_deal * paired / one_game), name
        lines.append(
            [
                f"{first['level']} − {other['level']} (seat {other['seat']})",
                f"{paired:.1f}",
                f"{independent:.1f}",
                f"{diff['games_needed_ratio']:.2f}",
                f"{diff['games_needed_ratio']:.0%}",
                f"{one_game:.1f}",
                f"{diff['games_needed_ratio_at_one_table']:.2f}",
                f"{diff['games_needed_ratio_at_one_table']:.0%}",
            ]
        )
    cells = [summary["game"], f"[{name}](strength/{name}.json)", str(summary["deals"])]
    cells += ["<br>".join(line[column] for line in lines) for column in range(len(lines[0]))]
    return "| " + " | ".join(cells) + " |"


def ratio_table(text: str) -> dict[str, str]:
    """The rows of the table of duplicate against independent deals, by game."""
    section = text.split(RATIO_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| game ")]
    return {line.split(" | ", 1)[0].removeprefix("| "): line for line in rows if not line.startswith("|---")}


def ratio_runs() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each game's run that measures duplicate against independent deals (`<game>-expert-greedy-ratio`)."""
    return {summary["game"]: (name, summary) for name, summary in runs().items() if name.endswith("-ratio")}


def test_each_game_has_a_ratio_run_of_the_expert_against_greedy() -> None:
    """Issue 38: per game, how many games duplicate deals need to tell expert from greedy, against independent
    deals, measured by one duplicate run of the expert in the first seat and greedy in the others."""
    found = ratio_runs()
    assert sorted(found) == sorted(GAME_IDS)
    for game_id, (name, summary) in found.items():
        assert name == f"{game_id}-expert-greedy-ratio"
        expert, *others = summary["seats"]
        assert expert["level"] == "expert" and {seat["level"] for seat in others} == {"greedy"}
        assert summary["deals"] >= 200, name


def test_the_ratio_table_shows_each_games_run_as_its_json_says() -> None:
    shown, found = ratio_table(DOC.read_text(encoding="utf-8")), ratio_runs()
    assert sorted(shown) == sorted(found), "one row for each game's ratio run and no other"
    for game_id, (name, summary) in found.items():
        assert shown[game_id] == ratio_row(name, summary), (
            f"the row of {game_id} should read:\n{ratio_row(name, summary)}"
        )


def ratios(game_id: str, key: str) -> list[float]:
    """The expert's ratios against each greedy seat in a game's ratio run (`key`: which baseline)."""
    _, summary = ratio_runs()[game_id]
    return [diff[key] for diff in summary["seats"][0]["paired_diff_ci95"]]


def percent_range(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%} to {high:.0%}"


def test_the_reading_of_duplicate_against_independent_deals_holds() -> None:
    """The doc's reading of its table: duplicate deals save games in Go5 and Switch on either baseline; in Golf
    the two levels' deal scores hardly covary, so they save some at one table and none against independent
    deal scores; in Rommé they covary negatively, so they save none; each figure the reading quotes is the run's."""
    reading = " ".join(DOC.read_text(encoding="utf-8").split(RATIO_HEADING, 1)[1].split())
    apart, together = "games_needed_ratio", "games_needed_ratio_at_one_table"
    for game_id in ("go5", "switch"):
        assert max(ratios(game_id, apart) + ratios(game_id, together)) < 1, game_id
    assert f"about {percent_range(ratios('go5', apart))} of them in Go5" in reading
    assert percent_range(ratios("go5", apart)) == percent_range(ratios("go5", together))
    assert (
        f"{percent_range(ratios('switch', apart))} in Switch against independent deal scores and "
        f"{percent_range(ratios('switch', together))} against independent deals at one table"
    ) in reading
    (golf_apart,), (golf_together,) = ratios("golf", apart), ratios("golf", together)
    assert golf_apart >= 1 > golf_together >= 0.85 and f"at one table ({golf_together:.0%})" in reading
    _, golf = ratio_runs()["golf"]
    first, other = golf["seats"]
    paired, independent = (
        first["paired_diff_ci95"][0]["sd"] ** 2,
        first["deal_score_sd"] ** 2 + other["deal_score_sd"] ** 2,
    )
    assert abs(paired - independent) / independent < 0.1 and f"({independent:.1f} against {paired:.1f}" in reading
    low, high = first["paired_diff_ci95"][0]["ci95"]
    assert low < 0 < high and "in Golf the paired interval holds 0" in reading
    (romme_apart,), (romme_together,) = ratios("romme", apart), ratios("romme", together)
    assert romme_apart > 1 and 0.95 <= romme_together <= 1.15, "more than independent deal scores, about as many"
    assert f"at one table ({romme_together:.0%}) and more than independent deal scores ({romme_apart:.0%})" in reading


def four_seat_matches() -> dict[str, Any]:
    """docs/strength/matches/golf-four-seats.json: the four-seat section's matches and the ladder after them."""
    found: dict[str, Any] = json.loads((RUNS / "matches" / "golf-four-seats.json").read_text(encoding="utf-8"))
    return found


def test_the_four_seat_golf_matches_are_shown_as_their_json_says() -> None:
    """The four-seat section: per match, each entrant's points per hand and its paired difference with greedy;
    the ladder after both, by ordinal; and the order issue 38 asks of it, random < greedy < expert."""
    run = four_seat_matches()
    text = DOC.read_text(encoding="utf-8").split("## Golf at four seats")[1]
    for number, match in enumerate(run["matches"], start=1):
        for result in match["results"]:
            versus = [pair for pair in result["paired"] if pair["vs"] == "greedy"]
            diff = "-" if not versus else "{:+.2f} [{:+.2f}, {:+.2f}]".format(versus[0]["mean"], *versus[0]["ci95"])
            line = f"| {number} | {result['entrant']} | {result['mean_points_per_hand']:.2f} | {diff} |"
            assert line in text, line
    ladder = run["ladder"]["ladder"]
    for place, entry in enumerate(ladder, start=1):
        rating = f"{entry['rating']['ordinal']:.2f}"
        line = f"| {place} | {entry['entrant']} | {rating} | {entry['matches']} | {entry['deals']} |"
        assert line in text, line
    order = [entry["entrant"] for entry in ladder]
    assert order.index("expert") < order.index("greedy") < order.index("random"), order

    def pair(match: dict[str, Any], entrant: str, versus: str) -> dict[str, Any]:
        (result,) = [r for r in match["results"] if r["entrant"] == entrant]
        (found,) = [p for p in result["paired"] if p["vs"] == versus]
        return dict(found)

    for match in run["matches"]:
        assert pair(match, "expert", "random")["ci95"][1] < 0, "the expert beats random, clear of 0"
        low, high = pair(match, "bot:remote-greedy", "greedy")["ci95"]
        assert low <= 0 <= high, "the remote greedy and the house greedy are not told apart"
    points = [{r["entrant"]: r["mean_points_per_hand"] for r in match["results"]} for match in run["matches"]]
    first, second = points
    assert first["greedy"] < first["bot:remote-greedy"] and second["greedy"] > second["bot:remote-greedy"]
    assert all(r["timeouts"] == 0 for match in run["matches"] for r in match["results"]), "no move at a deadline"
    leads = [-pair(match, "expert", "greedy")["mean"] for match in run["matches"]]
    assert "lead over greedy grew from {:.2f} to {:.2f} points".format(*leads) in " ".join(text.split())


def test_the_four_seat_match_commands_are_taken_by_the_bridge_and_the_match_cli() -> None:
    """The section's two commands parse, and the match's request is the run's game, entrants, deals and seed."""
    from workers import match as match_cli
    from workers.bridge.__main__ import parse_args as bridge_args

    runs = four_seat_matches()["matches"]
    section = DOC.read_text(encoding="utf-8").split("## Golf at four seats")[1]
    lines = [line for line in section.splitlines() if line.startswith("python -m workers.")]
    bridge, *matches = (shlex.split(line.replace("<the bot's token>", "TOKEN"))[3:] for line in lines)
    assert bridge_args(bridge).level == "greedy"
    assert len(matches) == len(runs)
    for match, run in zip(matches, runs, strict=True):
        request = match_cli.request_of(match_cli.parse_args(match))
        assert isinstance(request, dict)
        shown = {key: request[key] for key in ("game", "options", "entrants", "deals", "seed")}
        assert shown == {key: run[key] for key in shown}


def test_the_neighbours_run_is_read_as_its_json_says() -> None:
    """The four-seat section's reading of golf-four-seats-neighbours: the greedy seat after `random` (player 1)
    against the greedy seat after the expert (player 3), per deal, with its interval clear of 0."""
    summary = runs()["golf-four-seats-neighbours"]
    assert [seat["level"] for seat in summary["seats"]] == ["random", "greedy", "expert", "greedy"]
    (diff,) = [d for d in summary["seats"][1]["paired_diff_ci95"] if d["seat"] == 3]
    low, high = diff["ci95"]
    assert high < 0, "the seat after random scores fewer points, clearly"
    shown = (
        f"scored {-diff['mean']:.2f} points a hand fewer than the greedy seat after the expert "
        f"([{low:+.2f}, {high:+.2f}])"
    )
    section = DOC.read_text(encoding="utf-8").split("## Golf at four seats")[1]
    assert shown in " ".join(section.split()), shown
