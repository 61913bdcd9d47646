"""Watchers cost no thread: 300 open long-polls and live streams, and the API still answers at once.

gunicorn with make run's settings (gevent) and a real redis-server. With the thread-per-request
set-up (gthread, 2 processes x 16 threads) the first 32 watchers take every thread, and /healthz
and the action wait behind them until the test's limit passes.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import API_SETTINGS, call, service_env, start_api

pytestmark = pytest.mark.integration

GAMES = 10
LONG_POLLS = 150
STREAMS = 150
PROMPT_SECONDS = 5.0  # a generous liveness limit, not a speed measurement (that is `make bench`)
TWO_HUMANS = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}], "options": {"rounds": 1}}


@pytest.fixture
def watched_api(redis_url: str, tmp_path: Path) -> Iterator[str]:
    """An API of its own, so that the watchers it holds disturb no other test."""
    yield from start_api(service_env(redis_url), (tmp_path / "gunicorn.log").open("wb"), settings=API_SETTINGS)


def open_watcher(url: str, path: str) -> socket.socket:
    """A raw HTTP request left open: the server holds it until something happens."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    return sock


def read_until(sock: socket.socket, wanted: bytes, deadline: float) -> bytes:
    """What the socket sent until `wanted` appears (or the deadline passes, or it closes)."""
    received = b""
    while wanted not in received and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        received += chunk
    return received


def timed(method: str, url: str, body: object = None, headers: dict[str, str] | None = None) -> tuple[int, float]:
    """(status, seconds); status 0 when no answer came within the socket's timeout."""
    started = time.monotonic()
    try:
        status, _ = call(method, url, body, headers)
    except OSError:  # timed out: no thread was free to answer
        status = 0
    return status, time.monotonic() - started


def test_300_watchers_leave_the_api_answering(watched_api: str) -> None:
    games = []
    for _ in range(GAMES):
        status, created = call("POST", f"{watched_api}/v1/games", TWO_HUMANS)
        assert status == 201, created
        games.append(created)
    watchers: list[tuple[int, str, socket.socket]] = []
    try:
        for n in range(LONG_POLLS + STREAMS):
            game = games[n % GAMES]
            base = f"/v1/games/{game['id']}"
            after = game["version"]
            kind = "poll" if n < LONG_POLLS else "stream"
            path = f"{base}/events?after={after}&wait=30" if kind == "poll" else f"{base}/stream?after={after}"
            watchers.append((n % GAMES, kind, open_watcher(watched_api, path)))
        time.sleep(1.0)  # every watcher has reached the server and waits there

        status, seconds = timed("GET", f"{watched_api}/healthz")
        assert status == 200 and seconds < PROMPT_SECONDS, f"/healthz: {status} after {seconds:.1f} s"
        moved = games[0]
        action = {"type": "reveal", "positions": [0, 1]}
        headers = {"Authorization": f"Bearer {moved['seats'][0]['token']}"}
        status, seconds = timed("POST", f"{watched_api}/v1/games/{moved['id']}/actions", action, headers)
        assert status == 200 and seconds < PROMPT_SECONDS, f"the action: {status} after {seconds:.1f} s"

        # every watcher of that game hears of the move; the others still wait
        seq = moved["version"] + 1
        deadline = time.monotonic() + PROMPT_SECONDS
        for game_index, kind, sock in watchers:
            if game_index != 0:
                continue
            if kind == "stream":
                received = read_until(sock, f"id: {seq}\n".encode(), deadline)
                assert f"id: {seq}\n".encode() in received, f"a stream did not get event {seq}: {received[-300:]!r}"
            else:
                received = read_until(sock, b"(until the server closes)", deadline)  # Connection: close
                head, _, body = received.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200"), received[:300]
                assert [event["seq"] for event in json.loads(body)["events"]] == [seq], body[:300]
        status, seconds = timed("GET", f"{watched_api}/healthz")
        assert status == 200 and seconds < PROMPT_SECONDS
    finally:
        for _, _, sock in watchers:
            sock.close()
