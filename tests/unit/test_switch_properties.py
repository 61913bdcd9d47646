"""Random legal play of whole Switch games (Hypothesis): termination, card conservation after
every event, replay by fold, the offline verifier, and hidden information (C-4, C-6, S-1 ... S-11)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import Phase, given, reject, settings
from hypothesis import strategies as st

from domain import engine
from domain.chain import chain_records
from domain.errors import RuleViolation
from domain.events import Event
from domain.shuffle import SeededStream, commitment, shuffle
from domain.switch import PendingDrawTaken, SwitchState
from domain.verify import verify
from tests.engine_table import assert_fold_replays
from tests.json_walk import strings_in
from tests.unit.switch_helpers import canonical, cards_everywhere

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
SEEDS = st.text(PRINTABLE, min_size=1, max_size=20)
MAX_STEPS = 20_000  # generous: these games (target <= 80, plays preferred) take a few hundred actions
MAX_EVENTS = 5_000  # the largest max_events drawn (C-9), well within MAX_STEPS
ALL_CODES = frozenset(canonical())
NO_CARD_EVENTS = ("CardDrawn", "PendingDrawTaken", "StockReshuffled", "Passed")
PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
)


@st.composite
def configs(draw: st.DrawFn) -> engine.GameConfig:
    """A valid Switch game: 4-10 players, any option in its range, a low target so it ends soon."""
    players = draw(st.integers(4, 10))
    options: dict[str, Any] = {
        "hand_size": draw(st.integers(7, 15)),
        "match_rank": draw(st.booleans()),
        "extra_jokers": draw(st.integers(0, 8)),
        "extra_twos": draw(st.integers(0, 8)),
        "target": draw(st.integers(1, 80)),
    }
    version = draw(st.sampled_from([1, 2, 3]))  # games of every rules version play on (S-9)
    if version >= engine.get_game("switch").event_limit_since:
        options["max_events"] = draw(st.integers(100, MAX_EVENTS))  # C-9: every such game ends
    return engine.make_config("switch", players, options, draw(SEEDS), rules_version=version)


def pick(stream: SeededStream, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A random legal action: three times in four a random play (or suit) when there is one, else any.

    Uniform choice over every legal action also ends (see test_switch_bots), but draws so often
    that a hand takes thousands of actions; preferring plays keeps this file fast.
    """
    plays = [a for a in legal if a["type"] in ("play", "choose_suit")]
    if plays and stream.below(4) < 3:
        return stream.choice(plays)
    return stream.choice(legal)


Check = Callable[[engine.Snapshot[Any], engine.Snapshot[Any], list[Event]], None]


def play(config: engine.GameConfig, chooser: str, check: Check | None = None) -> tuple[Any, list[Event], list[Any]]:
    """Random legal play to the end; returns the final snapshot, all events and (event count, snapshot) marks."""
    snap, events = engine.start(config)
    marks: list[Any] = [(len(events), snap)]
    stream = SeededStream(chooser, "test/random-play")
    if check:
        check(engine.fold(config, []), snap, events)
    for _ in range(MAX_STEPS):
        if snap.finished:
            return snap, events, marks
        to_act = snap.to_act()
        assert len(to_act) == 1, "one seat acts at a time"
        legal = engine.legal_actions(snap, to_act[0])
        assert legal, f"seat {to_act[0]} is to act but has no legal action"
        before = snap
        snap, new = engine.act(snap, to_act[0], pick(stream, legal))
        events = events + new
        marks.append((len(events), snap))
        if check:
            check(before, snap, new)
    assert config.max_events is None, f"a game bounded by C-9 did not end within {MAX_STEPS} actions"
    reject()  # a game of a rules version before C-9 may go on for ever: that is why C-9 came


# ---------------------------------------------------------------- checks


def check_cards(before: engine.Snapshot[Any], after: engine.Snapshot[Any], new: list[Event]) -> None:
    """S-1: after every single event each card of the deck is in exactly one place."""
    deck = Counter(canonical(after.config.options["extra_jokers"], after.config.options["extra_twos"]))
    snap = before
    for event in new:
        snap = engine.advance(snap, event)
        state: SwitchState = snap.state
        if state.hands:
            assert cards_everywhere(snap) == deck, event
            assert state.discard, "the pile always has its top card"
            assert state.pending == 0 or state.discard[-1] == "JK" or state.discard[-1][0] == "2"
    assert snap == after


