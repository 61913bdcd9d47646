"""Real processes: a redis-server (or a three-master Redis Cluster) the tests start on free ports, gunicorn,
RQ workers."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import redis

from domain.verify import verify
from service.storage.redis_clients import StoreClient, connect

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CLUSTER_MASTERS = 3
STACKS = ["single", "cluster"]  # where the event store lives: one redis-server, or a Redis Cluster


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


def start_redis(folder: Path, *settings: str) -> tuple[subprocess.Popen[bytes], int]:
    """A redis-server on a free port with its files in `folder`, once it answers."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required (make test installs it)"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "", "--appendonly", "no"]
        + list(settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    try:
        wait_until(client.ping, 10, "redis-server")
    finally:
        client.close()
    return process, port


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of our own, on a free port, with its files in a temporary folder."""
    process, port = start_redis(tmp_path_factory.mktemp("redis"))
    yield f"redis://127.0.0.1:{port}/0"
    stop(process)


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis Cluster of three masters (no replicas) on free ports, as `redis+cluster://` one of its nodes."""
    cli = shutil.which("redis-cli")
    assert cli, "redis-cli is required (it comes with redis-server)"
    folder = tmp_path_factory.mktemp("cluster")
    nodes: list[tuple[subprocess.Popen[bytes], int]] = []
    try:
        for n in range(CLUSTER_MASTERS):
            node = folder / f"node{n}"
            node.mkdir()
            conf = ("--cluster-enabled", "yes", "--cluster-config-file", str(node / "nodes.conf"))
            nodes.append(start_redis(node, *conf, "--cluster-port", str(free_port())))
        addresses = [f"127.0.0.1:{port}" for _, port in nodes]
        create = [cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"]
        subprocess.run(create, check=True, capture_output=True, timeout=60)
        wait_until(lambda: all(cluster_ok(port) for _, port in nodes), 30, "cluster_state:ok on every node")
        yield f"redis+cluster://{addresses[0]}"
    finally:
        for process, _ in nodes:
            stop(process)


def cluster_ok(port: int) -> bool:
    """The node at `port` sees every slot served."""
    with redis.Redis(port=port, decode_responses=True) as client:
        info: dict[str, str] = client.execute_command("CLUSTER INFO")
    return info.get("cluster_state") == "ok"


@pytest.fixture(scope="session")
def queue_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The plain redis-server for the RQ queue beside the cluster (QUEUE_REDIS_URL)."""
    process, port = start_redis(tmp_path_factory.mktemp("queue-redis"))
    yield f"redis://127.0.0.1:{port}/0"
    stop(process)


def store_client(url: str) -> StoreClient:
    """A client of the event store at a plain or a cluster URL (text replies)."""
    return connect(url, decode_responses=True)


def service_env(redis_url: str, queue_url: str | None = None) -> dict[str, str]:
    """The environment for API and worker processes; the queue shares REDIS_URL unless given."""
    # the rate limits are off unless the environment sets them (tests create and read many games)
    env = {
        "GAMES_PER_MINUTE": "0",
        "READS_PER_SECOND": "0",
        "WATCHES_PER_CLIENT": "0",
        "EXPERT_GAMES_PER_CLIENT": "0",
        **os.environ,
        "REDIS_URL": redis_url,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("QUEUE_REDIS_URL", None)
    return {**env, "QUEUE_REDIS_URL": queue_url} if queue_url else env


# make run's gunicorn settings (scripts/run.sh): gevent, so that open streams and long-polls hold no thread
API_SETTINGS = ("--worker-class", "gevent", "--worker-connections", "10000")


def start_api(
    env: dict[str, str], log: IO[bytes], workers: int = 2, settings: tuple[str, ...] = API_SETTINGS
) -> Generator[str, None, None]:
    """gunicorn serving the app, as `make run` does; yields its URL, stops it when resumed."""
    port = free_port()
    process = subprocess.Popen(
        [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", str(workers), *settings]
        + ["service.app:create_app()"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: call("GET", f"{url}/healthz")[0] == 200, 30, "gunicorn")
        yield url
    finally:
        stop(process)
        log.close()


@pytest.fixture(scope="session")
def api_url(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn serving the app on the plain redis-server."""
    yield from start_api(service_env(redis_url), (tmp_path_factory.mktemp("api") / "gunicorn.log").open("wb"))


@pytest.fixture(scope="session")
def cluster_api_url(cluster_url: str, queue_redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn serving the app on the cluster, with the queue on its plain redis-server."""
    log = (tmp_path_factory.mktemp("cluster-api") / "gunicorn.log").open("wb")
    yield from start_api(service_env(cluster_url, queue_redis_url), log)


def start_worker(env: dict[str, str], folder: Path) -> Generator[subprocess.Popen[bytes], None, None]:
    """One RQ worker process (`python -m workers`); stopped when resumed."""
    log = (folder / "worker.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "workers"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        yield process
    finally:
        stop(process)
        log.close()


@pytest.fixture
def worker(redis_url: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """One RQ worker process on the plain redis-server."""
    yield from start_worker(service_env(redis_url), tmp_path)


@dataclasses.dataclass(frozen=True)
class Stack:
    """One set-up of the service: where the event store and the queue live, and the API serving them."""

    name: str
    redis_url: str  # REDIS_URL: the event store, one Redis or a cluster
    queue_url: str  # QUEUE_REDIS_URL: RQ's plain Redis
    api_url: str

    def env(self) -> dict[str, str]:
        """The environment for another API or worker process of this set-up."""
        return service_env(self.redis_url, self.queue_url)

    def store(self) -> StoreClient:
        return store_client(self.redis_url)

    def queue(self) -> redis.Redis:
        return redis.Redis.from_url(self.queue_url, decode_responses=True)


@pytest.fixture(scope="session")
def single_stack(redis_url: str, api_url: str) -> Stack:
    """Everything on one redis-server."""
    return Stack("single", redis_url, redis_url, api_url)


@pytest.fixture(scope="session")
def cluster_stack(cluster_url: str, queue_redis_url: str, cluster_api_url: str) -> Stack:
    """The event store on a three-master Redis Cluster, RQ on a redis-server of its own."""
    return Stack("cluster", cluster_url, queue_redis_url, cluster_api_url)


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> Stack:
    """A test that takes `stack` runs once on one redis-server and once on the cluster."""
    found: Stack = request.getfixturevalue(f"{request.param}_stack")
    return found


@pytest.fixture
def stack_worker(stack: Stack, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """One RQ worker process of the test's stack."""
    yield from start_worker(stack.env(), tmp_path)


def assert_record_and_audit_pass(game_url: str) -> None:
    """The finished game's record passes the offline verifier and the stored stream passes /audit."""
    status, record = call("GET", f"{game_url}/record")
    assert status == 200, record
    verdict = verify(record)
    assert verdict.ok, verdict
    status, audit = call("GET", f"{game_url}/audit")
    assert status == 200, audit
    assert audit["chain_ok"] and audit["replay_ok"] and audit["complete"] and audit["first_bad_seq"] is None, audit


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
