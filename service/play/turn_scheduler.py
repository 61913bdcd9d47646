"""The bookkeeping of what is due: bot turns and people's turn timeouts.

The command path (service/play/game_service.py) tells the TurnScheduler about each append: before it,
whether a bot or a person on a turn timeout's clock is left due (the waiting index, `bots:waiting`);
after it, to ask for the next bot turn (on the queue its seat's controller names, service/play/seats.py)
or turn timeout. The due turns themselves are played by service/play/due_turns.py.

A registered bot's turn goes in that bot's own turn queue (service/play/bot_turns.py hands it out): put
there before the append that makes it due, as the waiting index's intent is (a turn whose game never
reaches its version is dropped when it is handed out), and offered again after the append, which wakes the
bot's waiting long-polls; taken out when the game moves on. Its deadline is its turn timeout's.
"""

from __future__ import annotations

import logging
import time

from service.play.best_effort import BestEffort
from service.play.loaded_game import LoadedGame
from service.play.ports import BotTurnBook, TurnDispatcher
from service.play.seats import controller_of

log = logging.getLogger(__name__)


def turn_id(game_id: str, version: int) -> str:
    """A registered bot's turn: its game at the version where it is due."""
    return f"{game_id}:{version}"


class TurnScheduler:
    """Asks the turn dispatcher for bot turns and turn timeouts, and keeps the waiting index of what is due."""

    def __init__(
        self, dispatcher: TurnDispatcher, bot_turns: BotTurnBook | None = None, best_effort: BestEffort | None = None
    ) -> None:
        """`bot_turns`: the registered bots' turn queues (None: no game seats a registered bot); `best_effort`: how
        the waiting index is written when a bot job is put and when nothing is due any more (default: at once;
        the reconciler repairs what a lost write left)."""
        self.dispatcher = dispatcher
        self.bot_turns = bot_turns
        self.best_effort = best_effort or BestEffort()

    def note_waiting(self, loaded: LoadedGame) -> bool:
        """Before an append that leaves a bot to act, or a person on a turn timeout's clock: note the
        game in the waiting index, so that a crash between the append and the enqueue (or the
        timeout's scheduling) loses no turn (the reconciler finds the game). The note goes in front of this
        thread's next store command (the append), in one round trip with it (BestEffort.ahead). True if it
        was noted or is on its way."""
        due = loaded.bot_to_act() is not None or loaded.timeout_due()
        if not due:
            return False
        self.offer_turns(loaded, wake=False)
        what = f"note the bot turn of {loaded.id} at version {loaded.version}"
        return self.best_effort.ahead(what, self.dispatcher.expect, loaded.id, loaded.version)

    def unnoted(self, game_ids: list[str]) -> list[str]:
        """Those of the games that the waiting index does not hold (none when no index is kept)."""
        return self.dispatcher.unnoted(game_ids)

    def schedule(self, loaded: LoadedGame) -> None:
        """Ask for the next bot turn (on the queue its seat's controller names), or say that none is due; the
        action is already stored, so a failure here is only logged (the waiting index and the
        reconciler cover it)."""
        try:
            queue = loaded.bot_queue()
            if queue is not None:
                # the waiting index, the net under the job: first (at once), or behind the job (workers); a crash
                # between the two leaves a waiting game without a job, or a job whose index entry the reconciler
                # moves on when it finds the job in hand
                self.best_effort.write(f"note {loaded.id} waiting", self.dispatcher.expect, loaded.id, loaded.version)
                self.dispatcher.schedule(loaded.id, loaded.version, loaded.bot_delay_seconds(), queue=queue)
            elif loaded.timeout_due():
                self.dispatcher.expect(loaded.id, loaded.version)  # a bot chain's end: no intent was noted
            elif loaded.workers_may_wait():
                self.best_effort.write(f"settle {loaded.id}", self.dispatcher.settle, loaded.id, loaded.version)
        except Exception:
            log.exception("could not schedule the bot turn of %s at version %s", loaded.id, loaded.version)
        self.offer_turns(loaded, wake=True)
        self.schedule_timeout(loaded)

    def offer_turns(self, loaded: LoadedGame, wake: bool) -> None:
        """Put the turn of each registered bot due in `loaded` in its turn queue (`wake`: and tell its waiting
        long-polls). Best effort: the intent before the append, the offer after it and the reconciler's
        repair each put it there."""
        if self.bot_turns is None:
            return
        now_ms = int(time.time() * 1000)
        for seat, name in loaded.bots_asked():
            seconds = controller_of(loaded.seats[seat]).clock_seconds(loaded.turn_seconds) or 0
            try:
                self.bot_turns.offer(name, turn_id(loaded.id, loaded.version), now_ms, now_ms + seconds * 1000, wake)
            except Exception:
                log.exception("could not offer %s its turn in %s at version %s", name, loaded.id, loaded.version)

    def moved_on(self, before: LoadedGame) -> None:
        """The game moved on from `before`: its turn timeout and the registered bots' turns at it are moot."""
        self.cancel_timeout(before)
        if self.bot_turns is None:
            return
        for _, name in before.bots_asked():
            try:
                self.bot_turns.withdraw(name, [turn_id(before.id, before.version)])
            except Exception:  # handed out later, it is found moved on and dropped then
                log.exception("could not withdraw %s's turn in %s at version %s", name, before.id, before.version)

    # ------------------------------------------------------------ turn timeouts

    def schedule_timeout(self, loaded: LoadedGame) -> None:
        """A seat on a turn timeout's clock is to act (a person in a game with `turn_seconds`, a registered
        bot): start its clock (best effort: the game is in the waiting index, so the reconciler schedules a
        timeout that is lost here)."""
        seconds = loaded.timeout_seconds()
        if seconds is None:
            return
        try:
            self.dispatcher.schedule_timeout(loaded.id, loaded.version, seconds)
        except Exception:
            log.exception("could not schedule the turn timeout of %s at version %s", loaded.id, loaded.version)

    def cancel_timeout(self, before: LoadedGame) -> None:
        """The game moved on from `before`: its turn timeout, if any, is moot."""
        if before.turn_seconds is None and not before.timeout_due():
            return
        try:
            self.dispatcher.cancel_timeout(before.id, before.version)
        except Exception:
            log.exception("could not cancel the turn timeout of %s at version %s", before.id, before.version)
