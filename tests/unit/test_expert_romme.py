"""The Rommé expert: its worlds look exactly like the seat's view (C-6, R-3 ... R-21), are really
resampled, and its search picks a legal action, the same one for the same seed of its own."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from domain import engine
from domain import romme as romme_game
from domain import romme_melds as rm
from domain.bots import choose_action
from domain.bots import romme as romme_bot
from domain.bots.expert import Budget, search
from domain.cards import canonical_deck
from domain.shuffle import SeededStream
from tests.unit.romme_helpers import Table, run_hand

Snap = engine.Snapshot[Any]
TINY = Budget(samples=2, think_ms=10**6, max_candidates=3)
DECK = Counter(canonical_deck(copies=2, jokers=6))


def as_json(view: Mapping[str, Any]) -> dict[str, Any]:
    """The view as a client receives it: a fresh JSON object, linked to no state."""
    copied: dict[str, Any] = json.loads(json.dumps(view))
    return copied


def reachable(players: int, seed: str, steps: int, options: Mapping[str, Any] | None = None) -> Iterator[Snap]:
    """Every state along a game of greedy play with stretches of random play (more varied tables)."""
    snap, _ = engine.start(engine.make_config("romme", players, dict(options or {"target": 1}), seed))
    for step in range(steps):
        if snap.finished:
            return
        yield snap
        seat = snap.to_act()[0]
        level = "random" if step % 30 >= 24 else "greedy"
        legal = engine.legal_actions(snap, seat)
        action = choose_action("romme", level, engine.view(snap, seat), legal, SeededStream(seed, str(step)))
        snap, _ = engine.act(snap, seat, action)


def hidden(world: Snap, seat: int) -> tuple[Any, ...]:
    """What `seat` cannot see in a world: the other hands, the stock in order, an uncut deck."""
    state = world.state
    others = tuple(hand for s, hand in enumerate(state.hands) if s != seat)
    return others, state.stock, state.deck


# ---------------------------------------------------------------- (1) a world is the real game as the seat sees it


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {"target": 300}), (3, {"target": 1, "hand_aus_doubles": True}), (4, {"target": 150, "strict_1000": True})],
)
def test_a_world_looks_exactly_like_the_view_to_its_seat(players: int, options: dict[str, Any]) -> None:
    """C-6: for every seat of many reachable states (the cut R-3, play R-6 ... R-16, later rounds R-22),
    the world sampled from the seat's view gives that seat the same view and the same legal actions,
    and holds every one of the 110 cards once (R-17)."""
    phases: Counter[str] = Counter()
    for number, snap in enumerate(reachable(players, f"world-{players}", 260, options)):
        if number % 3:
            continue
        for seat in range(players):
            view = engine.view(snap, seat)
            world = romme_bot.sample_world(as_json(view), SeededStream("world", f"{number}/{seat}"))
            assert engine.view(world, seat) == view
            assert engine.legal_actions(world, seat) == engine.legal_actions(snap, seat)
            assert romme_game.all_cards(world.state) == DECK
            assert world.to_act() == snap.to_act()
            phases[view["phase"]] += 1
    assert phases[romme_game.CUT] >= players and phases[romme_game.PLAY] >= 20 * players


def test_a_world_plays_on_to_the_end_of_its_round() -> None:
    """A world is a whole game: greedy play goes on in it until the round is scored (R-19 or R-21)."""
    for number, snap in enumerate(reachable(3, "plays-on", 90)):
        if number % 15:
            continue
        seat = snap.to_act()[0]
        world = romme_bot.sample_world(as_json(engine.view(snap, seat)), SeededStream("on", str(number)))
        for step in range(2000):
            if world.state.round != snap.state.round or world.finished:
                break
            mover = world.to_act()[0]
            legal = engine.legal_actions(world, mover)
            action = choose_action("romme", "greedy", engine.view(world, mover), legal, SeededStream("on", str(step)))
            world, _ = engine.act(world, mover, action)
        assert world.state.round != snap.state.round or world.finished


def test_the_cutter_keeps_its_lucky_grab_in_every_world() -> None:
    """R-4: the grabbed QS and joker went face up into the cutter's hand; while the table shows
    them nowhere else, every world deals them to the cutter (seat 1, right of dealer 0)."""
    table = Table.dealt(2, grab=["QS", "JK"])
    view = as_json(table.view(0))
    assert view["table"]["cut"]["grabbed"] == ["QS", "JK"]
    for k in range(12):
        world = romme_bot.sample_world(view, SeededStream("grab", str(k)))
        cutter = Counter(world.state.hands[1])
        assert cutter["QS"] >= 1 and cutter["JK"] >= 1
        assert engine.view(world, 0) == table.view(0)


def test_a_grabbed_card_shown_on_the_discard_pile_is_no_longer_forced_into_the_cutter_hand() -> None:
    """R-4 / R-11: once the cutter has discarded its grabbed QS, the other QS may be anywhere unseen."""
    table = Table.dealt(2, grab=["QS"])
    table.draw(1)
    table.discard(1, "QS")
    view = as_json(table.view(0))
    holds = [
        "QS" in romme_bot.sample_world(view, SeededStream("shown", str(k))).state.hands[1]
        for k in range(30)
        if "QS" not in view["you"]["hand"]
    ]
    assert holds and not all(holds)


def test_other_hands_are_shaped_like_hands_that_have_played() -> None:
    """R-9 ... R-15: a player who has had a turn has laid what it could; in a world, such a hand holds
    no three-card meld with two natural cards or more and no natural card fitting its own melds."""
    shaped = 0
    for number, snap in enumerate(reachable(3, "shaped", 150)):
        if number % 5 or snap.state.phase != romme_game.PLAY:
            continue
        seat = snap.to_act()[0]
        world = romme_bot.sample_world(as_json(engine.view(snap, seat)), SeededStream("shape", str(number)))
        for other, hand in enumerate(world.state.hands):
            melds = [m for m in world.state.melds if m.seat == other]
            if other == seat or (not melds and len(hand) == romme_game.HAND_SIZE):
                continue
            shaped += 1
            assert not any(sum(c != "JK" for c in cards) >= 2 for _, cards in rm.minimal_melds(hand)), (
                f"seat {other} holds a meld: {hand}"
            )
            assert not any(c != "JK" and c in rm.lay_off_fits(m.kind, m.cards) for m in melds for c in hand)
    assert shaped > 10


# ---------------------------------------------------------------- (2) the hidden cards are really resampled


def test_worlds_are_resampled_and_never_the_real_hidden_cards() -> None:
    """C-6: the world comes from the view alone. Two bot seeds deal the unseen cards differently,
    and no world reproduces the real other hands and stock."""
    checked = differing = 0
    for number, snap in enumerate(reachable(2, "resampled", 120)):
        if number % 4:
            continue
        seat = snap.to_act()[0]
        view = as_json(engine.view(snap, seat))
        first = romme_bot.sample_world(view, SeededStream("one", str(number)))
        second = romme_bot.sample_world(view, SeededStream("two", str(number)))
        checked += 1
        differing += hidden(first, seat) != hidden(second, seat)
        assert hidden(snap, seat) not in (hidden(first, seat), hidden(second, seat))
        assert first.config.seed != snap.config.seed
    assert checked > 10 and differing == checked


def test_the_same_bot_seed_gives_the_same_world() -> None:
    snap = next(s for s in reachable(2, "same-world", 30) if s.state.phase == romme_game.PLAY)
    view = as_json(engine.view(snap, snap.to_act()[0]))
    first = romme_bot.sample_world(view, SeededStream("same", "w"))
    again = romme_bot.sample_world(view, SeededStream("same", "w"))
    assert first.state == again.state


# ---------------------------------------------------------------- (3) the search: legal and deterministic


def searched_points(players: int, seed: str, wanted: int) -> list[tuple[Snap, int]]:
    """Decision points where the expert really searches (its shortlist has a close call)."""
    points = []
    for snap in reachable(players, seed, 400):
        seat = snap.to_act()[0]
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        if len(romme_bot.expert_candidates(view, legal, TINY.max_candidates)) > 1:
            points.append((snap, seat))
            if len(points) == wanted:
                break
    return points


@pytest.mark.parametrize("players", [2, 4])
def test_the_expert_picks_a_legal_action_the_same_for_the_same_seed(players: int) -> None:
    points = searched_points(players, f"search-{players}", 6)
    assert len(points) == 6
    for snap, seat in points:
        legal = engine.legal_actions(snap, seat)
        view = engine.view(snap, seat)
        first = search(as_json(view), legal, SeededStream("bot", str(snap.version)), TINY)
        again = search(as_json(view), legal, SeededStream("bot", str(snap.version)), TINY)
        assert first in legal
        assert first == again


def test_the_expert_plays_a_whole_game_legally() -> None:
    """Every decision of a game with one expert seat is legal, and the game ends (R-22)."""
    snap, _ = engine.start(engine.make_config("romme", 2, {"target": 1}, "expert-game"))
    for step in range(3000):
        if snap.finished:
            break
        seat = snap.to_act()[0]
        view, legal = engine.view(snap, seat), engine.legal_actions(snap, seat)
        rng = SeededStream("expert-game", str(step))
        action = search(view, legal, rng, TINY) if seat == 0 else choose_action("romme", "greedy", view, legal, rng)
        assert action in legal
        snap, _ = engine.act(snap, seat, action)
    assert snap.finished


# ---------------------------------------------------------------- the shortlist


def holding(hand: list[str], *, drawn: bool = True, discard: tuple[str, ...] = ()) -> tuple[Snap, int]:
    """Seat 1 to act in round 1 with exactly `hand` (after its draw unless `drawn` is False)."""
    table = Table.dealt(2)
    state = dataclasses.replace(
        table.snap.state, hands=(table.snap.state.hands[0], tuple(hand)), drawn=drawn, discard=discard
    )
    return dataclasses.replace(table.snap, state=state), 1


def shortlist(snap: Snap, seat: int, limit: int = 8) -> list[dict[str, Any]]:
    legal = engine.legal_actions(snap, seat)
    return [legal[i] for i in romme_bot.expert_candidates(engine.view(snap, seat), legal, limit)]


def test_the_blind_cut_and_a_hand_that_can_go_out_are_not_searched() -> None:
    """R-3: the cut is blind; R-10 / R-19: a hand that can meld down to one card goes out."""
    table = Table(2, seed="shortlist")
    assert table.snap.state.phase == romme_game.CUT
    assert shortlist(table.snap, table.snap.to_act()[0]) == []
    assert shortlist(*holding(run_hand("5H 6H 7H", "8C 8D 8S", "KC"))) == []


def test_with_a_meld_at_hand_laying_it_now_is_weighed_against_holding_it() -> None:
    """R-9 / R-7: the shortlist is the one card greedy needs least (greedy's meld is added by the search)."""
    snap, seat = holding(run_hand("5H 6H 7H", "KC 2D 9S JD 4C", "8S 10D"))
    assert romme_bot.search_way_out(tuple(snap.state.hands[seat]), []) is None
    assert any(a["type"] == "meld" for a in engine.legal_actions(snap, seat))
    assert shortlist(snap, seat) == [{"type": "discard", "card": "KC"}]


def test_the_discard_shortlist_is_the_close_calls_greedy_rates_lowest() -> None:
    """R-11: the discards within DISCARD_CLOSE of the card greedy needs least, lowest first, at most `limit`."""
    snap, seat = holding(run_hand("5H 7H", "KC KD", "2S 9D JC", "AH 3C"))
    view = engine.view(snap, seat)
    listed = shortlist(snap, seat)
    scores = {a["card"]: romme_bot.discard_scores(view, [a], view["you"]["hand"])[0] for a in listed}
    lowest = min(romme_bot.discard_scores(view, [{"card": c} for c in set(view["you"]["hand"])], view["you"]["hand"]))
    assert len(listed) > 1 and all(a["type"] == "discard" for a in listed)
    assert list(scores.values()) == sorted(scores.values()) and min(scores.values()) == lowest
    assert max(scores.values()) <= lowest + romme_bot.DISCARD_CLOSE
    assert len(shortlist(snap, seat, limit=2)) == 2


def test_the_qs_greedy_would_throw_away_is_weighed_against_the_next_cards() -> None:
    """R-19: greedy sheds a lone QS (100 points in hand); the expert also weighs keeping it for a meld."""
    snap, seat = holding(run_hand("QS", "2H 9D", "KC 4S", "JH"))
    listed = shortlist(snap, seat)
    assert listed[0] == {"type": "discard", "card": "QS"}
    assert len(listed) == 1 + romme_bot.QS_ALTERNATIVES and all(a["type"] == "discard" for a in listed)


def test_drawing_is_weighed_against_the_best_ways_to_take_the_pile() -> None:
    """R-6 / R-7: draw first, then the takes greedy values best; nothing when the pile cannot be taken."""
    snap, seat = holding(run_hand("5H 6H", "KC 2D 9S"), drawn=False, discard=("3C", "7H"))
    listed = shortlist(snap, seat, limit=3)
    assert listed[0] == {"type": "draw"}
    assert listed[1:] and all(a["type"] == "take_discard" and "7H" in a["meld"]["cards"] for a in listed[1:])
    snap, seat = holding(run_hand("5H 6H", "KC 2D 9S"), drawn=False, discard=("3C",))
    assert shortlist(snap, seat) == []
