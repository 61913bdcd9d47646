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
    """Deterministic byte stream `HMAC(seed, label || 0x00 || k)` for k = 0, 1, ..."""

    def __init__(self, seed: str, label: str) -> None:
        self._key = seed.encode("utf-8")
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


def commitment(seed: str) -> str:
    """Public commitment to a seed: hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def is_valid_seed(seed: object) -> bool:
    """1 to 128 printable ASCII characters."""
    return isinstance(seed, str) and 1 <= len(seed) <= MAX_SEED_LENGTH and all(ch in PRINTABLE_ASCII for ch in seed)


def new_server_seed() -> str:
    """32 bytes from the OS secure source as 64 lowercase hex digits.

    The one use of the OS random source in domain/: it is how a seed is born,
    never how a game proceeds.
    """
    return secrets.token_bytes(32).hex()
