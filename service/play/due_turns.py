"""Due turns: which turns a job plays (a chain of bot turns, or a turn timeout's moves), and how each is
decided.

What is due is scheduled by service/play/turn_scheduler.py. A job (workers/bot_turns.py,
workers/turn_timeouts.py) runs the one loop of due turns, GameService.play_due_turns: each turn is
decided on the game as loaded and appended only at its version, as a person's action is.

Turn timeouts: a human seat that does not act within the game's `turn_seconds`, or a registered bot's
seat within that or BOT_MOVE_SECONDS (service/play/seats.py), has a move played for it by the `greedy`
policy, recorded with actor "system", the seat and the reason `turn_timeout`. The
clock of a version starts when the game reaches it and stops when the game moves on (the job is
deleted; one that already left the schedule finds the version gone and does nothing).

Expert bots think on their own queue (service/play/seats.py), so that the other bots keep their pace
while experts think, and their think time is capped by the server: at most EXPERT_THINK_MS_MAX
milliseconds a move (default 2000), whatever a seat's `think_ms` asks.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from domain import engine
from domain.bots import choose_action
from service.ops import metrics
from service.play.bots import Bots
from service.play.game_service import GameService
from service.play.loaded_game import LoadedGame
from service.play.seats import controller_of

log = logging.getLogger(__name__)
CHAIN_TURNS = 50  # a bot job plays at most this many bot turns in a row ...
CHAIN_SECONDS = 1.0  # ... and stops taking new ones after this long; then it enqueues the next job
TIMEOUT_LEVEL = "greedy"  # the policy that plays for a person whose turn timed out ...
TURN_TIMEOUT = "turn_timeout"  # ... recorded with this reason


# ---------------------------------------------------------------- which turns a job plays


class BotChain:
    """The bot turns one job plays: the bot due, then the bots right after it, at most `max_turns`,
    taking no new one after `max_seconds`. The chain ends at a person's turn, where a person may act
    out of turn (the next job waits CALL_GRACE_SECONDS for them), or at a bot of the other queue (an
    expert after a greedy bot, or the other way round)."""

    stale = "conflict"
    idle = "no_bot_to_act"

    def __init__(self, think_ms_max: int, max_turns: int, max_seconds: float, due_at: float | None) -> None:
        """`due_at` (seconds since the epoch): when the first turn became due, for the metrics (each
        later turn of the chain is due when the one before it is stored)."""
        self.think_ms_max = think_ms_max
        self.max_turns = max_turns
        self.max_seconds = max_seconds
        self.due_at = due_at
        self.deadline = 0.0
        self.lane: str | None = None

    def next(self, loaded: LoadedGame, played: int) -> tuple[int, dict[str, Any], str | None] | None:
        if played == 0:
            self.deadline = time.monotonic() + self.max_seconds
        elif time.monotonic() >= self.deadline or loaded.person_may_call():
            return None
        bot = loaded.bot_to_act()
        if bot is None or played >= self.max_turns:
            return None
        lane = loaded.turn_queue_of(bot)
        if self.lane is not None and lane != self.lane:
            return None  # that bot's turn is for another queue's workers
        action = controller_of(bot).decide(loaded.snap, bot.seat, self.think_ms_max)
        if action is None:
            return None  # decided elsewhere: its turn is on its own queue
        self.lane = lane
        return bot.seat, action, None

    def done(self, loaded: LoadedGame, seat: int) -> None:
        metrics.observe_bot_turn(loaded.config.game, time.time() if self.due_at is None else self.due_at)
        self.due_at = time.time()


class TimedOut:
    """A turn timeout's moves: one for each seat on a clock (a person's, a registered bot's) that was to act
    at the job's version and still is."""

    stale = "stale"
    idle = "no_human_to_act"

    def __init__(self, bots: Bots | None = None) -> None:
        """`bots`: the registered bots, whose profiles count the moves made for them."""
        self.due: list[int] | None = None  # the seats to act at the first version
        self.bots = bots

    def next(self, loaded: LoadedGame, played: int) -> tuple[int, dict[str, Any], str | None] | None:
        if self.due is None:
            self.due = loaded.on_clock()
        while self.due:
            seat = self.due.pop(0)
            if seat in loaded.on_clock():  # else the moves so far ended its turn (a round ended, say)
                return seat, timeout_action(loaded, seat), TURN_TIMEOUT
        return None

    def done(self, loaded: LoadedGame, seat: int) -> None:
        log.info("turn timeout %s@%s: played for seat %s", loaded.id, loaded.version, seat)
        if self.bots is not None:
            self.bots.count_timeout(loaded.seats[seat])


def timeout_action(loaded: LoadedGame, seat: int) -> dict[str, Any]:
    """The move the `greedy` policy makes for `seat`, from that seat's own view."""
    view = engine.view(loaded.snap, seat)
    legal = engine.legal_actions(loaded.snap, seat)
    rng = loaded.config.private_stream(f"timeout/{seat}/{loaded.version}")
    return choose_action(loaded.config.game, TIMEOUT_LEVEL, view, legal, rng)


def play_bot_turns(
    games: GameService,
    game_id: str,
    version: int,
    max_turns: int = CHAIN_TURNS,
    max_seconds: float = CHAIN_SECONDS,
    due_at: float | None = None,
) -> str:
    """Play the bot turn due at `version` and the bot turns right after it (BotChain): played, stale,
    conflict or no_bot_to_act."""
    return games.play_due_turns(game_id, version, BotChain(games.think_ms_max, max_turns, max_seconds, due_at))


def play_turn_timeout(games: GameService, game_id: str, version: int) -> str:
    """Play the `greedy` move for each human seat that was to act at `version` and still is (TimedOut):
    played, stale (the game moved on) or no_human_to_act."""
    return games.play_due_turns(game_id, version, TimedOut(games.bots))
