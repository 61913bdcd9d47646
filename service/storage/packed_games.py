"""A finished game packed into one compressed value: its meta hash and its stream entries, as stored.

The value is zlib (level 9) of compact JSON, `{"format": "cardtable-packed/1", "meta": {…}, …}` with
either
  "chain": {"first_prev": hex, "head": hex, "entries": [each entry with `prev_hash` and `hash` blanked]}
      when the stream is entries `1-0`, `2-0`, … whose hash chain recomputes exactly and whose texts
      re-encode byte for byte: the hashes are rebuilt on unpacking, and the rebuilt chain must end at
      the stored `head`, so a changed hash function can never rebuild a different chain unnoticed;
  "raw": [[entry id, entry text], …]
      for any other stream (a damaged one, say), kept exactly as it is.
Unpacking gives back exactly the meta and the entries (ids and texts) that were packed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from domain.chain import event_hash

PACKED_FORMAT = "cardtable-packed/1"
Entry = tuple[str, str]  # a stream entry: its id and its text


class PackError(ValueError):
    """A packed value that does not unpack to a game."""


@dataclasses.dataclass(frozen=True)
class Packed:
    """A game as stored: meta hash fields and stream entries (id, text), oldest first."""

    meta: Mapping[str, str]
    entries: tuple[Entry, ...]

    def texts(self, after: int = 0, count: int | None = None) -> list[str]:
        """The texts of the entries with an id above `<after>-0` (as XRANGE from `<after + 1>-0`)."""
        stop = None if count is None else after + count
        if self._numbered and after >= 0:  # ids 1-0, 2-0, ...: found by their place
            return [text for _, text in self.entries[after:stop]]
        start = (after + 1, 0)
        chosen = [text for entry_id, text in self.entries if _id_order(entry_id) >= start]
        return chosen if count is None else chosen[:count]

    @functools.cached_property
    def _numbered(self) -> bool:
        """Whether the entry ids are `1-0`, `2-0`, ... in order (a game's stream as appended)."""
        return all(entry_id == f"{seq}-0" for seq, (entry_id, _) in enumerate(self.entries, start=1))

    def size(self) -> int:
        """The bytes of its meta's and its entries' text, about what it takes in memory."""
        meta = sum(len(key) + len(text) for key, text in self.meta.items())
        return meta + sum(len(entry_id) + len(text) for entry_id, text in self.entries)


def encode_record(record: Mapping[str, Any]) -> str:
    """A record's text as the store writes it: compact JSON, UTF-8, keys in their order."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def pack(meta: Mapping[str, str], entries: Sequence[Entry]) -> bytes:
    """The compressed value of a game's meta and entries."""
    body: dict[str, Any] = {"format": PACKED_FORMAT, "meta": dict(meta)}
    chain = _chain_without_hashes(entries)
    if chain is None:
        body["raw"] = [list(entry) for entry in entries]
    else:
        body["chain"] = chain
    return zlib.compress(encode_record(body).encode("utf-8"), 9)


def unpack(value: bytes) -> Packed:
    """The meta and entries of a packed value; PackError when it is not one."""
    try:
        body = json.loads(zlib.decompress(value).decode("utf-8"))
        if body.get("format") != PACKED_FORMAT:
            raise PackError(f"not a {PACKED_FORMAT} value")
        meta = {str(key): str(text) for key, text in body["meta"].items()}
        if "chain" in body:
            return Packed(meta, _rebuild_chain(body["chain"]))
        return Packed(meta, tuple((str(entry_id), str(text)) for entry_id, text in body["raw"]))
    except PackError:
        raise
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise PackError(f"the packed game does not unpack: {error!r}") from error


def _chain_without_hashes(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """The entries with their hashes blanked, if every hash recomputes and every text re-encodes exactly."""
    if not entries:
        return None
    stripped = []
    first_prev: str | None = None
    prev = ""
    for seq, (entry_id, text) in enumerate(entries, start=1):
        try:
            record = json.loads(text)
        except ValueError:
            return None
        if entry_id != f"{seq}-0" or not isinstance(record, dict):
            return None
        if not isinstance(record.get("prev_hash"), str) or not isinstance(record.get("hash"), str):
            return None
        if first_prev is None:
            first_prev = prev = record["prev_hash"]
        if record["prev_hash"] != prev or record["hash"] != event_hash(prev, record) or encode_record(record) != text:
            return None
        prev = record["hash"]
        stripped.append({**record, "prev_hash": "", "hash": ""})  # the keys keep their places
    return {"first_prev": first_prev, "head": prev, "entries": stripped}


def _rebuild_chain(chain: Mapping[str, Any]) -> tuple[Entry, ...]:
    prev = str(chain["first_prev"])
    out = []
    for seq, record in enumerate(chain["entries"], start=1):
        record["prev_hash"] = prev
        record["hash"] = event_hash(prev, record)
        prev = record["hash"]
        out.append((f"{seq}-0", encode_record(record)))
    if prev != chain["head"]:
        raise PackError("the rebuilt hash chain does not end at the stored head")
    return tuple(out)


def _id_order(entry_id: str) -> tuple[int, int]:
    milliseconds, _, sequence = entry_id.partition("-")
    return int(milliseconds), int(sequence or 0)
