"""Store clients that gather a thread's writes into one pipeline: one round trip, and one fsync on Redis, for many
notes that nobody waits for (the best-effort notes a worker writes behind its jobs, service/play/best_effort.py),
or for an intent and the write it comes before.

Inside `client.gathering()` every command the thread sends through `client` (an adapter's own pipeline and
scripts included) is queued, not sent, and returns NO_REPLY; at the block's end they go in one pipeline, in
order. Inside `client.ahead()` they are queued the same way, and go in one pipeline in front of the thread's
next command after the block (whose reply that command's caller gets as usual); a failure of one of them is
logged. Only writes whose reply nobody reads may be gathered: NO_REPLY refuses to be read (ReplyNotKept), so a
read gathered by mistake fails loudly instead of reading nothing. A script Redis does not hold yet (after a
restart) did not run: it is loaded and sent again at once. What failed is kept, each named by the `mark()`
before it. Other threads, and this one outside the block, use the client as usual. On a Redis Cluster the
pipeline is the cluster client's, which sends each node its own commands.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.commands.core import CoreCommands
from redis.exceptions import NoScriptError

log = logging.getLogger(__name__)


class ReplyNotKept(TypeError):
    """A gathered command's reply was read: it is sent at the end of the block, so it has none yet."""


class _NoReply:
    """What a gathered command returns: its reply comes later, so reading it is an error."""

    def _refuse(self, *_: Any) -> Any:
        raise ReplyNotKept("a gathered command has no reply yet: gather only writes whose reply nobody reads")

    __bool__ = __iter__ = __len__ = __int__ = __float__ = __index__ = __getitem__ = _refuse

    def __repr__(self) -> str:
        return "NO_REPLY"


NO_REPLY: Any = _NoReply()


