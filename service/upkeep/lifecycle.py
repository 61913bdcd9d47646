"""The lifecycle sweep: finished games are packed after a grace period, idle games end as abandoned.

The worker's keeper runs one pass every LIFECYCLE_SWEEP_SECONDS (workers/reconcile.py), one worker at a
time. A pass:
  1. packs every finished game that ended COMPACT_AFTER_SECONDS ago or more (`games:unpacked`), into one
     compressed value (EventStore.compact); an index entry whose game did not finish after all (its
     final append lost) is dropped;
  2. ends every game with no event for ABANDON_AFTER_DAYS as abandoned (GameAbandoned and the seed's
     reveal, through the command path), and packs it at once. The index's time is only a hint: a game
     that acted since is left running and its hint moved on. A finished game found here (its end was
     not noted) is noted, and packed in a later pass.
Safe to run from any number of processes at once: packing checks the stream before it drops it, an
abandonment is a compare-and-append at the version it was decided on.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping

from service.play.errors import GameNotFound, RuleViolation, VersionConflict
from service.play.game_service import GameService, LoadedGame
from service.storage.game_index import epoch_of

log = logging.getLogger(__name__)
DAY_SECONDS = 86400


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


class Lifecycle:
    """Packs finished games after the grace period and ends idle games as abandoned."""

    def __init__(
        self,
        service: GameService,
        settings: LifecycleSettings | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.service = service
        self.store = service.store
        self.index = service.index
        self.settings = settings or LifecycleSettings()
        self.now = now

    def run_once(self) -> SweepOutcome:
        """One pass: pack what is due, then end the idle games."""
        outcome = SweepOutcome()
        for game_id in self.index.to_pack(self.now() - self.settings.compact_after_seconds, self.settings.batch):
            if self._guarded(game_id, "pack", self.pack):
                outcome.packed.append(game_id)
        cutoff = self.now() - self.settings.abandon_after_days * DAY_SECONDS
        for game_id in self.index.idle(cutoff, self.settings.batch):
            if self._guarded(game_id, "check the idle game", lambda g: self.end_if_idle(g, cutoff)):
                outcome.abandoned.append(game_id)
        return outcome

    def pack(self, game_id: str) -> bool:
        """Pack a finished game now; True if it was packed by this call."""
        loaded = self._load(game_id)
        if loaded is None:
            return False
        if not loaded.snap.finished:
            self.index.not_finished(game_id)
            return False
        done = self.store.compact(game_id)
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
            self.index.finishing(game_id, last_at)  # its end was not noted: pack it in a later pass
            self.index.finished(game_id)
            return False
        if last_at >= cutoff:
            self.index.seen(game_id, last_at)
            return False
        days = self.settings.abandon_after_days
        try:
            self.service.abandon(game_id, f"no action for {days} days")
        except (VersionConflict, RuleViolation):  # someone acted meanwhile: not idle after all
            return False
        self.store.compact(game_id)
        self.index.packed(game_id)
        log.info("lifecycle: game %s had no action for %s days and ended as abandoned", game_id, days)
        return True

    def _load(self, game_id: str) -> LoadedGame | None:
        try:
            return self.service.repository.load(game_id)
        except GameNotFound:
            pass
        self.index.forget(game_id)
        return None

    @staticmethod
    def _guarded(game_id: str, what: str, step: Callable[[str], bool]) -> bool:
        """One game's step; a failure is logged and the game is tried again in the next pass."""
        try:
            return step(game_id)
        except Exception:  # a store outage, a damaged game (CompactionError): the next pass tries again
            log.exception("lifecycle: could not %s %s", what, game_id)
            return False
