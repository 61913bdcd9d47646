"""Helpers of the view-schema tests: bot-played games, every version of them folded again, the
parts of each version's views, and the JSON Schema that apispec makes of the view schemas."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import jsonschema
import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from domain import engine
from domain.bots import choose_action
from domain.events import Event
from domain.shuffle import SeededStream
from service.api.view_schemas import VIEW_SCHEMAS, ViewSchemas

MAX_ACTIONS = 20_000
PARTS = ("table", "you", "result", "full_table")
COMPONENTS = "#/components/schemas/"


# ---------------------------------------------------------------- games


def play(
    config: engine.GameConfig, levels: Sequence[str], chooser: str, abandon_after: int | None = None
) -> list[Event]:
    """Every event of a game that bots of these levels (one per seat) play to its end, or that is
    abandoned after `abandon_after` actions."""
    snap, events = engine.start(config)
    stream = SeededStream(chooser, "tests/view-schemas")
    for done in range(MAX_ACTIONS):
        if snap.finished:
            return events
        if done == abandon_after:
            snap, new = engine.abandon(snap, "no action for 30 days")
            return events + new
        seat = stream.choice(snap.to_act())
        view = engine.view(snap, seat)
        action = choose_action(config.game, levels[seat], view, view["you"]["legal"], stream)
        snap, new = engine.act(snap, seat, action)
        events += new
    raise AssertionError(f"the game did not end within {MAX_ACTIONS} actions")


def versions(config: engine.GameConfig, events: Sequence[Event]) -> Iterator[engine.Snapshot[Any]]:
    """The game after each of its events, as a replay folds it."""
    game = engine.get_game(config.game)
    snap: engine.Snapshot[Any] = engine.Snapshot(game, config, game.initial_state(config))
    for event in events:
        snap = engine.advance(snap, event)
        yield snap


def parts(snap: engine.Snapshot[Any]) -> Iterator[tuple[str, Any]]:
    """(part, value) of every game-specific part of this version's views: the public table and the
    phase, every seat's `you`, the result (when there is one), the full view's table and result."""
    public = engine.view(snap, None)
    yield "phase", public["phase"]
    yield "table", public["table"]
    if public["result"] is not None:
        yield "result", public["result"]
    for seat in range(snap.config.players):
        yield "you", engine.view(snap, seat)["you"]
    full = engine.full_view(snap)
    yield "full_table", full["table"]
    if full["result"] is not None:
        yield "result", full["result"]


# ---------------------------------------------------------------- the schemas as the document has them


def schema_of(views: ViewSchemas, part: str) -> type[ma.Schema]:
    """The view schema of one part."""
    schema: type[ma.Schema] = getattr(views, part)
    return schema


def openapi_components() -> dict[str, Any]:
    """The components apispec makes of every view schema (OpenAPI 3.0.3, as the app's document)."""
    spec = APISpec("views", "1", "3.0.3", plugins=[MarshmallowPlugin()])
    for views in VIEW_SCHEMAS.values():
        for part in PARTS:
            schema = schema_of(views, part)
            spec.components.schema(schema.__name__, schema=schema)
    schemas: dict[str, Any] = spec.to_dict()["components"]["schemas"]
    return schemas


def as_json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: `nullable` becomes a "null" type. apispec writes a
    nullable reference as anyOf [$ref, {type: object, nullable: true}]; that second branch stands for
    null, so it becomes {type: null} (left as "any object or null" it would let any object pass)."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node == {"type": "object", "nullable": True}:
        return {"type": "null"}
    out = {
        key: {name: as_json_schema(sub) for name, sub in value.items()}
        if key == "properties"
        else as_json_schema(value)
        for key, value in node.items()
        if key != "nullable"
    }
    if node.get("nullable") and "type" in node:
        out["type"] = [node["type"], "null"]
    return out


def inlined(node: Any, components: Mapping[str, Any]) -> Any:
    """A JSON schema with each `#/components/schemas/...` reference replaced by what it names (the
    view schemas do not refer to themselves, so this ends)."""
    if isinstance(node, list):
        return [inlined(item, components) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        assert set(node) == {"$ref"}, f"a reference with siblings: {node}"
        return inlined(components[node["$ref"].removeprefix(COMPONENTS)], components)
    return {key: inlined(value, components) for key, value in node.items()}


class Validators:
    """A JSON Schema validator per view schema, over the components apispec made of them."""

    def __init__(self) -> None:
        self.components = openapi_components()
        converted = as_json_schema(self.components)
        self._validators = {
            name: jsonschema.Draft202012Validator(inlined(converted[name], converted)) for name in self.components
        }

    def errors(self, schema: type[ma.Schema], value: Any) -> list[str]:
        """What is wrong with `value` by the JSON Schema of `schema`'s component."""
        found = self._validators[schema.__name__].iter_errors(value)
        return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in found]


def dumped_unchanged(schema: type[ma.Schema], value: Mapping[str, Any]) -> bool:
    """True when dumping `value` through `schema` (as flask-smorest answers) gives it back exactly,
    compared as JSON (so that `true` and `1` differ)."""
    return json.dumps(schema().dump(value), sort_keys=True) == json.dumps(value, sort_keys=True)


# ---------------------------------------------------------------- what the values of each field were


class FieldUse:
    """For each view schema reached: how many objects it described, and per field how many of them
    had it and how many had it null."""

    def __init__(self) -> None:
        self.objects: collections.Counter[str] = collections.Counter()
        self.present: collections.Counter[tuple[str, str]] = collections.Counter()
        self.nulls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.schemas: dict[str, ma.Schema] = {}

    def record(self, schema: ma.Schema, value: Mapping[str, Any]) -> None:
        """Count `value` and, through its nested objects, theirs."""
        name = type(schema).__name__
        self.schemas[name] = schema
        self.objects[name] += 1
        for key, field in schema.fields.items():
            if key not in value:
                continue
            self.present[name, key] += 1
            if value[key] is None:
                self.nulls[name, key] += 1
            else:
                self._nested(field, value[key])

    def _nested(self, field: ma.fields.Field, value: Any) -> None:
        if isinstance(field, ma.fields.Nested) and _is_view_schema(field.schema):
            self.record(field.schema, value)
        elif isinstance(field, ma.fields.List) and isinstance(field.inner, ma.fields.Nested):
            for item in value:
                self._nested(field.inner, item)

    def misdeclared(self) -> list[str]:
        """Fields whose `required`, `allow_none` or presence the values met contradict."""
        wrong = []
        for name, schema in self.schemas.items():
            for key, field in schema.fields.items():
                present, nulls, objects = self.present[name, key], self.nulls[name, key], self.objects[name]
                if field.required and present < objects:
                    wrong.append(f"{name}.{key} is required but missing from {objects - present} of {objects}")
                if not field.required and present in (0, objects):
                    wrong.append(f"{name}.{key} is optional but {'always' if present else 'never'} there")
                if field.allow_none and not nulls:
                    wrong.append(f"{name}.{key} may be null but never was")
        return wrong


def _is_view_schema(schema: ma.Schema) -> bool:
    """A schema of service/api/view_schemas (the `legal` actions belong to the action schemas)."""
    return type(schema).__module__.startswith("service.api.view_schemas")
