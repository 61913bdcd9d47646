"""Who plays a seat: the one registry of seat controllers, beside the seat as a game stores it.

A seat is created from a request (`{"kind": "human"}`, `{"kind": "bot", "level": "expert"}`) and stored in
its public form (`Seat`). What plays it, a person with the seat's token or a house policy that the
workers play, is looked up here (`controller_of`), and nothing else in the service asks what kind a
seat is. A controller says:

- `holds_token`: the seat acts over the API with a token of its own (a person). Only such a seat gets a
  token, is on a turn timeout's clock in a game with `turn_seconds`, and makes a bot due wait while it
  may act out of turn (a Go5 call);
- `turn_queue`: the queue the service puts the seat's due turn on (None: nobody is asked, the seat acts
  on its own). A house level's turn goes on the bot queue of its level: an expert thinks for up to a
  couple of seconds a move, so experts have a queue of their own and the other bots keep their pace;
- `decide`: the seat's action, decided by the worker that took the turn (None: decided elsewhere).

- `bot_name`: the registered bot whose token acts for the seat (service/play/bots.py), None for others;
- `clock_seconds(turn_seconds)`: the seat's turn-timeout clock (None: on none). A person is on the game's
  `turn_seconds`; a registered bot on those, else BOT_MOVE_SECONDS (default 10), so that a bot that never
  acts only slows its games.

A bot seat names a house `level` or a registered `bot` (`{"kind": "bot", "bot": "acme-golfer"}`), and its
kind hands out the controller of the one it names: a built-in level's (HousePolicy), a plug-in level's
(PluginPolicy, service/play/plugin_levels.py) or a registered bot's. A new game's house seat must name a level
that plays its game (domain.bots.levels_for); BadBotSeat otherwise. A new kind of seat is one more entry in
KINDS, or one more controller that a kind hands out for a seat it stores: the command path, the due-turn loop
and the reconciler only ask the controller.

Expert seats think at most EXPERT_THINK_MS_MAX milliseconds a move (default 2000), whatever a seat's
`think_ms` asks.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from domain import engine
from domain.bots import LEVELS, choose_action, levels_for
from domain.bots.expert import THINK_MS_RANGE, budget_for, default_budget
from service.play import plugin_levels
from service.play.errors import BadBotSeat
from service.play.settings import whole_setting
from service.storage.keys import BOT_QUEUE, EXPERT_QUEUE

DEFAULT_LEVEL = "greedy"  # a house seat's level when its request names none
FALLBACK_LEVEL = "greedy"  # plays a plug-in level's turn that the plug-in fails
THINK_MS_MAX = 2000  # the server's cap on an expert's think time a move, unless EXPERT_THINK_MS_MAX says otherwise
BOT_MOVE_SECONDS = 10  # a registered bot's time a move in a game without `turn_seconds`, unless BOT_MOVE_SECONDS says
BOT_MOVE_SECONDS_RANGE = (1, 86400)


@dataclasses.dataclass(frozen=True)
class Seat:
    """A seat as created: human or bot."""

    seat: int
    kind: str
    name: str
    level: str | None = None
    think_ms: int | None = None
    bot: str | None = None  # a registered bot's name (service/play/bots.py)

    def public(self) -> dict[str, Any]:
        """The seat without secrets."""
        out: dict[str, Any] = {"seat": self.seat, "kind": self.kind, "name": self.name}
        if self.bot is not None:
            out["bot"] = self.bot
        if self.level is not None:
            out["level"] = self.level
        if self.think_ms is not None:
            out["think_ms"] = self.think_ms
        return out


class ThinkCapError(ValueError):
    """EXPERT_THINK_MS_MAX is not a whole number of milliseconds in THINK_MS_RANGE."""


def think_ms_max_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """The cap on an expert's think time a move: EXPERT_THINK_MS_MAX, default THINK_MS_MAX."""
    low, high = THINK_MS_RANGE
    return whole_setting(environ, "EXPERT_THINK_MS_MAX", THINK_MS_MAX, low, high, "milliseconds", ThinkCapError)


def bot_move_seconds(environ: Mapping[str, str] = os.environ) -> int:
    """A registered bot's time a move in a game without `turn_seconds`: BOT_MOVE_SECONDS, default 10."""
    return whole_setting(environ, "BOT_MOVE_SECONDS", BOT_MOVE_SECONDS, *BOT_MOVE_SECONDS_RANGE, unit="seconds")


def effective_think_ms(game_id: str, level: str | None, asked: int | None, cap: int) -> int | None:
    """The think time an expert seat gets, as its creation answer shows it: what it asked for, at
    most `cap`; None (the game's default budget) when it asked nothing and that is within the cap."""
    if level != "expert":
        return asked
    if asked is None:
        return cap if cap < default_budget(game_id).think_ms else None
    return min(asked, cap)


# ---------------------------------------------------------------- what plays a seat


class SeatController(Protocol):
    """What plays a seat (see the module's docstring)."""

    @property
    def holds_token(self) -> bool:
        """The seat acts over the API with a token of its own (a person)."""

    @property
    def turn_queue(self) -> str | None:
        """The queue the seat's due turn is put on; None when the service asks nobody for it."""

    @property
    def bot_name(self) -> str | None:
        """The registered bot whose token acts for the seat (None: no registered bot's)."""

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        """The seat's turn-timeout clock in a game with `turn_seconds` (None: it is on no clock)."""

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any] | None:
        """The seat's action at `snap`, decided here (an expert thinks at most `think_ms_max` a move);
        None when it is decided elsewhere."""


@dataclasses.dataclass(frozen=True)
class Person:
    """A person at the table, acting with the seat's token."""

    holds_token = True
    turn_queue = None
    bot_name = None

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        return turn_seconds

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any] | None:
        return None


