"""Bot turns and turn timeouts around the command path: chains of bot turns, the waiting index, timeouts.

The command path (service/play/game_service.py) tells BotTurns about each append: before it, whether a bot
or a person on a turn timeout's clock is left due (the waiting index); after it, to ask for the next
bot turn or timeout. A bot job plays a chain of bot turns through the same `submit` as a person's.

Expert bots think on their own queue (EXPERT_QUEUE, service/play/job_queue.py), so that the other bots keep
their pace while experts think, and their think time is capped by the server: at most
EXPERT_THINK_MS_MAX milliseconds a move (default 2000), whatever a seat's `think_ms` asks.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any, Protocol

from domain import engine
from domain.bots import choose_action
from domain.bots.expert import DEFAULT_BUDGET, THINK_MS_RANGE, budget_for
from service.ops import metrics
from service.play.errors import VersionConflict
from service.play.game_repository import GameRepository
from service.play.job_queue import BotDispatcher, SchedulesTimeouts, TracksWaiting, queue_for
from service.play.loaded_game import LoadedGame

log = logging.getLogger(__name__)
CHAIN_TURNS = 50  # a bot job plays at most this many bot turns in a row ...
CHAIN_SECONDS = 1.0  # ... and stops taking new ones after this long; then it enqueues the next job
THINK_MS_MAX = 2000  # the server's cap on an expert's think time a move, unless EXPERT_THINK_MS_MAX says otherwise


class ThinkCapError(ValueError):
    """EXPERT_THINK_MS_MAX is not a whole number of milliseconds in THINK_MS_RANGE."""


def think_ms_max_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """The cap on an expert's think time a move: EXPERT_THINK_MS_MAX, default THINK_MS_MAX."""
    text = environ.get("EXPERT_THINK_MS_MAX", "").strip()
    if not text:
        return THINK_MS_MAX
    low, high = THINK_MS_RANGE
    if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
        raise ThinkCapError(f"EXPERT_THINK_MS_MAX must be a whole number of milliseconds from {low} to {high}")
    return int(text)


def effective_think_ms(level: str | None, asked: int | None, cap: int) -> int | None:
    """The think time an expert seat gets, as its creation answer shows it: what it asked for, at
    most `cap`; None (the default budget) when it asked nothing and the default is within the cap."""
    if level != "expert":
        return asked
    if asked is None:
        return cap if cap < DEFAULT_BUDGET.think_ms else None
    return min(asked, cap)


class CommandPath(Protocol):
    """What a chain of bot turns needs of the command path (service/play/game_service.py's GameService)."""

    @property
    def repository(self) -> GameRepository:
        """Where games are loaded."""

    def submit(
        self,
        game_id: str,
        seat: int,
        body: Mapping[str, Any],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
        schedule_bots: bool = True,
        system_reason: str | None = None,
    ) -> dict[str, Any]:
        """Decide and append one action of `seat`."""


