"""`--command`: a program in any language plays the turns, one JSON line in and one JSON line out.

For each turn the bridge writes one line to the command's stdin, `{"turn", "game", "seat", "view",
"legal", "deadline"}`, and reads one line from its stdout: the action, spelled exactly as one of
`legal` (a byte-order mark before it is ignored). Anything else (not UTF-8, not JSON, not an object, not
among the legal actions, longer than MAX_LINE_BYTES, or no line by the deadline) is logged and the turn
left to its deadline. A command that exits is started again for the next turn (after a pause that
grows while it keeps crashing); one that misses a deadline is stopped and started again, so that its
late line is never taken for the next turn's answer. The command's stderr is the bridge's.
"""

from __future__ import annotations

import json
import logging
import queue
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from workers.bridge.turns import Left, Turn, legal_match

log = logging.getLogger("workers.bridge")

MAX_LINE_BYTES = 64 * 1024  # an action line longer than this is refused (the API's body limit)
RESTART_PAUSE_SECONDS = 0.1  # the pause before restarting a command that crashed, doubled each crash in a row
RESTART_PAUSE_MAX_SECONDS = 5.0
STOP_SECONDS = 2.0  # a command asked to stop (stdin closed, then SIGTERM) is killed after this long


@dataclass(frozen=True)
class Accepted:
    """The line spelled this legal action."""

    action: dict[str, Any]


@dataclass(frozen=True)
class Refused:
    """The line was not one of the legal actions, and why."""

    reason: str


@dataclass(frozen=True)
class _Exited:
    """The command exited without an answer to the turn."""

    reason: str


class _TooLong:
    """The reader's mark for a line over MAX_LINE_BYTES (its bytes were read and dropped)."""


TOO_LONG = _TooLong()
EOF = None


JSON_WHITESPACE = " \t\r\n"


def parse_action_line(line: bytes | _TooLong, legal: Sequence[dict[str, Any]]) -> Accepted | Refused:
    """What one line of the command's stdout says: exactly one of `legal`, or refused with the reason.
    Never raises, whatever the bytes."""
    if isinstance(line, _TooLong):
        return Refused(f"the line is longer than {MAX_LINE_BYTES} bytes")
    if len(line) > MAX_LINE_BYTES:
        return Refused(f"the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        # a byte-order mark before the line is no part of it, nor JSON's whitespace around it (RFC 8259: space,
        # tab, CR, LF; Python's strip() would also take a vertical tab or form feed that no JSON parser reads)
        text = line.decode("utf-8-sig").strip(JSON_WHITESPACE)
    except UnicodeDecodeError as error:
        return Refused(f"the line is not UTF-8 ({error.reason} at byte {error.start})")
    if not text:
        return Refused("the line is empty")
    try:
        action = json.loads(text)
    except (ValueError, RecursionError) as error:
        return Refused(f"the line is not JSON ({_short(str(error) or type(error).__name__)})")
    if not isinstance(action, dict):
        return Refused(f"the line is JSON but not an object: {_short(text)}")
    match = legal_match(action, legal)
    if match is None:
        return Refused(f"the action is not among the {len(legal)} legal actions: {_short(text)}")
    return Accepted(match)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def read_lines(stream: IO[bytes], lines: queue.Queue[bytes | _TooLong | None]) -> None:
    """Put each line of `stream` on `lines` (TOO_LONG for one over MAX_LINE_BYTES, whose bytes are dropped
    as they come), then EOF (None) at its end."""
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            break
        if len(line) > MAX_LINE_BYTES:
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_LINE_BYTES + 1)
            lines.put(TOO_LONG)
            continue
        lines.put(line)
    lines.put(EOF)


class CommandPlayer:
    """One running copy of the command, asked one turn at a time (a bridge runs one per `--concurrency`)."""

    def __init__(self, command: str) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--command is empty")
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | _TooLong | None] = queue.Queue()
        self._crashes = 0  # exits in a row without an accepted answer
        self.starts = 0

    def decide(self, turn: Turn) -> dict[str, Any] | Left:
        """The command's action for `turn`, or Left when it gave none that counts. A command that exits
        without answering (or had exited after its last answer) is started again and asked once more."""
        first = self._ask(turn)
        if isinstance(first, _Exited):
            second = self._ask(turn)
            return Left(second.reason) if isinstance(second, _Exited) else second
        return first

    def _ask(self, turn: Turn) -> dict[str, Any] | Left | _Exited:
        process = self._running(turn)
        if isinstance(process, Left):
            return process
        self._drop_stray_lines()
        message = {
            "turn": turn.id,
            "game": turn.game,
            "seat": turn.seat,
            "view": turn.view,
            "legal": turn.legal,
            "deadline": turn.deadline,
        }
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
            process.stdin.flush()
        except OSError:
            return self._exited(process, "the command exited before it read the turn")
        try:
            line = self._lines.get(timeout=max(turn.remaining(), 0.0))
        except queue.Empty:
            self.stop()
            self._crashes += 1
            return Left("the command wrote no line by the deadline (it is started again for the next turn)")
        if line is EOF:
            return self._exited(process, "the command exited without answering")
        result = parse_action_line(line, turn.legal)
        if isinstance(result, Refused):
            return Left(result.reason)
        self._crashes = 0
        return result.action

    def stop(self) -> None:
        """Close the command's stdin, then SIGTERM, then SIGKILL: it is gone when this returns."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _running(self, turn: Turn) -> subprocess.Popen[bytes] | Left:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self._process is not None:
            self._exited(self._process, "")
        pause = 0.0
        if self._crashes:
            pause = min(RESTART_PAUSE_SECONDS * 2 ** (self._crashes - 1), RESTART_PAUSE_MAX_SECONDS)
        if pause >= turn.remaining():
            return Left(f"the command keeps exiting; it is started again after a pause of {pause:.1f} s")
        time.sleep(pause)
        try:
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as error:
            self._crashes += 1
            return Left(f"the command cannot be started: {error}")
        self.starts += 1
        if self.starts > 1:
            log.warning("command started again (start %d): %s", self.starts, shlex.join(self.argv))
        self._lines = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=read_lines, args=(process.stdout, self._lines), daemon=True).start()
        self._process = process
        return process

    def _exited(self, process: subprocess.Popen[bytes], reason: str) -> _Exited:
        try:
            code: int | None = process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            code = None
        if self._process is process:
            self.stop()
        self._crashes += 1
        if reason:
            log.warning("command exited (code %s): %s", code, shlex.join(self.argv))
        return _Exited(f"{reason} (exit code {code})")

    def _drop_stray_lines(self) -> None:
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return
            if line is EOF:
                self._lines.put(EOF)
                return
            log.warning("a line the command wrote between turns is ignored: %r", _short(repr(line)))
