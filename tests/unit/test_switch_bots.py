"""Switch bot policies: legality, view-only input, determinism, greedy's preferences, strength, termination."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest

from domain import engine
from domain.bots import LEVELS, choose_action, policy_for, random_policy
from domain.bots import switch as switch_bot
from domain.shuffle import SeededStream
from tests.unit.switch_helpers import Table

Snap = engine.Snapshot[Any]
HEARTS = ["3H", "4H", "5H", "6H", "7H", "9H", "10H"]
SPADES = ["3S", "4S", "5S", "6S", "7S", "9S", "10S"]
DIAMONDS = ["3D", "4D", "5D", "6D", "7D", "9D", "10D"]
CLUBS = ["3C", "4C", "5C", "6C", "7C", "9C", "10C"]


# ---------------------------------------------------------------- helpers


def decide(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """What the bot of `level` does for `seat`, given only that seat's view and legal actions."""
    return choose_action("switch", level, engine.view(snap, seat), engine.legal_actions(snap, seat), rng)


def checked_decision(snap: Snap, seat: int, level: str, rng: SeededStream) -> dict[str, Any]:
    """Decide once: the action is legal, the inputs untouched, and a JSON copy of view and legal decides alike."""
    view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
    view_before, legal_before = copy.deepcopy(view), copy.deepcopy(legal)
    twin = copy.deepcopy(rng)
    action = choose_action("switch", level, view, legal, rng)
    assert action in legal
    assert view == view_before and legal == legal_before, "a bot must not change its inputs"
    assert choose_action("switch", level, json.loads(json.dumps(view)), json.loads(json.dumps(legal)), twin) == action
    return action


def play_game(config: engine.GameConfig, levels: Sequence[str], check: bool = False, limit: int = 20_000) -> Snap:
    """A whole game with bots; with `check`, every decision is checked as above."""
    snap, _ = engine.start(config)
    rngs = [SeededStream(config.seed, f"bot/{seat}") for seat in range(config.players)]
    for _ in range(limit):
        if snap.finished:
            return snap
        (seat,) = snap.to_act()
        pick = checked_decision if check else decide
        snap, _ = engine.act(snap, seat, pick(snap, seat, levels[seat], rngs[seat]))
    raise AssertionError(f"the game did not end within {limit} actions")


def greedy(table: Table, seat: int, seed: str = "t") -> dict[str, Any]:
    """The greedy bot's action for `seat` at the table."""
    return decide(table.snap, seat, "greedy", SeededStream(seed, "bot"))


def stacked(s1: list[str], start: str, stock: Sequence[str] = (), **options: Any) -> Table:
    """Seat 1 (first to act) holds `s1`; the others hold plain cards of one suit each."""
    return Table.stacked(options, hands={0: DIAMONDS, 1: s1, 2: SPADES, 3: CLUBS}, start=start, stock=stock)


# ---------------------------------------------------------------- dispatch


def test_switch_has_every_level() -> None:
    assert set(LEVELS) == {"random", "greedy", "expert"}
    assert policy_for("switch", "greedy") is switch_bot.greedy
    assert policy_for("switch", "random") is random_policy


# ---------------------------------------------------------------- legality, purity, determinism


@pytest.mark.parametrize(
    ("players", "options", "levels"),
    [
        (4, {"target": 80}, ("greedy", "random", "greedy", "random")),
        (5, {"target": 60, "match_rank": True}, ("greedy",) * 5),
        (7, {"target": 60, "extra_jokers": 4, "extra_twos": 4}, ("greedy", "random") * 3 + ("greedy",)),
        (10, {"target": 40, "hand_size": 12}, ("random", "greedy") * 5),
    ],
)
def test_bots_always_pick_a_legal_action_from_the_view_alone(
    players: int, options: dict[str, Any], levels: tuple[str, ...]
) -> None:
    config = engine.make_config("switch", players, options, f"legal-{players}")
    assert play_game(config, levels, check=True).finished


def test_same_view_legal_and_seed_give_the_same_action() -> None:
    table = stacked(["JC", "2S", "3S", "4S", "5S", "3D", "AH"], "5H")
    for level in LEVELS:
        actions = {json.dumps(decide(table.snap, 1, level, SeededStream("same", "bot"))) for _ in range(5)}
        assert len(actions) == 1


def test_greedy_decides_from_the_view_not_the_hidden_cards() -> None:
    """C-6: two tables that differ only in other hands and the stock get the same decision."""
    mine = ["JC", "3S", "4S", "5S", "3D", "4C", "6D"]
    one = Table.stacked(hands={1: mine, 2: SPADES, 3: CLUBS, 0: DIAMONDS}, start="5H", stock=["9H", "AS"])
    two = Table.stacked(hands={1: mine, 2: CLUBS, 3: DIAMONDS, 0: SPADES}, start="5H", stock=["AS", "KD"])
    assert engine.view(one.snap, 1) == engine.view(two.snap, 1)
    for seed in ("a", "b", "c"):
        assert greedy(one, 1, seed) == greedy(two, 1, seed)


# ---------------------------------------------------------------- greedy's preferences (seat 1 acts first)


def test_greedy_answers_a_pending_draw_when_it_can() -> None:
    """S-7: facing a 2 with a 2 in hand, greedy adds it instead of drawing."""
    table = stacked(["2S", *HEARTS[:6]], "2H")
    assert greedy(table, 1) == {"type": "play", "cards": ["2S"]}


