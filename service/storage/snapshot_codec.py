"""A folded game as bytes for Redis, and back: tagged JSON, compressed, marked with what wrote it.

Game states are frozen dataclasses of domain/ holding tuples, frozensets, dicts and plain values.
Each dataclass is written with its class name and fields (what an instance caches is left out);
only dataclasses defined in domain/ are ever built back, so a stored value cannot name any other
code. The game's config (which holds the secret seed) is never written: it is a `{"$config": 1}`
mark that decoding replaces with the loaded game's own config.

A stored snapshot is one line of marks, then the compressed body:
`cardtable-snapshot/2 <code version> <sha256 of the body>\n<body>`. The code version is
`code_version(game)`: a digest of the source of the game's module, of every module of domain/ it
imports (the engine's fold, cards, shuffle...) and of this codec, computed once per process. A
snapshot folded or written by other code, whose bytes changed, or that has no marks (written before
they existed) does not decode; nor does one naming a class, module or field this code lacks. Decoding
raises nothing but SnapshotDecodeError, and the caller folds the game from its events instead.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import hmac
import importlib
import importlib.util
import json
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from domain import engine

DOMAIN = "domain."
FORMAT = b"cardtable-snapshot/2"  # the layout of the marks and of the body; 1 had no marks
MAX_BODY_BYTES = 64 * 2**20  # a body inflating to more is refused (far above any game's state)


class SnapshotDecodeError(ValueError):
    """A stored snapshot that does not decode into a game state."""


def encode(snap: engine.Snapshot[Any], last_hash: str) -> bytes:
    """The snapshot and the hash of its last event, compressed and marked."""
    body = {
        "version": snap.version,
        "seed_revealed": snap.seed_revealed,
        "abandoned": snap.abandoned,
        "out_of_events": snap.out_of_events,
        "last_hash": last_hash,
        "state": _encode(snap.state),
    }
    return sealed(snap.config.game, body)


def sealed(game_id: str, body: Mapping[str, Any]) -> bytes:
    """A snapshot's body as stored: compressed, after the marks of the format, the code and the digest."""
    compressed = zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"))
    digest = hashlib.sha256(compressed).hexdigest().encode("ascii")
    return b" ".join((FORMAT, code_version(game_id).encode("ascii"), digest)) + b"\n" + compressed


def decode(blob: bytes, config: engine.GameConfig) -> tuple[engine.Snapshot[Any], str]:
    """The snapshot of a game with this config, and the hash of its last event; SnapshotDecodeError
    (and nothing else) when the blob was written by other code, changed, or does not decode."""
    try:
        body = json.loads(_inflated(_unsealed(blob, config.game)))
        state = _decode(body["state"], config)
        snap: engine.Snapshot[Any] = engine.Snapshot(
            engine.get_game(config.game),
            config,
            state,
            int(body["version"]),
            bool(body["seed_revealed"]),
            body["abandoned"],
            bool(body["out_of_events"]),
        )
        return snap, str(body["last_hash"])
    except SnapshotDecodeError:
        raise
    except Exception as error:  # stored bytes meet code that may have changed: any failure means "unusable"
        raise SnapshotDecodeError(f"a stored snapshot does not decode: {error!r}") from error


def _unsealed(blob: bytes, game_id: str) -> bytes:
    """The compressed body of a blob whose marks are this format's, this code's and its digest's."""
    if not blob.startswith(FORMAT + b" "):
        raise SnapshotDecodeError("a stored snapshot without the marks of this format (an older one)")
    marks, _, compressed = blob.partition(b"\n")
    fields = marks.split(b" ")
    if len(fields) != 3:
        raise SnapshotDecodeError("a stored snapshot whose marks are not this format's")
    _, code, digest = fields
    if code != code_version(game_id).encode("ascii"):
        raise SnapshotDecodeError("a stored snapshot folded by other code")
    if not hmac.compare_digest(digest, hashlib.sha256(compressed).hexdigest().encode("ascii")):
        raise SnapshotDecodeError("a stored snapshot whose bytes changed")
    return compressed


def _inflated(compressed: bytes) -> bytes:
    """The body, decompressed, at most MAX_BODY_BYTES of it."""
    inflater = zlib.decompressobj()
    body = inflater.decompress(compressed, MAX_BODY_BYTES)
    if inflater.unconsumed_tail or not inflater.eof:
        raise SnapshotDecodeError("a stored snapshot too large or cut short")
    return body


@functools.cache
def code_version(game_id: str) -> str:
    """A digest of the code that decides the game's state and fold (its module and the domain/ modules
    it imports) and of this codec, computed once per process: a change to any of them, down to a
    comment, makes the snapshots written before it unusable, so no one has to remember a version."""
    digest = hashlib.sha256(FORMAT)
    for name, source in sorted(_domain_sources(type(engine.get_game(game_id)).__module__).items()):
        digest.update(b"\0%s\0%s" % (name.encode(), source))
    digest.update(b"\0codec\0" + Path(__file__).read_bytes())
    return digest.hexdigest()[:32]


def _domain_sources(root: str) -> dict[str, bytes]:
    """The source of `root` and of every module of domain/ it imports, directly or through others."""
    sources: dict[str, bytes] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if name in sources:
            continue
        sources[name] = _source(name)
        package = name if _is_package(name) else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(sources[name])):
            if isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names if _in_domain(alias.name)]
            elif isinstance(node, ast.ImportFrom):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                if _in_domain(base):
                    todo.append(base)
                    if _is_package(base):  # `from domain import romme_melds`: a module, not a name
                        todo += [f"{base}.{a.name}" for a in node.names if importlib.util.find_spec(f"{base}.{a.name}")]
    return sources


def _in_domain(name: str) -> bool:
    return name == DOMAIN[:-1] or name.startswith(DOMAIN)


def _is_package(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None


def _source(name: str) -> bytes:
    """The bytes of a module's file."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise LookupError(f"no file for module {name}")
    return Path(spec.origin).read_bytes()


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
