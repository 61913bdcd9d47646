"""Events: frozen dataclasses named in the past tense, with a JSON record form."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Literal

SYSTEM: Literal["system"] = "system"
Actor = int | Literal["system"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Event:
    """Base of all events; `actor` is a seat number or "system"."""

    actor: Actor = SYSTEM

    @classmethod
    def type_name(cls) -> str:
        """The event's `type` in records: its class name."""
        return cls.__name__

    def to_action(self) -> dict[str, Any] | None:
        """The request body of the action that produced this event, for the seat's own events.

        Each action produces exactly one event with the seat as actor; the
        verifier re-decides that action from it. System events return None.
        """
        return None

    def data(self) -> dict[str, Any]:
        """The event's fields other than `actor`, JSON-ready."""
        return {f.name: _to_json(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "actor"}


def _to_json(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_to_json(v) for v in value]
    return value


def _to_frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_to_frozen(v) for v in value)
    return value


class EventCatalog:
    """Looks event classes up by their record `type`."""

    def __init__(self, classes: Iterable[type[Event]]) -> None:
        self._by_name = {cls.type_name(): cls for cls in classes}

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def build(self, type_name: str, actor: Actor, data: Mapping[str, Any]) -> Event:
        """Rebuild an event from its record form; KeyError/TypeError when it does not fit."""
        cls = self._by_name[type_name]
        fields = {key: _to_frozen(value) for key, value in data.items()}
        return cls(actor=actor, **fields)
