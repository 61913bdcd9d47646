"""Random legal play of whole Golf games (Hypothesis): termination, card conservation,
replay by fold, and hidden information (C-4, C-6, G-1 ... G-15)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.cards import canonical_deck
from domain.errors import RuleViolation
from domain.events import Event
from domain.golf import GolfState
from domain.shuffle import SeededStream, shuffle
from tests.engine_table import assert_fold_replays
from tests.json_walk import keys_in, strings_in
from tests.unit.golf_helpers import DRAW

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
SEEDS = st.text(PRINTABLE, min_size=1, max_size=20)
MAX_STEPS = 20_000  # generous: a random 12-player, 3-round 3x3 game takes about 500 actions
ALL_CODES = frozenset(canonical_deck(1))
SECRET_EVENTS = ("RoundStarted", "CardDrawn", "StockReshuffled")
# Shrinking a whole random game is slow and rarely simpler; a failure reports its example at once.
PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
)


@st.composite
def configs(draw: st.DrawFn) -> engine.GameConfig:
    """A valid Golf game: 2-12 players, either layout, initial_flips 0-3, rounds 1-3, any penalty."""
    players = draw(st.integers(2, 12))
    layout = draw(st.sampled_from(["2x3", "3x3"]))
    size = 9 if layout == "3x3" else 6
    options: dict[str, Any] = {
        "layout": layout,
        "initial_flips": draw(st.integers(0, 3)),
        "rounds": draw(st.integers(1, 3)),
        "penalty": draw(st.sampled_from([0, 10, 25])),
    }
    decks = draw(st.none() | st.integers(1, 3))
    if decks is not None and players * size + 1 <= 52 * decks:
        options["decks"] = decks
    return engine.make_config("golf", players, options, draw(SEEDS))


Check = Callable[[engine.Snapshot[Any], list[Event]], None]


def play(config: engine.GameConfig, chooser: str, check: Check | None = None) -> tuple[Any, list[Event], list[Any]]:
    """Random legal play to the end; returns the final snapshot, all events, and (event count, snapshot) marks."""
    snap, events = engine.start(config)
    marks: list[Any] = [(len(events), snap)]
    stream = SeededStream(chooser, "test/random-play")
    if check:
        check(snap, events)
    for _ in range(MAX_STEPS):
        if snap.finished:
            return snap, events, marks
        to_act = snap.to_act()
        assert to_act, "an unfinished game must have someone to act"
        seat = stream.choice(to_act)
        legal = engine.legal_actions(snap, seat)
        assert legal, f"seat {seat} is to act but has no legal action"
        snap, new = engine.act(snap, seat, stream.choice(legal))
        events = events + new
        marks.append((len(events), snap))
        if check:
            check(snap, new)
    raise AssertionError(f"the game did not end within {MAX_STEPS} actions")


def cards_in_play(state: GolfState) -> Counter[str]:
    cards = list(state.stock) + list(state.discard) + [c for g in state.grids for c in g.cards if c is not None]
    if state.drawn is not None:
        cards.append(state.drawn)
    return Counter(cards)


def check_cards(snap: engine.Snapshot[Any], new: list[Event]) -> None:
    """Every card is in exactly one place: stock + discard + grids + drawn is the canonical deck."""
    state: GolfState = snap.state
    if not state.grids:
        return
    assert cards_in_play(state) == Counter(canonical_deck(state.config.options["decks"]))
    cleared = Counter[str]()
    for event in new:
        if event.type_name() == "RoundStarted":
            cleared = Counter()  # the next round's deal gathered the cards again
        if event.type_name() == "ColumnDiscarded":
            cleared.update(event.data()["cards"])
            assert len(event.data()["cards"]) == 3
    assert not cleared - Counter(state.discard), "cleared cards must lie on the discard pile (G-9)"
    assert state.discard, "the discard pile is never empty during a round (G-3, G-10)"


def check_views(snap: engine.Snapshot[Any], new: list[Event]) -> None:
    """C-6 / G-5: no view shows a face-down card, the stock, or another player's drawn card."""
    state: GolfState = snap.state
    for event in new:
        if event.type_name() in SECRET_EVENTS:
            assert not strings_in(event.data()) & ALL_CODES, event
    for viewer in (None, *range(snap.config.players)):
        view = engine.view(snap, viewer)
        json.dumps(view)
        assert "stock" not in keys_in(view)
        assert isinstance(view["table"]["stock_size"], int)
        grids = view["table"]["grids"]
        for seat, grid in enumerate(state.grids):
            slots = grids[seat]["slots"]
            own = view["you"]["hand"] if viewer == seat else None
            for position, card in enumerate(grid.cards):
                if card is not None and not grid.face_up[position]:
                    expected = {"state": "down", "card": None}
                elif card is None:
                    expected = {"state": "empty", "card": None}
                else:
                    expected = {"state": "up", "card": card}
                assert slots[position] == expected, (viewer, seat, position)
                if own is not None:
                    assert own[position] == expected, (viewer, position)
        if viewer is None:
            assert "you" not in view
        elif state.drawn is not None and viewer == state.turn:
            assert view["you"]["drawn"] == state.drawn
        else:
            assert view["you"]["drawn"] is None


def check_others_cannot_act(snap: engine.Snapshot[Any], new: list[Event]) -> None:
    """C-2: a seat that is not to act has no legal action and is refused."""
    waiting = [s for s in range(snap.config.players) if s not in snap.to_act()]
    if waiting and not snap.finished:
        seat = waiting[len(new) % len(waiting)]
        assert engine.legal_actions(snap, seat) == []
        try:
            engine.act(snap, seat, DRAW)
        except RuleViolation:
            pass
        else:
            raise AssertionError(f"seat {seat} acted out of turn")


def every_check(snap: engine.Snapshot[Any], new: list[Event]) -> None:
    check_cards(snap, new)
    check_views(snap, new)
    check_others_cannot_act(snap, new)


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS)
def test_random_games_end_conserve_cards_and_hide_cards(config: engine.GameConfig, chooser: str) -> None:
    """G-11 / G-15: random legal play ends; G-1: every card in one place; C-6 / G-5: views hide what they must."""
    snap, events, _ = play(config, chooser, every_check)
    names = [e.type_name() for e in events]
    assert names.count("RoundStarted") == config.options["rounds"]
    assert names.count("RoundScored") == config.options["rounds"]
    assert names[-2:] == ["GameEnded", "SeedRevealed"]
    scored = [e.data()["scores"] for e in events if e.type_name() == "RoundScored"]
    ended = events[-2].data()
    totals = [sum(column) for column in zip(*scored, strict=True)]
    assert ended["totals"] == totals
    assert ended["winners"] == [seat for seat, total in enumerate(totals) if total == min(totals)]
    assert engine.view(snap, None)["result"] == ended


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS, data=st.data())
def test_fold_replays_the_game_the_same_way_every_time(config: engine.GameConfig, chooser: str, data: Any) -> None:
    """Event sourcing: fold(config, events) equals the incrementally built snapshot, every time, also from records."""
    snap, events, marks = play(config, chooser)
    assert_fold_replays(config, snap, events, data.draw(st.lists(st.sampled_from(marks), min_size=1, max_size=3)))


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, label=st.text(PRINTABLE, max_size=30), size=st.integers(0, 120))
def test_c4_shuffle_is_a_reproducible_permutation(seed: str, label: str, size: int) -> None:
    """C-4: the shuffle permutes its input, and the same seed and label give the same order."""
    cards = list(range(size))
    once = shuffle(cards, seed, label)
    assert sorted(once) == cards
    assert shuffle(cards, seed, label) == once
