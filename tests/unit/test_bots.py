"""Bot policies (domain/bots): legality, view-only input, determinism, Golf heuristics, strength."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from domain import engine
from domain.bots import LEVELS, choose_action, copy_action, policy_for
from domain.bots import golf as golf_bot
from domain.cards import RANKS, canonical_deck
from domain.golf import grid_score
from domain.shuffle import SeededStream

Snap = engine.Snapshot[Any]


# ---------------------------------------------------------------- helpers


def decide(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """What the bot of `level` does for `seat`, given only that seat's view and legal actions."""
    return choose_action("golf", level, engine.view(snap, seat), engine.legal_actions(snap, seat), rng)


def play_game(config: engine.GameConfig, levels: Sequence[str], check: bool = False) -> Snap:
    """Play a whole game with bots; with `check`, assert legality, purity and determinism on every decision."""
    snap, _ = engine.start(config)
    rngs = [SeededStream(config.seed, f"bot/{seat}") for seat in range(config.players)]
    picker = SeededStream(config.seed, "who-acts")
    for _ in range(20_000):
        if snap.finished:
            return snap
        seats = snap.to_act()
        seat = seats[picker.below(len(seats))]
        if check:
            action = _checked_decision(snap, seat, levels[seat], rngs[seat])
        else:
            action = decide(snap, seat, levels[seat], rngs[seat])
        snap, _ = engine.act(snap, seat, action)
    raise AssertionError("game did not finish")


