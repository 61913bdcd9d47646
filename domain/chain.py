"""The public hash chain over a game's events (API.md, Events)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from domain.events import Event


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, record: dict[str, Any]) -> str:
    """sha256_hex(prev_hash + canonical_json(record without `at` and `hash`))."""
    body = {key: value for key, value in record.items() if key not in ("at", "hash")}
    return hashlib.sha256((prev_hash + canonical_json(body)).encode("utf-8")).hexdigest()


def chain_records(events: list[Event], first_seq: int, prev_hash: str, at: str) -> list[dict[str, Any]]:
    """Records for consecutive events starting at `first_seq`, chained onto `prev_hash`."""
    records = []
    for offset, event in enumerate(events):
        record: dict[str, Any] = {
            "seq": first_seq + offset,
            "type": event.type_name(),
            "actor": event.actor,
            "data": event.data(),
            "prev_hash": prev_hash,
        }
        record["hash"] = event_hash(prev_hash, record)
        record["at"] = at
        records.append(record)
        prev_hash = record["hash"]
    return records
