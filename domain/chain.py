"""The public hash chain over a game's events (API.md, Events)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from domain.events import SYSTEM, Actor, Event


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, record: dict[str, Any]) -> str:
    """sha256_hex(prev_hash + canonical_json(record without `at` and `hash`))."""
    body = {key: value for key, value in record.items() if key not in ("at", "hash")}
    return hashlib.sha256((prev_hash + canonical_json(body)).encode("utf-8")).hexdigest()


def chain_records(
    events: list[Event], first_seq: int, prev_hash: str, at: str, system_reason: str | None = None
) -> list[dict[str, Any]]:
    """Records for consecutive events starting at `first_seq`, chained onto `prev_hash`.

    With `system_reason` the system played the seat's action (a turn timeout): the seat's event
    is recorded with actor "system", the seat in `seat` and the reason in `reason`.
    """
    records = []
    for offset, event in enumerate(events):
        record: dict[str, Any] = {"seq": first_seq + offset, "type": event.type_name(), "actor": event.actor}
        if system_reason is not None and event.actor != SYSTEM:
            record.update(actor=SYSTEM, seat=event.actor, reason=system_reason)
        record.update(data=event.data(), prev_hash=prev_hash)
        record["hash"] = event_hash(prev_hash, record)
        record["at"] = at
        records.append(record)
        prev_hash = record["hash"]
    return records


def record_actor(record: Mapping[str, Any]) -> Actor:
    """Whose event a record is: its `seat` when the system played that seat's action, else its `actor`."""
    actor: Actor = record["actor"]
    if actor == SYSTEM and "seat" in record:
        seat = record["seat"]
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise ValueError(f"seat {seat!r} is no seat")
        return seat
    return actor
