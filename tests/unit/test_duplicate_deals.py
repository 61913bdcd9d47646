"""C-8 duplicate deals: the match commitment, each deal's seed (the rules' test vector) and the seatings."""

from __future__ import annotations

import hashlib

import pytest

from domain.duplicate_deals import deal_seed, match_commitment, seating


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