def test_greedy_answers_with_a_two_and_keeps_its_joker() -> None:
    """S-7: onto a 2, a 2 rather than a joker, and one card, not two."""
    table = stacked(["JK", "2C", "2S", *HEARTS[:4]], "2H")
    for seed in ("x", "y", "z"):
        assert greedy(table, 1, seed)["cards"] in (["2C"], ["2S"])


def test_greedy_answers_a_joker_with_one_joker() -> None:
    """S-7: onto a joker only a joker: greedy adds one and keeps the other for the next time."""
    table = stacked(["JK", "JK", *HEARTS[:5]], "JK")
    assert greedy(table, 1) == {"type": "play", "cards": ["JK"]}


def test_greedy_takes_the_pending_draw_when_it_cannot_answer() -> None:
    table = stacked(HEARTS, "JK")
    assert greedy(table, 1) == {"type": "draw"}


def test_greedy_saves_its_jack_when_a_plain_card_fits() -> None:
    """S-4: with a matching 9 and a J, greedy plays the 9."""
    table = stacked(["JC", "9H", "3S", "4S", "5S", "3D", "4D"], "5H")
    assert greedy(table, 1) == {"type": "play", "cards": ["9H"]}


def test_greedy_saves_its_joker_when_a_plain_card_fits() -> None:
    table = stacked(["JK", "9H", "3S", "4S", "5S", "3D", "4D"], "5H")
    assert greedy(table, 1) == {"type": "play", "cards": ["9H"]}


def test_greedy_sheds_the_highest_value_first() -> None:
    """S-10: of 3H, AH (15) and 10H (10) greedy plays the ace."""
    table = stacked(["3H", "AH", "10H", "3S", "4S", "5S", "3D"], "5H")
    assert greedy(table, 1) == {"type": "play", "cards": ["AH"]}


def test_greedy_plays_a_jack_naming_the_suit_it_holds_most_of() -> None:
    """S-4: nothing else fits: a J naming spades (three of them), not drawing."""
    table = stacked(["JC", "3S", "4S", "5S", "3D", "4C", "6D"], "5H")
    for seed in ("x", "y", "z"):
        assert greedy(table, 1, seed) == {"type": "play", "cards": ["JC"], "suit": "S"}


def test_greedy_prefers_a_jack_to_a_joker_when_nothing_else_fits() -> None:
    table = stacked(["JK", "JC", "3S", "4S", "5S", "3D", "4C"], "5H")
    assert greedy(table, 1) == {"type": "play", "cards": ["JC"], "suit": "S"}


def test_greedy_chooses_the_start_suit_it_holds_most_of() -> None:
    """S-3: on a J start card greedy names its longest suit."""
    table = stacked(["3D", "4D", "5D", "3S", "4C", "5C", "9H"], "JS")
    assert greedy(table, 1) == {"type": "choose_suit", "suit": "D"}


def test_greedy_goes_out_when_it_can() -> None:
    """S-9: with one card left that fits, greedy plays it (even a J)."""
    table = stacked(HEARTS, "5C")
    table.set_hands({1: ["JD"]})
    assert greedy(table, 1)["cards"] == ["JD"]


def test_greedy_plays_the_card_it_drew() -> None:
    """S-6: a playable drawn card is played, not kept."""
    table = stacked(CLUBS, "5H", ["9H"])
    table.draw(1)
    assert greedy(table, 1) == {"type": "play", "cards": ["9H"]}


def test_greedy_draws_when_nothing_fits() -> None:
    table = stacked(CLUBS, "5H")
    assert greedy(table, 1) == {"type": "draw"}


# ---------------------------------------------------------------- strength and termination


def test_greedy_clearly_beats_random() -> None:
    """One greedy bot against three random bots wins far more than its 1-in-4 share."""
    games, wins = 16, 0
    for i in range(games):
        levels = ["random"] * 4
        levels[i % 4] = "greedy"
        config = engine.make_config("switch", 4, {"target": 100}, f"strength-{i}")
        wins += i % 4 in play_game(config, levels).state.winners
    assert wins >= 0.75 * games, f"greedy won {wins} of {games}"


@pytest.mark.parametrize("players", [4, 10])
def test_greedy_bots_play_a_default_game_to_500(players: int) -> None:
    """S-11: four or ten greedy bots reach the default target of 500."""
    config = engine.make_config("switch", players, {}, f"to-500-{players}")
    snap = play_game(config, ["greedy"] * players)
    assert max(snap.state.totals) >= 500


@pytest.mark.parametrize(("players", "seed"), [(8, "rr-0"), (10, "rr-2"), (6, "rr-3")])
def test_random_against_random_ends(players: int, seed: str) -> None:
    """S-8 / S-9: uniform random play over every legal action ends (a hand takes thousands of actions)."""
    config = engine.make_config("switch", players, {"target": 1}, seed)
    snap, _ = engine.start(config)
    rng = SeededStream(seed, "bots")
    for _ in range(100_000):
        if snap.finished:
            break
        (seat,) = snap.to_act()
        snap, _ = engine.act(snap, seat, random_policy({}, engine.legal_actions(snap, seat), rng))
    assert snap.finished
