"""The worker process's one GameService, built from REDIS_URL on first use."""

from __future__ import annotations

import functools
import os

from service.app import redis_clients
from service.commands import GameService
from service.dispatch import RQDispatcher
from service.store import EventStore


def redis_url() -> str:
    """Where the event store and the queue live."""
    return os.environ.get("REDIS_URL", "redis://localhost:6379/0")


@functools.cache
def game_service() -> GameService:
    """The process's GameService; its dispatcher enqueues the next bot turn."""
    store_client, blocking_client, queue_client = redis_clients(redis_url())
    return GameService(EventStore(store_client, blocking_client), RQDispatcher(queue_client))
