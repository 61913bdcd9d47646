"""The worker process's one GameService, built from REDIS_URL and QUEUE_REDIS_URL on first use."""

from __future__ import annotations

import functools
import os

import redis

from service.play.game_service import GameService
from service.play.job_queue import RQDispatcher
from service.storage.event_store import EventStore
from service.storage.redis_clients import DEFAULT_REDIS_URL, StoreClient, queue_url_for, redis_clients


def redis_url() -> str:
    """Where the event store lives (one Redis or a cluster)."""
    return os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)


def queue_url() -> str:
    """Where the RQ queue lives (one plain Redis); RedisSettingsError when it is not set right."""
    return queue_url_for(redis_url(), os.environ.get("QUEUE_REDIS_URL"))


@functools.cache
def clients() -> tuple[StoreClient, StoreClient, redis.Redis]:
    """The process's clients: store, blocking reads, queue (bytes replies, fail fast)."""
    return redis_clients(redis_url(), queue_url())


@functools.cache
def dispatcher() -> RQDispatcher:
    """Enqueues bot turns and keeps the waiting index."""
    return RQDispatcher(clients()[2], clients()[0])


@functools.cache
def game_service() -> GameService:
    """The process's GameService; its dispatcher enqueues the next bot turn."""
    store_client, blocking_client, _ = clients()
    return GameService(EventStore(store_client, blocking_client), dispatcher())
