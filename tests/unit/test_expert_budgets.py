"""Each game's expert has a default budget in its bot module, and every caller plays that one (issue 27):
the service's bot turns, `simulate` and the strength docs."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from domain import engine
from domain.bots import expert, policy_for
from domain.bots.expert import Budget, budget_for, default_budget
from domain.shuffle import SeededStream
from workers import simulate

GAMES = [game.id for game in engine.all_games()]


@pytest.mark.parametrize("game_id", GAMES)
def test_every_game_names_its_experts_default_budget(game_id: str) -> None:
    """The game's bot module holds EXPERT_BUDGET, a Budget without a clock (the domain reads none)."""
    budget = default_budget(game_id)
    assert isinstance(budget, Budget) and budget.clock is None
    assert budget.samples >= 1 and expert.THINK_MS_RANGE[0] <= budget.think_ms <= expert.THINK_MS_RANGE[1]


def test_the_games_budgets_are_their_own() -> None:
    """Switch's rollouts are short, so its expert samples more in less time than Golf's (docs/strength.md)."""
    assert (default_budget("switch").samples, default_budget("switch").think_ms) == (48, 100)
    assert (default_budget("golf").samples, default_budget("golf").think_ms) == (24, 300)


@pytest.mark.parametrize("game_id", GAMES)
def test_an_expert_without_a_budget_plays_its_games_default(game_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`policy_for(game, "expert")` searches with the game's default budget."""
    seen: list[Budget] = []

    def search(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream, budget: Budget) -> Any:
        seen.append(budget)
        return dict(legal[0])

    monkeypatch.setattr(expert, "search", search)
    policy_for(game_id, "expert")({}, [{"type": "any"}], SeededStream("s", "t"))
    assert seen == [default_budget(game_id)]


def test_a_seats_time_budget_replaces_only_the_time_cap() -> None:
    """`budget_for`: the game's samples with the seat's think time (or the game's) and the caller's clock."""
    asked = budget_for("switch", 700, time.monotonic)
    assert asked == dataclasses.replace(default_budget("switch"), think_ms=700, clock=time.monotonic)
    assert budget_for("golf", None, time.monotonic).think_ms == default_budget("golf").think_ms


def test_simulate_plays_the_games_default_budget_with_the_clock_as_the_service_does() -> None:
    """Without flags `simulate` plays the game's default budget timed by the clock; flags change it."""
    args = simulate.parse_args(["--game", "switch", "--seats", "expert,greedy"])
    assert simulate.budget_record(simulate.expert_budget(args)) == {"samples": 48, "think_ms": 100}
    args = simulate.parse_args(["--game", "golf", "--seats", "expert,greedy", "--samples", "6", "--no-time-cap"])
    assert simulate.expert_budget(args) == dataclasses.replace(default_budget("golf"), samples=6)
    assert simulate.budget_record(simulate.expert_budget(args)) == {"samples": 6, "think_ms": None}


def test_simulate_refuses_a_time_cap_with_no_time_cap() -> None:
    args = simulate.parse_args(["--game", "golf", "--seats", "expert,greedy", "--think-ms", "50", "--no-time-cap"])
    problem = simulate.first_problem(args, ["expert", "greedy"])
    assert problem is not None and problem.startswith("--think-ms")
