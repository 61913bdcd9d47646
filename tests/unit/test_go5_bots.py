"""Go5 bot policies: legality, view-only input, determinism, greedy behaviours, strength (V-1 ... V-16)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest

from domain import engine
from domain.bots import choose_action, policy_for
from domain.bots import go5 as go5_bot
from domain.shuffle import SeededStream
from tests.unit.go5_helpers import (
    JOKER,
    JUNK,
    N3,
    STOP,
    ZIG,
    Table,
    build_deck,
    claim_table,
    sets_table,
)

Snap = engine.Snapshot[Any]


# ---------------------------------------------------------------- helpers


def decide(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """What the bot of `level` does for `seat`, given only that seat's view and legal actions."""
    return choose_action("go5", level, engine.view(snap, seat), engine.legal_actions(snap, seat), rng)


def greedy(table: Table, seat: int, seed: str = "t") -> dict[str, Any]:
    return decide(table.snap, seat, "greedy", SeededStream(seed, "bot"))


def checked_decision(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """Decide once: the action is legal, the inputs untouched, and a JSON copy of them decides alike."""
    view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
    view_before, legal_before = copy.deepcopy(view), copy.deepcopy(legal)
    twin = copy.deepcopy(rng)
    action = choose_action("go5", level, view, legal, rng)
    assert action in legal
    assert view == view_before and legal == legal_before, "a bot must not change its inputs"
    assert choose_action("go5", level, json.loads(json.dumps(view)), json.loads(json.dumps(legal)), twin) == action
    return action


def play_game(config: engine.GameConfig, levels: Sequence[str], check: bool = False) -> Snap:
    """A whole game with bots; the acting seat is drawn from to_act (so claims race draws)."""
    snap, _ = engine.start(config)
    rngs = [SeededStream(config.seed, f"bot/{seat}") for seat in range(config.players)]
    picker = SeededStream(config.seed, "who-acts")
    for _ in range(20_000):
        if snap.finished:
            return snap
        seats = snap.to_act()
        seat = seats[picker.below(len(seats))]
        decider = checked_decision if check else decide
        snap, _ = engine.act(snap, seat, decider(snap, seat, levels[seat], rngs[seat]))
    raise AssertionError("game did not finish")


# ---------------------------------------------------------------- dispatch, legality, determinism


def test_go5_has_a_greedy_policy_and_the_generic_random_one() -> None:
    assert policy_for("go5", "greedy") is go5_bot.greedy
    assert policy_for("go5", "random") is not go5_bot.greedy


@pytest.mark.parametrize(
    ("players", "levels", "target"),
    [
        (2, ("greedy", "random"), 60),
        (2, ("greedy", "greedy"), 80),
        (3, ("random", "greedy", "greedy"), 60),
        (4, ("greedy", "random", "greedy", "random"), 40),
        (4, ("greedy",) * 4, 60),
    ],
)
def test_bots_always_pick_a_legal_action_from_the_view_alone(
    players: int, levels: tuple[str, ...], target: int
) -> None:
    for seed in ("a", "b"):
        config = engine.make_config("go5", players, {"target": target}, f"legal-{players}-{seed}")
        assert play_game(config, levels, check=True).finished


def test_same_view_legal_and_seed_give_the_same_action() -> None:
    table = sets_table()
    table.draw(0)
    for level in ("random", "greedy"):
        actions = {json.dumps(decide(table.snap, 0, level, SeededStream("same", "bot"))) for _ in range(5)}
        assert len(actions) == 1


def test_greedy_decides_from_the_view_not_the_hidden_cards() -> None:
    """Two games that differ only deep in the stock give seat 1 the same view, and the same choice."""
    base = build_deck(2, {1: [*N3[:4], *JUNK[:3]]})
    other = list(base)
    other[-1], other[-10] = other[-10], other[-1]
    assert base != other
    tables = [Table(2, decks=[deck]) for deck in (base, other)]
    for table in tables:
        table.draw(1)
    assert tables[0].view(1) == tables[1].view(1)
    assert tables[0].truth() != tables[1].truth()
    assert greedy(tables[0], 1) == greedy(tables[1], 1)


# ---------------------------------------------------------------- greedy behaviours


def test_greedy_calls_go5_at_once() -> None:
    """V-13: seat 1 may call on seat 2's discard; greedy calls."""
    table = claim_table(N3[5])
    assert greedy(table, 1) == {"type": "go5", "set": 1}


def test_greedy_next_player_calls_go5_rather_than_drawing() -> None:
    table = claim_table(N3[4])
    assert greedy(table, 0) == {"type": "go5", "set": 2}


def test_greedy_takes_a_discard_that_makes_a_set_and_leaves_a_useless_one() -> None:
    """V-7: the top discard 3-checks-violet makes a set of 3s with the hand; 6-dots-violet does not."""
    useful = Table.stacked(2, {1: [N3[0], N3[1], *JUNK[:5]]}, discard=N3[3])
    assert greedy(useful, 1) == {"type": "draw", "from": "discard"}
    useless = Table.stacked(2, {1: [N3[0], N3[1], *JUNK[:5]]}, discard="6-dots-violet")
    assert greedy(useless, 1) == {"type": "draw", "from": "stock"}


def test_greedy_melds_the_best_set() -> None:
    """V-8 (a): of the 3s (1+2+3) and the zigzags (5+5+5 with 2-zigzag-violet), it lays the zigzags."""
    table = Table.stacked(2, {1: [N3[0], N3[1], N3[2], ZIG[0], ZIG[1], ZIG[2], JUNK[0]]})
    table.draw(1)
    assert greedy(table, 1) == {"type": "meld", "cards": ZIG[:3], "by": "pattern"}


def test_greedy_lays_off_onto_its_own_set() -> None:
    table = Table.stacked(2, {1: [*N3[:4], *JUNK[:3]], 0: JUNK[3:10]})
    table.draw(1)
    table.meld(1, N3[:3])
    table.discard(1, JUNK[0])
    table.turn(0, JUNK[3])
    table.draw(1)
    assert greedy(table, 1) == {"type": "lay_off", "set": 1, "card": N3[3]}


def test_greedy_swaps_when_it_pays() -> None:
    """V-8 (c): seat 0 can make no set from its hand alone; a swap gives it a blue set."""
    table = sets_table()
    table.draw(0)
    assert not [a for a in table.legal(0) if a["type"] in ("meld", "lay_off")]
    action = greedy(table, 0)
    assert action["type"] == "swap" and "meld" in action["then"], action
    table.act(0, action)
    assert table.sets(0) and table.sets(0)[0]["value"] == "blue"


def test_greedy_plays_a_stop_against_a_threat_and_keeps_it_otherwise() -> None:
    """V-10: a stop is worth playing when the next player holds a 4-card set, not against a quiet table."""
    quiet = Table.stacked(3, {1: JUNK[:7]}, stock=[STOP, JUNK[7]])
    quiet.draw(1)
    assert {"type": "stop"} in quiet.legal(1)
    assert greedy(quiet, 1)["type"] == "discard"
    threat = claim_table(stop_for_seat2=True, before_last=True)  # seat 0, next after seat 2, has 4 zigzags
    assert threat.table["players"][2]["stops"] == 1
    action = greedy(threat, 2)
    while action["type"] not in ("stop", "discard"):
        threat.act(2, action)
        action = greedy(threat, 2)
    assert action == {"type": "stop"}


def test_greedy_never_discards_a_card_that_gives_a_rival_go5() -> None:
    """V-13: seat 2 holds 3-zigzag-black and 3-stars-red, which complete the rivals' 4-card sets."""
    table = claim_table(JUNK[7])
    table.turn(0, JUNK[10])
    table.turn(1, table.hand(1)[0])
    table.draw(2)
    for seed in ("x", "y", "z"):
        action = greedy(table, 2, seed)
        while action["type"] not in ("discard",):
            table.act(2, action)
            action = greedy(table, 2, seed)
        assert action["card"] not in (N3[4], N3[5]), action


def test_greedy_discards_a_joker_it_cannot_use_but_not_into_a_rival_set() -> None:
    """V-15: a joker costs its holder 10 wherever it lies; with no set to put it in, greedy sheds it."""
    table = Table.stacked(2, {1: [JOKER, "1-dots-red", "2-dots-orange", *JUNK[:4]]})
    table.draw(1)
    action = greedy(table, 1)
    if action["type"] == "meld":
        table.act(1, action)
        action = greedy(table, 1)
    assert action == {"type": "discard", "card": JOKER}


def test_greedy_knows_a_joker_may_join_a_first_set_from_rules_version_2() -> None:
    """V-9 / V-13: the rivals' 4-card sets are their first sets. From rules version 2 a joker fits them,
    so greedy counts a joker in hand as a card that would hand a rival Go5; in version 1 it fits neither."""
    for rules_version, fits in ((1, False), (2, True)):
        table = claim_table(JOKER, before_last=True, rules_version=rules_version)
        seen = go5_bot.read(engine.view(table.snap, 2))
        rivals = [s for s in seen.sets if s["owner"] != 2]
        assert len(rivals) == 2 and all(len(s["cards"]) == 4 for s in rivals)
        assert [seen.fits(s, JOKER) for s in rivals] == [fits, fits]
        assert (go5_bot.keep_value(JOKER, seen) == go5_bot.DANGER) is fits


# ---------------------------------------------------------------- strength


@pytest.mark.parametrize("players", [2, 3])
def test_greedy_clearly_beats_random(players: int) -> None:
    games, wins = 24, 0
    for i in range(games):
        greedy_seat = i % players
        levels = ["random"] * players
        levels[greedy_seat] = "greedy"
        config = engine.make_config("go5", players, {"target": 100}, f"strength-{players}-{i}")
        winners = play_game(config, levels).state.winners
        wins += winners == (greedy_seat,)
    assert wins > 0.8 * games, f"greedy won {wins} of {games}"
