"""Random legal play of whole Go5 games (Hypothesis): termination, all 55 cards in exactly one place
after every event, replay by fold, exact legal actions, hidden information (C-4, C-6, V-1 ... V-16)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.chain import chain_records
from domain.errors import DomainError, RuleViolation
from domain.events import Event
from domain.go5 import Go5State
from domain.shuffle import SeededStream, commitment
from domain.verify import verify
from tests.engine_table import assert_fold_replays
from tests.json_walk import keys_in, strings_in
from tests.unit.go5_helpers import CANONICAL, JOKER, NUMBER_CARDS, STOP

PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
SEEDS = st.text(PRINTABLE, min_size=1, max_size=20)
MAX_STEPS = 5_000  # a random game to target 60 takes about 50-400 actions
NUMBERS = frozenset(NUMBER_CARDS)
SECRET_EVENTS = ("RoundStarted", "StockCardReceived", "StopCardLaid", "StockReshuffled")
PROPERTY_SETTINGS = settings(
    max_examples=30, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
)


@st.composite
def configs(draw: st.DrawFn) -> engine.GameConfig:
    """A Go5 game: 2-4 players, a low target, pattern values 2-12 and a joker of -15 to 0.

    Random play moves cards into sets slowly; with card values near 1 and a heavy joker it
    scores below zero on average and may take hundreds of rounds to reach a target, so the
    whole-game properties keep the values where random play scores. Every round ends on its
    own whatever the options (test_every_round_ends_whatever_the_options)."""
    options: dict[str, Any] = {"target": draw(st.integers(1, 60))}
    if draw(st.booleans()):
        options["pattern_values"] = draw(st.lists(st.integers(2, 12), min_size=7, max_size=7))
    if draw(st.booleans()):
        options["joker_value"] = draw(st.integers(-15, 0))
    version = draw(st.sampled_from([1, 2]))  # games of either rules version play on (V-9)
    return engine.make_config("go5", draw(st.integers(2, 4)), options, draw(SEEDS), rules_version=version)


Check = Callable[[engine.Snapshot[Any], Event], None]


def play(config: engine.GameConfig, chooser: str, check: Check | None = None) -> tuple[Any, list[Event], list[Any]]:
    """Random legal play to the end: a random seat of to_act, a random legal action of it.

    `check` runs after every single event (the action's and the system's), on a snapshot built
    event by event. Returns the final snapshot, all events and (event count, snapshot) marks.
    """
    snap, events = engine.start(config)
    if check:
        _stepwise(engine.fold(config, []), events, check)
    marks: list[Any] = [(len(events), snap)]
    stream = SeededStream(chooser, "test/random-play")
    for _ in range(MAX_STEPS):
        if snap.finished:
            return snap, events, marks
        to_act = snap.to_act()
        assert to_act, "an unfinished game must have someone to act"
        seat = stream.choice(to_act)
        legal = engine.legal_actions(snap, seat)
        assert legal, f"seat {seat} is to act but has no legal action"
        before = snap
        snap, new = engine.act(snap, seat, stream.choice(legal))
        if check:
            assert _stepwise(before, new, check) == snap
        events = events + new
        marks.append((len(events), snap))
    raise AssertionError(f"the game did not end within {MAX_STEPS} actions")


def _stepwise(snap: engine.Snapshot[Any], new: list[Event], check: Check) -> engine.Snapshot[Any]:
    for event in new:
        snap = engine.advance(snap, event)
        check(snap, event)
    return snap


def cards_in_play(state: Go5State) -> Counter[str]:
    """Every card's place: stock, discard pile, hands, sets, stop cards in front and played."""
    cards = list(state.stock) + list(state.discard) + [c for hand in state.hands for c in hand]
    cards += [c for s in state.sets for c in s.cards]
    cards += [STOP] * (sum(state.stops) + state.stops_out)
    return Counter(cards)


def laid_by(event: Event) -> int | None:
    """The id of the set this event lays, if it lays one."""
    data = event.data()
    if event.type_name() == "SetMelded":
        return int(data["set"])
    return data.get("new_set") if event.type_name() == "CardSwapped" else None


def check_cards(snap: engine.Snapshot[Any], event: Event) -> None:
    """All 55 cards in exactly one place; stop cards never in a hand (V-6); sets valid (V-9)."""
    state: Go5State = snap.state
    if not state.hands:
        return
    assert cards_in_play(state) == Counter(CANONICAL), event
    assert all(STOP not in hand for hand in state.hands), event
    for set_ in state.sets:
        assert 3 <= len(set_.cards) <= 5 and set_.cards.count(JOKER) <= 1, set_
        first = min(s.id for s in state.sets if s.owner == set_.owner) == set_.id
        if first and (snap.config.rules_version == 1 or laid_by(event) == set_.id):
            assert JOKER not in set_.cards, "a first set holds no joker: when laid, and for its life in version 1 (V-9)"
        parts = [c.split("-") for c in set_.cards if c != JOKER]
        index = ("number", "pattern", "colour").index(set_.by)
        assert len({p[index] for p in parts}) == 1, set_
    if state.phase in ("draw", "play"):
        assert all(len(s.cards) < 5 for s in state.sets), "a five ends the round at once (V-12)"


