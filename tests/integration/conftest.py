"""Real processes: a redis-server the tests start on a free port, gunicorn, RQ workers."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Any, timeout: float, what: str) -> None:
    """Poll `check()` until it is truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a child process and reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of our own, on a free port, with its files in a temporary folder."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required (make test installs it)"
    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    wait_until(client.ping, 10, "redis-server")
    yield f"redis://127.0.0.1:{port}/0"
    client.close()
    stop(process)


def service_env(redis_url: str) -> dict[str, str]:
    """The environment for API and worker processes."""
    # the game-creation rate limit is off unless the environment sets it (tests create many games)
    return {"GAMES_PER_MINUTE": "0", **os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="session")
def api_url(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn serving the app, as `make run` does."""
    port = free_port()
    log = (tmp_path_factory.mktemp("api") / "gunicorn.log").open("wb")
    process = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            "2",
            "--threads",
            "16",
            "service.app:create_app()",
        ],
        cwd=ROOT,
        env=service_env(redis_url),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: call("GET", f"{url}/healthz")[0] == 200, 30, "gunicorn")
    yield url
    stop(process)
    log.close()


@pytest.fixture
def worker(redis_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """One RQ worker process (`python -m workers`)."""
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "workers"], cwd=ROOT, env=service_env(redis_url), stdout=log, stderr=subprocess.STDOUT
    )
    yield process
    stop(process)
    log.close()


def call(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One HTTP request; returns (status, parsed JSON body)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=40) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