class BotTurns:
    """Asks the dispatcher for bot turns and turn timeouts, and plays chains of bot turns."""

    def __init__(self, dispatcher: BotDispatcher, think_ms_max: int = THINK_MS_MAX) -> None:
        self.dispatcher = dispatcher
        self.think_ms_max = think_ms_max

    def note_waiting(self, loaded: LoadedGame) -> None:
        """Before an append that leaves a bot to act, or a person on a turn timeout's clock: note the
        game in the waiting index, so that a crash between the append and the enqueue (or the
        timeout's scheduling) loses no turn (the reconciler finds the game)."""
        due = loaded.bot_to_act() is not None or loaded.timeout_due()
        if not due or not isinstance(self.dispatcher, TracksWaiting):
            return
        try:
            self.dispatcher.expect(loaded.id, loaded.version)
        except Exception:
            log.exception("could not note the bot turn of %s at version %s", loaded.id, loaded.version)

    def schedule(self, loaded: LoadedGame) -> None:
        """Ask for the next bot turn (on the queue of its bot's level), or say that none is due; the
        action is already stored, so a failure here is only logged (the waiting index and the
        reconciler cover it)."""
        try:
            bot = loaded.bot_to_act()
            if bot is not None:
                self.dispatcher.schedule(
                    loaded.id, loaded.version, loaded.bot_delay_seconds(), queue=queue_for(bot.level)
                )
            elif isinstance(self.dispatcher, TracksWaiting) and loaded.timeout_due():
                self.dispatcher.expect(loaded.id, loaded.version)  # a bot chain's end: no intent was noted
            elif isinstance(self.dispatcher, TracksWaiting) and loaded.workers_may_wait():
                self.dispatcher.settle(loaded.id, loaded.version)
        except Exception:
            log.exception("could not schedule the bot turn of %s at version %s", loaded.id, loaded.version)
        self.schedule_timeout(loaded)

    # ------------------------------------------------------------ turn timeouts

    def schedule_timeout(self, loaded: LoadedGame) -> None:
        """A human seat is to act in a game with `turn_seconds`: start its clock (best effort: the game
        is in the waiting index, so the reconciler schedules a timeout that is lost here)."""
        if loaded.turn_seconds is None or not isinstance(self.dispatcher, SchedulesTimeouts):
            return
        if not loaded.humans_to_act():
            return
        try:
            self.dispatcher.schedule_timeout(loaded.id, loaded.version, loaded.turn_seconds)
        except Exception:
            log.exception("could not schedule the turn timeout of %s at version %s", loaded.id, loaded.version)

    def cancel_timeout(self, before: LoadedGame) -> None:
        """The game moved on from `before`: its turn timeout, if any, is moot."""
        if before.turn_seconds is None or not isinstance(self.dispatcher, SchedulesTimeouts):
            return
        try:
            self.dispatcher.cancel_timeout(before.id, before.version)
        except Exception:
            log.exception("could not cancel the turn timeout of %s at version %s", before.id, before.version)

    # ------------------------------------------------------------ chains

    def play_chain(
        self,
        commands: CommandPath,
        game_id: str,
        version: int,
        max_turns: int = CHAIN_TURNS,
        max_seconds: float = CHAIN_SECONDS,
        due_at: float | None = None,
    ) -> str:
        """Play the bot turn due at `version` through `submit`, then the bot turns right after it.

        Each turn is its own compare-and-append at the version it was decided on, so a second run
        of the same (game, version) can never play twice. The chain ends at a person's turn, where a
        person may act out of turn (the next job waits CALL_GRACE_SECONDS for them), at a bot of
        the other queue (an expert after a greedy bot, or the other way round), at the end of the
        game, when someone else appended, or at the bound; then the last state is scheduled as
        after any append (one job, not one per version played). Says what happened:
        played, stale, conflict or no_bot_to_act. `due_at` (seconds since the epoch): when the first
        turn became due, for the metrics (each later turn of the chain is due when the one before it
        is stored).
        """
        loaded = commands.repository.load(game_id)
        if loaded.version != version:
            return "stale"
        deadline = time.monotonic() + max_seconds
        played = 0
        lane: str | None = None
        try:
            while played < max_turns and (played == 0 or time.monotonic() < deadline):
                bot = loaded.bot_to_act()
                if bot is None or bot.level is None or (played and loaded.person_may_call()):
                    break
                if lane is not None and queue_for(bot.level) != lane:
                    break  # that bot's turn is for the other queue's workers
                lane = queue_for(bot.level)
                action = self._choose(loaded, bot.seat, bot.level, bot.think_ms)
                try:
                    answer = commands.submit(
                        game_id, bot.seat, action, expected_version=loaded.version, schedule_bots=False
                    )
                except VersionConflict:
                    # someone else appended at this version and scheduled what follows
                    return "played" if played else "conflict"
                played += 1
                metrics.observe_bot_turn(loaded.config.game, time.time() if due_at is None else due_at)
                due_at = time.time()
                loaded = commands.repository.load(game_id)
                if loaded.version != answer["version"]:
                    return "played"  # someone else appended after us and scheduled what follows
        except Exception:
            if played:
                self.schedule(loaded)  # best effort; the reconciler covers a failure
            raise
        self.schedule(loaded)
        return "played" if played else "no_bot_to_act"

    def _choose(self, loaded: LoadedGame, seat: int, level: str, think_ms: int | None) -> dict[str, Any]:
        """The bot's action from its seat's view; an expert thinks at most `think_ms_max` a move."""
        view = engine.view(loaded.snap, seat)
        rng = loaded.config.private_stream(f"bot/{seat}/{loaded.version}")
        asked = think_ms if think_ms is not None else DEFAULT_BUDGET.think_ms
        budget = budget_for(min(asked, self.think_ms_max), time.monotonic)
        return choose_action(loaded.config.game, level, view, view["you"]["legal"], rng, budget)
