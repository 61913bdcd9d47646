"""The Go5 expert: its sampled worlds look exactly like the seat's view (C-6), it resamples, it decides alike.

A world is built from the seat view alone (V-1 ... V-16): the seat's hand, every set, the top
discard and the stop cards laid out (V-6) or played (V-10) are kept; the other hands, the
discard pile below its top and the stock are dealt at random from the rest.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action
from domain.bots import go5 as go5_bot
from domain.bots.expert import Budget, search
from domain.shuffle import SeededStream
from tests.unit.go5_helpers import CANONICAL, JOKER, N3, STOP, Table, claim_table, plain_move, play_until

Snap = engine.Snapshot[Any]
SMALL = Budget(samples=2, think_ms=10**6)
GAMES = [(2, ("greedy", "random")), (3, ("random", "greedy", "greedy")), (4, ("greedy", "random") * 2)]


def reachable(players: int, levels: tuple[str, ...], seed: str) -> Iterator[Snap]:
    """Every state of a whole bot game; the acting seat is drawn from to_act, so claims race draws (V-13)."""
    snap, _ = engine.start(engine.make_config("go5", players, {"target": 100}, seed))
    picker = SeededStream(seed, "who-acts")
    for step in range(5_000):
        if snap.finished:
            return
        yield snap
        seats = snap.to_act()
        seat = seats[picker.below(len(seats))]
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        snap, _ = engine.act(snap, seat, choose_action("go5", levels[seat], view, legal, SeededStream(seed, str(step))))
    raise AssertionError("the game did not finish")


def reshuffled_states() -> Iterator[Snap]:
    """States after the discard pile became the stock (V-14), from a game where nobody ever plays."""
    table = Table(3, seed="expert-reshuffle")
    play_until(table, lambda t: t.snap.state.reshuffles == 1)
    for _ in range(12):
        yield table.snap
        seat = table.snap.state.turn
        table.act(seat, plain_move(table, seat))


def as_json(view: Mapping[str, Any]) -> dict[str, Any]:
    """The view as a client receives it: a fresh JSON object with no link to any state."""
    copied: dict[str, Any] = json.loads(json.dumps(view))
    return copied


def world_of(snap: Snap, seat: int, bot_seed: str) -> Snap:
    return go5_bot.sample_world(as_json(engine.view(snap, seat)), SeededStream(bot_seed, "world"))


def all_cards(snap: Snap) -> Counter[str]:
    """Every card of the round wherever it lies: hands, sets, discard pile, stock, stop cards out or laid out."""
    state = snap.state
    cards = Counter(c for hand in state.hands for c in hand)
    cards.update(c for s in state.sets for c in s.cards)
    cards.update([*state.discard, *state.stock])
    cards[STOP] += sum(state.stops) + state.stops_out
    return cards


def hidden(snap: Snap, seat: int) -> dict[str, Any]:
    """What `seat` cannot see: the other hands, the discard pile below its top and the stock in order."""
    state = snap.state
    return {
        "hands": [hand for s, hand in enumerate(state.hands) if s != seat],
        "under": state.discard[:-1],
        "stock": state.stock,
    }


def check_world(snap: Snap, seat: int, world: Snap) -> None:
    """The world is the real game as far as `seat` can tell (C-6), and a possible Go5 round (V-1, V-6)."""
    assert engine.view(world, seat) == engine.view(snap, seat)
    assert engine.legal_actions(world, seat) == engine.legal_actions(snap, seat)
    assert world.to_act() == snap.to_act()
    assert world.config.seed != snap.config.seed
    assert all_cards(world) == Counter(CANONICAL)
    assert all(STOP not in hand for hand in world.state.hands), "V-6: a stop card is never held"
    assert STOP not in world.state.discard, "V-11: only hand cards are discarded"


# ---------------------------------------------------------------- (1) the world looks exactly like the view


@pytest.mark.parametrize(("players", "levels"), GAMES)
def test_a_world_looks_exactly_like_the_view_to_every_seat(players: int, levels: tuple[str, ...]) -> None:
    """C-6: in every state of whole games, for every seat: the same view, legal actions and seats to act."""
    seen: Counter[str] = Counter()
    for snap in reachable(players, levels, f"expert-worlds-{players}"):
        for seat in range(players):
            check_world(snap, seat, world_of(snap, seat, f"bot-{snap.version}-{seat}"))
        table = engine.view(snap, None)["table"]
        laid_out = sum(p["stops"] for p in table["players"]) + table["stops_out"]
        seen["stop cards laid out (V-6)"] += laid_out > 0
        seen["stop cards unseen (V-6)"] += laid_out < 3
        seen["Go5 windows (V-13)"] += table["go5_open"]
        seen["sets (V-9)"] += any(p["sets"] for p in table["players"])
        seen["discard piles (V-11)"] += table["discard_size"] > 1
    assert all(seen[kind] for kind in ("stop cards laid out (V-6)", "stop cards unseen (V-6)", "sets (V-9)")), seen
    assert seen["discard piles (V-11)"], seen


def test_a_world_looks_like_the_view_after_a_reshuffle() -> None:
    """V-14: after the reshuffle the stock holds no stop card; the world agrees for every seat."""
    states = list(reshuffled_states())
    assert states and all(snap.state.reshuffles == 1 for snap in states)
    for snap in states:
        for seat in range(snap.config.players):
            check_world(snap, seat, world_of(snap, seat, f"bot-{snap.version}"))


def test_a_world_keeps_an_open_go5_call() -> None:
    """V-13: seat 1 may call Go5 on seat 2's discard; its world lets it, and lists it first to act."""
    table = claim_table(N3[5])
    for seat in range(3):
        world = world_of(table.snap, seat, "claim")
        check_world(table.snap, seat, world)
    assert world_of(table.snap, 1, "claim").to_act()[0] == 1


