"""A lean asyncio HTTP/1.1 client (keep-alive, JSON bodies) that costs little CPU next to the server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any


class HttpError(Exception):
    """An answer the bench did not expect."""


class Connection:
    """One keep-alive connection to 127.0.0.1:port; reconnects when the server closes it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self._reader, self._writer

    async def close(self) -> None:
        """Close the socket."""
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """Send one request (`headers`: more of them) and read its whole answer: (status, body)."""
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(payload)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        if token is not None:
            head += f"Authorization: Bearer {token}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        reused = self._reader is not None
        reader, writer = await self._open()
        try:
            writer.write(head.encode() + b"\r\n" + payload)
            status_line = await reader.readline()
        except ConnectionError:
            status_line = b""
        if not status_line and reused:  # the server closed the idle connection (keep-alive timeout): once more
            await self.close()
            reader, writer = await self._open()
            writer.write(head.encode() + b"\r\n" + payload)
            status_line = await reader.readline()
        if not status_line:
            raise HttpError("the server closed the connection")
        status = int(status_line.split(b" ", 2)[1])
        length, close = 0, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        data = await reader.readexactly(length) if length else b""
        if close:
            await self.close()
        return status, data

    async def json(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """A request whose answer must be 2xx JSON."""
        status, data = await self.request(method, path, body, token, headers)
        if not 200 <= status < 300:
            raise HttpError(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data)


def percentile(samples: list[float], fraction: float) -> float:
    """The `fraction` percentile (nearest rank) of samples; NaN when there are none."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


class Meter:
    """Latencies of the timed requests, the client's own CPU time and, with a `probe`, the servers'."""

    def __init__(self, probe: Callable[[], tuple[float, ...]] | None = None) -> None:
        self.latencies: list[float] = []
        self.started = self.ended = 0.0
        self._cpu = 0.0
        self._probe = probe
        self.probed: tuple[float, ...] = ()

    def start(self) -> None:
        self.started = time.perf_counter()
        self._cpu = time.process_time()
        if self._probe is not None:
            self.probed = self._probe()

    def stop(self) -> None:
        self.ended = time.perf_counter()
        self._cpu = time.process_time() - self._cpu
        if self._probe is not None:
            self.probed = tuple(now - then for now, then in zip(self._probe(), self.probed, strict=True))

    @property
    def seconds(self) -> float:
        return self.ended - self.started

    @property
    def rate(self) -> float:
        """Timed requests per second."""
        return len(self.latencies) / self.seconds if self.seconds > 0 else float("nan")

    @property
    def client_cpu(self) -> float:
        """The share of one core that this client used while it ran."""
        return self._cpu / self.seconds if self.seconds > 0 else float("nan")

    def ms(self, fraction: float) -> float:
        return percentile(self.latencies, fraction) * 1000


async def run_clients(
    count: int, warmup: float, seconds: float, client: Any, probe: Callable[[], tuple[float, ...]] | None = None
) -> Meter:
    """Run `client(index, meter, clock)` coroutines: a warm-up, then `seconds` timed.

    Each client loops until `clock[0]` (a perf_counter deadline) passes; it records a latency into
    the meter only while `clock[1]` is true (the timed window). `probe` is read as the window opens
    and closes (the servers' CPU time, say); `meter.probed` holds the differences.
    """
    meter = Meter(probe)
    clock: list[Any] = [time.perf_counter() + warmup + seconds, False]

    async def window() -> None:
        await asyncio.sleep(warmup)
        meter.start()
        clock[1] = True
        await asyncio.sleep(seconds)
        clock[1] = False
        meter.stop()

    await asyncio.gather(window(), *(client(i, meter, clock) for i in range(count)))
    return meter