class Gathered:
    """The writes of one `gathering()` or `ahead()` block: their commands in one pipeline, sent by `send()` (or
    with the next command, `send_with()`), and the writes that failed, each named by the `mark()` before its
    commands."""

    def __init__(self, client: Gathering, pipe: Any) -> None:
        self._client = client
        self._pipe = pipe
        self._commands: list[tuple[Any, ...]] = []
        self._marks: list[tuple[int, str]] = []
        self.failures: list[tuple[str, Exception]] = []

    def mark(self, label: str) -> None:
        """The commands queued from here on belong to the write called `label`."""
        self._marks.append((len(self._commands), label))

    def queue(self, args: tuple[Any, ...], options: dict[str, Any]) -> None:
        """One command, queued."""
        self._commands.append(args)
        self._pipe.pipeline_execute_command(*args, **options)

    def joined(self) -> _Joined:
        """An adapter's own pipeline inside the block: its commands join these."""
        return _Joined(self)

    def send(self) -> None:
        """Send what was queued, in one pipeline; keep what failed."""
        if not self._commands:
            return
        try:
            replies = self._execute(len(self._commands))
        except Exception:  # Redis cannot be reached: every write of the block failed
            return
        self._keep_failures(replies)

    def send_with(self, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """Send what was queued and one command more, in one pipeline: that command's reply (its error raised);
        what failed before it is logged."""
        ahead = len(self._commands)
        self.queue(args, options)
        try:
            *replies, reply = self._execute(ahead)
        except Exception:  # nothing is known of any of them: the caller learns it of its own command
            self.log_failures()
            raise
        self._keep_failures(replies)
        self.log_failures()
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _execute(self, writes: int) -> list[Any]:
        """The pipeline's replies; when it could not be sent, the first `writes` commands' writes failed (the
        error is kept for each, and raised)."""
        try:
            replies: list[Any] = self._pipe.execute(raise_on_error=False)
            return replies
        except Exception as error:
            self.failures = self._all_failed(error, writes)
            raise
        finally:
            self._pipe.reset()

    def log_failures(self) -> None:
        """Log each write that failed (for writes sent ahead of another command: nobody else hears of them)."""
        for label, error in self.failures:
            log.error("could not %s (a write sent ahead of the next one): %r", label, error)

    def _keep_failures(self, replies: Sequence[Any]) -> None:
        for index, reply in enumerate(replies):
            if isinstance(reply, NoScriptError):
                reply = self._client.again_with_script(self._commands[index])
            if isinstance(reply, Exception):
                self.failures.append((self._label(index), reply))

    def _all_failed(self, error: Exception, count: int) -> list[tuple[str, Exception]]:
        return [(label, error) for label in dict.fromkeys(self._label(index) for index in range(count))]

    def _label(self, index: int) -> str:
        named = [label for start, label in self._marks if start <= index]
        return named[-1] if named else "a gathered write"


class _Joined(CoreCommands):
    """An adapter's own pipeline inside `gathering()`: its commands join the gathered ones, and its `execute()`
    sends nothing (the block's end does)."""

    _event_dispatcher: Any = None  # redis-py's commands ask for it; nothing here emits events

    def __init__(self, gathered: Gathered) -> None:
        self._gathered = gathered
        self._queued = 0

    def execute_command(self, *args: Any, **options: Any) -> _Joined:
        self._gathered.queue(args, options)
        self._queued += 1
        return self

    def __enter__(self) -> _Joined:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        return [NO_REPLY] * self._queued


class Gathering:
    """The gathering part of a store client (StoreRedis, StoreCluster)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._here = threading.local()  # the block this thread is in, if any
        self._script_bodies: dict[str, str] = {}
        super().__init__(*args, **kwargs)

    @contextmanager
    def gathering(self) -> Iterator[Gathered]:
        """Inside: this thread's commands through this client are queued; sent in one pipeline at the end (after
        any sent `ahead()` and not sent yet)."""
        try:
            with self._queueing() as gathered:
                yield gathered
        finally:
            gathered.send()

    @contextmanager
    def ahead(self) -> Iterator[Gathered]:
        """Inside: this thread's commands through this client are queued; sent in one pipeline in front of the
        thread's next command after the block (an intent and the write it comes before, in one round trip)."""
        try:
            with self._queueing() as gathered:
                yield gathered
        finally:
            self._here.ahead = gathered

    @contextmanager
    def _queueing(self) -> Iterator[Gathered]:
        """Inside: this thread's commands through this client are queued (after any still to go ahead)."""
        gathered = self._take_ahead() or self._new()
        self._here.block = gathered
        try:
            yield gathered
        finally:
            self._here.block = None

    def _new(self) -> Gathered:
        return Gathered(self, super().pipeline(transaction=False))  # type: ignore[misc]

    def _gathered(self) -> Gathered | None:
        return getattr(self._here, "block", None)

    def _take_ahead(self) -> Gathered | None:
        ahead: Gathered | None = getattr(self._here, "ahead", None)
        self._here.ahead = None
        return ahead

    def execute_command(self, *args: Any, **options: Any) -> Any:
        gathered = self._gathered()
        if gathered is not None:
            gathered.queue(args, options)
            return NO_REPLY
        ahead = self._take_ahead()
        if ahead is not None:
            return ahead.send_with(args, options)
        return super().execute_command(*args, **options)  # type: ignore[misc]

    def pipeline(self, *args: Any, **kwargs: Any) -> Any:
        gathered = self._gathered()
        if gathered is not None:
            return gathered.joined()
        ahead = self._take_ahead()
        if ahead is not None:  # an adapter's own pipeline sends itself: what was to go ahead goes first
            ahead.send()
            ahead.log_failures()
        return super().pipeline(*args, **kwargs)  # type: ignore[misc]

    def register_script(self, script: Any) -> Any:
        registered = super().register_script(script)  # type: ignore[misc]
        self._script_bodies[registered.sha] = registered.script
        return registered

    def again_with_script(self, command: Sequence[Any]) -> Any:
        """A gathered EVALSHA that Redis had no script for (it did not run): load the script, send it again at
        once; its reply, or the error."""
        body = self._script_bodies.get(str(command[1]))
        if body is None:
            return NoScriptError(f"no script of sha {command[1]} was registered with this client")
        try:
            self.script_load(body)  # type: ignore[attr-defined]
            return self.execute_command(*command)
        except Exception as error:
            return error


class StoreRedis(Gathering, redis.Redis):
    """A client of one Redis that can gather writes."""


class StoreCluster(Gathering, RedisCluster):
    """A client of a Redis Cluster that can gather writes."""
