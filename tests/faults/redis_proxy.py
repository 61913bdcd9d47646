"""A fault-injecting TCP proxy between the code and a real redis-server, in the spirit of Jepsen.

It reads each command a client sends (RESP: an array of bulk strings), asks its FaultPlan what to do
with it, and then forwards it and passes the reply back, or injects a fault:
  reply_lost  forward the command, wait for Redis's whole reply (so it ran), then cut the client's
              connection without the reply: the client cannot know whether the command ran;
  not_sent    cut the client's connection before forwarding: the command never reaches Redis;
  delay       wait, then forward as usual (to shuffle the interleavings of concurrent clients).
A plan is a list of Rules that match a command by name (`EVALSHA`, `SET`, `DEL`, `HGETALL`...) and,
for a script, by its text or sha (`script`), each with a probability and a limit, drawn from one
seeded random source. Every connection has its own upstream connection, served by its own thread,
one command at a time (a pipeline is forwarded command by command, in order).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import hashlib
import random
import socket
import threading
import time
from collections.abc import Sequence
from typing import BinaryIO


class Fault(enum.Enum):
    """What the proxy does to a command a rule matches."""

    REPLY_LOST = "reply_lost"
    NOT_SENT = "not_sent"
    DELAY = "delay"


def script_sha(script: str) -> str:
    """The sha1 by which EVALSHA names a script (redis-py's register_script sends it so)."""
    return hashlib.sha1(script.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class Rule:
    """Fault commands named `command` (upper case), for EVALSHA/EVAL only those of `script` (its text
    or sha), each with `probability`, at most `limit` times in all. With `resends=False` a command
    whose exact bytes were faulted once already is let through: a caller's resend gets an answer.
    A reply_lost fault is about commands that ran: an error reply (NOSCRIPT, say) is passed on and
    does not count."""

    command: str
    fault: Fault
    probability: float = 1.0
    script: str | None = None
    limit: int | None = None
    delay_seconds: float = 0.0
    resends: bool = False

    def matches(self, args: Sequence[bytes]) -> bool:
        """Whether this rule is about the command `args` (its name and, for a script, which one)."""
        name = args[0].decode("ascii", "replace").upper() if args else ""
        if name != self.command.upper():
            return False
        if self.script is None:
            return True
        wanted = self.script if len(self.script) == 40 else script_sha(self.script)
        if name == "EVALSHA" and len(args) > 1:
            return args[1].decode("ascii", "replace").lower() == wanted
        if name == "EVAL" and len(args) > 1:
            return hashlib.sha1(args[1]).hexdigest() == wanted
        return False


class FaultPlan:
    """Seeded decisions: the first rule that matches a command and has budget left may fault it."""

    def __init__(self, seed: int, rules: Sequence[Rule] = ()) -> None:
        self.rules = list(rules)
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._used: collections.Counter[int] = collections.Counter()  # per rule index
        self._faulted: set[bytes] = set()  # digests of commands faulted so far
        self.injected: collections.Counter[tuple[str, Fault]] = collections.Counter()

    def decide(self, args: Sequence[bytes]) -> Rule | None:
        """The rule whose fault applies to this command, if any (counted in `injected`)."""
        digest = hashlib.blake2b(b"\0".join(args), digest_size=16).digest()
        with self._lock:
            for index, rule in enumerate(self.rules):
                if not rule.matches(args):
                    continue
                if rule.limit is not None and self._used[index] >= rule.limit:
                    continue
                if not rule.resends and digest in self._faulted:
                    continue
                if self._random.random() >= rule.probability:
                    continue
                self._used[index] += 1
                self._faulted.add(digest)
                self.injected[(rule.command.upper(), rule.fault)] += 1
                return rule
        return None

    def give_back(self, rule: Rule, args: Sequence[bytes]) -> None:
        """Undo `decide`'s choice of `rule` for this command: it was not faulted after all."""
        digest = hashlib.blake2b(b"\0".join(args), digest_size=16).digest()
        with self._lock:
            self._used[self.rules.index(rule)] -= 1
            self._faulted.discard(digest)
            self.injected[(rule.command.upper(), rule.fault)] -= 1

    def used(self, rule: Rule) -> int:
        """How many commands `rule` faulted so far."""
        with self._lock:
            return self._used[self.rules.index(rule)]

    def count(self, fault: Fault) -> int:
        """How many faults of this kind were injected so far."""
        with self._lock:
            return sum(n for (_, kind), n in self.injected.items() if kind is fault)


class ProxyClosed(Exception):
    """A side of a proxied connection closed."""


class RedisProxy:
    """Listens on a free local port and forwards to the redis-server at `upstream_port`."""

    def __init__(self, upstream_port: int, plan: FaultPlan | None = None) -> None:
        self.upstream_port = upstream_port
        self.plan = plan or FaultPlan(0)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name="redis-proxy", daemon=True)
        self._acceptor.start()

    @property
    def url(self) -> str:
        """REDIS_URL for the code under test."""
        return f"redis://127.0.0.1:{self.port}/0"

    def close(self) -> None:
        """Stop listening and cut every open connection."""
        self._closed = True
        _cut(self._listener)
        with self._lock:
            open_sockets, self._sockets = list(self._sockets), set()
        for sock in open_sockets:
            _cut(sock)
        self._acceptor.join(timeout=5)

    def __enter__(self) -> RedisProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), name="redis-proxy-conn", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        except OSError:
            _cut(client)
            return
        with self._lock:
            if self._closed:
                _cut(client)
                _cut(upstream)
                return
            self._sockets |= {client, upstream}
        from_client, from_redis = client.makefile("rb"), upstream.makefile("rb")
        try:
            while True:
                raw, args = read_command(from_client)
                rule = self.plan.decide(args)
                if rule is not None and rule.fault is Fault.NOT_SENT:
                    return
                if rule is not None and rule.fault is Fault.DELAY:
                    time.sleep(rule.delay_seconds)
                upstream.sendall(raw)
                reply = read_reply(from_redis)
                if rule is not None and rule.fault is Fault.REPLY_LOST:
                    if not reply.startswith(b"-"):
                        return
                    self.plan.give_back(rule, args)  # refused, not run: no fault to speak of
                client.sendall(reply)
        except (ProxyClosed, OSError, ValueError):
            return
        finally:
            for sock in (client, upstream):
                _cut(sock)
            from_client.close()
            from_redis.close()
            with self._lock:
                self._sockets -= {client, upstream}


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def _line(reader: BinaryIO) -> bytes:
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise ProxyClosed("connection closed")
    return line


