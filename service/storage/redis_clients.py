"""Redis connections: the event store on one Redis or on a Redis Cluster, the bot queue on one Redis.

Settings (the environment; the app's config may override them):
  REDIS_URL        the event store, the waiting index `bots:waiting` and the rate-limit counters:
                   `redis://host:port/0` for one Redis, or `redis+cluster://host:port` (TLS:
                   `rediss+cluster://`) for a Redis Cluster, named by any one of its nodes (the
                   client learns the others and which slots each one serves)
  QUEUE_REDIS_URL  the RQ queue "bots", the workers, their scheduler and liveness keys: always one
                   plain Redis (`redis://`). Defaults to REDIS_URL when that is plain; required when
                   REDIS_URL is a cluster.

RQ cannot run on a cluster: it moves a job between its queue list, its job hash and its registries
in MULTI transactions and pipelines over several of its keys, and blocks on a queue list to move
the job to another list; a cluster refuses any of these when the keys hash to different slots.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.storage.gathering import Gathering, StoreCluster, StoreRedis

Result = TypeVar("Result")
StoreClient: TypeAlias = redis.Redis | RedisCluster
DEFAULT_REDIS_URL = "redis://localhost:6379/0"
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
POOL_SIZE = 64  # connections a process keeps to one Redis for its requests
POOL_WAIT_SECONDS = 5.0
READER_POOL_SIZE = 1_000  # blocking reads: one per game followed in the process (service/api/followers.py)


_SENT_ONCE: ContextVar[bool] = ContextVar("sent_once", default=False)


@contextmanager
def sent_once() -> Iterator[None]:
    """Inside: a command that fails on the way (connection cut, timeout) is not sent again by the
    driver. For writes that are not safe to repeat (the store's scripts): when the reply is lost, the
    command may have run, so the caller reads back (or resends with an idempotency field) itself."""
    token = _SENT_ONCE.set(True)
    try:
        yield
    finally:
        _SENT_ONCE.reset(token)


class ReadRetry(Retry):
    """redis-py's Retry, except inside `sent_once()`, where nothing is retried.

    redis-py resends any command after a connection error or a timeout (on one Redis in the
    connection's retry, on a cluster in the client's loop, which asks `get_retries`), a script that
    ran and lost only its reply included. Reads stay resilient; the store's writes are sent once.
    """

    def get_retries(self) -> int:
        """No retries inside `sent_once()`."""
        return 0 if _SENT_ONCE.get() else super().get_retries()

    def call_with_retry(
        self,
        do: Callable[[], Result],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> Result:
        """`do()`, retried on a connection error or a timeout unless inside `sent_once()`."""
        if not _SENT_ONCE.get():
            return super().call_with_retry(do, fail, is_retryable, with_failure_count)
        try:
            return do()
        except self._supported_errors as error:
            if with_failure_count:
                fail(error, 1)  # drops the broken connection, as after any failure
            else:
                fail(error)
            raise


class RedisSettingsError(ValueError):
    """REDIS_URL and QUEUE_REDIS_URL do not make a usable set-up."""


def is_cluster_url(url: str) -> bool:
    """True for a `redis+cluster://` or `rediss+cluster://` URL."""
    return urlsplit(url).scheme.lower() in CLUSTER_SCHEMES


def queue_url_for(store_url: str, queue_url: str | None) -> str:
    """Where RQ lives: QUEUE_REDIS_URL, else REDIS_URL when that is one plain Redis."""
    if queue_url:
        if is_cluster_url(queue_url):
            raise RedisSettingsError(
                "QUEUE_REDIS_URL must name one plain Redis (redis://…), not a cluster: "
                "RQ uses multi-key transactions that a cluster refuses across slots"
            )
        return queue_url
    if is_cluster_url(store_url):
        raise RedisSettingsError(
            "REDIS_URL names a Redis Cluster; set QUEUE_REDIS_URL to a plain Redis (redis://host:port/0) "
            "for the bot queue: RQ uses multi-key transactions that a cluster refuses across slots"
        )
    return store_url


def connect(url: str, pool_size: int = POOL_SIZE, **options: Any) -> StoreClient:
    """A client for a plain or a cluster URL.

    On one Redis, up to `pool_size` connections; a request that finds them all busy waits up to
    POOL_WAIT_SECONDS for one (redis-py's default pool would fail it at once). Under the gevent worker
    a process serves many requests at once, each a greenlet, and they take turns on these connections.
    Either client can gather a thread's writes into one pipeline (service/storage/gathering.py).
    """
    parts = urlsplit(url)
    scheme = CLUSTER_SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=pool_size, timeout=POOL_WAIT_SECONDS, **options
        )
        return StoreRedis(connection_pool=pool)
    return StoreCluster.from_url(parts._replace(scheme=scheme).geturl(), **options)


def gatherer_of(client: StoreClient) -> Gathering | None:
    """`client`, if it can gather a thread's writes into one pipeline (service/storage/gathering.py); None for a
    client that cannot (a test's fake)."""
    return client if isinstance(client, Gathering) else None


def redis_clients(
    url: str, queue_url: str | None = None, readers: int = READER_POOL_SIZE
) -> tuple[StoreClient, StoreClient, redis.Redis]:
    """Clients for the store, for blocking reads (long-poll; at most `readers` connections on one Redis)
    and for RQ (bytes replies, plain Redis)."""
    queue_at = queue_url_for(url, queue_url)
    common: dict[str, Any] = {
        "socket_connect_timeout": 2,
        "health_check_interval": 15,
        # fail fast: a 503 beats a hung client; reads are retried once, the store's scripts never (sent_once)
        "retry": ReadRetry(ExponentialBackoff(cap=0.2, base=0.05), 1),
    }
    store = connect(url, decode_responses=True, socket_timeout=5, **common)
    blocking = connect(url, readers, decode_responses=True, socket_timeout=40, **common)
    pool = redis.BlockingConnectionPool.from_url(
        queue_at, max_connections=POOL_SIZE, timeout=POOL_WAIT_SECONDS, socket_timeout=5, **common
    )
    queue = redis.Redis(connection_pool=pool)
    return store, blocking, queue
