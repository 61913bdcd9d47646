"""The normative seeded shuffle (C-4): an HMAC-SHA256 byte stream per label."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_TWO_32 = 1 << 32
PRINTABLE_ASCII = frozenset(chr(c) for c in range(0x20, 0x7F))
MAX_SEED_LENGTH = 128


class SeededStream:
    """Deterministic byte stream `HMAC(seed, label || 0x00 || k)` for k = 0, 1, ...; the seed is a
    string (C-4) or opaque key bytes (a bot's stream, derived_key)."""

    def __init__(self, seed: str | bytes, label: str) -> None:
        self._key = seed if isinstance(seed, bytes) else seed.encode("utf-8")
        self._prefix = label.encode("utf-8") + b"\x00"
        self._block = 0
        self._buffer = b""

    def _refill(self) -> None:
        msg = self._prefix + self._block.to_bytes(8, "big")
        self._buffer += hmac.new(self._key, msg, hashlib.sha256).digest()
        self._block += 1

    def u32(self) -> int:
        """The next four bytes of the stream, big-endian."""
        while len(self._buffer) < 4:
            self._refill()
        value = int.from_bytes(self._buffer[:4], "big")
        self._buffer = self._buffer[4:]
        return value

    def below(self, n: int) -> int:
        """A uniform integer in [0, n) without modulo bias."""
        if not 1 <= n <= _TWO_32:
            raise ValueError(f"below() needs 1 <= n <= 2^32, got {n}")
        limit = _TWO_32 - (_TWO_32 % n)
        while True:
            u = self.u32()
            if u < limit:
                return u % n

    def choice(self, items: Sequence[T]) -> T:
        """One item, uniformly."""
        return items[self.below(len(items))]


def shuffle(cards: Sequence[T], seed: str, label: str) -> tuple[T, ...]:
    """Fisher-Yates from the end with `below(i+1)`; index 0 is the top."""
    stream = SeededStream(seed, label)
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def round_label(round_no: int) -> str:
    """C-4 label of the deck of round `round_no` (1-based)."""
    return f"round/{round_no}"


def reshuffle_label(round_no: int, k: int) -> str:
    """C-4 label of the k-th reshuffle (1-based) inside a round."""
    return f"round/{round_no}/reshuffle/{k}"


def commitment(seed: str, nonce: str | None = None) -> str:
    """Public commitment to a seed (C-4): hex SHA-256 of UTF-8(seed) || 0x00 || UTF-8(nonce).

    A game made before the nonce existed has none: its commitment hashes the seed alone.
    """
    if nonce is None:
        return hashlib.sha256(seed.encode("utf-8")).hexdigest()
    return hashlib.sha256(seed.encode("utf-8") + b"\x00" + nonce.encode("utf-8")).hexdigest()


def derived_key(seed: str, nonce: str | None, label: str) -> bytes:
    """Key bytes for a stream of its own, derived from the game's secrets:
    `HMAC-SHA256(UTF-8(seed), UTF-8(label) || 0x00 || UTF-8(nonce))`. Whoever holds them learns
    neither the seed nor the deal, and without the seed (and nonce) no one can compute them."""
    msg = label.encode("utf-8") + b"\x00" + (nonce or "").encode("utf-8")
    return hmac.new(seed.encode("utf-8"), msg, hashlib.sha256).digest()


def is_valid_seed(seed: object) -> bool:
    """1 to 128 printable ASCII characters."""
    return isinstance(seed, str) and 1 <= len(seed) <= MAX_SEED_LENGTH and all(ch in PRINTABLE_ASCII for ch in seed)


def new_server_seed() -> str:
    """32 bytes from the OS secure source as 64 lowercase hex digits.

    With new_nonce, the one use of the OS random source in domain/: it is how a seed is born,
    never how a game proceeds.
    """
    return secrets.token_bytes(32).hex()


def new_nonce() -> str:
    """C-4's nonce, drawn for every game whoever chose the seed: 32 bytes from the OS secure source
    as 64 lowercase hex digits. It salts the commitment and never touches the cards."""
    return secrets.token_bytes(32).hex()