def check_events(before: engine.Snapshot[Any], after: engine.Snapshot[Any], new: list[Event]) -> None:
    """C-6: no event names a drawn or hidden card; a round's start card is public."""
    for event in new:
        data = event.data()
        if event.type_name() in NO_CARD_EVENTS:
            assert not strings_in(data) & ALL_CODES, event
        if event.type_name() == "RoundStarted":
            assert strings_in(data) & ALL_CODES <= {data["start_card"]}
    seats = [e for e in new if e.actor != "system"]
    assert len(seats) == 1 and seats[0].to_action() is not None, "one event per action names the seat"


def scramble(snap: engine.Snapshot[Any], viewer: int | None) -> engine.Snapshot[Any]:
    """The same game with every card `viewer` may not see dealt differently (sizes kept)."""
    state: SwitchState = snap.state
    hidden = [seat for seat in range(len(state.hands)) if seat != viewer]
    pool = list(state.stock) + [card for seat in hidden for card in state.hands[seat]]
    turn = snap.version % max(1, len(pool))
    mixed = (pool[turn:] + pool[:turn])[::-1]  # cheap, and moves nearly every hidden card
    hands = list(state.hands)
    for seat in hidden:
        size = len(hands[seat])
        hands[seat], mixed = tuple(mixed[:size]), mixed[size:]
    return dataclasses.replace(snap, state=dataclasses.replace(state, hands=tuple(hands), stock=tuple(mixed)))


def check_views(before: engine.Snapshot[Any], after: engine.Snapshot[Any], new: list[Event]) -> None:
    """C-6: one viewer per action in turn, the spectator included, sees only its part.

    The view must not change when every card the viewer may not see is dealt differently.
    """
    state: SwitchState = after.state
    if not state.hands:
        return
    players = after.config.players
    turn = after.version % (players + 1)
    viewer = None if turn == players else turn
    view = engine.view(after, viewer)
    json.dumps(view)
    assert not {"stock", "hands"} & (set(view) | set(view["table"]) | set(view.get("you", {})))
    assert view["table"]["hand_sizes"] == [len(hand) for hand in state.hands]
    assert engine.view(scramble(after, viewer), viewer) == view, "a view depends on hidden cards"
    if viewer is None:
        assert "you" not in view and view["actions"] == []
        return
    you = view["you"]
    assert Counter(you["hand"]) == Counter(state.hands[viewer])
    legal = engine.legal_actions(after, viewer)
    assert you["legal"] == legal and view["actions"] == sorted({a["type"] for a in legal})
    assert set(you["playable"]) == {c for a in legal if a["type"] == "play" for c in a["cards"]}
    assert you["drawn"] is None or (viewer == state.turn and you["drawn"] == state.drawn)


def check_legal_is_exact(before: engine.Snapshot[Any], after: engine.Snapshot[Any], new: list[Event]) -> None:
    """Every listed action is accepted; a seat not to act has none and is refused (C-2)."""
    if after.finished:
        return
    (seat,) = after.to_act()
    legal = engine.legal_actions(after, seat)
    engine.act(after, seat, legal[after.version % len(legal)])
    other = (seat + 1 + after.version % (after.config.players - 1)) % after.config.players
    assert engine.legal_actions(after, other) == []
    try:
        engine.act(after, other, {"type": "draw"})
    except RuleViolation as error:
        assert (error.code, error.rule) == ("not_your_turn", "C-2")
    else:
        raise AssertionError(f"seat {other} acted out of turn")


def every_check(before: engine.Snapshot[Any], after: engine.Snapshot[Any], new: list[Event]) -> None:
    check_cards(before, after, new)
    if before.version == 0:
        return
    check_events(before, after, new)
    check_views(before, after, new)
    check_legal_is_exact(before, after, new)


