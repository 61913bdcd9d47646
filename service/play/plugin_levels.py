"""House levels from plug-ins: installed Python packages that declare entry points in the group `cardtable.bots`
(docs/bots.md, "House levels from plug-ins").

An entry point's name is the level's name; it loads an object (a module will do) with `games`, the ids of the
games the level plays, and `policy`, a function of domain.bots.Policy's signature, `policy(view, legal, rng)`,
that returns one of `legal`. `install` finds them and tells domain.bots; the wiring root (service/bootstrap.py)
calls it as the API, a worker or a command-line tool starts. A plug-in that fails to load, is of another shape,
or takes a built-in level's name or one taken already, is logged and left out: the process starts all the same.

`play` runs a plug-in's policy for a turn. It gives back None, and logs a warning that names the plug-in, when
the policy raises, returns anything but one of the legal actions, or thinks longer than `think_ms_max` (the cap
on an expert's think time, EXPERT_THINK_MS_MAX), and when this process has no such plug-in (installed where the
game was created, not where its turns are played): the caller then plays the turn with `greedy`, and the game
goes on. The policy runs on a thread of its own, so that the turn is not kept waiting past the cap; a policy
that never returns keeps its thread for good. It gets copies of the view and the legal actions, and its own
stream: whatever it does with them, the turn played is one of the legal actions as the engine gave them.
"""

from __future__ import annotations

import copy
import importlib.metadata
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from domain import bots
from domain.bots import PluginLevel
from domain.shuffle import SeededStream

GROUP = "cardtable.bots"
log = logging.getLogger(__name__)


def load(group: str = GROUP) -> tuple[PluginLevel, ...]:
    """The plug-in levels of the installed packages' entry points in `group`; each one that cannot be had is
    logged and left out."""
    levels: dict[str, PluginLevel] = {}
    for entry in importlib.metadata.entry_points(group=group):
        try:
            found = entry.load()
        except (Exception, SystemExit) as error:  # a plug-in's import may raise anything, sys.exit included
            log.warning(
                "bot plug-in %r (%s) left out: it failed to load: %s",
                entry.name,
                entry.value,
                _said(error),
                exc_info=error,
            )
            continue
        try:
            level = _level_of(entry.name, entry.value, found)
        except Exception as error:
            log.warning("bot plug-in %r (%s) left out: %s", entry.name, entry.value, error)
            continue
        taken = levels.get(level.name)
        if taken is not None:
            log.warning("bot plug-in %r (%s) left out: %s has that name", entry.name, entry.value, taken.origin)
            continue
        levels[level.name] = level
    return tuple(levels.values())


def _level_of(name: str, origin: str, found: Any) -> PluginLevel:
    """The level an entry point `name` loaded (`found`): ValueError unless it has `games` and `policy`."""
    games = getattr(found, "games", None)
    if isinstance(games, str | bytes) or not isinstance(games, Iterable):
        raise ValueError(f"`games` must be a list of game ids, not {games!r}")
    policy: Any = getattr(found, "policy", None)  # PluginLevel refuses what cannot be called
    return PluginLevel(name, tuple(games), policy, origin)


def install(group: str = GROUP) -> tuple[PluginLevel, ...]:
    """Find the plug-in levels (`load`) and make them the domain's, in place of any before; returns them."""
    levels = load(group)
    bots.use_plugin_levels(levels)
    for level in levels:
        log.info("bot plug-in %r (%s) plays %s", level.name, level.origin, ", ".join(level.games))
    return levels


def play(
    level: str,
    game_id: str,
    view: Mapping[str, Any],
    legal: Sequence[Mapping[str, Any]],
    rng: SeededStream,
    think_ms_max: int,
) -> dict[str, Any] | None:
    """The action of plug-in level `level` for a seat of `game_id` (a copy of one of `legal`); None, logged,
    when the plug-in is not here, raises, answers an action that is not legal or thinks past `think_ms_max`."""
    plugin = bots.plugin_level(level)
    if plugin is None or game_id not in plugin.games:
        log.warning("bot plug-in %r: not installed here for %s; greedy plays its turn", level, game_id)
        return None
    answer: list[Any] = []
    failure: list[BaseException] = []
    thread = threading.Thread(
        target=_think,
        args=(plugin, copy.deepcopy(view), copy.deepcopy(list(legal)), rng, answer, failure),
        name=f"bot-plugin-{level}",
        daemon=True,
    )
    thread.start()
    thread.join(think_ms_max / 1000)
    if failure:
        log.warning(
            "bot plug-in %r (%s) raised %s in %s; greedy plays its turn",
            level,
            plugin.origin,
            _said(failure[0]),
            game_id,
            exc_info=failure[0],
        )
        return None
    if not answer:
        log.warning(
            "bot plug-in %r (%s) thought longer than %s ms in %s; greedy plays its turn",
            level,
            plugin.origin,
            think_ms_max,
            game_id,
        )
        return None
    action = answer[0]
    chosen = next((option for option in legal if isinstance(action, dict) and option == action), None)
    if chosen is None:
        log.warning(
            "bot plug-in %r (%s) answered %.200r in %s, which is not a legal action; greedy plays its turn",
            level,
            plugin.origin,
            action,
            game_id,
        )
        return None
    return bots.copy_action(chosen)


def _think(
    plugin: PluginLevel,
    view: Mapping[str, Any],
    legal: Sequence[Mapping[str, Any]],
    rng: SeededStream,
    answer: list[Any],
    failure: list[BaseException],
) -> None:
    try:
        answer.append(plugin.policy(view, legal, rng))
    except BaseException as error:  # a plug-in's failure of any kind is its turn's, never the worker's
        failure.append(error)


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