def _checked_decision(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """Decide once, checking the action is legal, inputs untouched, and a JSON copy of the view decides alike."""
    view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
    view_before, legal_before = copy.deepcopy(view), copy.deepcopy(legal)
    twin = copy.deepcopy(rng)
    action = choose_action("golf", level, view, legal, rng)
    assert action in legal
    assert view == view_before and legal == legal_before, "a bot must not change its inputs"
    plain_view = json.loads(json.dumps(view))
    assert choose_action("golf", level, plain_view, json.loads(json.dumps(legal)), twin) == action
    return action


def stacked_config(
    hands: Mapping[int, Sequence[str]],
    discard: str,
    stock: Sequence[str] = (),
    players: int = 2,
    options: Mapping[str, Any] | None = None,
) -> engine.GameConfig:
    """A one-deck game whose round 1 deals `hands` (position k = k-th card received), then discard, then stock."""
    options = dict(options or {})
    size = 9 if options.get("layout") == "3x3" else 6
    dealt = [hands[(1 + i) % players][i // players] for i in range(players * size)]
    head = [*dealt, discard, *stock]
    rest = list(canonical_deck())
    for card in head:
        rest.remove(card)
    return engine.make_config("golf", players, options, "stacked", decks=[head + rest])


def set_up(config: engine.GameConfig, reveals: Mapping[int, Sequence[int]]) -> Snap:
    """Start a stacked game and make every seat's initial flips (G-4)."""
    snap, _ = engine.start(config)
    for seat, positions in reveals.items():
        snap, _ = engine.act(snap, seat, {"type": "reveal", "positions": list(positions)})
    assert snap.state.phase == "play"
    return snap


def greedy(snap: Snap, seat: int, seed: str = "t") -> dict[str, Any]:
    """The greedy bot's action for `seat`."""
    return decide(snap, seat, "greedy", SeededStream(seed, "bot"))


HIGH = ["10C", "JC", "QC", "10D", "JD", "QD"]


# ---------------------------------------------------------------- dispatch


def test_unknown_level_and_game_without_greedy_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        policy_for("golf", "genius")
    with pytest.raises(ValueError, match="no 'greedy' bot for game 'chess'"):
        policy_for("chess", "greedy")
    assert set(LEVELS) == {"random", "greedy", "expert"}
    assert policy_for("golf", "greedy") is golf_bot.greedy


def test_no_legal_action_is_refused() -> None:
    with pytest.raises(ValueError, match="no legal action"):
        choose_action("golf", "random", {}, [], SeededStream("s", "bot"))


def test_random_is_generic_uniform_and_returns_copies() -> None:
    legal = [{"type": "x", "n": [i]} for i in range(4)]
    rng = SeededStream("s", "bot")
    picks = [choose_action("any-game", "random", {}, legal, rng) for _ in range(400)]
    counts = [sum(1 for p in picks if p == option) for option in legal]
    assert all(70 <= c <= 130 for c in counts), counts
    picks[0]["n"].append(99)
    assert all(len(option["n"]) == 1 for option in legal), "the bot must hand back a copy"


# ---------------------------------------------------------------- legality, purity, determinism


@pytest.mark.parametrize(
    ("players", "layout", "flips", "levels"),
    [
        (2, "2x3", 2, ("greedy", "random")),
        (2, "3x3", 2, ("greedy", "greedy")),
        (3, "2x3", 0, ("random", "greedy", "greedy")),
        (3, "3x3", 3, ("greedy", "random", "greedy")),
        (4, "2x3", 2, ("greedy", "greedy", "greedy", "greedy")),
        (5, "3x3", 2, ("greedy", "random", "greedy", "random", "greedy")),
        (6, "2x3", 1, ("random", "greedy") * 3),
    ],
)
def test_bots_always_pick_a_legal_action_from_the_view_alone(
    players: int, layout: str, flips: int, levels: tuple[str, ...]
) -> None:
    for seed in ("a", "b"):
        options = {"layout": layout, "initial_flips": flips, "rounds": 2}
        config = engine.make_config("golf", players, options, f"legal-{players}-{layout}-{seed}")
        assert play_game(config, levels, check=True).finished


def test_same_view_legal_and_seed_give_the_same_action() -> None:
    config = engine.make_config("golf", 3, {"rounds": 1}, "det")
    snap = set_up(config, {0: [0, 1], 1: [1, 2], 2: [3, 5]})
    for level in LEVELS:
        actions = {json.dumps(decide(snap, 1, level, SeededStream("same", "bot"))) for _ in range(5)}
        assert len(actions) == 1


def test_greedy_breaks_ties_with_the_stream() -> None:
    config = engine.make_config("golf", 2, {}, "ties")
    snap, _ = engine.start(config)
    picks = {json.dumps(decide(snap, 0, "greedy", SeededStream(f"seed-{i}", "bot"))) for i in range(20)}
    assert len(picks) > 1, "equal setup reveals must be chosen by the seeded stream"
    for pick in picks:
        positions = json.loads(pick)["positions"]
        assert positions[0] % 3 != positions[1] % 3, "initial flips look into two different columns"


def test_greedy_decides_from_the_view_not_the_hidden_cards() -> None:
    hands = {0: HIGH, 1: ["9H", "4C", "KD", "6S", "7S", "8S"]}
    other = {0: HIGH, 1: ["9H", "4C", "KD", "8S", "6S", "7S"]}
    snaps = [set_up(stacked_config(h, "9S", ["3D", "5D"]), {1: [0, 1], 0: [0, 1]}) for h in (hands, other)]
    assert engine.view(snaps[0], 1) == engine.view(snaps[1], 1)
    assert greedy(snaps[0], 1) == greedy(snaps[1], 1)


# ---------------------------------------------------------------- greedy on stacked decks (2 players, seat 1 first)


def test_greedy_takes_a_discard_that_completes_a_column_pair() -> None:
    snap = set_up(stacked_config({0: HIGH, 1: ["9H", "4C", "KD", "6S", "7S", "8S"]}, "9S"), {0: [0, 1], 1: [0, 1]})
    assert greedy(snap, 1) == {"type": "take_discard", "position": 3}


def test_greedy_leaves_a_high_discard_and_draws() -> None:
    snap = set_up(stacked_config({0: HIGH, 1: ["AH", "3C", "KD", "6S", "7S", "8S"]}, "QH"), {0: [0, 1], 1: [0, 1]})
    assert greedy(snap, 1) == {"type": "draw", "from": "stock"}


def test_greedy_swaps_a_drawn_low_card_for_a_known_high_card() -> None:
    config = stacked_config({0: HIGH, 1: ["JH", "4C", "KD", "6S", "7S", "8S"]}, "10S", ["AS"])
    snap = set_up(config, {0: [0, 1], 1: [0, 1]})
    assert greedy(snap, 1) == {"type": "draw", "from": "stock"}
    snap, _ = engine.act(snap, 1, {"type": "draw", "from": "stock"})
    assert greedy(snap, 1) == {"type": "swap", "position": 0}


def test_greedy_discards_a_drawn_high_card_and_flips_next_to_a_known_card() -> None:
    config = stacked_config({0: HIGH, 1: ["AH", "3C", "KD", "6S", "7S", "8S"]}, "QH", ["QS"])
    snap = set_up(config, {0: [0, 1], 1: [0, 1]})
    snap, _ = engine.act(snap, 1, {"type": "draw", "from": "stock"})
    for seed in ("x", "y", "z"):
        action = greedy(snap, 1, seed)
        assert action["type"] == "discard" and action["flip"] in (3, 4), action


def test_greedy_completes_three_of_a_rank_in_a_3x3_column() -> None:
    hands = {0: [*HIGH, "5H", "5S", "5C"], 1: ["9H", "4C", "KD", "9S", "7S", "8S", "6S", "6H", "6D"]}
    config = stacked_config(hands, "9D", options={"layout": "3x3"})
    snap = set_up(config, {0: [0, 1], 1: [0, 3]})
    assert greedy(snap, 1) == {"type": "take_discard", "position": 6}
    snap, _ = engine.act(snap, 1, greedy(snap, 1))
    assert [slot["state"] for slot in engine.view(snap, 1)["you"]["hand"]][0::3] == ["empty"] * 3
    assert greedy(snap, 0) in engine.legal_actions(snap, 0)


# ---------------------------------------------------------------- ending the round (G-11, G-14), 5 initial flips

BOT = ["4H", "4D", "3H", "AH", "3S", "8C"]  # columns (4,A) (4,3) (3,?): the last place is face down
LOW_RIVAL = ["KH", "KS", "AD", "2D", "2S", "6C"]
HIGH_RIVAL = ["10C", "JC", "QC", "9C", "8S", "6C"]


def ending_position(rival: list[str], rival_ends: bool) -> Snap:
    """Seat 1 (the rival) moves first; then seat 0, the bot, has drawn 2C with one face-down card left."""
    stock = ["2C"] if rival_ends else ["7C", "2C"]
    config = stacked_config({0: BOT, 1: rival}, "5D", stock, options={"initial_flips": 5})
    snap = set_up(config, {0: range(5), 1: range(5)})
    if rival_ends:
        snap, _ = engine.act(snap, 1, {"type": "flip", "position": 5})
    else:
        snap, _ = engine.act(snap, 1, {"type": "draw", "from": "stock"})
        snap, _ = engine.act(snap, 1, {"type": "swap", "position": 0})
    snap, _ = engine.act(snap, 0, {"type": "draw", "from": "stock"})
    assert engine.view(snap, 0)["you"]["drawn"] == "2C"
    return snap


def test_greedy_does_not_end_the_round_when_a_rival_looks_lower() -> None:
    snap = ending_position(LOW_RIVAL, rival_ends=False)
    for seed in ("x", "y", "z"):
        action = greedy(snap, 0, seed)
        assert action["type"] == "swap" and action["position"] in (0, 1), action


def test_greedy_ends_the_round_when_it_is_clearly_lowest() -> None:
    snap = ending_position(HIGH_RIVAL, rival_ends=False)
    assert greedy(snap, 0) == {"type": "swap", "position": 5}


def test_greedy_minimises_its_score_on_its_last_turn_after_a_rival_ended() -> None:
    snap = ending_position(LOW_RIVAL, rival_ends=True)
    assert engine.view(snap, 0)["table"]["ended_by"] == 1
    assert greedy(snap, 0) == {"type": "swap", "position": 5}


# ---------------------------------------------------------------- the estimate


def test_estimate_of_a_known_grid_is_its_score_in_both_layouts() -> None:
    rng = SeededStream("grids", "estimate")
    model = golf_bot.Model({rank: 1 / 13 for rank in RANKS}, 5.46, rivals=0.0, may_end=False)
    for size in (6, 9, 6, 9) * 25:
        cards = [rng.choice(["AS", "2S", "5S", "KS", "QS"]) for _ in range(size)]
        with_empty: list[str | None] = list(cards)
        if size == 9 and rng.below(2):
            for p in golf_bot.column_of(rng.below(3), size):
                with_empty[p] = None
        ranks = tuple(None if c is None else c[:-1] for c in with_empty)
        assert golf_bot.estimate(ranks, model) == pytest.approx(grid_score(tuple(with_empty)))


def test_estimate_counts_the_chance_that_a_face_down_card_pairs() -> None:
    model = golf_bot.Model({"9": 0.25, "A": 0.75}, mean=0.25 * 9 + 0.75, rivals=0.0, may_end=False)
    # (9, ?): a 9 pairs to 0 with chance 1/4, an A scores 10 with chance 3/4
    assert golf_bot.column_estimate(("9", golf_bot.UNKNOWN), model) == pytest.approx(7.5)
    # (?, ?): only 9 with A (chance 6/16) scores, 10; two 9s or two As score 0
    assert golf_bot.column_estimate((golf_bot.UNKNOWN,) * 2, model) == pytest.approx(3.75)
    assert golf_bot.column_estimate((None, None), model) == 0


def _grids_met_in_play(players: int, seed: str) -> list[tuple[golf_bot.Ranks, golf_bot.Model]]:
    """Every acting seat's grid and model in a greedy Golf game, past the setup."""
    snap, _ = engine.start(engine.make_config("golf", players, {"rounds": 2}, seed))
    met = []
    while not snap.finished:
        seat = snap.to_act()[0]
        view = engine.view(snap, seat)
        if view["phase"] != "setup":
            met.append((golf_bot.own_grid(view), golf_bot.build_model(view)))
        snap, _ = engine.act(snap, seat, decide(snap, seat, "greedy", SeededStream(seed, str(snap.version))))
    return met


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_drawn_cards_value_is_the_best_use_of_each_unseen_rank_exactly(players: int) -> None:
    """G-6: drawing is worth the mean over unseen ranks of the best of tossing the card and placing it anywhere;
    the column by column working (the expert's rollouts' hot spot) gives the very same number, so greedy's
    choices and their ties do not change with it."""
    compared = 0
    for grid, model in _grids_met_in_play(players, f"draw-{players}"):
        toss = golf_bot.discard_value(grid, model)
        plain = sum(
            prob
            * min(
                [toss]
                + [
                    golf_bot.outcome(golf_bot.place(grid, p, rank), model)
                    for p, cell in enumerate(grid)
                    if cell is not None
                ]
            )
            for rank, prob in model.probs.items()
        )
        fresh = dataclasses.replace(model, columns_seen={})
        assert golf_bot.draw_value(grid, fresh) == plain
        compared += 1
    assert compared > 20


def test_a_column_with_no_face_down_card_is_worth_the_same_under_any_model() -> None:
    """G-13: a column of known cards scores what its cards do, whatever the unseen cards may be; so its estimate
    is worked out once for good."""
    models = [model for _, model in _grids_met_in_play(3, "known-columns")][::7]
    for cells in [("9", "9"), ("9", "A", "9"), ("K", None, "2"), ("5", "5", "5"), (None, None, None)]:
        values = {golf_bot.column_value(cells, dataclasses.replace(m, columns_seen={})) for m in models}
        assert values == {golf_bot.column_estimate(cells, golf_bot.NO_MODEL)}


# ---------------------------------------------------------------- strength


def test_greedy_clearly_beats_random() -> None:
    games, wins = 60, 0
    for i in range(games):
        greedy_seat = i % 2
        levels = ["random", "random"]
        levels[greedy_seat] = "greedy"
        config = engine.make_config("golf", 2, {"rounds": 3}, f"strength-{i}")
        totals = play_game(config, levels).state.totals
        wins += totals[greedy_seat] < totals[1 - greedy_seat]
    assert wins > 0.75 * games, f"greedy won {wins} of {games}"


def test_copy_action_is_a_deep_copy_that_shares_nothing() -> None:
    """Every policy returns its choice through domain.bots.copy_action: equal to the action, sharing no list or dict."""
    action = {"type": "lay", "cards": ["AS", "2S"], "meld": {"kind": "run", "cards": ["3S"]}, "flip": None}
    copied = copy_action(action)
    assert copied == action
    assert copied is not action
    assert copied["cards"] is not action["cards"]
    assert copied["meld"] is not action["meld"]
    assert copied["meld"]["cards"] is not action["meld"]["cards"]
