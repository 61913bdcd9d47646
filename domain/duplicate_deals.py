"""Duplicate deals (C-8): a match plays the same deals with its entrants rotated through the seats.

The match's secret seed gives every deal's game seed; its commitment is public from the match's creation.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def match_commitment(match_seed: str, match_nonce: str) -> str:
    """SHA-256 of UTF-8(match seed) || 0x00 || UTF-8(match nonce), as lowercase hex (C-8)."""
    return hashlib.sha256(match_seed.encode("utf-8") + b"\x00" + match_nonce.encode("utf-8")).hexdigest()


def deal_seed(match_seed: str, deal: int) -> str:
    """The game seed of deal `deal` (0, 1, ...): lowercase hex of HMAC-SHA256(match seed, "deal/<deal>") (C-8)."""
    if deal < 0:
        raise ValueError(f"a deal is numbered from 0, not {deal}")
    message = f"deal/{deal}".encode()
    return hmac.new(match_seed.encode("utf-8"), message, hashlib.sha256).hexdigest()


def seating(entrants: Sequence[T], rotation: int) -> tuple[T, ...]:
    """Who sits where in game `rotation` of a deal: entrant (i + rotation) mod n at seat i (C-8)."""
    count = len(entrants)
    if not 0 <= rotation < count:
        raise ValueError(f"a deal of {count} entrants has rotations 0 to {count - 1}, not {rotation}")
    return tuple(entrants[(seat + rotation) % count] for seat in range(count))
