"""C-8 duplicate deals: the match commitment, each deal's seed (the rules' test vector) and the seatings."""

from __future__ import annotations

import hashlib

import pytest

from domain.duplicate_deals import (
    DealGame,
    deal_game,
    deal_ranks,
    deal_scores,
    deal_seed,
    games_needed_ratio,
    games_needed_ratio_at_one_table,
    match_commitment,
    mean_interval,
    results,
    seating,
    timeouts_of,
)


def test_c8_deal_seeds_follow_the_rules_test_vector() -> None:
    """C-8's vector: match seed `demo`."""
    assert deal_seed("demo", 0) == "734d8d8cb5b4b60cf1203bdc8862d1a1a801831b0dbeb0cad504a207b45de106"
    assert deal_seed("demo", 1) == "67b81d086bf8f2c4eb3c65fe87819648158275edfbf937c7073a0a16a423e530"


def test_c8_the_commitment_hashes_seed_zero_byte_nonce() -> None:
    nonce = "ab" * 32
    assert match_commitment("demo", nonce) == hashlib.sha256(b"demo\x00" + nonce.encode()).hexdigest()
    assert match_commitment("demo", nonce) != match_commitment("demo", "cd" * 32)


def test_c8_each_entrant_plays_every_seat_once_per_deal() -> None:
    entrants = ["greedy", "expert", "random"]
    games = [seating(entrants, rotation) for rotation in range(3)]
    assert games[0] == ("greedy", "expert", "random")
    assert games[1] == ("expert", "random", "greedy")  # entrant (i + 1) mod 3 at seat i
    for seat in range(3):
        assert sorted(game[seat] for game in games) == sorted(entrants)


@pytest.mark.parametrize("rotation", [-1, 3])
def test_c8_a_rotation_outside_the_deal_is_refused(rotation: int) -> None:
    with pytest.raises(ValueError, match="rotations 0 to 2"):
        seating(["a", "b", "c"], rotation)


def test_c8_a_negative_deal_is_refused() -> None:
    with pytest.raises(ValueError, match="numbered from 0"):
        deal_seed("demo", -1)


def test_deal_scores_follow_each_entrant_through_its_seats_c8() -> None:
    """C-8: an entrant's deal score is its mean points per hand over its games of the deal, in whichever seat
    the rotation gave it (game r: entrant (i + r) mod n at seat i)."""
    games = [
        DealGame(0, 0, ((1, 10),)),  # entrant 0 at seat 0
        DealGame(0, 1, ((20, 3), (22, 5))),  # entrant 0 at seat 1: 3 and 5; entrant 1 at seat 0: 20 and 22
    ]
    assert deal_scores(2, games) == {0: [(1 + 3 + 5) / 3, (10 + 20 + 22) / 3]}


def test_results_give_paired_differences_with_the_c8_interval() -> None:
    """C-8: the paired difference's mean over the deals and mean ± 1.96 · s / √D (none for one deal)."""
    games = [DealGame(d, r, ((d + r, 2 * d),) if r == 0 else ((2 * d, d + r),)) for d in range(3) for r in range(2)]
    out = results(["a", "b"], games)
    per_deal = deal_scores(2, games)
    differences = [scores[0] - scores[1] for scores in per_deal.values()]
    mean, interval = mean_interval(differences)
    assert out[0]["paired"] == [{"vs": "b", "mean": mean, "ci95": list(interval) if interval else None}]
    assert out[1]["paired"][0]["mean"] == -mean and out[0]["hands"] == 6
    assert results(["a", "b"], games[:2])[0]["paired"][0]["ci95"] is None, "one deal: no interval"


