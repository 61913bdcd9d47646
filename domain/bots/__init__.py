"""Pure bot policies: pick one legal action from a seat's own view.

A policy gets exactly what the seat may see, `engine.view(snap, seat)`, the
seat's legal actions `engine.legal_actions(snap, seat)` and a seeded stream for
its ties and random choices. It never sees the snapshot, the state, the seed or
the stock (C-6), and it returns a copy of one of the legal actions.

The built-in levels (`LEVELS`) play every game. A level from outside the domain, a plug-in
(`PluginLevel`), plays the games it names; the service finds the plug-ins and tells this module about
them (`use_plugin_levels`): the domain loads nothing itself.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from domain import engine
from domain.shuffle import SeededStream

if TYPE_CHECKING:
    from domain.bots.expert import Budget

Policy = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], SeededStream], dict[str, Any]]

LEVELS = ("random", "greedy", "expert")
"""The built-in levels: they play every game."""
LEVEL_NAME = re.compile(r"[a-z0-9][a-z0-9-]{1,31}")
"""A level's name: 2 to 32 of a-z, 0-9 and -, starting with a letter or a digit."""


@dataclasses.dataclass(frozen=True)
class PluginLevel:
    """A house level from a plug-in: its `name`, the ids of the `games` it plays and its `policy` (a Policy);
    `origin` says where it came from, for the logs. ValueError for a name that is not a level's name or is a
    built-in level's, no games, or a policy that cannot be called."""

    name: str
    games: tuple[str, ...]
    policy: Policy
    origin: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not LEVEL_NAME.fullmatch(self.name):
            raise ValueError(f"a level's name is 2 to 32 of a-z, 0-9 and -, not {self.name!r}")
        if self.name in LEVELS:
            raise ValueError(f"{self.name!r} is a built-in level")
        games = self.games
        if not isinstance(games, tuple) or not games or not all(isinstance(g, str) and g for g in games):
            raise ValueError(f"games: one or more game ids, not {games!r}")
        if len(set(games)) != len(games):
            raise ValueError(f"games: each game once, not {games!r}")
        if not callable(self.policy):
            raise ValueError(f"policy: a function policy(view, legal, rng) -> action, not {self.policy!r}")


_PLUGINS: dict[str, PluginLevel] = {}


def use_plugin_levels(levels: Iterable[PluginLevel]) -> None:
    """Make `levels` the plug-in levels, in place of any before; ValueError for two of one name (and then
    the levels before stay)."""
    by_name: dict[str, PluginLevel] = {}
    for level in levels:
        if level.name in by_name:
            raise ValueError(f"two plug-in levels are named {level.name!r}")
        by_name[level.name] = level
    _PLUGINS.clear()
    _PLUGINS.update(by_name)


def plugin_level(name: str) -> PluginLevel | None:
    """The plug-in level of this name, or None."""
    return _PLUGINS.get(name)


def plugin_levels() -> tuple[PluginLevel, ...]:
    """Every plug-in level, in the order the service gave them."""
    return tuple(_PLUGINS.values())


def all_levels() -> tuple[str, ...]:
    """Every level: the built-in ones, then the plug-ins' by name."""
    return (*LEVELS, *sorted(_PLUGINS))


def levels_for(game_id: str) -> tuple[str, ...]:
    """The levels that play a game: the built-in ones, then the plug-ins' that name it, by name."""
    return (*LEVELS, *sorted(name for name, level in _PLUGINS.items() if game_id in level.games))


def random_policy(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
    """Level `random`, for every game: uniform over the legal actions."""
    return copy_action(rng.choice(legal))


def copy_action(action: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of an action (JSON-like: dicts, lists and plain values), faster than copy.deepcopy;
    every policy returns its choice through it, so that the caller's legal actions stay untouched."""
    return {key: _copy_value(value) for key, value in action.items()}


def _copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return copy_action(value)
    if isinstance(value, list):
        return [_copy_value(item) for item in value]
    return value


GENERIC: dict[str, Policy] = {"random": random_policy}
"""Policies that play every game, by level."""


def bot_module(game_id: str) -> ModuleType | None:
    """The module of a game's own bots (its `Game.bots`); None for a game without one, or no such game."""
    game = engine.registered(game_id)
    if game is None or game.bots is None:
        return None
    return importlib.import_module(game.bots)


def _game_policies(game_id: str) -> Mapping[str, Policy]:
    module = bot_module(game_id)
    policies: Mapping[str, Policy] = {} if module is None else module.POLICIES
    return policies


def policy_for(game_id: str, level: str, budget: Budget | None = None) -> Policy:
    """The policy of a level for a game; ValueError for an unknown level or a game without it.

    `budget` is how hard the expert thinks (when None, the game's default: `expert.default_budget`).
    A plug-in's policy is its own: the caller guards against what it may do (service/play/plugin_levels.py).
    """
    plugin = _PLUGINS.get(level)
    if plugin is not None:
        if game_id not in plugin.games:
            raise ValueError(f"the level {level!r} does not play {game_id!r}")
        return plugin.policy
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}; known levels: {', '.join(all_levels())}")
    if level == "expert":
        from domain.bots import expert

        return expert.expert_policy(budget or expert.default_budget(game_id))
    policy = _game_policies(game_id).get(level) or GENERIC.get(level)
    if policy is None:
        raise ValueError(f"no {level!r} bot for game {game_id!r}")
    return policy


def choose_action(
    game_id: str,
    level: str,
    view: Mapping[str, Any],
    legal: Sequence[Mapping[str, Any]],
    rng: SeededStream,
    budget: Budget | None = None,
) -> dict[str, Any]:
    """Pick one of `legal` for the seat whose view this is (`budget`: the expert's, if not the default)."""
    policy = policy_for(game_id, level, budget)
    if not legal:
        raise ValueError(f"the seat has no legal action in game {game_id!r}; a bot can only act when it may")
    action = policy(view, legal, rng)
    assert action in legal, f"{level} bot for {game_id} chose an illegal action {action!r}"
    return action
