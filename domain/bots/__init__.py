"""Pure bot policies: pick one legal action from a seat's own view.

A policy gets exactly what the seat may see, `engine.view(snap, seat)`, the
seat's legal actions `engine.legal_actions(snap, seat)` and a seeded stream for
its ties and random choices. It never sees the snapshot, the state, the seed or
the stock (C-6), and it returns a copy of one of the legal actions.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from domain import engine
from domain.shuffle import SeededStream

if TYPE_CHECKING:
    from domain.bots.expert import Budget

Policy = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], SeededStream], dict[str, Any]]

LEVELS = ("random", "greedy", "expert")


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
    """
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}; known levels: {', '.join(LEVELS)}")
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
