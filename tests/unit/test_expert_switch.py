"""Switch's expert hooks: sampled worlds look exactly like the seat's view (C-6), and the search decides legally.

`sample_world` deals every card a seat cannot see (other hands, the stock, S-1 / S-2)
at random; from that seat the sampled game must be indistinguishable from the real one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action
from domain.bots import switch as switch_bot
from domain.bots.expert import Budget, search
from domain.shuffle import SeededStream
from domain.switch import SWITCH
from tests.unit.switch_helpers import Table, cards_everywhere, rank

Snap = engine.Snapshot[Any]

GAMES = [
    (4, {"target": 60}),
    (5, {"target": 40, "match_rank": True}),
    (6, {"target": 40, "extra_jokers": 4, "extra_twos": 4, "hand_size": 9}),
]


def positions(players: int, options: dict[str, Any], seed: str, limit: int = 240) -> Iterator[Snap]:
    """Every position of a game between greedy and random bots (random every third stretch), in order."""
    snap, _ = engine.start(engine.make_config("switch", players, options, seed))
    for step in range(limit):
        if snap.finished:
            return
        yield snap
        (seat,) = snap.to_act()
        level = "random" if step // 5 % 3 == 0 else "greedy"
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        snap, _ = engine.act(snap, seat, choose_action("switch", level, view, legal, SeededStream(seed, str(step))))


def world(snap: Snap, seat: int, seed: str) -> Snap:
    return switch_bot.sample_world(engine.view(snap, seat), SeededStream(seed, "world"))


def hidden(snap: Snap, seat: int) -> tuple[Any, ...]:
    """What `seat` cannot see: the other hands (in C-3 order) and the stock."""
    full = SWITCH.full_view(snap.state)["table"]
    return tuple(tuple(hand) for s, hand in enumerate(full["hands"]) if s != seat), tuple(full["stock"])


# ---------------------------------------------------------------- the world property


@pytest.mark.parametrize(("players", "options"), GAMES)
def test_a_sampled_world_looks_exactly_like_the_real_game_from_the_seat(players: int, options: dict[str, Any]) -> None:
    """C-6: for every seat at every position, the world's view and legal actions are the real ones."""
    drawn_elsewhere = 0
    for step, snap in enumerate(positions(players, options, f"world-{players}")):
        for seat in range(players):
            view = engine.view(snap, seat)
            sampled = switch_bot.sample_world(view, SeededStream(f"s{step}", str(seat)))
            assert engine.view(sampled, seat) == view
            assert engine.legal_actions(sampled, seat) == engine.legal_actions(snap, seat)
            drawn_elsewhere += view["table"]["drawn_by"] not in (None, seat)
    assert drawn_elsewhere, "no position had a card drawn by another seat (S-6)"


@pytest.mark.parametrize(("players", "options"), GAMES)
def test_a_sampled_world_holds_exactly_the_game_s_cards(players: int, options: dict[str, Any]) -> None:
    """S-1: the world deals the whole deck, each card once, and keeps the seat's hand and the pile."""
    for step, snap in enumerate(positions(players, options, f"cards-{players}", limit=80)):
        seat = step % players
        sampled = world(snap, seat, f"c{step}")
        assert cards_everywhere(sampled) == Counter(SWITCH.canonical_deck(players, snap.config.options))
        assert sorted(sampled.state.hands[seat]) == sorted(snap.state.hands[seat])
        assert sampled.state.discard == snap.state.discard


def test_a_card_drawn_by_another_seat_is_playable_in_the_world() -> None:
    """S-6: the card another seat drew and may still play matches the suit in the world too."""
    table = Table.stacked(hands={1: ["3H", "4H"]}, start="5S", stock=["9S"])
    table.draw(1)
    assert table.table["drawn_by"] == 1
    for seed in map(str, range(12)):
        sampled = world(table.snap, 2, seed)
        drawn = sampled.state.drawn
        assert drawn is not None and drawn in sampled.state.hands[1]
        assert drawn == "JK" or rank(drawn) == "J" or drawn.endswith("S"), "S-4: it matches the suit, spades"
        assert engine.legal_actions(sampled, 1)[-1] == {"type": "pass"}
        assert engine.view(sampled, 2) == table.view(2)


# ---------------------------------------------------------------- resampling, view-only input


def test_the_unseen_cards_are_really_resampled() -> None:
    """Two seeds of the bot's own deal the other hands and the stock differently; none copies the truth."""
    for snap in list(positions(4, {"target": 60}, "resample", limit=30))[::6]:
        seat = snap.to_act()[0]
        worlds = [hidden(world(snap, seat, seed), seat) for seed in ("one", "two", "three")]
        assert len(set(worlds)) == 3
        assert hidden(snap, seat) not in worlds


