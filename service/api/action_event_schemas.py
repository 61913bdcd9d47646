"""The typed parts of the OpenAPI document that the domain declares: actions, events and card codes.

Generated from the game modules, so that the contract cannot drift from the rules:
- each action type of a game (its ActionSpec and FieldSpecs) is a schema `<Game><Type>Action`, and
  each game's actions are `<Game>Action`, a oneOf with a discriminator on `type`; the request body
  `Action` is the anyOf of the games' (an action names no game, and types recur across games);
- each event class (its dataclass fields and type hints) is a record `<Game><Event>Record` with its
  data `<Game><Event>Data` (the engine's own events, alike in every game: `<Event>Record`), and each
  game's records are `<Game>EventRecord`, a oneOf with a discriminator on `type`; a list of records
  of any game is `EventRecord`, their anyOf (event names recur across games with other fields);
- the card codes of a game are the enum `Card` (C-1) or, for a game with codes of its own, `<Game>Card`.

The service still checks every request itself (domain parse_action and the rules, with their
problem codes); these schemas describe the same shapes to clients.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from domain import engine
from domain.events import Event
from domain.options import CARD, CARD_LIST, INT, INT_LIST, OBJECT, TEXT, ActionSpec, FieldSpec

JsonSchema = dict[str, Any]
NULL: JsonSchema = {"type": "null"}
OPTION_VALUE = "OptionValue"
EVENT_RECORD = "EventRecord"


def ref(name: str) -> JsonSchema:
    """A reference to the component schema `name`."""
    return {"$ref": f"#/components/schemas/{name}"}


def camel(name: str) -> str:
    """`take_discard` -> `TakeDiscard`, `go5` -> `Go5`: the parts of a schema's name."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def union(variants: Mapping[str, str], key: str) -> JsonSchema:
    """A oneOf of component schemas, told apart by the value of `key` (the mapping's keys)."""
    return {
        "oneOf": [ref(name) for name in dict.fromkeys(variants.values())],
        "discriminator": {
            "propertyName": key,
            "mapping": {value: ref(name)["$ref"] for value, name in variants.items()},
        },
    }


def nullable(schema: JsonSchema) -> JsonSchema:
    """The schema or null (OpenAPI 3.1)."""
    if set(schema) == {"type"} and isinstance(schema["type"], str):
        return {"type": [schema["type"], "null"]}
    if set(schema) == {"anyOf"}:
        return {"anyOf": [*schema["anyOf"], dict(NULL)]}
    return {"anyOf": [schema, dict(NULL)]}  # a copy each: the YAML shows no anchors


def closed_object(properties: Mapping[str, JsonSchema], required: Iterable[str], **extra: Any) -> JsonSchema:
    """An object of exactly these properties."""
    schema: JsonSchema = {"type": "object", "properties": dict(properties), "additionalProperties": False}
    if needed := list(required):
        schema["required"] = needed
    return {**schema, **extra}


def game_name(game: engine.Game[Any]) -> str:
    """The game's part of a schema name: Golf, Romme, Switch, Go5."""
    return camel(game.id)


def card_schema_name(game: engine.Game[Any]) -> str:
    """`Card` for C-1's codes, else `<Game>Card`."""
    return "Card" if game.card_codes() == engine.CARD_CODES else f"{game_name(game)}Card"


def action_schema_name(game: engine.Game[Any], action_type: str) -> str:
    """`<Game><Type>Action`, e.g. GolfDrawAction."""
    return f"{game_name(game)}{camel(action_type)}Action"


def game_action_schema_name(game: engine.Game[Any]) -> str:
    """`<Game>Action`: the oneOf of the game's action types."""
    return f"{game_name(game)}Action"


def event_record_schema_name(game: engine.Game[Any]) -> str:
    """`<Game>EventRecord`: the oneOf of the game's event records."""
    return f"{game_name(game)}EventRecord"


# ---------------------------------------------------------------- actions


class _Actions:
    """Builds the action components of one game; nested objects become components of their own."""

    def __init__(self, game: engine.Game[Any]) -> None:
        self.game = game
        self.components: dict[str, JsonSchema] = {}

    def field(self, spec: FieldSpec, owner: str) -> JsonSchema:
        schema = self.value(spec, owner)
        return nullable(schema) if spec.nullable else schema

    def value(self, spec: FieldSpec, owner: str) -> JsonSchema:
        card = ref(card_schema_name(self.game))
        if spec.kind == INT:
            return {"type": "integer"}
        if spec.kind == INT_LIST:
            return {"type": "array", "items": {"type": "integer"}}
        if spec.kind == CARD:
            return card
        if spec.kind == CARD_LIST:
            return {"type": "array", "items": card}
        if spec.kind == TEXT:
            return {"type": "string", "enum": list(spec.choices)} if spec.choices else {"type": "string"}
        assert spec.kind == OBJECT, spec
        name = owner + camel(spec.name)
        extra = {"minProperties": 1, "maxProperties": 1} if spec.one_of else {}
        self.components[name] = self.object(spec.fields, name, **extra)
        return ref(name)

    def object(self, fields: Iterable[FieldSpec], owner: str, **extra: Any) -> JsonSchema:
        fields = tuple(fields)
        properties = {spec.name: self.field(spec, owner) for spec in fields}
        return closed_object(properties, (spec.name for spec in fields if spec.required), **extra)

    def action(self, spec: ActionSpec) -> JsonSchema:
        name = action_schema_name(self.game, spec.type)
        schema = self.object(spec.fields, name.removesuffix("Action"))
        schema["properties"] = {
            "type": {"type": "string", "const": spec.type},
            **schema["properties"],
            "expected_version": {
                "type": "integer",
                "minimum": 0,
                "description": "the version the action was decided on; 409 when the game has moved on",
            },
        }
        schema["required"] = ["type", *schema.get("required", [])]
        return schema

    def build(self) -> dict[str, JsonSchema]:
        variants = {spec.type: action_schema_name(self.game, spec.type) for spec in self.game.actions}
        for spec in self.game.actions:
            self.components[variants[spec.type]] = self.action(spec)
        self.components[game_action_schema_name(self.game)] = {
            **union(variants, "type"),
            "description": f"an action of {self.game.name}, by its type",
        }
        self.components[card_schema_name(self.game)] = {
            "type": "string",
            "enum": list(self.game.card_codes()),
            "description": "a card code of the game (C-1)",
        }
        return self.components


