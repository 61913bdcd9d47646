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
