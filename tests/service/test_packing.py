"""The packed form of a finished game (service/storage/packed_games.py): exactly the meta and entries that went in."""

from __future__ import annotations

import json
import zlib

import pytest

from domain.chain import event_hash
from service.storage.packed_games import PackError, pack, unpack

META = {"game": "golf", "seed": "s", "tokens": "[null]"}


def chained(count: int, first_prev: str = "c" * 64) -> list[tuple[str, str]]:
    """Entries `1-0` … as the store writes them, chained from `first_prev`."""
    entries, prev = [], first_prev
    for seq in range(1, count + 1):
        record = {"seq": seq, "type": "T", "actor": "system", "data": {"n": seq, "ü": "ß"}, "prev_hash": prev}
        record["hash"] = event_hash(prev, record)
        record["at"] = f"2026-01-01T00:00:{seq:02d}.000Z"
        entries.append((f"{seq}-0", json.dumps(record, separators=(",", ":"), ensure_ascii=False)))
        prev = record["hash"]
    return entries


def body_of(value: bytes) -> dict[str, object]:
    body: dict[str, object] = json.loads(zlib.decompress(value))
    return body


def test_a_sound_chain_is_packed_without_its_hashes_and_unpacks_exactly() -> None:
    entries = chained(30)
    value = pack(META, entries)
    assert "chain" in body_of(value) and "raw" not in body_of(value)
    last_hash = json.loads(entries[-1][1])["hash"]
    inner = zlib.decompress(value).decode()
    assert inner.count(last_hash) == 1 and json.loads(entries[10][1])["hash"] not in inner
    packed = unpack(value)
    assert packed.meta == META and list(packed.entries) == entries


def test_a_stream_that_does_not_recompute_is_packed_as_it_is() -> None:
    entries = chained(5)
    entries[2] = (entries[2][0], entries[2][1].replace('"n":3', '"n":33'))  # changed after it was written
    gapped = [entry for entry in chained(5) if entry[0] != "4-0"]
    spaced = [(entry_id, text.replace(",", ", ")) for entry_id, text in chained(3)]  # another encoding
    for stream in (entries, gapped, spaced, [("1-0", "not json")]):
        value = pack(META, stream)
        assert "raw" in body_of(value)
        assert list(unpack(value).entries) == stream


def test_reading_after_a_seq_follows_the_entry_ids() -> None:
    gapped = [entry for entry in chained(6) if entry[0] != "4-0"]
    packed = unpack(pack(META, gapped))
    assert packed.texts(3) == [text for entry_id, text in gapped if entry_id in ("5-0", "6-0")]
    assert packed.texts(0, 2) == [gapped[0][1], gapped[1][1]]
    assert packed.texts(6) == []


def test_a_chain_that_rebuilds_to_another_head_is_refused() -> None:
    body = body_of(pack(META, chained(4)))
    body["chain"]["head"] = "0" * 64  # type: ignore[index]
    with pytest.raises(PackError, match="head"):
        unpack(zlib.compress(json.dumps(body).encode()))
    for junk in (b"", b"not zlib", zlib.compress(b"[]"), zlib.compress(b'{"format": "other"}')):
        with pytest.raises(PackError):
            unpack(junk)
