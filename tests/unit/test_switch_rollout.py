"""Switch's fast rollout ends every hand exactly where the expert's engine rollout does (S-4 ... S-11),
and the expert values that end by its points (S-10, S-11).

`switch_rollout.hand_end` plays the rest of a hand on one mutable table instead of through
the engine; with the same worlds, candidate actions and streams, its totals must be those
`expert.rollout` reaches: hands that end by going out or by a pending draw taken, with and
without match_rank, extra jokers and twos, four to ten players, the game's end or the next
hand, and the horizon cutting a hand short.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action, expert, switch_rollout
from domain.bots import switch as switch_bot
from domain.bots.switch_greedy import greedy
from domain.bots.switch_rollout import HandEnd, hand_end, points_value
from domain.scores import lowest_totals
from domain.shuffle import SeededStream
from domain.switch import hand_value
from tests.unit.switch_helpers import Table

PLAIN = {
    0: ["3D", "4D", "5D", "6D", "7D", "9D", "10D"],
    1: ["3H", "4H", "5H", "6H", "7H", "9H", "10H"],
    2: ["3S", "4S", "5S", "6S", "7S", "9S", "10S"],
    3: ["3C", "4C", "5C", "6C", "7C", "9C", "10C"],
}

Snap = engine.Snapshot[Any]

GAMES = [
    (4, {"target": 1}),
    (4, {"target": 120}),
    (5, {"target": 60, "match_rank": True}),
    (6, {"target": 40, "extra_jokers": 8, "extra_twos": 8, "hand_size": 12}),
    (10, {"target": 50, "hand_size": 15}),
]


def positions(players: int, options: dict[str, Any], seed: str, every: int) -> Iterator[Snap]:
    """Every `every`-th position of a greedy game."""
    snap, _ = engine.start(engine.make_config("switch", players, options, seed))
    step = 0
    while not snap.finished and step < 240:
        if step % every == 0:
            yield snap
        (seat,) = snap.to_act()
        view = engine.view(snap, seat)
        snap, _ = engine.act(
            snap, seat, choose_action("switch", "greedy", view, view["you"]["legal"], SeededStream(seed, str(step)))
        )
        step += 1


def standing(end: HandEnd, seat: int) -> float:
    """The end as `expert.rollout` values a finished hand: the totals, and the winners if the game is over."""
    return expert.standing_value(list(end.after), lowest_totals(end.after) if end.game_over else None, seat, True)


@pytest.mark.parametrize(("players", "options"), GAMES)
def test_the_fast_rollout_ends_every_hand_as_the_engine_rollout_does(players: int, options: dict[str, Any]) -> None:
    compared = 0
    for snap in positions(players, options, f"rollout-{players}", every=4):
        (seat,) = snap.to_act()
        view = engine.view(snap, seat)
        world = switch_bot.sample_world(view, SeededStream("world", str(snap.version)))
        for action in view["you"]["legal"][:3]:
            stream = f"stream/{snap.version}"
            end = hand_end(world, seat, action, stream, 400)
            assert end.before == world.state.totals
            if not end.ended:  # cut short by the horizon: the engine rollout counts no points then
                assert expert.rollout(world, seat, action, stream, 400) == expert.utility(world, seat)
                continue
            assert standing(end, seat) == expert.rollout(world, seat, action, stream, 400), (snap.version, action)
            compared += 1
    assert compared >= 20


def engine_plies(world: Snap, seat: int, action: dict[str, Any], stream: str, plies: int) -> Snap:
    """`action`, then `plies` greedy moves through the engine with the rollout's streams."""
    snap, _ = engine.act(world, seat, action)
    for step in range(plies):
        (mover,) = snap.to_act()
        seen = engine.view(snap, mover)
        snap, _ = engine.act(snap, mover, greedy(seen, seen["you"]["legal"], SeededStream(stream, str(step))))
    return snap


def test_the_horizon_cuts_a_hand_short_and_counts_the_hands_as_they_are() -> None:
    """S-10: a hand the horizon cuts short is valued as if it ended there, each hand at its value."""
    snap = next(positions(4, {"target": 1}, "rollout-horizon", every=1))
    (seat,) = snap.to_act()
    view = engine.view(snap, seat)
    world = switch_bot.sample_world(view, SeededStream("horizon", "w"))
    action = view["you"]["legal"][0]
    for horizon in (0, 1, 5, 30):
        cut = engine_plies(world, seat, action, "h", horizon)
        assert cut.state.round == world.state.round and not cut.finished
        expected = tuple(
            total + hand_value(hand) for total, hand in zip(world.state.totals, cut.state.hands, strict=True)
        )
        assert hand_end(world, seat, action, "h", horizon) == HandEnd(world.state.totals, expected, False, 1)


