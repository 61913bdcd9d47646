"""A game's header: its creation facts, stored beside its events as the event log's `meta` (text fields).

Encoded and decoded here only: the command path writes it (`encode`), the repository reads it back
(`decode`, `token_digests`) and the archive checks a file's against its record (`facts`). A game made
before a field was added lacks it (META_OPTIONAL): before the nonce (C-4), versioned rules (version 1)
or turn timeouts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from service.play.loaded_game import LoadedGame, MatchPlace
from service.play.seats import Seat

META_REQUIRED = frozenset({"game", "seats", "tokens", "options", "seed", "seed_source", "decks", "created_at"})
META_OPTIONAL = frozenset({"nonce", "rules_version", "turn_seconds", "match"})  # absent in games made before them


def encode(
    config: engine.GameConfig,
    seats: Sequence[Seat],
    digests: Sequence[str | None],
    seed_source: str,
    created_at: str,
    turn_seconds: int | None,
    place: MatchPlace | None = None,
) -> dict[str, str]:
    """The header of a new game as the event log keeps it (seats without secrets; token digests only)."""
    return {
        "game": config.game,
        "seats": json.dumps([s.public() for s in seats]),
        "tokens": json.dumps(list(digests)),
        "options": json.dumps(dict(config.options)),
        "seed": config.seed,
        **({"nonce": config.nonce} if config.nonce is not None else {}),
        "rules_version": str(config.rules_version),
        "seed_source": seed_source,
        "decks": json.dumps([list(d) for d in config.decks]),
        "created_at": created_at,
        **({"turn_seconds": str(turn_seconds)} if turn_seconds is not None else {}),
        **({"match": json.dumps(place.public())} if place is not None else {}),
    }


def token_digests(meta: Mapping[str, str]) -> list[str | None]:
    """Each seat's token digest (None for a seat without a token), from the header alone."""
    digests: list[str | None] = json.loads(meta["tokens"])
    return digests


def facts(meta: Mapping[str, str]) -> dict[str, Any]:
    """The header's fields decoded from their texts, as a record states them (seats as JSON objects)."""
    return {
        "game": meta["game"],
        "seats": json.loads(meta["seats"]),
        "options": json.loads(meta["options"]),
        "seed": meta["seed"],
        "nonce": meta.get("nonce"),  # None for a game made before the nonce (C-4)
        "rules_version": int(meta.get("rules_version", "1")),  # a game made before versioned rules: 1
        "seed_source": meta["seed_source"],
        "decks": json.loads(meta["decks"]),
        "turn_seconds": int(meta["turn_seconds"]) if meta.get("turn_seconds") else None,
        "created_at": meta.get("created_at"),
        "match": json.loads(meta["match"]) if meta.get("match") else None,
    }


def place_of(meta: Mapping[str, str]) -> MatchPlace | None:
    """A match's game's place in its match (None for another game), from the header alone."""
    return MatchPlace(**json.loads(meta["match"])) if meta.get("match") else None


def decode(game_id: str, meta: Mapping[str, str]) -> LoadedGame:
    """The game the header describes, with none of its events applied."""
    stated = facts(meta)
    seats = tuple(Seat(**s) for s in stated["seats"])
    config = engine.GameConfig(
        game=stated["game"],
        players=len(seats),
        options=stated["options"],
        seed=stated["seed"],
        decks=tuple(tuple(d) for d in stated["decks"]),
        rules_version=stated["rules_version"],
        nonce=stated["nonce"],
    )
    game = engine.get_game(config.game)
    snap: engine.Snapshot[Any] = engine.Snapshot(game, config, game.initial_state(config))
    digests = tuple(token_digests(meta))
    place = place_of(meta)
    return LoadedGame(game_id, seats, digests, config, stated["seed_source"], snap, "", stated["turn_seconds"], place)
