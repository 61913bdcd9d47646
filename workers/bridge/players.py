"""Who decides a turn: `--policy` (a Python function), `--level` (a house policy of domain/bots/) or
`--command` (command.py). A player's `decide(turn)` is the action to post, or Left; `stop()` ends it."""

from __future__ import annotations

import hashlib
import importlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from domain.bots import LEVELS, choose_action
from domain.bots.expert import budget_for, default_budget
from domain.shuffle import SeededStream
from workers.bridge.command import CommandPlayer
from workers.bridge.turns import Left, Turn, legal_match

log = logging.getLogger("workers.bridge")

EXPERT_MARGIN_SECONDS = 0.5  # an expert thinks at most until this long before the deadline


class Player(Protocol):
    def decide(self, turn: Turn) -> dict[str, Any] | Left:
        """The action for `turn` (one of its legal actions), or Left."""

    def stop(self) -> None:
        """Let go of what the player holds (a command's process)."""


def load_function(spec: str) -> Callable[..., Any]:
    """`package.module:function` imported; ValueError with the reason when it cannot be."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ValueError(f"--policy wants package.module:function, not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"--policy {spec}: cannot import {module_name}: {error}") from error
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"--policy {spec}: {module_name} has no function {name!r}")
    return function  # type: ignore[no-any-return]


class PolicyPlayer:
    """`--policy`: `function(view, legal) -> action`, given the turn's view and legal actions as they came."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def decide(self, turn: Turn) -> dict[str, Any] | Left:
        try:
            action = self.function(turn.view, turn.legal)
        except Exception as error:  # the author's code: whatever it raises leaves the turn, not the bridge
            log.exception("the policy raised on turn %s", turn.id)
            return Left(f"the policy raised {type(error).__name__}: {error}")
        match = legal_match(action, turn.legal)
        return match if match is not None else Left(f"the policy's action is not among the legal ones: {action!r}")

    def stop(self) -> None:
        pass


def policy_view(view: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """The seat's view as the house policies take it (`domain.engine.view`) from the view the API gives:
    the seats' `score`s as `scores`, and the game's options."""
    seats = sorted(view["seats"], key=lambda seat: seat["seat"])
    return {**view, "scores": [seat["score"] for seat in seats], "options": dict(options)}


class LevelPlayer:
    """`--level`: a house policy played from the turn's view and legal actions, as the workers play it.

    Its random choices come from a stream keyed by the bot's token and the turn id: secret from the other
    seats, and the same action again for a turn handed out again (so a resent action is the same request).
    The game's options come with the turn; from a service whose turns lack them, from the game's record
    (`options_of`)."""

    def __init__(self, level: str, token: str, options_of: Callable[[str], Mapping[str, Any]]) -> None:
        if level not in LEVELS:
            raise ValueError(f"--level is one of {', '.join(LEVELS)}, not {level!r}")
        self.level = level
        self._key = hashlib.sha256(b"cardtable-bridge\x00" + token.encode("utf-8")).digest()
        self._options_of = options_of

    def decide(self, turn: Turn) -> dict[str, Any] | Left:
        options = turn.options if turn.options is not None else turn.view.get("options")
        if not isinstance(options, Mapping):
            options = self._options_of(turn.game_id)
        view = policy_view(turn.view, options)
        rng = self.stream(turn)
        budget = None
        if self.level == "expert":
            room_ms = int((turn.remaining() - EXPERT_MARGIN_SECONDS) * 1000)
            think_ms = max(10, min(default_budget(turn.game).think_ms, room_ms))
            budget = budget_for(turn.game, think_ms, time.monotonic)
        return choose_action(turn.game, self.level, view, turn.legal, rng, budget)

    def stream(self, turn: Turn) -> SeededStream:
        """The random stream of this player's choices for `turn`."""
        return SeededStream(self._key, f"turn/{turn.id}")

    def stop(self) -> None:
        pass


def player_factory(
    policy: str | None, level: str | None, command: str | None, token: str, options_of: Callable[[str], Any]
) -> Callable[[], Player]:
    """What makes one player per worker thread, for the mode given (exactly one of the three)."""
    if policy is not None:
        function = load_function(policy)
        return lambda: PolicyPlayer(function)
    if level is not None:
        LevelPlayer(level, token, options_of)  # refuses an unknown level now, not in a worker
        return lambda: LevelPlayer(level, token, options_of)
    if command is not None:
        CommandPlayer(command)
        return lambda: CommandPlayer(command)
    raise ValueError("one of --policy, --level or --command is needed")
