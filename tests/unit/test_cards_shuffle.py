"""C-1 card codes, C-3 canonical order and the C-4 seeded shuffle, with the rule's test vectors."""

from __future__ import annotations

import hashlib
import hmac
import string

import pytest

from domain.cards import JOKER, canonical_deck, is_card, rank_of, suit_of
from domain.shuffle import (
    SeededStream,
    commitment,
    derived_key,
    is_valid_seed,
    new_nonce,
    new_server_seed,
    reshuffle_label,
    round_label,
    shuffle,
)

SPADES = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS"]
HEARTS = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH"]
DIAMONDS = ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD"]
CLUBS = ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC"]
ONE_DECK = SPADES + HEARTS + DIAMONDS + CLUBS


def reference_u32s(seed: str, label: str, count: int) -> list[int]:
    """An independent reading of C-4's byte stream: HMAC blocks k = 0, 1, ... cut into u32s."""
    stream = b""
    k = 0
    while len(stream) < 4 * count:
        msg = label.encode() + b"\x00" + k.to_bytes(8, "big")
        stream += hmac.new(seed.encode(), msg, hashlib.sha256).digest()
        k += 1
    return [int.from_bytes(stream[4 * i : 4 * i + 4], "big") for i in range(count)]


# ---------------------------------------------------------------- C-4 test vectors


NONCE = "0123456789abcdef" * 4


def test_c4_vector_commitment_of_demo_with_its_nonce() -> None:
    """C-4: the commitment of seed `demo` with nonce `0123456789abcdef` four times."""
    assert commitment("demo", NONCE) == "de6af9f995527c51ef9e828e277d9243a3380edf14a2381f76dfeb083e7675f6"


def test_c4_vector_commitment_of_demo_without_a_nonce() -> None:
    """C-4: the commitment of seed `demo` in a record made before the nonce."""
    assert commitment("demo") == "2a97516c354b68848cdbd8f54a226a0a55b21ed138e207ad6c5cbb9c00aa5aea"


def test_c4_vector_first_two_u32() -> None:
    """C-4: the first two u32() for L = "round/1" and seed `demo`."""
    stream = SeededStream("demo", "round/1")
    assert [stream.u32(), stream.u32()] == [4030929662, 662179856]


def test_c4_vector_below_52_five_times() -> None:
    """C-4: below(52) five times on a fresh stream."""
    stream = SeededStream("demo", "round/1")
    assert [stream.below(52) for _ in range(5)] == [6, 0, 13, 19, 19]


def test_c4_vector_first_eight_of_52_card_deck() -> None:
    """C-4: the first eight cards of shuffle(one 52-card canonical deck, "round/1")."""
    deck = shuffle(canonical_deck(1), "demo", "round/1")
    assert list(deck[:8]) == ["9S", "6C", "10S", "8C", "10D", "5D", "4C", "2D"]


def test_c4_vector_first_eight_of_110_card_deck() -> None:
    """C-4: the first eight of the 110-card Rommé deck (two decks, six jokers)."""
    cards = canonical_deck(2, 6)
    assert len(cards) == 110
    assert list(shuffle(cards, "demo", "round/1")[:8]) == ["4S", "JK", "8C", "3D", "9S", "3C", "3D", "AC"]


# ---------------------------------------------------------------- C-4 beyond the vectors


def test_c4_u32_stream_crosses_hmac_blocks() -> None:
    """C-4: the stream is the concatenation of HMAC blocks k = 0, 1, 2 (8-byte big-endian k)."""
    stream = SeededStream("another seed!", "round/7/reshuffle/2")
    assert [stream.u32() for _ in range(20)] == reference_u32s("another seed!", "round/7/reshuffle/2", 20)


def test_c4_below_rejects_values_at_or_above_the_limit() -> None:
    """C-4: below(n) draws again while u >= 2^32 - (2^32 mod n): no modulo bias."""
    n = 2**31 + 1  # limit = 2^31 + 1: about half of all u32 are rejected
    limit = 2**32 - (2**32 % n)
    raw = iter(reference_u32s("bias", "round/1", 200))
    expected = []
    for _ in range(20):
        u = next(raw)
        while u >= limit:
            u = next(raw)
        expected.append(u % n)
    stream = SeededStream("bias", "round/1")
    assert [stream.below(n) for _ in range(20)] == expected


def test_c4_below_edges() -> None:
    """C-4: below(n) for 1 <= n <= 2^32; below(1) is 0 and below(2^32) is the plain u32."""
    assert [SeededStream("e", "x").below(1) for _ in range(3)] == [0, 0, 0]
    assert SeededStream("e", "x").below(2**32) == reference_u32s("e", "x", 1)[0]
    for bad in (0, -1, 2**32 + 1):
        with pytest.raises(ValueError):
            SeededStream("e", "x").below(bad)


def test_c4_shuffle_is_fisher_yates_from_the_end() -> None:
    """C-4: for i from len-1 down to 1: j = below(i+1); swap cards[i] and cards[j]."""
    cards = list(range(30))
    stream = SeededStream("fy", "round/3")
    for i in range(len(cards) - 1, 0, -1):
        j = stream.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    assert list(shuffle(range(30), "fy", "round/3")) == cards


def test_c4_shuffle_is_a_deterministic_permutation_per_seed_and_label() -> None:
    """C-4: the same seed and label give the same order; another label or seed another order."""
    deck = canonical_deck(1)
    first = shuffle(deck, "seed", "round/1")
    assert first == shuffle(deck, "seed", "round/1")
    assert sorted(first) == sorted(deck)
    assert first != shuffle(deck, "seed", "round/2")
    assert first != shuffle(deck, "seeD", "round/1")
    assert list(deck) == ONE_DECK, "shuffle must not change its input"


