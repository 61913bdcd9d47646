"""The bridge's loop: long-poll the bot's turns, have worker threads decide and post them.

The poller asks for at most as many turns as there are idle workers (`--concurrency`), so no turn
waits in the bridge while its deadline runs. Each turn is claimed in a ledger by its id: a turn handed
out again while it is being played (its lease ran out) or after it was answered is not played again.
An action is posted once with `expected_version` = the turn's version and `Idempotency-Key` = the turn
id; only when no answer came (a dropped connection, a timeout) or the service said it wrote nothing
(429, 5xx) is the same request sent again, until the deadline. 409 (the game moved on) and 422 (the
rules refuse it) are logged and the turn skipped. Errors of the turns long-poll (the service down or
restarting) are retried after an exponential backoff with jitter, capped.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from workers.bridge.client import Answer, ServiceClient, Unreachable
from workers.bridge.players import Player
from workers.bridge.turns import BadTurn, Left, Turn, parse_turn

log = logging.getLogger("workers.bridge")

WAIT_SECONDS = 30  # the turns long-poll's wait (the API allows 0 to 30)
LEDGER_TURNS = 100_000  # the ids of this many answered turns are remembered
RETRIED = frozenset({429, 500, 502, 503, 504})  # answers after which the same request is sent again


class Fatal(Exception):
    """The service refuses the bridge for good (a wrong token, no bot API): retrying cannot help."""


class Backoff:
    """Exponential backoff with equal jitter: the n-th delay in a row is d/2 + uniform(0, d/2), with
    d = min(cap, base * 2**n); `reset()` after a success."""

    def __init__(self, base: float = 0.5, cap: float = 30.0, rng: random.Random | None = None) -> None:
        self.base = base
        self.cap = cap
        self.failures = 0
        self._rng = rng or random.Random()

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.base * (1 << self.failures))
        self.failures = min(self.failures + 1, 62)
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.failures = 0


@dataclasses.dataclass
class Stats:
    """What the bridge did, for its progress line and its summary."""

    played: int = 0  # actions the service accepted
    games: set[str] = dataclasses.field(default_factory=set)
    left: int = 0  # turns the player gave no action for: left to their deadline
    conflicts: int = 0  # 409: the game moved on (often: the deadline passed and the service played)
    refused: int = 0  # 4xx other than 409: the service refused the action
    lost: int = 0  # no answer before the deadline
    reconnects: int = 0  # failed turn requests
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, game_id: str | None = None) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + 1)
            if game_id is not None:
                self.games.add(game_id)

    def summary(self) -> str:
        with self.lock:
            return (
                f"{self.played} turns played in {len(self.games)} games, {self.left} left to their deadline, "
                f"{self.conflicts} skipped (409), {self.refused} refused, {self.lost} unanswered, "
                f"{self.reconnects} reconnects"
            )


class Ledger:
    """The turns in play or answered, by id, so that none is played twice."""

    def __init__(self, size: int = LEDGER_TURNS) -> None:
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def claim(self, turn_id: str) -> bool:
        """True once per turn id (among the last `size`)."""
        with self._lock:
            if turn_id in self._seen:
                return False
            self._seen[turn_id] = None
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True


class Slots:
    """Idle workers, reserved by the poller before it asks for turns."""

    def __init__(self, count: int) -> None:
        self._idle = count
        self._changed = threading.Condition()

    def reserve_all(self, stop: threading.Event) -> int:
        """Every idle worker (at least one, waiting for it); 0 once `stop` is set."""
        with self._changed:
            while self._idle == 0 and not stop.is_set():
                self._changed.wait(0.5)
            if stop.is_set():
                return 0
            taken, self._idle = self._idle, 0
            return taken

    def release(self, count: int) -> None:
        with self._changed:
            self._idle += count
            self._changed.notify_all()


class Bridge:
    """Plays the bot's turns with `concurrency` workers, each with a player from `make_player`, until
    `stop` is set (see the module's docstring)."""

    def __init__(
        self,
        client: ServiceClient,
        make_player: Callable[[], Player],
        concurrency: int = 4,
        wait: int = WAIT_SECONDS,
        backoff: Callable[[], Backoff] = Backoff,
        turn_log: IO[str] | None = None,
    ) -> None:
        """`turn_log`: each turn as received is written to it, one JSON line (`--log-turns`)."""
        if concurrency < 1:
            raise ValueError("--concurrency is at least 1")
        self.client = client
        self.make_player = make_player
        self.concurrency = concurrency
        self.wait = wait
        self.stats = Stats()
        self.stop = threading.Event()  # no new turns; turns under way finish
        self.abandon = threading.Event()  # turns under way are given up as they are
        self.fatal: str | None = None
        self._new_backoff = backoff
        self._ledger = Ledger()
        self._slots = Slots(concurrency)
        self._work: queue.Queue[Turn | None] = queue.Queue()
        self._workers: list[threading.Thread] = []
        self._players: list[Player] = []
        self._players_lock = threading.Lock()
        self._turn_log = turn_log

    def start(self) -> None:
        """Start the workers and the poller (daemon threads)."""
        for index in range(self.concurrency):
            worker = threading.Thread(target=self._work_loop, name=f"bridge-worker-{index}", daemon=True)
            worker.start()
            self._workers.append(worker)
        threading.Thread(target=self._poll_loop, name="bridge-poller", daemon=True).start()

    def shut_down(self, grace: float) -> None:
        """Ask for no more turns, drop the turns not yet begun, give the ones under way `grace` seconds (or
        until `abandon` is set), then stop the players."""
        self.stop.set()
        while True:
            try:
                self._work.get_nowait()
            except queue.Empty:
                break
        for _ in self._workers:
            self._work.put(None)
        ends = time.monotonic() + grace
        for worker in self._workers:
            while worker.is_alive() and not self.abandon.is_set() and time.monotonic() < ends:
                worker.join(0.1)
        self.abandon.set()
        with self._players_lock:
            players = list(self._players)
        for player in players:
            player.stop()

    # ------------------------------------------------------------------ the poller

    def _poll_loop(self) -> None:
        backoff = self._new_backoff()
        while not self.stop.is_set():
            reserved = self._slots.reserve_all(self.stop)
            if reserved == 0:
                return
            try:
                turns = self._fetch(reserved)
            except Fatal as error:
                self.fatal = str(error)
                log.error("%s", error)
                self.stop.set()
                return
            except Unreachable as error:
                self._slots.release(reserved)
                self._pause(backoff, f"no answer from the service ({error})")
                continue
            except _Retry as retry:
                self._slots.release(reserved)
                self._pause(backoff, str(retry), retry.after)
                continue
            backoff.reset()
            taken = 0
            for turn in turns:
                if taken < reserved and not self.stop.is_set() and self._ledger.claim(turn.id):
                    self._work.put(turn)
                    taken += 1
            self._slots.release(reserved - taken)

    def _fetch(self, limit: int) -> list[Turn]:
        answer = self.client.turns(self.wait, limit)
        received = time.monotonic()
        if answer.status in (401, 403):
            raise Fatal(f"the service refuses the bot's token ({answer.status} {answer.problem})")
        if answer.status == 404:
            raise Fatal(f"the service has no bot turns at {self.client.base}/v1/bots/me/turns ({answer.problem})")
        if answer.status != 200:
            raise _Retry(f"the turns request was answered {answer.status} {answer.problem}", answer.retry_after)
        raw_turns = answer.body.get("turns") if isinstance(answer.body, dict) else None
        if not isinstance(raw_turns, list):
            raise _Retry("the turns answer has no list of turns", None)
        turns = []
        for raw in raw_turns:
            if self._turn_log is not None:
                self._turn_log.write(json.dumps(raw, separators=(",", ":"), ensure_ascii=False) + "\n")
                self._turn_log.flush()
            try:
                turns.append(parse_turn(raw, received, answer.date))
            except BadTurn as error:
                log.warning("a turn the service sent is skipped: %s", error)
        return turns

    def _pause(self, backoff: Backoff, reason: str, at_least: float | None = None) -> None:
        self.stats.add("reconnects")
        delay = max(backoff.next_delay(), at_least or 0.0)
        log.warning("%s; trying again in %.1f s", reason, delay)
        self.stop.wait(delay)

    # ------------------------------------------------------------------ the workers

    def _work_loop(self) -> None:
        player = self.make_player()
        with self._players_lock:
            self._players.append(player)
        while True:
            turn = self._work.get()
            if turn is None:
                return
            try:
                if not self.stop.is_set():  # a turn not begun when the bridge stops is given up
                    self._play(turn, player)
            except Exception:  # a bug must not end the worker: the turn is left to its deadline
                log.exception("turn %s failed", turn.id)
                self.stats.add("left")
            finally:
                self._slots.release(1)

    def _play(self, turn: Turn, player: Player) -> None:
        try:
            decision = player.decide(turn)
        except Exception as error:  # the player's failure leaves the turn, never the bridge
            log.warning("turn %s left to its deadline: the %s player raised %r", turn.id, turn.game, error)
            self.stats.add("left")
            return
        if isinstance(decision, Left):
            log.warning("turn %s left to its deadline: %s", turn.id, decision.reason)
            self.stats.add("left")
            return
        self._post(turn, {**decision, "expected_version": turn.version})

    def _post(self, turn: Turn, body: dict[str, Any]) -> None:
        backoff = self._new_backoff()
        while True:
            retry_after = 0.0
            try:
                answer = self.client.post_action(turn.game_id, body, turn.id)
            except Unreachable as error:
                why = f"no answer ({error})"
            else:
                if answer.status not in RETRIED:
                    self._answered(turn, answer)
                    return
                why, retry_after = f"{answer.status} {answer.problem}", answer.retry_after or 0.0
            delay = max(backoff.next_delay(), retry_after)
            if self.abandon.is_set() or turn.remaining() <= delay:
                log.warning("turn %s: %s; the deadline is too near to send it again", turn.id, why)
                self.stats.add("lost")
                return
            log.warning("turn %s: %s; the same request again in %.1f s", turn.id, why, delay)
            if self.abandon.wait(delay):
                self.stats.add("lost")
                return

    def _answered(self, turn: Turn, answer: Answer) -> None:
        if answer.status == 200:
            self.stats.add("played", turn.game_id)
        elif answer.status == 409:
            log.info("turn %s skipped: the game moved on (%s)", turn.id, answer.problem)
            self.stats.add("conflicts")
        else:
            log.warning("turn %s refused: %d %s", turn.id, answer.status, answer.problem)
            self.stats.add("refused")


class _Retry(Exception):
    """An answer to the turns request after which it is asked again (`after`: the service's Retry-After)."""

    def __init__(self, reason: str, after: float | None) -> None:
        super().__init__(reason)
        self.after = after
