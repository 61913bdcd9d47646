"""The lifecycle sweep: finished games are packed after a grace period, idle games end as abandoned.

The worker's keeper runs one pass every LIFECYCLE_SWEEP_SECONDS (workers/reconcile.py), one worker at a
time. A pass:
  1. packs every finished game that ended COMPACT_AFTER_SECONDS ago or more (`games:unpacked`), into one
     compressed value (PackedStore.compact); an index entry whose game did not finish after all (its
     final append lost) is dropped;
  2. ends every game with no event for ABANDON_AFTER_DAYS as abandoned (GameAbandoned and the seed's
     reveal, through the command path), and packs it at once. The index's time is only a hint: a game
     that acted since is left running and its hint moved on. A finished game found here (its end was
     not noted) is noted, and packed in a later pass;
  3. walks on through the games the store holds (`batch` of them a pass, a SCAN that starts again
     once it has seen every game) and puts each back in the index it belongs in when an index write
     of the command path failed: an ended game missing from `games:unpacked` or `games:finished` is
     noted there (and packed in a later pass), a running one missing from `games:active` is noted
     there. An ended game is one whose last event is the seed's reveal: one read, no fold. A running
     game that the bots' waiting index misses is loaded, and noted there when a bot or a turn timeout
     is due (both the index write and the job were lost): the reconciler asks for its turn.
A game whose step fails (a store outage, a game that does not load) is looked at again after a
delay that doubles with each failure in a row (from LIFECYCLE_SWEEP_SECONDS up to RETRY_CAP_SECONDS):
its score in the index moves on, so that a batch of games that keep failing never holds up the rest.
Safe to run from any number of processes at once: packing checks the stream before it drops it, an
abandonment is a compare-and-append at the version it was decided on, the walk only adds to indexes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from itertools import islice

from domain.engine import ends_the_game
from service.play.errors import GameNotFound, RulesRefusal, VersionConflict
from service.play.game_service import GameService, LoadedGame
from service.play.ports import epoch_of
from service.storage.keys import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY
from service.storage.redis_store import RedisStore

log = logging.getLogger(__name__)
DAY_SECONDS = 86400
RETRY_CAP_SECONDS = 3600  # a game that keeps failing is looked at again at least once an hour


class LifecycleSettingsError(ValueError):
    """A lifecycle setting in the environment is not a usable number."""


@dataclasses.dataclass(frozen=True)
class LifecycleSettings:
    """When games are packed and abandoned, and how often the sweep runs."""

    compact_after_seconds: int = 600
    abandon_after_days: int = 30
    sweep_seconds: int = 30
    batch: int = 200  # games looked at per index and pass

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> LifecycleSettings:
        """COMPACT_AFTER_SECONDS, ABANDON_AFTER_DAYS, LIFECYCLE_SWEEP_SECONDS (whole numbers; defaults above)."""
        return cls(
            compact_after_seconds=_whole(env, "COMPACT_AFTER_SECONDS", cls.compact_after_seconds, 0),
            abandon_after_days=_whole(env, "ABANDON_AFTER_DAYS", cls.abandon_after_days, 1),
            sweep_seconds=_whole(env, "LIFECYCLE_SWEEP_SECONDS", cls.sweep_seconds, 1),
        )


def _whole(env: Mapping[str, str], name: str, default: int, least: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < least:
        raise LifecycleSettingsError(f"{name} must be a whole number of at least {least}, not {text!r}")
    return int(text)


@dataclasses.dataclass
class SweepOutcome:
    """What one pass did."""

    packed: list[str] = dataclasses.field(default_factory=list)
    abandoned: list[str] = dataclasses.field(default_factory=list)
    reindexed: list[str] = dataclasses.field(default_factory=list)  # put back in the index they belong in


class Lifecycle:
    """Packs finished games after the grace period and ends idle games as abandoned."""

    def __init__(
        self,
        service: GameService,
        store: RedisStore,
        settings: LifecycleSettings | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        """`store`: the adapters the sweep reads and packs games with, and their indexes."""
        self.service = service
        self.store = store.events
        self.packing = store.packing
        self.index = store.index
        self.settings = settings or LifecycleSettings()
        self.now = now
        self._failures: dict[tuple[str, str], int] = {}  # (index key, game) -> failed steps in a row
        self._walk: Iterator[str] | None = None  # the index walk's place among the stored games

    def run_once(self) -> SweepOutcome:
        """One pass: pack what is due, end the idle games, then walk on through the stored games."""
        outcome = SweepOutcome()
        due = self.now() - self.settings.compact_after_seconds
        for game_id in self.index.to_pack(due, self.settings.batch):
            if self._guarded(game_id, "pack", self.pack, UNPACKED_KEY, due):
                outcome.packed.append(game_id)
        cutoff = self.now() - self.settings.abandon_after_days * DAY_SECONDS
        for game_id in self.index.idle(cutoff, self.settings.batch):
            if self._guarded(game_id, "check the idle game", lambda g: self.end_if_idle(g, cutoff), ACTIVE_KEY, cutoff):
                outcome.abandoned.append(game_id)
        try:
            outcome.reindexed = self.reindex(self.settings.batch)
        except Exception:  # a store outage: the walk starts again in the next pass
            self._walk = None
            log.exception("lifecycle: the index walk stopped")
        return outcome

    def reindex(self, count: int) -> list[str]:
        """Walk on through `count` stored games; put each that an index misses back in it. Returns those."""
        if self._walk is None:
            self._walk = self.store.stored_games(count)
        game_ids = list(islice(self._walk, count))
        if len(game_ids) < count:
            self._walk = None  # every game seen: the next pass starts again
        ended: list[tuple[str, float]] = []  # (game, when its last event was)
        running: list[tuple[str, float]] = []
        for game_id in game_ids:
            last = self.store.last_record(game_id)
            if last is not None:
                (ended if ends_the_game(last) else running).append((game_id, epoch_of(last["at"])))
        ended_ids = [game_id for game_id, _ in ended]
        unnoted = set(self.index.missing(UNPACKED_KEY, ended_ids)) | set(self.index.missing(FINISHED_KEY, ended_ids))
        inactive = set(self.index.missing(ACTIVE_KEY, [game_id for game_id, _ in running]))
        for game_id, at in ended:
            if game_id in unnoted:
                self.index.ended(game_id, at)
        for game_id, at in running:
            if game_id in inactive:
                self.index.started(game_id, at)
        due = self.service.note_lost_turns([game_id for game_id, _ in running])
        found = [game_id for game_id, _ in ended + running if game_id in unnoted | inactive | due]
        for game_id in [game_id for game_id in found if self.store.meta(game_id) is None]:
            self.index.forget(game_id)  # exported after it was read: the export's own forget may have come first
            found.remove(game_id)
        for game_id in found:
            log.warning("lifecycle: game %s was missing from its index and is back in it", game_id)
        return found

    def pack(self, game_id: str) -> bool:
        """Pack a finished game now; True if it was packed by this call."""
        loaded = self._load(game_id)
        if loaded is None:
            return False
        if not loaded.snap.finished:
            self.index.not_finished(game_id)
            return False
        done = self.packing.compact(game_id)
        self.index.packed(game_id)
        return done == "packed"

    def end_if_idle(self, game_id: str, cutoff: float) -> bool:
        """End the game as abandoned, and pack it, if its last event is older than `cutoff`; True if so."""
        loaded = self._load(game_id)
        if loaded is None:
            return False
        last = self.store.read(game_id, after=loaded.version - 1)
        last_at = epoch_of(last[-1]["at"])
        if loaded.snap.finished:
            self.index.ended(game_id, last_at)  # its end was not noted: pack it in a later pass
            return False
        if last_at >= cutoff:
            self.index.retry_at(ACTIVE_KEY, game_id, last_at)  # it last acted then
            return False
        days = self.settings.abandon_after_days
        try:
            self.service.abandon(game_id, f"no action for {days} days", loaded.version)
        except (VersionConflict, RulesRefusal):  # someone acted meanwhile: not idle after all
            return False
        self.packing.compact(game_id)
        self.index.packed(game_id)
        log.info("lifecycle: game %s had no action for %s days and ended as abandoned", game_id, days)
        return True

    def _load(self, game_id: str) -> LoadedGame | None:
        try:
            return self.service.load(game_id)
        except GameNotFound:
            pass
        self.index.forget(game_id)
        return None

    def _guarded(self, game_id: str, what: str, step: Callable[[str], bool], key: str, cutoff: float) -> bool:
        """One game's step; a failure is logged and the game, in `key` (due up to `cutoff`), is looked
        at again after a delay that doubles with each failure in a row."""
        try:
            done = step(game_id)
        except Exception:  # a store outage, a damaged game (CompactionError): a later pass tries again
            log.exception("lifecycle: could not %s %s", what, game_id)
            failures = self._failures.get((key, game_id), 0) + 1
            self._failures[(key, game_id)] = failures
            delay = min(self.settings.sweep_seconds * 2 ** (failures - 1), RETRY_CAP_SECONDS)
            try:
                self.index.retry_at(key, game_id, cutoff + delay)
            except Exception:
                log.exception("lifecycle: could not put off %s", game_id)
            return False
        self._failures.pop((key, game_id), None)
        return done