def test_c4_labels() -> None:
    """C-4: the deck of round r uses "round/<r>", the k-th reshuffle "round/<r>/reshuffle/<k>"."""
    assert round_label(1) == "round/1"
    assert round_label(12) == "round/12"
    assert reshuffle_label(3, 2) == "round/3/reshuffle/2"


def test_c4_seed_validity() -> None:
    """C-4: a seed is 1 to 128 printable ASCII characters."""
    assert is_valid_seed("a")
    assert is_valid_seed("x" * 128)
    assert is_valid_seed(string.printable[:95])  # digits, letters, punctuation and the space
    for bad in ("", "x" * 129, "tab\there", "new\nline", "Grüße", "\x7f", None, 42, b"bytes"):
        assert not is_valid_seed(bad), bad


def test_c4_server_seed_is_64_lowercase_hex_digits() -> None:
    """C-4: 32 secure random bytes written as 64 lowercase hex digits; a valid seed."""
    seeds = {new_server_seed() for _ in range(5)}
    assert len(seeds) == 5
    for seed in seeds:
        assert len(seed) == 64
        assert set(seed) <= set("0123456789abcdef")
        assert is_valid_seed(seed)


def test_c4_commitment_is_sha256_hex_of_seed_zero_byte_nonce() -> None:
    """C-4: SHA-256 of UTF-8(seed) || 0x00 || UTF-8(nonce); without a nonce (older records) of the seed alone."""
    assert commitment("golf-test", NONCE) == hashlib.sha256(b"golf-test\x00" + NONCE.encode()).hexdigest()
    assert commitment("golf-test") == hashlib.sha256(b"golf-test").hexdigest()
    assert commitment("a", NONCE) != commitment("b", NONCE)


def test_c4_a_short_seed_is_not_guessable_from_its_salted_commitment() -> None:
    """C-4: seed `4711` with a nonce gives a commitment that is not sha256("4711"), nor that of any
    four-digit seed, so trying every short seed against the public commitment finds nothing."""
    salted = commitment("4711", new_nonce())
    assert salted != hashlib.sha256(b"4711").hexdigest()
    assert salted not in {hashlib.sha256(f"{n:04d}".encode()).hexdigest() for n in range(10_000)}


def test_c4_nonces_are_64_lowercase_hex_digits_and_fresh() -> None:
    """C-4: the nonce is 32 bytes from the secure random source as 64 lowercase hex digits, new for every game."""
    nonces = {new_nonce() for _ in range(5)}
    assert len(nonces) == 5
    assert all(len(nonce) == 64 and set(nonce) <= set("0123456789abcdef") for nonce in nonces)


def test_a_derived_key_is_an_hmac_of_the_secrets_and_not_the_seed() -> None:
    """A bot's stream is keyed by HMAC(seed, label || 0x00 || nonce): it changes with the seed, the nonce
    and the label, and it is not the seed's own bytes."""
    key = derived_key("4711", NONCE, "bot/1/9")
    assert key == hmac.new(b"4711", b"bot/1/9\x00" + NONCE.encode(), hashlib.sha256).digest()
    others = {derived_key("4712", NONCE, "bot/1/9"), derived_key("4711", "0" * 64, "bot/1/9")}
    others |= {derived_key("4711", NONCE, "bot/2/9"), derived_key("4711", NONCE, "bot/1/10")}
    assert key not in others and len(others) == 4 and b"4711" not in key


# ---------------------------------------------------------------- C-1 codes


@pytest.mark.parametrize("code", [*ONE_DECK, "JK"])
def test_c1_every_standard_code_is_a_card(code: str) -> None:
    """C-1: <rank><suit> with ranks A 2..10 J Q K, suits S H D C, and JK."""
    assert is_card(code)


@pytest.mark.parametrize(
    "code",
    ["qs", "Qs", "1S", "11H", "0S", "TS", "10", "S", "JK ", " AS", "AS\n", "AX", "JKS", "KJ", "", "10h", "J", 10, None],
)
def test_c1_anything_else_is_an_unknown_card(code: object) -> None:
    """C-1: codes are exact and upper case; anything else is not a card."""
    assert not is_card(code)


def test_c1_rank_and_suit_parts() -> None:
    """C-1: the rank and suit parts of codes; a joker has no suit."""
    assert (rank_of("10H"), suit_of("10H")) == ("10", "H")
    assert (rank_of("QS"), suit_of("QS")) == ("Q", "S")
    assert (rank_of("AC"), suit_of("AC")) == ("A", "C")
    assert (rank_of(JOKER), suit_of(JOKER)) == ("JK", None)


# ---------------------------------------------------------------- C-3 order


def test_c3_one_deck_in_canonical_order() -> None:
    """C-3: suits S H D C, within a suit A 2 ... 10 J Q K, index 0 first."""
    assert list(canonical_deck(1)) == ONE_DECK
    assert list(canonical_deck()) == ONE_DECK


def test_c3_copies_then_jokers_then_extras() -> None:
    """C-3: each deck copy in turn, then all jokers, then the extra cards in the given order."""
    deck = canonical_deck(2, 3, ("QS", "AH"))
    assert list(deck) == ONE_DECK + ONE_DECK + ["JK", "JK", "JK", "QS", "AH"]
    three = canonical_deck(3)
    assert len(three) == 156 and list(three[104:]) == ONE_DECK