def check_views(snap: engine.Snapshot[Any], event: Event) -> None:
    """C-6: no view shows another hand or the stock; events never name a hidden card.

    Views are checked in the states a client can see: not inside a draw (`pending`)."""
    state: Go5State = snap.state
    if event.type_name() in SECRET_EVENTS:
        assert not strings_in(event.data()) & set(CANONICAL), event
    if not state.hands or state.pending:
        return
    stock_numbers = set(state.stock) & NUMBERS
    for viewer in (None, *range(snap.config.players)):
        view = engine.view(snap, viewer)
        json.dumps(view)
        assert not {"stock", "hands"} & keys_in(view)
        seen = strings_in(view)
        assert not stock_numbers & seen, viewer
        for seat, hand in enumerate(state.hands):
            assert view["table"]["players"][seat]["hand_size"] == len(hand)
            if seat == viewer:
                assert view["you"]["hand"] == list(hand)
            else:
                assert not set(hand) & NUMBERS & seen, (viewer, seat)
        assert ("you" in view) == (viewer is not None)


def check_legal(snap: engine.Snapshot[Any], event: Event) -> None:
    """Seats outside to_act have no legal action and are refused; listed actions are accepted."""
    if snap.finished or snap.state.pending:
        return  # inside a draw: the stock card is not taken yet; no client sees this state
    to_act = snap.to_act()
    for seat in range(snap.config.players):
        legal = engine.legal_actions(snap, seat)
        if seat not in to_act:
            assert legal == []
            for probe in ({"type": "draw", "from": "stock"}, {"type": "go5", "set": 1}):
                try:
                    engine.act(snap, seat, probe)
                except RuleViolation:
                    continue
                raise AssertionError(f"seat {seat} acted out of turn with {probe}")
        else:
            assert legal, seat
            for action in legal[:: max(1, len(legal) // 4)]:
                try:
                    engine.act(snap, seat, action)
                except DomainError as error:
                    raise AssertionError(f"listed action {action} refused: {error.code}") from error


def every_check(snap: engine.Snapshot[Any], event: Event) -> None:
    check_cards(snap, event)
    check_views(snap, event)


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS)
def test_random_games_end_and_keep_all_55_cards_in_one_place(config: engine.GameConfig, chooser: str) -> None:
    """V-16: random legal play ends; V-1 / V-6: every card in one place after every event; C-6 views."""
    snap, events, _ = play(config, chooser, every_check)
    names = [e.type_name() for e in events]
    assert names[-2:] == ["GameEnded", "SeedRevealed"]
    assert names.count("RoundStarted") == names.count("RoundScored") >= 1
    scored = [e.data()["scores"] for e in events if e.type_name() == "RoundScored"]
    totals = [sum(column) for column in zip(*scored, strict=True)]
    ended = events[-2].data()
    assert ended["totals"] == totals and max(totals) >= config.options["target"]
    assert all(
        max(sum(c) for c in zip(*scored[:k], strict=True)) < config.options["target"] for k in range(1, len(scored))
    )
    assert ended["winners"] == [seat for seat, total in enumerate(totals) if total == max(totals)]
    assert engine.view(snap, None)["result"] == ended


@settings(max_examples=15, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
@given(config=configs(), chooser=SEEDS)
def test_legal_actions_are_exact_for_whoever_may_act(config: engine.GameConfig, chooser: str) -> None:
    """Every listed action is accepted; a seat outside to_act can do nothing (C-2, V-13)."""
    play(config, chooser, check_legal)


@PROPERTY_SETTINGS
@given(config=configs(), chooser=SEEDS, data=st.data())
def test_fold_replays_the_game_the_same_way_every_time(config: engine.GameConfig, chooser: str, data: Any) -> None:
    """Event sourcing: fold(config, events) equals the incrementally built snapshot, also from records."""
    snap, events, marks = play(config, chooser)
    assert_fold_replays(config, snap, events, data.draw(st.lists(st.sampled_from(marks), min_size=1, max_size=3)))


@settings(max_examples=10, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
@given(config=configs(), chooser=SEEDS)
def test_a_finished_random_game_passes_the_offline_verifier(config: engine.GameConfig, chooser: str) -> None:
    """domain.verify re-decides every action from its event (to_action) and re-deals every round."""
    _, events, _ = play(config, chooser)
    record = {
        "game": "go5",
        "options": dict(config.options),
        "seats": [{"seat": s} for s in range(config.players)],
        "rules_version": config.rules_version,
        "seed_commitment": commitment(config.seed),
        "seed": config.seed,
        "events": json.loads(json.dumps(chain_records(events, 1, commitment(config.seed), "t"))),
    }
    verdict = verify(record)
    assert verdict.ok, verdict.detail
    tampered = json.loads(json.dumps(record))
    discard = next(r for r in tampered["events"] if r["type"] == "CardDiscarded")
    assert not verify({**tampered, "seed": "another seed"}).ok
    discard["data"]["card"] = "joker" if discard["data"]["card"] != "joker" else "1-dots-red"
    assert not verify(tampered).ok


def _normal(action: dict[str, Any]) -> str:
    """An action without the optional `by` and with its meld cards sorted: decide takes any order."""
    plain = json.loads(json.dumps(action))
    plain.pop("by", None)
    if "cards" in plain:
        plain["cards"] = sorted(plain["cards"])
    meld = plain.get("then", {}).get("meld")
    if meld is not None:
        meld.pop("by", None)
        meld["cards"] = sorted(meld["cards"])
    return json.dumps(plain, sort_keys=True)


def candidate_plays(state: Go5State, seat: int) -> list[dict[str, Any]]:
    """Every meld, lay-off and swap shape worth asking decide about, most of them illegal."""
    hand = list(dict.fromkeys(state.hands[seat]))
    full = list(state.hands[seat])
    out: list[dict[str, Any]] = [
        {"type": "meld", "cards": list(c)} for c in dict.fromkeys(itertools.combinations(full, 3))
    ]
    out += [{"type": "lay_off", "set": s.id, "card": c} for s in state.sets for c in hand]  # any owner
    own = [s.id for s in state.sets if s.owner == seat]
    for victim in state.sets:
        if victim.owner == seat:  # refused as `own_set` (test_go5_rules); keeps the brute force small
            continue
        for take in dict.fromkeys(victim.cards):
            for give in hand:
                rest = list(full)
                rest.remove(give)
                base = {"type": "swap", "from_seat": victim.owner, "set": victim.id, "take": take, "give": give}
                thens: list[dict[str, Any]] = [{"lay_off": {"set": set_id}} for set_id in own]
                thens += [{"meld": {"cards": [take, *pair]}} for pair in dict.fromkeys(itertools.combinations(rest, 2))]
                out += [{**base, "then": then} for then in thens]
    return out


def check_complete(snap: engine.Snapshot[Any], event: Event) -> None:
    """In a play phase, the plays decide accepts are exactly the listed ones (up to card order and `by`)."""
    state: Go5State = snap.state
    if snap.finished or state.phase != "play" or state.pending or state.played or len(state.sets) < 2:
        return
    seat, game = state.turn, snap.game
    listed = {_normal(a) for a in engine.legal_actions(snap, seat) if a["type"] in ("meld", "lay_off", "swap")}
    accepted = set()
    for action in candidate_plays(state, seat):
        try:
            game.decide(state, seat, game.parse_action(action))
        except DomainError:
            continue
        accepted.add(_normal(action))
    assert accepted == listed, (sorted(accepted - listed)[:3], sorted(listed - accepted)[:3])


@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
@given(seed=SEEDS, players=st.integers(2, 4))
def test_every_play_that_decide_accepts_is_listed(seed: str, players: int) -> None:
    """legal_actions is exact in the play phase: brute force over melds, lay-offs and swaps (V-8, V-9)."""
    play(engine.make_config("go5", players, {"target": 40}, seed), seed, check_complete)


@settings(max_examples=15, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
@given(
    seed=SEEDS,
    players=st.integers(2, 4),
    values=st.lists(st.integers(1, 100), min_size=7, max_size=7),
    joker=st.integers(-100, 0),
)
def test_every_round_ends_whatever_the_options(seed: str, players: int, values: list[int], joker: int) -> None:
    """V-12 / V-14: a round ends by a five, Go5 or the stock running out twice: three rounds of random
    play take a bounded number of actions for any options (the stock only shrinks, one reshuffle)."""
    config = engine.make_config("go5", players, {"pattern_values": values, "joker_value": joker}, seed)
    snap, _ = engine.start(config)
    stream = SeededStream(seed, "rounds")
    for _ in range(3 * 200):
        if snap.finished or snap.state.round > 3:
            return
        seat = stream.choice(snap.to_act())
        snap, _ = engine.act(snap, seat, stream.choice(engine.legal_actions(snap, seat)))
    raise AssertionError("three rounds took more than 600 actions")
