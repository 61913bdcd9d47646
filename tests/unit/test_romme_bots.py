"""Rommé bots (`random`, `greedy`): legal, view-only and deterministic choices; the greedy
heuristics the issue names (melds and lays off, takes the pile when it pays, keeps the QS out
of its hand, goes out when it can); greedy beats random; bot games end."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action
from domain.bots import romme as romme_bot
from domain.shuffle import SeededStream
from tests.unit.romme_helpers import Table, run_hand

Snap = engine.Snapshot[Any]
JUNK0 = ["AS", "3S", "5S", "8S", "10S", "JS", "KH", "2H", "4H", "6H", "8H", "10H", "7D", "QD", "4D"]
JUNK1 = ["2S", "4S", "6S", "8S", "10S", "AH", "3H", "5H", "7H", "9H", "JH", "3C", "5C", "7C", "9C"]


def decide(snap: Snap, seat: int, level: str = "greedy", rng: SeededStream | None = None) -> dict[str, Any]:
    """What the bot decides for `seat`, checked: legal, inputs untouched, same answer from a JSON copy."""
    view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
    view_before, legal_before = copy.deepcopy(view), copy.deepcopy(legal)
    rng = rng or SeededStream("bot-test", f"{snap.version}/{seat}")
    twin = copy.deepcopy(rng)
    action = choose_action("romme", level, view, legal, rng)
    assert action in legal
    assert view == view_before and legal == legal_before, "a bot must not change its inputs"
    assert choose_action("romme", level, json.loads(json.dumps(view)), json.loads(json.dumps(legal)), twin) == action
    return action


def play_game(config: engine.GameConfig, levels: Sequence[str], check: bool = False) -> Snap:
    snap, _ = engine.start(config)
    rngs = [SeededStream(config.seed, f"bot/{seat}") for seat in range(config.players)]
    for step in range(40_000):
        if snap.finished:
            return snap
        (seat,) = snap.to_act()
        if check and step % 5 == 0:
            action = decide(snap, seat, levels[seat], rngs[seat])
        else:
            view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
            action = choose_action("romme", levels[seat], view, legal, rngs[seat])
        snap, _ = engine.act(snap, seat, action)
    raise AssertionError("the game did not finish")


def run_turn(table: Table, seat: int, limit: int = 40) -> list[dict[str, Any]]:
    """Let the greedy bot play `seat` until its turn ends; the actions it took."""
    taken = []
    for _ in range(limit):
        if table.snap.finished or table.to_act != (seat,):
            return taken
        action = decide(table.snap, seat)
        taken.append(action)
        table.act(seat, action)
        if action["type"] == "discard":
            return taken
    raise AssertionError("the turn did not end")


# ---------------------------------------------------------------- legality and determinism


@pytest.mark.parametrize("levels", [("greedy", "random"), ("random", "greedy", "greedy"), ("greedy",) * 4])
def test_bot_games_end_with_legal_checked_decisions(levels: tuple[str, ...]) -> None:
    config = engine.make_config("romme", len(levels), {"target": 250}, f"bots-{len(levels)}")
    snap = play_game(config, levels, check=True)
    assert snap.finished and len(engine.view(snap, None)["result"]["winners"]) == 1


def test_random_vs_random_games_end() -> None:
    for n in (2, 3, 4):
        config = engine.make_config("romme", n, {"target": 1000}, f"random-{n}")
        assert play_game(config, ["random"] * n).finished


def test_the_same_view_and_stream_give_the_same_choice() -> None:
    table = Table(2, seed="same")
    table.cut(1, 40)
    first = decide(table.snap, 1, rng=SeededStream("x", "y"))
    again = decide(table.snap, 1, rng=SeededStream("x", "y"))
    assert first == again


def test_greedy_beats_random() -> None:
    wins = Counter[str]()
    for game in range(8):
        levels = ["greedy", "random"] if game % 2 == 0 else ["random", "greedy"]
        config = engine.make_config("romme", 2, {"target": 400}, f"strength-{game}")
        snap = play_game(config, levels)
        wins[levels[engine.view(snap, None)["result"]["winners"][0]]] += 1
    assert wins["greedy"] >= 6, wins


# ---------------------------------------------------------------- heuristics


def test_greedy_goes_out_when_it_can() -> None:
    hand = run_hand("AH 2H 3H", "4D 5D 6D", "7C 8C 9C", "10C JC QC", "JS QS KS")
    table = Table.dealt(2, {1: hand, 0: JUNK0}, stock=["2C"], options={"target": 5000})
    actions = run_turn(table, 1)
    types = [a["type"] for a in actions]
    assert types[0] == "draw" and types[-1] == "discard" and set(types[1:-1]) == {"meld"}, types
    assert table.of_type("WentOut") and table.last("RoundScored")["winner"] == 1


def test_greedy_goes_out_by_laying_off_its_joker() -> None:
    """After its melds it holds a joker and one card: the joker goes onto a meld, the card out."""
    hand = ["5H", "6H", "7H", "8H", "QS", "QD", "JK", "9C", "9D", "9S", "4H", "KD", "2C", "3C", "4C"]
    table = Table.dealt(2, {1: hand, 0: JUNK0}, stock=["QC"])
    actions = run_turn(table, 1)
    assert actions[-1]["type"] == "discard" and table.of_type("WentOut"), actions


def test_greedy_melds_and_lays_off_what_it_can() -> None:
    hand = ["5H", "6H", "7H", "8H", "9S", "9D", "9C", "2S", "4S", "KD", "JC", "3D", "10S", "QC", "4H"]
    table = Table.dealt(2, {1: hand, 0: JUNK0}, stock=["KS"])
    run_turn(table, 1)
    laid = sorted(c for m in table.melds(1) for c in m["cards"])
    assert sorted(["4H", "5H", "6H", "7H", "8H", "9S", "9D", "9C"]) == laid


def test_greedy_takes_the_pile_when_it_pays() -> None:
    """The top card completes a run of high cards and the rest of the pile fits it too."""
    hand0 = ["10H", "JH", "4S", "6S", "8S", "2D", "4D", "6D", "8D", "3C", "5C", "7C", "9C", "2S", "QS"]
    hand1 = ["AH", "3H", "5H", "7H", "9H", "KS", "2C", "4C", "6C", "8C", "10C", "AD", "3D", "5D", "7D"]
    table = Table.dealt(2, {0: hand0, 1: hand1}, stock=["KH"])
    table.draw(1)
    table.discard(1, "9H")  # 9H on the pile, below nothing: seat 0 may take it with 10H JH
    action = decide(table.snap, 0)
    assert action["type"] == "take_discard" and "9H" in action["meld"]["cards"], action


def test_greedy_does_not_take_a_pile_that_would_saddle_it_with_the_qs() -> None:
    hand0 = ["10H", "JH", "4S", "6S", "8S", "2D", "4D", "6D", "8D", "3C", "5C", "7C", "9C", "2S", "10D"]
    hand1 = ["AH", "3H", "5H", "7H", "9H", "KS", "2C", "4C", "6C", "8C", "10C", "AD", "3D", "5D", "QS"]
    table = Table.dealt(2, {0: hand0, 1: hand1}, stock=["KC", "KD", "9D"])
    table.draw(1)
    table.discard(1, "QS")
    table.draw(0)
    table.discard(0, "KD")
    table.draw(1)
    table.discard(1, "9H")  # pile QS KD 9H: taking 9H means taking the QS too
    action = decide(table.snap, 0)
    assert action == {"type": "draw"}, action


def test_greedy_discards_a_hopeless_qs() -> None:
    hand = ["QS", "2H", "4H", "6H", "8H", "10H", "3D", "5D", "7D", "9D", "2C", "4C", "6C", "8C", "10C"]
    table = Table.dealt(2, {1: hand, 0: JUNK0}, stock=["KD"])
    actions = run_turn(table, 1)
    assert actions[-1] == {"type": "discard", "card": "QS"}


def test_greedy_lays_the_qs_off_rather_than_holding_it() -> None:
    hand = ["QH", "QD", "QC", "QS", "2H", "4H", "6H", "8H", "10H", "3D", "5D", "7D", "9D", "2C", "4C"]
    table = Table.dealt(2, {1: hand, 0: JUNK0}, stock=["KD"])
    run_turn(table, 1)
    assert "QS" not in table.hand(1)
    assert any("QS" in m["cards"] for m in table.melds(1))


def test_greedy_takes_the_pile_when_the_stock_is_empty_and_it_must() -> None:
    table = Table.dealt(2, {0: JUNK0, 1: JUNK1}, stock_bottom=["7D"])
    seat = 1
    for _ in range(79):
        before = Counter(table.hand(seat))
        table.draw(seat)
        (drawn,) = list((Counter(table.hand(seat)) - before).elements())
        table.discard(seat, drawn)
        seat = 1 - seat
    table.draw(0)
    table.discard(0, "7D")
    assert table.table["stock_size"] == 0
    action = decide(table.snap, 1)
    assert action["type"] == "take_discard"


def test_the_plan_values_melds_and_counts_the_qs() -> None:
    assert romme_bot.plan_value(["5H", "6H", "7H", "2C"], []) > romme_bot.plan_value(["5H", "6H", "9H", "2C"], [])
    assert romme_bot.plan_value(["QS", "2C"], []) < romme_bot.plan_value(["KS", "2C"], []) - 80
    assert romme_bot.plan_value(["QS", "2C"], [(1, "set", ("QH", "QD", "QC"))]) > 0
