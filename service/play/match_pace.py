"""A match's games yield to people's: while people play, a match's quick bots take at most a share of the time.

A match is work nobody waits for, and it runs beside people's games on the same host and the same Redis. Its
workers run at the lowest CPU priority (docs/operations.md, "Matches' workers"), yet on a host of two cores work
at that priority still slowed people's actions: CPU burners at SCHED_IDLE, sharing nothing else, raised the
p99 of an open loop of actions 1.7 to 2.1 times (docs/performance.md, "Measured a fifth time"). So a match also
paces itself: after each run of a match game's turns, a match worker rests, while people play, long enough that
its turns take at most MATCH_SHARE_WHILE_PEOPLE_PLAY percent of its time (default 10; 100: never rests). With
nobody playing it plays flat out.

People play when an action of theirs came through the API within PLAYING_SECONDS: the API notes it in front of
the action's own append (no round trip of its own), at most every NOTE_SECONDS a process. A match's own games
(a registered bot's moves in a match included) are not people's. A worker asks at most every ASK_SECONDS.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Mapping

from service.ops import metrics
from service.play.best_effort import BestEffort
from service.play.ports import GameCounter
from service.play.settings import whole_setting

log = logging.getLogger(__name__)
SHARE_SETTING = "MATCH_SHARE_WHILE_PEOPLE_PLAY"
SHARE_PERCENT = 10
PLAYING_SECONDS = 2.0  # people count as playing this long after an action of theirs ...
NOTE_SECONDS = 0.5  # ... noted by an API process at most this often
ASK_SECONDS = 0.5  # a worker asks whether people play at most this often
REST_MAX_SECONDS = 2.0  # one rest at most (a job's claims and its 60 s timeout stay far off)


class MatchPace:
    """Notes people's actions (the API) and rests a match's worker while people play (the workers)."""

    def __init__(
        self,
        counts: GameCounter,
        share_percent: int = SHARE_PERCENT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.counts = counts
        self.share_percent = share_percent
        self.clock = clock
        self.sleep = sleep
        self._noted_at = self._asked_at = -math.inf  # never yet
        self._playing = False

    def person_acted(self, best_effort: BestEffort) -> None:
        """A person's action is on its way: note that people play (in front of the thread's next command, the
        action's append), unless this process did less than NOTE_SECONDS ago."""
        now = self.clock()
        if now - self._noted_at < NOTE_SECONDS:
            return
        self._noted_at = now
        best_effort.ahead("note that people are playing", self.counts.note_people_playing, PLAYING_SECONDS)

    def rest_after(self, busy_seconds: float) -> float:
        """A match's turns took `busy_seconds`: while people play, rest so that they take at most the share of
        the time (REST_MAX_SECONDS at most); the seconds rested."""
        if self.share_percent >= 100 or busy_seconds <= 0 or not self._people_playing():
            return 0.0
        rest = min(REST_MAX_SECONDS, busy_seconds * (100 - self.share_percent) / self.share_percent)
        metrics.MATCH_RESTS.inc(rest)
        self.sleep(rest)
        return rest

    def _people_playing(self) -> bool:
        now = self.clock()
        if now - self._asked_at >= ASK_SECONDS:
            self._asked_at = now
            try:
                self._playing = self.counts.people_playing()
            except Exception:  # the store is away: the match's own next move will say so
                log.warning("could not ask whether people are playing: the match plays on", exc_info=True)
                self._playing = False
        return self._playing


def share_percent_from_env(environ: Mapping[str, str] = os.environ) -> int:
    """MATCH_SHARE_WHILE_PEOPLE_PLAY: a whole percent from 1 to 100 (default 10)."""
    return whole_setting(environ, SHARE_SETTING, SHARE_PERCENT, 1, 100, unit="percent")
