"""The worker process's one GameService, built from REDIS_URL on first use."""

from __future__ import annotations

import functools
import os

import redis

from service.app import redis_clients
from service.commands import GameService
from service.dispatch import RQDispatcher
from service.store import EventStore


def redis_url() -> str:
    """Where the event store and the queue live."""
    return os.environ.get("REDIS_URL", "redis://localhost:6379/0")


@functools.cache
def clients() -> tuple[redis.Redis, redis.Redis, redis.Redis]:
    """The process's clients: store, blocking reads, queue (bytes replies, fail fast)."""
    return redis_clients(redis_url())


@functools.cache
def dispatcher() -> RQDispatcher:
    """Enqueues bot turns and keeps the waiting index."""
    return RQDispatcher(clients()[2])


@functools.cache
def game_service() -> GameService:
    """The process's GameService; its dispatcher enqueues the next bot turn."""
    store_client, blocking_client, _ = clients()
    return GameService(EventStore(store_client, blocking_client), dispatcher())