@dataclasses.dataclass(frozen=True)
class HousePolicy:
    """A level of the service's own bots (domain/bots/), played by the workers from the seat's own view
    (C-6); `think_ms`: an expert's time budget a move (None: the game's default)."""

    level: str
    think_ms: int | None = None
    holds_token = False
    bot_name = None

    @property
    def turn_queue(self) -> str:
        return EXPERT_QUEUE if self.thinks else BOT_QUEUE

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        return None

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any]:
        view = engine.view(snap, seat)
        rng = snap.config.private_stream(f"bot/{seat}/{snap.version}")
        budget = budget_for(snap.config.game, self.think_ms, time.monotonic, cap=think_ms_max) if self.thinks else None
        return choose_action(snap.config.game, self.level, view, view["you"]["legal"], rng, budget)

    @property
    def thinks(self) -> bool:
        """The level searches within a time budget (the expert); the others decide at once."""
        return self.level == "expert"


@dataclasses.dataclass(frozen=True)
class PluginPolicy:
    """A house level from a plug-in (service/play/plugin_levels.py), played by the workers as `greedy` is, on
    the bot queue, from the seat's own view (C-6). A turn the plug-in fails (it raises, answers an action that
    is not legal, thinks past `think_ms_max`, or is not installed in this process) is played by FALLBACK_LEVEL
    instead, as a seat of that level would play it, and the game goes on."""

    level: str
    holds_token = False
    bot_name = None
    turn_queue = BOT_QUEUE

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        return None

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any]:
        view = engine.view(snap, seat)
        legal = view["you"]["legal"]
        stream = f"bot/{seat}/{snap.version}"
        game = snap.config.game
        action = plugin_levels.play(self.level, game, view, legal, snap.config.private_stream(stream), think_ms_max)
        if action is None:
            action = choose_action(game, FALLBACK_LEVEL, view, legal, snap.config.private_stream(stream))
        return action


@dataclasses.dataclass(frozen=True)
class RegisteredBot:
    """An outside program registered as a bot (service/play/bots.py): it acts over the API with the bot's
    token, not one of the seat's own, and is always on a turn timeout's clock: the game's `turn_seconds`,
    else BOT_MOVE_SECONDS. Nobody asks it for its turn yet: it reads its seat's view."""

    bot_name: str
    move_seconds: int = BOT_MOVE_SECONDS  # its clock in a game without `turn_seconds`
    holds_token = False
    turn_queue = None

    def clock_seconds(self, turn_seconds: int | None) -> int | None:
        return turn_seconds if turn_seconds is not None else self.move_seconds

    def decide(self, snap: engine.Snapshot[Any], seat: int, think_ms_max: int) -> dict[str, Any] | None:
        return None


@dataclasses.dataclass(frozen=True)
class SeatKind:
    """One kind of seat: `new_seat(index, request, game, think_ms_max)` makes a new game's seat from its
    request; `controller(seat)` is what plays a stored seat of the kind; `leveled`: its request may name
    a bot level."""

    new_seat: Callable[[int, Mapping[str, Any], str, int], Seat]
    controller: Callable[[Seat], SeatController]
    leveled: bool = False


def _person_seat(index: int, request: Mapping[str, Any], game: str, think_ms_max: int) -> Seat:
    return Seat(index, request["kind"], request.get("name") or f"Player {index}", None, request.get("think_ms"))


def _bot_seat(index: int, request: Mapping[str, Any], game: str, think_ms_max: int) -> Seat:
    """A house level's seat, or a registered bot's when the request names one (`bot`)."""
    if request.get("bot") is not None:
        name = request["bot"]
        return Seat(index, request["kind"], request.get("name") or name, bot=name)
    return _house_seat(index, request, game, think_ms_max)


def _house_seat(index: int, request: Mapping[str, Any], game: str, think_ms_max: int) -> Seat:
    level = request.get("level", DEFAULT_LEVEL)
    if level not in levels_for(game):
        offered = ", ".join(levels_for(game))
        raise BadBotSeat(f"seats: the bot level {level!r} does not play {game} (its levels: {offered})")
    think_ms = effective_think_ms(game, level, request.get("think_ms"), think_ms_max)
    return Seat(index, request["kind"], request.get("name") or f"{level} bot {index}", level, think_ms)


def _person(seat: Seat) -> SeatController:
    return Person()


def _bot_controller(seat: Seat) -> SeatController:
    if seat.bot is not None:
        return RegisteredBot(seat.bot, bot_move_seconds())  # read once a seat: controllers are kept
    level = seat.level or DEFAULT_LEVEL
    if level not in LEVELS:
        return PluginPolicy(level)
    return HousePolicy(level, seat.think_ms)


KINDS: dict[str, SeatKind] = {
    "human": SeatKind(_person_seat, _person),
    "bot": SeatKind(_bot_seat, _bot_controller, leveled=True),
}
"""Every kind of seat, by the `kind` of its request and of its stored form."""


def new_seat(index: int, request: Mapping[str, Any], game: str, think_ms_max: int) -> Seat:
    """Seat `index` of a new game of `game`, as its request asks (`think_ms_max`: the cap on an expert's
    think time a move)."""
    return KINDS[request["kind"]].new_seat(index, request, game, think_ms_max)


@functools.lru_cache(maxsize=4096)
def controller_of(seat: Seat) -> SeatController:
    """What plays `seat`."""
    return KINDS[seat.kind].controller(seat)


def holds_token(public: Any) -> bool:
    """Whether a seat in its stored form (an item of a game's meta `seats`, as an archive file holds it)
    acts with a token of its own; False for anything that is not such a seat."""
    try:
        return controller_of(Seat(**public)).holds_token
    except (TypeError, KeyError):
        return False