# ---------------------------------------------------------------- events

SCALARS: dict[Any, JsonSchema] = {int: {"type": "integer"}, str: {"type": "string"}, bool: {"type": "boolean"}}


def hint_schema(hint: Any) -> JsonSchema:
    """The JSON schema of an event field's type hint (as Event.data() writes it)."""
    if hint in SCALARS:
        return dict(SCALARS[hint])
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        (inner,) = [arg for arg in args if arg is not type(None)]
        return nullable(hint_schema(inner))
    if origin is typing.Literal and all(isinstance(arg, str) for arg in args):
        return {"type": "string", "enum": list(args)}
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return {"type": "array", "items": hint_schema(args[0])}
    if origin in (Mapping, dict) and args[0] is str:
        return {"type": "object", "additionalProperties": ref(OPTION_VALUE)}
    raise TypeError(f"no JSON schema for the event field type {hint!r}")


def event_data_schema(cls: type[Event]) -> JsonSchema:
    """An event's `data`: its dataclass fields but `actor`; a field with a default may be missing."""
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.name != "actor"]
    properties = {f.name: hint_schema(hints[f.name]) for f in fields}
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    return closed_object(properties, required, description=(cls.__doc__ or cls.__name__).split("\n\n")[0].strip())


def event_prefix(game: engine.Game[Any], cls: type[Event]) -> str:
    """The engine's events are alike in every game: no game in their names."""
    return "" if cls in engine.ENGINE_EVENTS else game_name(game)


def event_record_schema(data_name: str, type_name: str) -> JsonSchema:
    """A record of one event type: the chain's fields around its typed `data`."""
    properties: dict[str, JsonSchema] = {
        "seq": {"type": "integer", "minimum": 1},
        "type": {"type": "string", "const": type_name},
        "actor": {
            "oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "enum": ["system"]}],
            "description": 'a seat number or "system"',
        },
        "seat": {
            "type": "integer",
            "minimum": 0,
            "description": 'only when the system played this seat\'s action (actor "system")',
        },
        "reason": {"type": "string", "description": "why the system played the seat's action: turn_timeout"},
        "data": ref(data_name),
        "at": {"type": "string"},
        "prev_hash": {"type": "string"},
        "hash": {"type": "string"},
    }
    return closed_object(properties, ("seq", "type", "actor", "data", "at", "prev_hash", "hash"))


def event_components(game: engine.Game[Any]) -> dict[str, JsonSchema]:
    """Every event record of the game and their oneOf `<Game>EventRecord`."""
    components: dict[str, JsonSchema] = {}
    variants: dict[str, str] = {}
    for cls in (*engine.ENGINE_EVENTS, *game.events):
        stem = event_prefix(game, cls) + cls.type_name()
        components[f"{stem}Data"] = event_data_schema(cls)
        components[f"{stem}Record"] = event_record_schema(f"{stem}Data", cls.type_name())
        variants[cls.type_name()] = f"{stem}Record"
    components[event_record_schema_name(game)] = {
        **union(variants, "type"),
        "description": f"an event of {game.name}, by its type",
    }
    return components


# ---------------------------------------------------------------- all of them


def components() -> dict[str, JsonSchema]:
    """Every generated component of the games registered now, by name."""
    return _components(tuple(engine.all_games()))


@functools.cache
def _components(games: tuple[engine.Game[Any], ...]) -> dict[str, JsonSchema]:
    out: dict[str, JsonSchema] = {
        OPTION_VALUE: {
            "anyOf": [
                {"type": "integer"},
                {"type": "string"},
                {"type": "boolean"},
                {"type": "array", "items": {"type": "integer"}},
            ],
            "description": "an option's value: a number, a choice, a flag or a list of numbers",
        },
        EVENT_RECORD: {
            "anyOf": [ref(event_record_schema_name(game)) for game in games],
            "description": "an event of any game: its game's schema tells its `data` by `type`",
        },
    }
    for game in games:
        out.update(_Actions(game).build())
        out.update(event_components(game))
    return out


def action_body() -> JsonSchema:
    """The request body of POST /v1/games/{id}/actions: an action of any game."""
    return {
        "anyOf": [ref(game_action_schema_name(game)) for game in engine.all_games()],
        "description": "an action of the game's: its fields depend on the game and `type` (docs/api.md)",
    }