# ---------------------------------------------------------------- (2) the hidden cards are really resampled


@pytest.mark.parametrize(("players", "levels"), GAMES)
def test_two_bot_seeds_deal_the_hidden_cards_differently(players: int, levels: tuple[str, ...]) -> None:
    """The world is sampled, not read: two bot seeds give different hidden cards, and neither is the real deal."""
    states = differing = real = 0
    for snap in reachable(players, levels, f"expert-resample-{players}"):
        seat = snap.to_act()[0]
        first, second = world_of(snap, seat, "one"), world_of(snap, seat, "two")
        states += 1
        differing += hidden(first, seat) != hidden(second, seat)
        real += hidden(first, seat) == hidden(snap, seat)
    assert differing == states, "two bot seeds dealt the same hidden cards"
    assert real == 0, "a world reproduced the real hidden cards"


def test_the_same_bot_seed_deals_the_same_world() -> None:
    snap = next(s for s in reachable(3, GAMES[1][1], "expert-same-world") if s.state.sets)
    assert engine.full_view(world_of(snap, 0, "same")) == engine.full_view(world_of(snap, 0, "same"))


def test_jokers_and_stop_cards_go_only_where_they_may() -> None:
    """V-6: the unseen stop cards are all in the stock; the unseen jokers turn up in other hands too."""
    snap = engine.start(engine.make_config("go5", 4, {}, "expert-jokers"))[0]
    unseen_stops = 3 - sum(snap.state.stops)
    jokers_in_hands = 0
    for k in range(40):
        world = world_of(snap, 0, f"j{k}")
        assert world.state.stock.count(STOP) == unseen_stops
        jokers_in_hands += sum(hand.count(JOKER) for hand in world.state.hands[1:])
    assert jokers_in_hands > 0


# ---------------------------------------------------------------- (3) the expert's choice


def decision_points(seed: str, limit: int) -> Iterator[tuple[Snap, int]]:
    """(state, seat) pairs along a 3-player greedy game where the expert has a real choice."""
    count = 0
    for snap in reachable(3, ("greedy",) * 3, seed):
        seat = snap.to_act()[0]
        if len(engine.legal_actions(snap, seat)) > 1:
            yield snap, seat
            count += 1
            if count == limit:
                return


def test_the_expert_picks_a_legal_action_and_the_same_one_for_the_same_seed() -> None:
    searched = 0
    for snap, seat in decision_points("expert-decides", limit=14):
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        first = search(as_json(view), legal, SeededStream("bot", str(snap.version)), SMALL)
        again = search(as_json(view), legal, SeededStream("bot", str(snap.version)), SMALL)
        assert first in legal
        assert first == again
        searched += len(go5_bot.expert_candidates(view, legal, SMALL.max_candidates)) > 1
    assert searched > 0, "no decision was searched"


def test_the_expert_leaves_its_inputs_untouched() -> None:
    snap, seat = next(decision_points("expert-inputs", limit=1))
    view, legal = as_json(engine.view(snap, seat)), engine.legal_actions(snap, seat)
    before = json.dumps([view, legal], sort_keys=True)
    search(view, legal, SeededStream("bot", "inputs"), SMALL)
    assert json.dumps([view, legal], sort_keys=True) == before


def test_a_go5_call_is_not_searched() -> None:
    """V-13: the expert calls Go5 as greedy does, without a search."""
    table = claim_table(N3[5])
    view, legal = engine.view(table.snap, 1), table.legal(1)
    assert go5_bot.expert_candidates(view, legal, 8) == []
    assert search(view, legal, SeededStream("bot", "call"), SMALL) == {"type": "go5", "set": 1}


def test_the_shortlist_holds_both_draws_and_stays_within_its_limit() -> None:
    """V-7: the draw is always searched; plays (V-8) and discards (V-11) only within the limit."""
    draws = shortlists = 0
    for snap, seat in decision_points("expert-shortlist", limit=40):
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        for limit in (2, 8):
            chosen = go5_bot.expert_candidates(view, legal, limit)
            assert len(chosen) <= limit and len(set(chosen)) == len(chosen)
            assert all(0 <= i < len(legal) for i in chosen)
        kinds = {a["type"] for a in legal}
        if "draw" in kinds and "go5" not in kinds:
            draws += 1
            assert sorted(legal[i]["from"] for i in go5_bot.expert_candidates(view, legal, 8)) == ["discard", "stock"]
        shortlists += 1
    assert draws and shortlists
