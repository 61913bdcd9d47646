"""The expert level: it sees only its seat's view (C-6), its worlds agree with that view, it is deterministic."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from domain import engine
from domain.bots import LEVELS, choose_action, expert
from domain.shuffle import SeededStream

TINY = expert.Budget(samples=2, think_ms=10**6, max_candidates=3, horizon=400)
GAMES = {"golf": 2, "romme": 2, "switch": 4, "go5": 2}


def decision_points(game_id: str, players: int, seed: str, limit: int) -> Iterator[tuple[engine.Snapshot[Any], int]]:
    """(snapshot, seat to act) along a greedy game, up to `limit` decisions."""
    snap, _ = engine.start(engine.make_config(game_id, players, {}, seed))
    for step in range(limit):
        if snap.finished:
            return
        seat = snap.to_act()[0]
        yield snap, seat
        legal = engine.legal_actions(snap, seat)
        action = choose_action(game_id, "greedy", engine.view(snap, seat), legal, SeededStream(seed, str(step)))
        snap, _ = engine.act(snap, seat, action)


def as_json(view: Mapping[str, Any]) -> dict[str, Any]:
    """The view as a client would receive it: a fresh JSON object with no link to any state."""
    copied: dict[str, Any] = json.loads(json.dumps(view))
    return copied


def test_expert_is_a_level_of_every_game() -> None:
    assert "expert" in LEVELS
    for game_id in GAMES:
        assert callable(importlib.import_module(f"domain.bots.{game_id}").sample_world), game_id


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_expert_information_boundary(game_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """C-6: the expert gets a JSON copy of the seat view and nothing else. Every world it builds has a
    seed of its own, looks exactly like that view to the seat, and never reproduces the real hidden
    cards (stock and other hands): it cannot reach the seed, the stock or the other hands."""
    hooks = importlib.import_module(f"domain.bots.{game_id}")
    worlds: list[engine.Snapshot[Any]] = []
    real_sampler = hooks.sample_world

    def recording_sampler(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
        world = real_sampler(view, rng)
        worlds.append(world)
        return world

    monkeypatch.setattr(hooks, "sample_world", recording_sampler)
    seed = f"boundary-{game_id}"
    decisions = same_hidden = 0
    for snap, seat in decision_points(game_id, GAMES[game_id], seed, limit=60):
        view = as_json(engine.view(snap, seat))
        assert seed not in json.dumps(view)
        worlds.clear()
        action = expert.search(view, engine.legal_actions(snap, seat), SeededStream("bot", str(snap.version)), TINY)
        assert action in engine.legal_actions(snap, seat)
        for world in worlds:
            decisions += 1
            assert world.config.seed != seed
            assert engine.view(world, seat) == engine.view(snap, seat)
            same_hidden += engine.full_view(world)["table"] == engine.full_view(snap)["table"]
    assert decisions > 0, "the expert searched no decision at all"
    assert same_hidden < decisions, "the worlds reproduce the real hidden cards"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_worlds_agree_with_the_view_and_differ_by_bot_seed(game_id: str) -> None:
    """A sampled world is the real game as far as the seat can tell: the same view, the same legal actions."""
    hooks = importlib.import_module(f"domain.bots.{game_id}")
    differing = 0
    for snap, seat in decision_points(game_id, GAMES[game_id], f"worlds-{game_id}", limit=40):
        view = as_json(engine.view(snap, seat))
        first = hooks.sample_world(view, SeededStream("one", "w"))
        second = hooks.sample_world(view, SeededStream("two", "w"))
        for world in (first, second):
            assert engine.view(world, seat) == engine.view(snap, seat)
            assert engine.legal_actions(world, seat) == engine.legal_actions(snap, seat)
        differing += engine.full_view(first)["table"] != engine.full_view(second)["table"]
    assert differing > 0, "two bot seeds gave the same hidden cards every time"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_expert_is_deterministic_for_its_own_seed(game_id: str) -> None:
    for snap, seat in decision_points(game_id, GAMES[game_id], f"same-{game_id}", limit=12):
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        first = expert.search(view, legal, SeededStream("bot", "x"), TINY)
        again = expert.search(as_json(view), legal, SeededStream("bot", "x"), TINY)
        assert first == again


def test_utility_is_the_lead_over_the_others_mean() -> None:
    """C-7 direction: in Golf the lowest total leads, so a lower own total is worth more."""
    snap, _ = engine.start(engine.make_config("golf", 3, {}, "utility"))
    state = snap.state
    ahead = engine.Snapshot(snap.game, snap.config, type(state)(**{**state.__dict__, "totals": (1, 5, 9)}))
    assert expert.utility(ahead, 0) == pytest.approx(6.0)
    assert expert.utility(ahead, 2) == pytest.approx(-6.0)


def test_unseen_cards_is_the_deck_less_what_is_seen() -> None:
    left = expert.unseen_cards(["AS", "AS", "2H", "3C"], ["AS", "3C"], SeededStream("u", "1"))
    assert sorted(left) == ["2H", "AS"]
    with pytest.raises(ValueError):
        expert.unseen_cards(["AS"], ["KD"], SeededStream("u", "1"))


def test_a_finished_game_counts_its_placings_above_any_lead() -> None:
    """C-7: once the game is over its placings count above any lead: a winner is ahead of every other
    seat, the others by their totals (lowest wins in Golf), each seat ahead or behind worth a share of
    WIN_VALUE; the end is centred on a fair chance."""
    snap, _ = engine.start(engine.make_config("golf", 3, {"rounds": 1}, "won"))
    step = 0
    while not snap.finished:
        seat = snap.to_act()[0]
        view = engine.view(snap, seat)
        snap, _ = engine.act(
            snap, seat, choose_action("golf", "greedy", view, view["you"]["legal"], SeededStream("won", str(step)))
        )
        step += 1
    winners = engine.view(snap, None)["result"]["winners"]
    totals = snap.game.standing(snap.state)[1]
    for seat in range(3):
        lead = sum(totals) / 2 - totals[seat] * 1.5  # lowest wins: the others' mean less one's own
        ahead = (
            2
            if seat in winners
            else sum(
                -1 if other in winners else (totals[seat] < totals[other]) - (totals[seat] > totals[other])
                for other in range(3)
                if other != seat
            )
        )
        assert expert.utility(snap, seat) == pytest.approx(lead + ahead * expert.WIN_VALUE / 2)
    assert min(expert.utility(snap, s) for s in winners) > max(
        expert.utility(snap, s) for s in range(3) if s not in winners
    )


@pytest.mark.parametrize(
    ("points", "winners", "values"),
    [
        ((3, 9), (0,), (1.0, -1.0)),  # two seats: winning or losing the game
        ((5, 5), (0, 1), (1.0, 1.0)),  # a shared win is a win for each
        ((2, 7, 9, 12), (0,), (1.0, 1 / 3, -1 / 3, -1.0)),  # four seats: second place is worth more than third
        ((2, 7, 7, 12), (0,), (1.0, 0.0, 0.0, -1.0)),  # an equal total is neither ahead nor behind
    ],
)
def test_the_placings_share_out_the_win_value(
    points: tuple[int, ...], winners: tuple[int, ...], values: tuple[float, ...]
) -> None:
    """C-7 (lowest wins, as in Golf): a winner gets WIN_VALUE, the last seat loses it, the seats between
    get a share for each seat they finished ahead of, less one for each ahead of them."""
    got = [expert.placing_value(points, winners, seat, lowest_wins=True) for seat in range(len(points))]
    assert got == pytest.approx([v * expert.WIN_VALUE for v in values])
    highest = [
        expert.placing_value([-p for p in points], winners, seat, lowest_wins=False) for seat in range(len(points))
    ]
    assert highest == pytest.approx(got), "the highest total wins: the same placings mirrored"


@pytest.mark.parametrize(("gains", "extended"), [((10.0, -8.0), True), ((5.0, 5.0), False), ((0.0, 0.0), False)])
def test_only_a_close_call_gets_more_samples(
    gains: tuple[float, float], extended: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A challenger ahead of greedy's choice but not clearly (+10, -8, ...) is sampled up to EXTEND times
    the budget; a clear gain or none stops at the budget's samples."""
    budget = expert.Budget(samples=6, think_ms=10**6, max_candidates=3)
    view, legal, pick = next(point for point in _greedy_decisions("golf", "close") if _searched(point, budget) > 1)
    hooks = importlib.import_module("domain.bots.golf")
    worlds: list[int] = []
    real_sampler = hooks.sample_world

    def counting_sampler(view: Mapping[str, Any], rng: SeededStream) -> engine.Snapshot[Any]:
        worlds.append(1)
        world: engine.Snapshot[Any] = real_sampler(view, rng)
        return world

    monkeypatch.setattr(hooks, "sample_world", counting_sampler)
    calls: dict[str, int] = {}

    def fake_rollout(world: Any, seat: int, action: Mapping[str, Any], stream: str, horizon: int) -> float:
        if action == pick:
            return 0.0
        key = json.dumps(action, sort_keys=True)
        calls[key] = calls.get(key, 0) + 1
        return gains[calls[key] % 2]

    monkeypatch.setattr(expert, "rollout", fake_rollout)
    expert.search(view, legal, SeededStream("close", "x"), budget)
    assert len(worlds) == budget.samples * (expert.EXTEND if extended else 1)


def _greedy_decisions(game_id: str, seed: str) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]]:
    """(view, legal, greedy's choice) where greedy's choice does not depend on its stream (no ties)."""
    for snap, seat in decision_points(game_id, 2, seed, limit=60):
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        picks = [choose_action(game_id, "greedy", view, legal, SeededStream(str(i), "greedy")) for i in range(4)]
        if all(p == picks[0] for p in picks):
            yield view, legal, picks[0]


def _searched(point: tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]], budget: expert.Budget) -> int:
    view, legal, pick = point
    return len(expert.candidate_indexes(view, legal, budget.max_candidates, pick))
