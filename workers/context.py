"""The worker process's one object graph, built by the wiring root (service/bootstrap.py) on first use."""

from __future__ import annotations

import functools

from service.bootstrap import Services, build_services, connection_settings
from service.play.game_service import GameService
from service.storage.redis_clients import queue_url_for
from service.storage.turn_queue import RQDispatcher


def queue_url() -> str:
    """Where the RQ queue lives (one plain Redis); RedisSettingsError when it is not set right."""
    settings = connection_settings()
    return queue_url_for(settings["REDIS_URL"], settings["QUEUE_REDIS_URL"])


@functools.cache
def services() -> Services:
    """The process's services, on REDIS_URL and QUEUE_REDIS_URL; bot turns go to the RQ queue; the command
    path's best-effort notes are written behind the bot jobs."""
    return build_services(connection_settings(), writes_behind=True)


def dispatcher() -> RQDispatcher:
    """Enqueues bot turns and keeps the waiting index."""
    queue = services().dispatcher
    assert isinstance(queue, RQDispatcher)  # built without a dispatcher of its own: RQ's
    return queue


def game_service() -> GameService:
    """The process's GameService; its dispatcher enqueues the next bot turn."""
    return services().games
