"""C-9: a game's length is bounded. Every game of the current rules has `max_events`; when an append
leaves room for no more than its closing events, the game ends at once with `GameEnded` reason
`event_limit`: the hand in play unscored, the totals of the hands scored so far, the winners by C-7."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain.bots import choose_action
from domain.errors import InvalidInput
from domain.events import Event
from domain.options import MAX_EVENTS, MAX_EVENTS_DEFAULT, MAX_EVENTS_LEAST, EventLimits
from domain.scores import highest_totals, lowest_totals
from domain.shuffle import SeededStream

GAMES = {"golf": 2, "romme": 2, "switch": 4, "go5": 2}
"""Each game with its fewest players: at the default options every one of them runs past 80 events."""
MAX_STEPS = 5_000


def random_play(
    config: engine.GameConfig, chooser: str, level: str = "random"
) -> tuple[engine.Snapshot[Any], list[Event]]:
    """Random legal actions (or the bots of `level`) to the end, checking after every append that the
    game stays within its limit."""
    snap, events = engine.start(config)
    stream = SeededStream(chooser, "test/event-limit")
    for _ in range(MAX_STEPS):
        assert config.max_events is None or snap.version <= config.max_events
        if snap.finished:
            return snap, events
        seat = snap.to_act()[0]
        legal = engine.legal_actions(snap, seat)
        action = choose_action(config.game, level, engine.view(snap, seat), legal, stream)
        snap, new = engine.act(snap, seat, action)
        events += new
    raise AssertionError(f"the game did not end within {MAX_STEPS} actions")


def scored_totals(game: engine.Game[Any], events: list[Event], players: int) -> list[int]:
    """Every seat's sum of the points of the hands scored in `events`."""
    totals = [0] * players
    for event in events:
        for seat, points in enumerate(game.round_points(event) or ()):
            totals[seat] += points
    return totals


@pytest.mark.parametrize("game_id", sorted(GAMES))
@settings(max_examples=15, deadline=None)
@given(limit=st.integers(MAX_EVENTS_LEAST, 80), seed=st.text("abcdef0123", min_size=1, max_size=8))
def test_c9_random_games_end_at_their_event_limit_scored_as_the_hands_so_far(
    game_id: str, limit: int, seed: str
) -> None:
    """C-9, C-7: with a small max_events every random game ends by it, within its last action's room of
    max_events events (an action makes at most ACTION_EVENTS_MAX),
    the last two its end (reason event_limit) and the seed's reveal; the totals are the sums of the
    hands scored so far and the winners every seat level at the best of them."""
    config = engine.make_config(game_id, GAMES[game_id], {MAX_EVENTS: limit}, seed, nonce="n")
    snap, events = random_play(config, seed)
    game = snap.game
    assert len(events) == snap.version
    assert limit - engine.ACTION_EVENTS_MAX < snap.version <= limit
    end, reveal = events[-2:]
    assert isinstance(end, engine.GameEnded) and isinstance(reveal, engine.SeedRevealed)
    assert end.data()["reason"] == engine.EVENT_LIMIT
    assert list(end.totals) == scored_totals(game, events, config.players)
    best = lowest_totals if game.lowest_wins else highest_totals
    assert end.winners == best(end.totals) and end.winners
    assert not any(isinstance(event, engine.GameEnded) for event in events[:-2])
    result = engine.view(snap, None)["result"]
    assert result == {"totals": list(end.totals), "winners": list(end.winners), "reason": "event_limit"}
    assert engine.fold(config, events) == snap
    assert engine.view(snap, 0)["to_act"] == [] and engine.legal_actions(snap, 0) == []


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_c9_a_game_ended_by_its_rules_states_no_reason(game_id: str) -> None:
    """C-9: a game that ends by its own rules before its limit ends as before: GameEnded without a reason."""
    short = {"golf": {"rounds": 1}, "romme": {"target": 1}, "switch": {"target": 1}, "go5": {"target": 1}}
    config = engine.make_config(game_id, GAMES[game_id], short[game_id], "natural", nonce="n")
    snap, events = random_play(config, "natural", "greedy")
    assert snap.version < MAX_EVENTS_DEFAULT and "reason" not in events[-2].data()
    assert "reason" not in engine.view(snap, None)["result"]


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_c9_games_of_an_older_rules_version_have_no_limit(game_id: str) -> None:
    """C-9: a game made under the rules version before C-9 has no max_events, refuses one, and plays past
    the smallest limit to its own end, as it always did."""
    game = engine.get_game(game_id)
    older = game.event_limit_since - 1
    with pytest.raises(InvalidInput) as refused:
        engine.make_config(game_id, GAMES[game_id], {MAX_EVENTS: 100}, "old", rules_version=older)
    assert refused.value.code == "invalid_option" and MAX_EVENTS in refused.value.detail
    config = engine.make_config(game_id, GAMES[game_id], {}, "old", rules_version=older)
    assert MAX_EVENTS not in config.options and config.max_events is None
    snap, events = random_play(config, "old", "greedy")
    assert snap.version > MAX_EVENTS_LEAST and "reason" not in events[-2].data()
    assert "reason" not in engine.view(snap, None)["result"]


def test_c9_max_events_is_an_option_of_every_game_bounded_by_the_operators_ceiling() -> None:
    """C-9: every game's catalog entry lists max_events with the operator's default and ceiling; a new
    game takes the default, a creator may ask for less, and more than the ceiling is refused by name."""
    limits = EventLimits(default=500, ceiling=1000)
    for game in engine.all_games():
        shown = {option["name"]: option for option in game.describe(limits)["options"]}
        assert shown[MAX_EVENTS]["default"] == 500 and shown[MAX_EVENTS]["maximum"] == 1000
        players = GAMES[game.id]
        assert engine.make_config(game.id, players, {}, "s", limits=limits).max_events == 500
        assert engine.make_config(game.id, players, {MAX_EVENTS: None}, "s", limits=limits).max_events == 500
        assert engine.make_config(game.id, players, {MAX_EVENTS: 20}, "s", limits=limits).max_events == 20
        for too_many in (1001, MAX_EVENTS_LEAST - 1, "50"):
            with pytest.raises(InvalidInput) as refused:
                engine.make_config(game.id, players, {MAX_EVENTS: too_many}, "s", limits=limits)
            assert refused.value.code == "invalid_option" and f"'{MAX_EVENTS}'" in refused.value.detail
        # a game already made keeps its limit whatever the ceiling is now
        assert engine.make_config(game.id, players, {MAX_EVENTS: 5000}, "s").max_events == 5000
