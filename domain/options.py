"""Game options (with defaults and ranges) and action shapes, validated generically."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain.cards import is_card
from domain.errors import InvalidInput


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One game option. `default=None` with `derived=True` means the game derives it."""

    name: str
    description: str
    default: Any
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    derived: bool = False

    def describe(self) -> dict[str, Any]:
        """Catalog form of the option."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        out["default"] = self.default
        if self.choices:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def check(self, value: Any) -> Any:
        """Return `value` if it fits this option, else raise InvalidInput."""
        if self.choices:
            if value not in self.choices:
                raise _bad_option(self, f"must be one of {', '.join(self.choices)}")
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad_option(self, "must be an integer")
        if self.minimum is not None and value < self.minimum:
            raise _bad_option(self, f"must be at least {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise _bad_option(self, f"must be at most {self.maximum}")
        return value


MAX_EVENTS = "max_events"
"""C-9: the option of every game (of a rules version that has it) that bounds its number of events."""
MAX_EVENTS_DEFAULT = 20_000
"""C-9: `max_events` when neither the creator nor the operator says otherwise (docs/rules/common.md#C-9)."""
MAX_EVENTS_LEAST = 10
"""C-9: the smallest `max_events`: room for the start of a game and its closing events."""


@dataclasses.dataclass(frozen=True)
class EventLimits:
    """C-9: the `max_events` a new game gets when its creator asks for none, and the most it may ask for
    (None: no ceiling, as for a game already made or a simulation)."""

    default: int = MAX_EVENTS_DEFAULT
    ceiling: int | None = None

    def option(self) -> OptionSpec:
        """The `max_events` option with this default and ceiling, as a catalog shows it."""
        return OptionSpec(
            MAX_EVENTS,
            "the most events the game may have; when only room for its end is left, it ends at once,"
            " scored as the hands played so far stand (C-9)",
            self.default,
            minimum=MAX_EVENTS_LEAST,
            maximum=self.ceiling,
        )


def _bad_option(spec: OptionSpec, why: str) -> InvalidInput:
    return InvalidInput("invalid_option", f"option '{spec.name}' {why}")


def resolve_options(specs: Sequence[OptionSpec], given: Mapping[str, Any]) -> dict[str, Any]:
    """Check the given options and fill in defaults (derived ones stay None)."""
    known = {spec.name: spec for spec in specs}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidInput("invalid_option", f"unknown option(s): {', '.join(unknown)}")
    resolved: dict[str, Any] = {}
    for spec in specs:
        if spec.name in given and not (spec.derived and given[spec.name] is None):
            resolved[spec.name] = spec.check(given[spec.name])
        else:
            resolved[spec.name] = spec.default
    return resolved


# Action field kinds: what a JSON value must look like.
INT = "int"
INT_LIST = "int_list"
CARD = "card"
CARD_LIST = "card_list"
TEXT = "text"
OBJECT = "object"


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One field of an action."""

    name: str
    kind: str
    required: bool = True
    nullable: bool = False
    choices: tuple[str, ...] = ()
    fields: tuple[FieldSpec, ...] = ()
    """An OBJECT's own fields: what the game's module checks inside it, with messages of its own."""
    one_of: bool = False
    """An OBJECT that holds exactly one of its `fields`."""


@dataclasses.dataclass(frozen=True)
class ActionSpec:
    """The shape of one action type of a game."""

    type: str
    fields: tuple[FieldSpec, ...] = ()


@dataclasses.dataclass(frozen=True)
class Action:
    """A validated action: its type and its arguments."""

    type: str
    args: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.args.get(name)


def parse_action(
    specs: Sequence[ActionSpec], raw: Mapping[str, Any], card_check: Callable[[object], bool] = is_card
) -> Action:
    """Check `raw` against the game's action shapes; InvalidInput when it does not fit.

    `card_check` tells the game's card codes (C-1 by default; Go5 has its own).
    """
    by_type = {spec.type: spec for spec in specs}
    action_type = raw.get("type")
    if not isinstance(action_type, str) or action_type not in by_type:
        allowed = ", ".join(by_type)
        raise InvalidInput("unknown_action", f"unknown action type {action_type!r}; this game has {allowed}")
    spec = by_type[action_type]
    names = {f.name for f in spec.fields}
    extra = sorted(set(raw) - names - {"type"})
    if extra:
        raise InvalidInput("invalid_request", f"'{action_type}' takes no field(s) {', '.join(extra)}")
    args: dict[str, Any] = {}
    for field in spec.fields:
        if field.name not in raw:
            if field.required:
                raise InvalidInput("invalid_request", f"'{action_type}' needs field '{field.name}'")
            args[field.name] = None
            continue
        args[field.name] = _check_field(action_type, field, raw[field.name], card_check)
    return Action(type=action_type, args=args)


def _check_field(action_type: str, field: FieldSpec, value: Any, card_check: Callable[[object], bool]) -> Any:
    where = f"'{action_type}.{field.name}'"
    if value is None:
        if field.nullable:
            return None
        raise InvalidInput("invalid_request", f"{where} may not be null")
    if field.kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput("invalid_request", f"{where} must be an integer")
        return value
    if field.kind == INT_LIST:
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
            raise InvalidInput("invalid_request", f"{where} must be a list of integers")
        return tuple(value)
    if field.kind == CARD:
        return _check_card(where, value, card_check)
    if field.kind == CARD_LIST:
        if not isinstance(value, list):
            raise InvalidInput("invalid_request", f"{where} must be a list of card codes")
        return tuple(_check_card(where, v, card_check) for v in value)
    if field.kind == TEXT:
        if not isinstance(value, str) or (field.choices and value not in field.choices):
            allowed = f" one of {', '.join(field.choices)}" if field.choices else " a string"
            raise InvalidInput("invalid_request", f"{where} must be{allowed}")
        return value
    if not isinstance(value, dict):
        raise InvalidInput("invalid_request", f"{where} must be an object")
    return value


def _check_card(where: str, value: Any, card_check: Callable[[object], bool]) -> str:
    if not isinstance(value, str):
        raise InvalidInput("invalid_request", f"{where} must hold card codes")
    if not card_check(value):
        raise InvalidInput("unknown_card", f"{where}: {value!r} is not a card code of this game")
    return value