def test_an_entrants_timeouts_follow_it_through_its_seats_c8() -> None:
    """The moves played for a seat at its deadline (records the system played for that seat, one move an
    append) are summed for the entrant the rotation put there."""
    created = {"type": "GameCreated", "actor": "system", "data": {"players": 2}, "at": "t0"}
    late = [
        created,
        {"type": "CardDrawn", "actor": "system", "seat": 1, "reason": "turn_timeout", "data": {}, "at": "t1"},
        {"type": "CardDiscarded", "actor": "system", "seat": 1, "reason": "turn_timeout", "data": {}, "at": "t1"},
        {"type": "CardDrawn", "actor": 0, "data": {}, "at": "t2"},
        {"type": "CardDrawn", "actor": "system", "seat": 1, "reason": "turn_timeout", "data": {}, "at": "t3"},
        {"type": "RoundScored", "actor": "system", "data": {"scores": [4, 9]}, "at": "t3"},
    ]
    assert timeouts_of(late) == (0, 2)
    games = [deal_game(0, 0, late, "RoundScored"), deal_game(0, 1, late, "RoundScored")]
    # rotation 0: entrant 1 at seat 1 (2 timeouts); rotation 1: entrant 0 at seat 1 (2 timeouts)
    assert [r["timeouts"] for r in results(["a", "b"], games)] == [2, 2]
    assert [r["timeouts"] for r in results(["a", "b"], games[:1])] == [0, 2]
    assert [r["timeouts"] for r in results(["a", "b"], [DealGame(0, 0, ((1, 2),))])] == [0, 0], "none known"


def test_deal_ranks_put_the_better_first_and_tie_equal_scores_c8() -> None:
    assert deal_ranks([3.0, 1.0, 3.0, 2.0], lowest_wins=True) == [2, 0, 2, 1]
    assert deal_ranks([3.0, 1.0, 3.0, 2.0], lowest_wins=False) == [0, 2, 0, 1]


def test_games_needed_ratio_is_the_paired_variance_over_the_sum_of_the_variances() -> None:
    """var(a - b) / (var(a) + var(b)) over the deals: 0 when the deal's luck moves both scores alike, 1 when
    the scores are unrelated, 2 when the luck of one is the other's loss."""
    assert games_needed_ratio([1.0, 3.0, 5.0], [0.0, 2.0, 4.0]) == 0.0
    # a 1, 3: variance 2; b 3, 1: variance 2; a - b -2, 2: variance 8
    assert games_needed_ratio([1.0, 3.0], [3.0, 1.0]) == pytest.approx(2.0)
    # a 0, 2, 0, 2 and b 0, 0, 2, 2 (unrelated): variance 4/3 each; a - b 0, 2, -2, 0: variance 8/3
    assert games_needed_ratio([0.0, 2.0, 0.0, 2.0], [0.0, 0.0, 2.0, 2.0]) == pytest.approx(1.0)
    # a 2, 4, 9 (variance 13), b 1, 1, 4 (variance 3); a - b 1, 3, 5 (variance 4): 4 / 16
    assert games_needed_ratio([2.0, 4.0, 9.0], [1.0, 1.0, 4.0]) == pytest.approx(0.25)


def test_games_needed_ratio_needs_two_deals_and_some_spread() -> None:
    assert games_needed_ratio([1.0], [2.0]) is None
    assert games_needed_ratio([1.0, 1.0], [2.0, 2.0]) is None


def test_games_needed_ratio_at_one_table_weighs_the_deals_against_single_games() -> None:
    """games a deal · var(deal difference) / var(game difference): a deal's rotations that cancel each
    other's luck leave nothing to average; otherwise what a deal's games add up to against one game."""
    assert games_needed_ratio_at_one_table([0.0, 0.0], [5.0, -5.0, 5.0, -5.0], 2) == 0.0
    # deal differences 1, 3: variance 2; game differences 0, 2, 2, 4: variance 8/3; 2 · 2 / (8/3)
    assert games_needed_ratio_at_one_table([1.0, 3.0], [0.0, 2.0, 2.0, 4.0], 2) == pytest.approx(1.5)
    assert games_needed_ratio_at_one_table([1.0], [0.0, 2.0], 2) is None
    assert games_needed_ratio_at_one_table([1.0, 1.0], [1.0, 1.0, 1.0, 1.0], 2) is None
