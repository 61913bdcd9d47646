"""How the service asks for bot turns: an RQ job per (game, version)."""

from __future__ import annotations

from typing import Protocol

import redis
from rq import Queue
from rq.serializers import JSONSerializer

BOT_QUEUE = "bots"
BOT_TURN_JOB = "workers.bot_turns.play_bot_turn"


class BotDispatcher(Protocol):
    """Something that arranges for a bot seat to act at a given version."""

    def schedule(self, game_id: str, version: int) -> None:
        """A bot must act in `game_id` at `version`."""


def bot_job_id(game_id: str, version: int) -> str:
    """One job id per (game, version), so a duplicate enqueue is harmless."""
    return f"bot-turn_{game_id}_{version}"


class RQDispatcher:
    """Enqueues bot turns for the RQ workers (JSON serializer)."""

    def __init__(self, connection: redis.Redis) -> None:
        self.queue = Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)

    def schedule(self, game_id: str, version: int) -> None:
        self.queue.enqueue(
            BOT_TURN_JOB,
            game_id,
            version,
            job_id=bot_job_id(game_id, version),
            result_ttl=60,
            failure_ttl=24 * 3600,
        )


class NoDispatcher:
    """Schedules nothing (for tools that only read)."""

    def schedule(self, game_id: str, version: int) -> None:
        return None