def test_a_hand_left_to_one_player_under_a_pending_draw_ends_as_in_the_engine() -> None:
    """S-9: seats 1 and 2 go out on 2s, then seat 3 on a joker in the rollout, and seat 0 alone holds
    cards: in rules version 2 it takes the pending draw of 9 first, in version 1 it does not. The fast
    rollout values both as the engine does, and the two versions differ."""
    values = {}
    for rules_version in (1, 2):
        table = Table.stacked({"target": 1000}, hands=PLAIN, start="5H", rules_version=rules_version)
        table.set_hands({1: ["2H"], 2: ["2C"], 3: ["JK"]})
        table.play(1, "2H")
        action = {"type": "play", "cards": ["2C"]}
        end = hand_end(table.snap, 2, action, "one-left", 400)
        values[rules_version] = standing(end, 2)
        assert values[rules_version] == expert.rollout(table.snap, 2, action, "one-left", 400)
    assert values[1] != values[2]


def test_the_expert_s_rollout_values_the_hand_as_it_stands_after_its_plies() -> None:
    """S-10: the expert's rollout plays ROLLOUT_PLIES plies a seat after its action, then counts each
    hand at its value as if the hand ended there."""
    snap = next(positions(4, {"target": 1}, "rollout-plies", every=1))
    (seat,) = snap.to_act()
    world = switch_bot.sample_world(engine.view(snap, seat), SeededStream("plies", "w"))
    for action in engine.legal_actions(world, seat)[:3]:
        cut = engine_plies(world, seat, action, "p", switch_bot.ROLLOUT_PLIES * 4)
        assert cut.state.round == world.state.round and not cut.finished
        added = [hand_value(hand) for hand in cut.state.hands]
        others = sum(added) - added[seat]
        expected = -added[seat] + switch_rollout.RIVALS_WEIGHT * others / 3
        assert switch_bot.expert_rollout(world, seat, action, "p", 400) == pytest.approx(expected)


# ---------------------------------------------------------------- the value of a hand's end


def test_a_hand_s_end_is_worth_the_points_the_seat_adds() -> None:
    """S-10: going out (0 points) beats holding a 3 (5), which beats holding a joker (50)."""
    before = (100, 40, 70, 10)
    out = HandEnd(before, (100, 45, 90, 60), False, 500)
    three = HandEnd(before, (105, 40, 90, 60), False, 500)
    joker = HandEnd(before, (150, 40, 90, 60), False, 500)
    assert out.added == [0, 5, 20, 50]
    assert points_value(out, 0) > points_value(three, 0) > points_value(joker, 0)
    rivals = switch_rollout.RIVALS_WEIGHT * (5 + 20 + 50) / 3
    assert points_value(out, 0) == pytest.approx(rivals)
    assert points_value(joker, 0) - points_value(three, 0) == pytest.approx(-45), "the same points for the others"


def test_points_the_others_add_count_by_the_rivals_weight() -> None:
    """S-10, S-7: a seat that makes the others hold more (a pending draw they take) gains by the
    rivals' weight of their mean; the race is lowest total against the others, not alone."""
    calm = HandEnd((0, 0, 0, 0), (5, 10, 10, 10), True, 500)
    attack = HandEnd((0, 0, 0, 0), (5, 40, 10, 10), True, 500)
    assert switch_rollout.RIVALS_WEIGHT > 0
    assert points_value(attack, 0) - points_value(calm, 0) == pytest.approx(switch_rollout.RIVALS_WEIGHT * 30 / 3)
    assert points_value(attack, 1) < points_value(calm, 1)


def test_the_totals_before_the_hand_do_not_change_its_value_until_the_game_ends() -> None:
    """S-10: only the points added in the hand count while the race to `target` goes on."""
    early = HandEnd((0, 0, 0, 0), (20, 0, 35, 5), False, 500)
    late = HandEnd((300, 120, 80, 250), (320, 120, 115, 255), False, 500)
    assert [points_value(early, s) for s in range(4)] == [points_value(late, s) for s in range(4)]


def test_a_hand_that_ends_the_game_adds_the_win_worth_the_target() -> None:
    """S-11: the lowest total wins; the win is worth `target` points (WIN_VALUE at most) and a loss
    takes away a third of that among four seats (C-7: equal lowest totals share the win)."""
    for target, win in ((1, 1.0), (500, 500.0), (100_000, expert.WIN_VALUE)):
        over = HandEnd((0, 0, 0, 0), (0, 15, target, 0), True, target)
        cut = dataclasses.replace(over, ended=False)  # the same points, the game not over
        assert over.game_over and not cut.game_over
        assert points_value(over, 0) == pytest.approx(points_value(cut, 0) + win)
        assert points_value(over, 3) == pytest.approx(points_value(cut, 3) + win), "a shared win"
        assert points_value(over, 1) == pytest.approx(points_value(cut, 1) - win / 3)


def test_a_hand_that_ends_the_game_is_scored_from_the_totals() -> None:
    """S-11: the winner is the lowest total after the hand, not the seat that added least in it."""
    end = HandEnd((480, 0, 30, 30), (480, 60, 30, 45), True, 60)
    cut = dataclasses.replace(end, ended=False)
    assert end.game_over
    assert points_value(end, 0) < points_value(cut, 0), "seat 0 added nothing and still lost"
    assert points_value(end, 2) > points_value(cut, 2)
