"""Switch's fast rollout ends every hand exactly where the expert's engine rollout does (S-4 ... S-11).

`switch_rollout.play_out` plays the rest of a hand on one mutable table instead of through
the engine; with the same worlds, candidate actions and streams, its value must equal
`expert.rollout`'s: hands that end by going out or by a pending draw taken, with and without
match_rank, extra jokers and twos, four to ten players, the game's end or the next hand, and
the horizon cutting a hand short.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action, expert
from domain.bots import switch as switch_bot
from domain.bots.switch_rollout import play_out
from domain.shuffle import SeededStream
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


@pytest.mark.parametrize(("players", "options"), GAMES)
def test_the_fast_rollout_values_every_hand_as_the_engine_rollout_does(players: int, options: dict[str, Any]) -> None:
    compared = 0
    for snap in positions(players, options, f"rollout-{players}", every=4):
        (seat,) = snap.to_act()
        view = engine.view(snap, seat)
        world = switch_bot.sample_world(view, SeededStream("world", str(snap.version)))
        for action in view["you"]["legal"][:3]:
            stream = f"stream/{snap.version}"
            engine_value = expert.rollout(world, seat, action, stream, 400)
            assert play_out(world, seat, action, stream, 400) == engine_value, (snap.version, action)
            compared += 1
    assert compared >= 20


def test_the_horizon_cuts_a_hand_short_as_in_the_engine_rollout() -> None:
    snap = next(positions(4, {"target": 1}, "rollout-horizon", every=1))
    (seat,) = snap.to_act()
    view = engine.view(snap, seat)
    world = switch_bot.sample_world(view, SeededStream("horizon", "w"))
    action = view["you"]["legal"][0]
    for horizon in (0, 1, 5, 30):
        assert play_out(world, seat, action, "h", horizon) == expert.rollout(world, seat, action, "h", horizon)


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
        values[rules_version] = play_out(table.snap, 2, action, "one-left", 400)
        assert values[rules_version] == expert.rollout(table.snap, 2, action, "one-left", 400)
    assert values[1] != values[2]
