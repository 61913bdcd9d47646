"""Random legal play of whole Rommé games (Hypothesis): every game ends, R-17 holds after every
event, a fold of the same events twice is the same game, and no view shows another player's hand
or the stock (C-6)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.events import Event
from domain.romme import RommeState, all_cards
from domain.shuffle import SeededStream, shuffle
from tests.unit.romme_helpers import DECK

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
SEEDS = st.text(PRINTABLE, min_size=1, max_size=20)
MAX_STEPS = 30_000  # a random game to a target of 300 takes a few hundred actions
CODES = frozenset(DECK)
SECRET_EVENTS = ("RoundStarted", "HandsDealt", "CardDrawn", "WentOut")
PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
)


@st.composite
def configs(draw: st.DrawFn) -> engine.GameConfig:
    """A Rommé game for 2-4 players with a low target (R-22) and any house rules."""
    options: dict[str, Any] = {
        "target": draw(st.sampled_from([150, 200, 300])),
        "hand_aus_doubles": draw(st.booleans()),
        "strict_1000": draw(st.booleans()),
    }
    return engine.make_config("romme", draw(st.integers(2, 4)), options, draw(SEEDS))


def strings_in(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def keys_in(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def play(config: engine.GameConfig, chooser: str, every: int = 1) -> tuple[engine.Snapshot[Any], list[Event]]:
    """Random legal play to the end, checking each event (and each `every`-th state's views)."""
    snap, events = engine.start(config)
    stream = SeededStream(chooser, "test/random-play")
    for step in range(MAX_STEPS):
        if snap.finished:
            return snap, events
        (seat,) = snap.to_act()
        legal = engine.legal_actions(snap, seat)
        assert legal, f"seat {seat} is to act but has no legal action"
        before = snap
        snap, new = engine.act(snap, seat, stream.choice(legal))
        replayed = before
        for event in new:
            replayed = engine.advance(replayed, event)
            check_cards(replayed.state)
            check_event(event)
        assert replayed == snap
        events = events + new
        if step % every == 0:
            check_views(snap)
    raise AssertionError(f"the game did not end within {MAX_STEPS} actions")


def check_cards(state: RommeState) -> None:
    """R-17: every one of the 110 cards is in exactly one place."""
    if state.round:
        assert all_cards(state) == Counter(DECK)


def check_event(event: Event) -> None:
    """Events hold what the actor chose and public facts: no drawn, dealt or face-down card."""
    data = event.data()
    json.dumps(data)
    if event.type_name() in SECRET_EVENTS:
        assert not strings_in(data) & CODES, event


def check_views(snap: engine.Snapshot[Any]) -> None:
    """C-6: a view shows no stock and no other hand: it is the same whatever they hold."""
    state: RommeState = snap.state
    for viewer in (None, *range(snap.config.players)):
        view = engine.view(snap, viewer)
        json.dumps(view)
        assert not {"stock", "hands", "deck"} & keys_in(view["table"])
        if viewer is None:
            assert "you" not in view and view["actions"] == []
        elif state.hands:
            assert view["you"]["hand"] == list(state.hands[viewer])
        other = hidden_reshuffled(state, snap.config.seed, keep=viewer)
        if other is not None:
            assert engine.view(dataclasses.replace(snap, state=other), viewer) == view, "a view shows hidden cards"


def hidden_reshuffled(state: RommeState, seed: str, keep: int | None) -> RommeState | None:
    """The state with the stock and every hand but `keep`'s dealt anew from their own cards:
    the same sizes, other cards."""
    if not state.hands or state.phase != "play":
        return None
    seats = [s for s in range(len(state.hands)) if s != keep]
    pool = list(state.stock) + [c for s in seats for c in state.hands[s]]
    mixed = list(shuffle(pool, seed, "test/hide"))
    hands = list(state.hands)
    at = len(state.stock)
    for s in seats:
        size = len(state.hands[s])
        hands[s] = tuple(sorted(mixed[at : at + size]))
        at += size
    return dataclasses.replace(state, stock=tuple(mixed[: len(state.stock)]), hands=tuple(hands))


@PROPERTY_SETTINGS
@given(configs(), SEEDS)
def test_random_legal_play_of_whole_games_ends_and_keeps_every_card(config: engine.GameConfig, chooser: str) -> None:
    snap, events = play(config, chooser, every=7)
    assert snap.finished and snap.seed_revealed
    result = engine.view(snap, None)["result"]
    assert len(result["winners"]) == 1, "R-23: the game ends only with one player ahead alone"
    totals = result["totals"]
    assert totals[result["winners"][0]] == max(totals) and totals.count(max(totals)) == 1
    scored = [e.data() for e in events if e.type_name() == "RoundScored"]
    assert [sum(column) for column in zip(*(s["scores"] for s in scored), strict=True)] == totals
    for data in scored:
        factor = 2 if data["doubled"] else 1
        pairs = zip(data["meld_points"], data["hand_points"], strict=True)
        assert data["scores"] == [factor * (m - h) for m, h in pairs]
        assert (data["winner"] is None) == (data["reason"] == "stock_empty")
        assert not (data["doubled"] and not config.options["hand_aus_doubles"])
    assert len(scored) == rounds_to_play(config, [s["scores"] for s in scored])


def rounds_to_play(config: engine.GameConfig, scores: list[list[int]]) -> int:
    """R-22 / R-23 from the round scores: the game ends after the first round at or after the one
    that brought someone to the mark in which one player leads alone."""
    target, strict = config.options["target"], config.options["strict_1000"]
    totals = [0] * config.players
    reached = False
    for number, round_scores in enumerate(scores, start=1):
        totals = [t + s for t, s in zip(totals, round_scores, strict=True)]
        reached = reached or any((t > target) if strict else (t >= target) for t in totals)
        if reached and totals.count(max(totals)) == 1:
            return number
    return -1


@PROPERTY_SETTINGS
@given(configs(), SEEDS)
def test_a_fold_of_the_same_events_twice_is_the_same_game(config: engine.GameConfig, chooser: str) -> None:
    snap, events = play(config, chooser, every=50)
    first = engine.fold(config, events)
    second = engine.fold(config, events)
    assert first == second == snap
    for cut in range(0, len(events), max(1, len(events) // 7)):
        assert engine.fold(config, events[:cut]) == engine.fold(config, events[:cut])


@settings(max_examples=10, deadline=None)
@given(SEEDS, st.integers(2, 4))
def test_every_listed_action_is_accepted_and_the_view_lists_their_types(seed: str, players: int) -> None:
    config = engine.make_config("romme", players, {"target": 150}, seed)
    snap, _ = engine.start(config)
    stream = SeededStream(seed, "test/all-legal")
    for step in range(120):
        if snap.finished:
            break
        (seat,) = snap.to_act()
        legal = engine.legal_actions(snap, seat)
        assert sorted({a["type"] for a in legal}) == engine.view(snap, seat)["actions"]
        if step % 10 == 3:
            for action in legal[:: max(1, len(legal) // 40)]:
                engine.act(snap, seat, action)
        snap, _ = engine.act(snap, seat, stream.choice(legal))