def _exactly(reader: BinaryIO, size: int) -> bytes:
    data = reader.read(size)
    if len(data) != size:
        raise ProxyClosed("connection closed")
    return data


def read_command(reader: BinaryIO) -> tuple[bytes, list[bytes]]:
    """One command as a client sends it (an array of bulk strings): its bytes and its arguments."""
    header = _line(reader)
    if header[:1] != b"*":
        raise ValueError(f"not a RESP command: {header[:20]!r}")
    raw, args = [header], []
    for _ in range(int(header[1:-2])):
        length_line = _line(reader)
        if length_line[:1] != b"$":
            raise ValueError(f"not a bulk string: {length_line[:20]!r}")
        data = _exactly(reader, int(length_line[1:-2]) + 2)
        raw += [length_line, data]
        args.append(data[:-2])
    return b"".join(raw), args


AGGREGATES = {b"*": 1, b"~": 1, b">": 1, b"%": 2, b"|": 2}  # RESP2 and RESP3: elements per count
BLOBS = b"$=!"  # bulk string, verbatim string, bulk error: a length, then that many bytes


def read_reply(reader: BinaryIO) -> bytes:
    """One whole reply of Redis, as bytes (RESP2 or RESP3)."""
    line = _line(reader)
    kind, count = line[:1], line[1:-2]
    if kind in BLOBS:
        size = int(count)
        return line if size < 0 else line + _exactly(reader, size + 2)
    if kind in AGGREGATES:
        size = int(count)
        if size < 0:
            return line
        return line + b"".join(read_reply(reader) for _ in range(size * AGGREGATES[kind]))
    return line  # simple string, error, integer, null, double, boolean, big number
