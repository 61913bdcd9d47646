"""A folded game as bytes for Redis, and back: tagged JSON, compressed.

Game states are frozen dataclasses of domain/ holding tuples, frozensets, dicts and plain values.
Each dataclass is written with its class name and fields (what an instance caches is left out);
only dataclasses defined in domain/ are ever built back, so a stored value cannot name any other
code. The game's config (which holds the secret seed) is never written: it is a `{"$config": 1}`
mark that decoding replaces with the loaded game's own config.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import zlib
from typing import Any

from domain import engine

DOMAIN = "domain."


class SnapshotDecodeError(ValueError):
    """A stored snapshot that does not decode into a game state."""


def encode(snap: engine.Snapshot[Any], last_hash: str) -> bytes:
    """The snapshot and the hash of its last event, compressed."""
    body = {
        "version": snap.version,
        "seed_revealed": snap.seed_revealed,
        "abandoned": snap.abandoned,
        "last_hash": last_hash,
        "state": _encode(snap.state),
    }
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"))


def decode(blob: bytes, config: engine.GameConfig) -> tuple[engine.Snapshot[Any], str]:
    """The snapshot of a game with this config, and the hash of its last event."""
    try:
        body = json.loads(zlib.decompress(blob))
        state = _decode(body["state"], config)
        snap: engine.Snapshot[Any] = engine.Snapshot(
            engine.get_game(config.game),
            config,
            state,
            int(body["version"]),
            bool(body["seed_revealed"]),
            body["abandoned"],
        )
        return snap, str(body["last_hash"])
    except (ValueError, KeyError, TypeError, zlib.error) as error:
        raise SnapshotDecodeError(f"a stored snapshot does not decode: {error}") from error


def _encode(value: Any) -> Any:
    if isinstance(value, engine.GameConfig):
        return {"$config": 1}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {field.name: _encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"$dc": f"{cls.__module__}:{cls.__qualname__}", "f": fields}
    if isinstance(value, tuple):
        return {"$t": [_encode(item) for item in value]}
    if isinstance(value, frozenset):
        return {"$fs": [_encode(item) for item in value]}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {"$d": [[_encode(key), _encode(item)] for key, item in value.items()]}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"a snapshot cannot hold a {type(value).__name__}")


def _decode(value: Any, config: engine.GameConfig) -> Any:
    if isinstance(value, list):
        return [_decode(item, config) for item in value]
    if not isinstance(value, dict):
        return value
    if "$config" in value:
        return config
    if "$dc" in value:
        return _build(value["$dc"], {name: _decode(item, config) for name, item in value["f"].items()})
    if "$t" in value:
        return tuple(_decode(item, config) for item in value["$t"])
    if "$fs" in value:
        return frozenset(_decode(item, config) for item in value["$fs"])
    if "$d" in value:
        return {_decode(key, config): _decode(item, config) for key, item in value["$d"]}
    raise ValueError(f"an untagged object in a snapshot: {sorted(value)[:3]}")


def _build(name: str, fields: dict[str, Any]) -> Any:
    """A dataclass of domain/ by its `module:qualname`, with exactly its fields, built as `replaced` does."""
    module_name, _, qualname = name.partition(":")
    if not module_name.startswith(DOMAIN) or "." in qualname:
        raise ValueError(f"{name!r} is no class of domain/")
    cls = getattr(importlib.import_module(module_name), qualname, None)
    if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
        raise ValueError(f"{name!r} is no dataclass of domain/")
    if set(fields) != {field.name for field in dataclasses.fields(cls)}:
        raise ValueError(f"the fields of {name!r} do not match")
    built = object.__new__(cls)
    vars(built).update(fields)
    return built
