"""The bench's own processes: a redis-server on a free port in a temporary folder, gunicorn, RQ workers."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKER_PRIORITY = "10"  # the bot workers' nice value, as scripts/run.sh starts them (WORKER_PRIORITY's default)
MATCH_PRIORITY = "idle"  # the matches' workers', as scripts/run.sh starts them (MATCH_PRIORITY's default)
# The API's gunicorn settings, the file scripts/supervisord.conf starts the API and the stream tier with.
GUNICORN_CONFIG = ROOT / "service" / "ops" / "gunicorn_conf.py"


def stream_workers_default(cores: int | None = None) -> int:
    """The stream tier's processes when STREAM_WORKERS does not say: one for every two cores (rounded up), at
    least one, as scripts/run.sh starts it; `cores`: the machine's (os.cpu_count()) unless given. One gevent
    process holds one core at most, and on a shared host the API keeps the other half."""
    count = os.cpu_count() if cores is None else cores
    return max(1, ((count or 1) + 1) // 2)


def match_workers_default(cores: int | None = None) -> int:
    """The matches' workers when MATCH_WORKERS does not say: one more than the machine's cores (os.cpu_count()
    unless given), as scripts/run.sh starts them. At idle CPU priority they take only spare CPU, and a job waits
    for Redis about a quarter of its time: one more keeps the cores busy meanwhile."""
    count = os.cpu_count() if cores is None else cores
    return (count or 1) + 1


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    """Something accepts connections on 127.0.0.1:port."""
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def wait_until(check: Callable[[], object], timeout: float, what: str) -> None:
    """Poll `check()` until it is truthy; RuntimeError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM a child we started and reap it (SIGKILL after 10 s)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    """CPU time used so far by a process's threads and its living descendants (Linux schedstat, in ns)."""
    total = 0.0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0.0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[0]) / 1e9
            children = (task / "children").read_text().split()
        except OSError:
            continue  # the thread has just ended
        total += sum(cpu_seconds(int(child)) for child in children)
    return total


def ensure_redis() -> str:
    """The redis-server binary, installed the way `make test` does when it is missing."""
    if shutil.which("redis-server") is None:
        subprocess.run([str(ROOT / "scripts" / "ensure-redis.sh")], check=True)
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is required")
    return binary


@dataclasses.dataclass(frozen=True)
class Server:
    """A gunicorn we started: its port, its master's pid and how many worker processes it runs."""

    port: int
    pid: int
    workers: int = 1


class Processes:
    """Starts the bench's processes, each logging into one temporary folder; `close()` stops them all."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._running: list[subprocess.Popen[bytes]] = []
        self.redis_url = ""
        self.redis_pid = 0
        self.metrics = folder / "metrics"  # the folder the API and worker processes share their metrics in
        self.metrics.mkdir()

    def _spawn(self, name: str, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{name}.log").open("ab")
        process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self._running.append(process)
        return process

    def end(self, process: subprocess.Popen[bytes]) -> None:
        """Stop one of our processes."""
        stop(process)
        if process in self._running:
            self._running.remove(process)

    def close(self) -> None:
        """Stop every process still running, the last started first (Redis last)."""
        for process in reversed(list(self._running)):
            self.end(process)

    def env(self) -> dict[str, str]:
        """The environment of API and worker processes: our Redis, no rate limits nor bound on a client's
        watchers nor bot registrations, no packing by the workers' lifecycle sweep (the memory figures pack the
        games themselves, after measuring them), and one folder the processes share their metrics in, as under
        `make run`."""
        return {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "GAMES_PER_MINUTE": "0",
            "READS_PER_SECOND": "0",
            "WATCHES_PER_CLIENT": "0",  # thousands of watchers from this one address
            "EXPERT_GAMES_PER_CLIENT": "0",
            "BOT_REGISTRATIONS_PER_HOUR": "0",  # a thousand registered bots from this one address
            "PYTHONUNBUFFERED": "1",
            "COMPACT_AFTER_SECONDS": "86400",
            "PROMETHEUS_MULTIPROC_DIR": str(self.metrics),
        }

    def start_redis(self) -> redis.Redis:
        """redis-server as `make run` runs it (append-only file, fsync always), on a free port."""
        data = self.folder / "redis"
        data.mkdir()
        port = free_port()
        args = [ensure_redis(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)]
        args += ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--maxmemory-policy", "noeviction"]
        self.redis_pid = self._spawn("redis", args).pid
        client = redis.Redis(port=port)
        wait_until(client.ping, 10, "redis-server")
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        return client

    def start_gunicorn(self, app: str, name: str, workers: int = 2, priority: str = "0") -> Server:
        """gunicorn serving `app` with the API's settings (`workers` processes, 2 as `make run`'s API), at
        `priority`: a nice value, or `idle` for SCHED_IDLE (`make run`'s stream tier: 1 process, idle).
        Its log lines name it (`SERVER_TIER`)."""
        port = free_port()
        env = self.env() | {"PORT": str(port), "WEB_WORKERS": str(workers), "SERVER_TIER": name}
        process = self._spawn(name, gunicorn_command(app, priority), env)
        url = f"http://127.0.0.1:{port}/healthz"
        wait_until(lambda: urllib.request.urlopen(url, timeout=1).status == 200, 30, f"gunicorn ({name})")
        return Server(port, process.pid, workers)

    def start_floor_stream(self, priority: str = "0") -> Server:
        """bench/floor_stream.py on a free port at `priority` (as `start_gunicorn`): raw socket writes of the
        stream's bytes."""
        port = free_port()
        args = [*scheduled(priority), sys.executable, "-m", "bench.floor_stream", str(port)]
        process = self._spawn("floor-stream", args, self.env())
        wait_until(lambda: _listening(port), 30, "floor stream")
        return Server(port, process.pid)

    def start_bridge(self, name: str, url: str, token: str, *args: str) -> subprocess.Popen[bytes]:
        """`python -m workers.bridge --url URL *args` playing the bot whose token this is (given in its
        environment, as a bot's owner would, not in the process list)."""
        env = {**os.environ, "CARDTABLE_BOT_TOKEN": token, "PYTHONUNBUFFERED": "1"}
        return self._spawn(name, [sys.executable, "-m", "workers.bridge", "--url", url, *args], env)

    def start_workers(
        self, count: int, name: str = "worker", priority: str = WORKER_PRIORITY, **settings: str
    ) -> list[subprocess.Popen[bytes]]:
        """`python -m workers` processes, as `make run` starts one (at nice WORKER_PRIORITY, or `priority`);
        `settings`: more of their environment."""
        env = {**self.env(), **settings}
        command = [*scheduled(priority), sys.executable, "-m", "workers"]
        return [self._spawn(f"{name}-{i}", command, env) for i in range(count)]


def gunicorn_command(app: str, priority: str = "0") -> list[str]:
    """gunicorn as scripts/supervisord.conf starts it, serving `app` at `priority`; where it listens and
    how many processes it runs come from the environment (HOST, PORT, WEB_WORKERS)."""
    return [*scheduled(priority), str(BIN / "gunicorn"), "--config", str(GUNICORN_CONFIG.relative_to(ROOT)), app]


def scheduled(priority: str) -> list[str]:
    """The command prefix that runs a process at `priority`: a nice value, or `idle` for SCHED_IDLE."""
    return ["chrt", "--idle", "0"] if priority == "idle" else ["nice", "-n", priority]


@contextlib.contextmanager
def processes(folder: Path) -> Iterator[Processes]:
    """Processes that are all stopped when the block ends, however it ends."""
    procs = Processes(folder)
    try:
        yield procs
    finally:
        procs.close()