def test_a_world_comes_from_the_view_alone() -> None:
    """C-6: the same view (here a JSON copy) and seed give the same world, whatever the hidden cards."""
    mine = ["JC", "3S", "4S", "5S", "3D", "4C", "6D"]
    hearts, clubs = ["3H", "4H", "6H", "7H", "9H", "10H", "QH"], ["3C", "5C", "6C", "7C", "9C", "10C", "QC"]
    one = Table.stacked(hands={1: mine, 2: hearts, 0: clubs}, start="5H", stock=["9H", "AS"])
    two = Table.stacked(hands={1: mine, 2: clubs, 0: hearts}, start="5H", stock=["AS", "KD"])
    view = one.view(1)
    assert two.view(1) == view
    first = switch_bot.sample_world(view, SeededStream("same", "world"))
    again = switch_bot.sample_world(json.loads(json.dumps(two.view(1))), SeededStream("same", "world"))
    assert first.state == again.state
    assert first.config.seed not in (one.config.seed, two.config.seed)


# ---------------------------------------------------------------- the search


SMALL = Budget(samples=2, think_ms=10**6)


def decision_points() -> list[Snap]:
    """Positions where the seat to act has a real choice."""
    return [
        s
        for s in positions(4, {"target": 60}, "decide", limit=60)
        if len(s.game.legal_actions(s.state, s.to_act()[0])) > 1
    ]


def test_the_expert_picks_a_legal_action_the_same_way_for_the_same_seed() -> None:
    points = decision_points()[:8]
    assert points
    for number, snap in enumerate(points):
        seat = snap.to_act()[0]
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        before = json.dumps([view, legal])
        picks = [search(view, legal, SeededStream(f"e{number}", "bot"), SMALL) for _ in range(2)]
        assert picks[0] in legal
        assert picks[0] == picks[1]
        assert json.dumps([view, legal]) == before, "the search must not change its inputs"


def shortlist(table: Table, seat: int = 1, limit: int = 8) -> list[dict[str, Any]]:
    """The actions the expert would search for `seat`."""
    legal = table.legal(seat)
    return [legal[i] for i in switch_bot.expert_candidates(table.view(seat), legal, limit)]


def test_going_out_is_never_searched() -> None:
    """S-9: a play that empties the hand is taken without search."""
    table = Table.stacked(start="5H")
    table.set_hands({1: ["3H"]})
    assert shortlist(table) == []


def test_with_a_fitting_plain_card_only_plain_cards_are_searched() -> None:
    """S-4 / S-6: no J, joker or draw when an ordinary card fits; cards that play alike only once."""
    table = Table.stacked(hands={1: ["4H", "5H", "9H", "KH", "2H", "JC", "JK"]}, start="6H")
    plays = [a["cards"] for a in shortlist(table)]
    assert ["2H"] in plays and ["KH"] in plays
    assert len([c for c in plays if c[0] in ("4H", "5H", "9H")]) == 1, "4H, 5H and 9H play alike (S-5)"
    assert all(c[0] not in ("JC", "JK") for c in plays)
    assert {"type": "draw"} not in shortlist(table)


def test_with_an_opponent_close_to_going_out_a_jack_and_a_joker_are_searched_too() -> None:
    """S-9 / S-10: when another seat holds CLOSE_TO_OUT cards or fewer, the hand may end on its next
    turn, and a joker (50 points) or a J (10) still held then counts: shedding them is searched too."""
    table = Table.stacked(hands={1: ["4H", "5H", "9H", "KH", "2H", "JC", "JK"]}, start="6H")
    assert all(size > switch_bot.CLOSE_TO_OUT for size in table.table["hand_sizes"])
    assert all(a["cards"][0] not in ("JC", "JK") for a in shortlist(table))
    for close in range(1, switch_bot.CLOSE_TO_OUT + 1):
        table.set_hands({3: ["3C", "4C", "5C"][:close]})
        found = shortlist(table)
        assert {"type": "play", "cards": ["JK"]} in found
        named = [a["suit"] for a in found if a["cards"] == ["JC"]]
        assert len(named) == switch_bot.SUITS_SEARCHED and named[0] == "H", "greedy's best suits, hearts first"
        assert ["KH"] in [a["cards"] for a in found], "the ordinary cards are still searched"
        assert {"type": "draw"} not in found


def test_a_jack_is_searched_with_its_best_suits_only() -> None:
    """S-4: with no ordinary card, a J naming greedy's two best suits, and the joker."""
    table = Table.stacked(hands={1: ["JC", "JD", "JK", "3S", "5D", "6D", "7D"]}, start="6H")
    found = shortlist(table)
    jacks = [a["suit"] for a in found if a["cards"][0] in ("JC", "JD")]
    assert jacks == ["D", "S"], "any J plays alike: two suits, most held first"
    assert {"type": "play", "cards": ["JK"]} in found
    assert len(shortlist(table, limit=2)) == 2


def test_after_a_draw_the_drawn_card_and_passing_are_searched() -> None:
    """S-6: a playable drawn card may be played or kept."""
    table = Table.stacked(hands={1: ["3S", "4S", "5D", "6D", "7D", "9C", "10C"]}, start="6H", stock=["QH"])
    table.draw(1)
    assert shortlist(table) == [{"type": "play", "cards": ["QH"]}, {"type": "pass"}]


def test_the_shortlist_holds_legal_indexes() -> None:
    for snap in decision_points()[:10]:
        seat = snap.to_act()[0]
        legal = engine.legal_actions(snap, seat)
        found = switch_bot.expert_candidates(engine.view(snap, seat), legal, 3)
        assert len(found) <= 3 and len(set(found)) == len(found)
        assert all(0 <= i < len(legal) for i in found)
