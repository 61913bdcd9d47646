"""A game driven through domain.engine with its event log: the base of each game's test Table."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from domain import engine
from domain.errors import DomainError
from domain.events import Event


class EngineTable:
    """One game of `GAME` (default `PLAYERS` seats, seed "<game>-test", the current rules unless
    `rules_version` says otherwise), its snapshot and events."""

    GAME: ClassVar[str]
    PLAYERS: ClassVar[int] = 2

    def __init__(
        self,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        decks: Sequence[Sequence[str]] = (),
        seed: str | None = None,
        rules_version: int | None = None,
    ) -> None:
        players = self.PLAYERS if players is None else players
        seed = seed or f"{self.GAME}-test"
        options = dict(options or {})
        self.config = engine.make_config(self.GAME, players, options, seed, decks, rules_version=rules_version)
        self.snap, self.events = engine.start(self.config)

    def act(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply one action; returns the events it appended."""
        self.snap, new = engine.act(self.snap, seat, action)
        self.events.extend(new)
        return new

    def refused(self, seat: int, action: Mapping[str, Any], kind: type[DomainError] = DomainError) -> DomainError:
        """The refusal of an action; the snapshot must stay as it was."""
        before = self.snap
        with pytest.raises(kind) as info:
            self.act(seat, action)
        assert self.snap is before
        return info.value

    def legal(self, seat: int) -> list[dict[str, Any]]:
        return engine.legal_actions(self.snap, seat)

    def view(self, seat: int | None = None) -> dict[str, Any]:
        return engine.view(self.snap, seat)

    @property
    def table(self) -> dict[str, Any]:
        table: dict[str, Any] = self.view(None)["table"]
        return table

    def truth(self) -> dict[str, Any]:
        """Everything, hidden cards included (the game's full view)."""
        full: dict[str, Any] = self.snap.game.full_view(self.snap.state)
        return full

    def of_type(self, name: str) -> list[Event]:
        return [event for event in self.events if event.type_name() == name]

    def with_state(self, **changes: Any) -> None:
        """Replace fields of the game's state (for positions play cannot reach quickly)."""
        state = dataclasses.replace(self.snap.state, **changes)
        self.snap = dataclasses.replace(self.snap, state=state)


def assert_fold_replays(
    config: engine.GameConfig, snap: engine.Snapshot[Any], events: list[Event], prefixes: Sequence[Any]
) -> None:
    """Event sourcing: fold(config, events) equals the incrementally built snapshot, every time, also from
    the events' JSON records; `prefixes` are (event count, snapshot then) pairs to re-fold too."""
    first = engine.fold(config, events)
    assert first == snap
    assert engine.fold(config, list(events)) == first
    game = engine.get_game(config.game)
    records = json.loads(json.dumps([[e.type_name(), e.actor, e.data()] for e in events]))
    rebuilt = [game.catalog.build(name, actor, fields) for name, actor, fields in records]
    assert rebuilt == events
    assert engine.fold(config, rebuilt) == snap
    for count, expected in prefixes:
        assert engine.fold(config, events[:count]) == expected