# ---------------------------------------------------------------- properties


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS)
def test_random_games_end_conserve_cards_and_hide_cards(config: engine.GameConfig, chooser: str) -> None:
    """S-11: random legal play ends at the target; S-1: every card in one place; C-6: views hide what they must."""
    snap, events, _ = play(config, chooser, every_check)
    names = [e.type_name() for e in events]
    assert names[-2:] == ["GameEnded", "SeedRevealed"]
    scored = [e.data()["scores"] for e in events if e.type_name() == "RoundScored"]
    totals = [sum(column) for column in zip(*scored, strict=True)] or [0] * config.players
    ended = events[-2].data()
    if ended.get("reason") == "event_limit":  # C-9: the hand in play is not scored
        assert config.max_events - engine.ACTION_EVENTS_MAX < len(events) <= config.max_events
        assert ended["totals"] == totals
        assert ended["winners"] == [seat for seat, total in enumerate(totals) if total == min(totals)]
        assert names.count("RoundStarted") == names.count("RoundScored") + 1
        return
    assert names.count("RoundStarted") == names.count("RoundScored") >= 1
    assert ended["totals"] == totals and max(totals) >= config.options["target"]
    before_last = [sum(column) for column in zip(*scored[:-1], strict=True)] if len(scored) > 1 else [0]
    assert max(before_last) < config.options["target"], "the game ends after the first hand that reaches the target"
    assert ended["winners"] == [seat for seat, total in enumerate(totals) if total == min(totals)]
    assert engine.view(snap, None)["result"] == ended
    dealers = [e.data()["dealer"] for e in events if e.type_name() == "RoundStarted"]
    assert dealers == [r % config.players for r in range(len(dealers))]


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS, data=st.data())
def test_fold_replays_the_game_the_same_way_every_time(config: engine.GameConfig, chooser: str, data: Any) -> None:
    """Event sourcing: fold(config, events) equals the incrementally built snapshot, every time, also from records."""
    snap, events, marks = play(config, chooser)
    assert_fold_replays(config, snap, events, data.draw(st.lists(st.sampled_from(marks), min_size=1, max_size=3)))


def record_of(config: engine.GameConfig, events: list[Event]) -> dict[str, Any]:
    """The portable record as domain/verify.py reads it."""
    return {
        "game": config.game,
        "options": dict(config.options),
        "seats": [{"seat": s, "kind": "bot"} for s in range(config.players)],
        "rules_version": config.rules_version,
        "seed_commitment": commitment(config.seed),
        "seed": config.seed,
        "events": chain_records(events, 1, commitment(config.seed), "t"),
    }


@settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(config=configs(), chooser=SEEDS)
def test_the_offline_verifier_passes_a_finished_game(config: engine.GameConfig, chooser: str) -> None:
    """domain.verify re-deals every hand and re-decides every action from its event (to_action)."""
    _, events, _ = play(config, chooser)
    verdict = verify(record_of(config, events))
    assert verdict.ok, verdict.detail
    assert verdict.result == events[-2].data()


def test_the_offline_verifier_finds_a_changed_event() -> None:
    """A record whose pending draw count was changed (and re-chained) fails the replay at that event."""
    config = engine.make_config("switch", 5, {"target": 40}, "tamper")
    _, events, _ = play(config, "tamper")
    index, taken = next((i, e) for i, e in enumerate(events) if isinstance(e, PendingDrawTaken))
    changed = list(events)
    changed[index] = dataclasses.replace(taken, count=taken.count + 1)
    verdict = verify(record_of(config, changed))
    assert not verdict.ok and verdict.replay_ok is False and verdict.first_bad_seq == index + 1


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, size=st.integers(0, 240))
def test_c4_reshuffle_is_a_reproducible_permutation(seed: str, size: int) -> None:
    """C-4 / S-8: the reshuffle permutes its pile, the same way for the same seed, round and k."""
    config = engine.make_config("switch", 4, {}, seed)
    pile = [canonical()[i % 216] for i in range(size)]
    once = config.reshuffle(2, 3, pile)
    assert sorted(once) == sorted(pile)
    assert once == shuffle(pile, seed, "round/2/reshuffle/3") == config.reshuffle(2, 3, pile)
