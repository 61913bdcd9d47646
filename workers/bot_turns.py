"""RQ job: play one bot turn through the same command path as a person's action."""

from __future__ import annotations

import logging
from datetime import UTC

from rq import get_current_job

from workers.context import game_service

log = logging.getLogger(__name__)


def play_bot_turn(game_id: str, version: int) -> str:
    """Play the bot seat due at `version`; a stale version or a conflict is not an error."""
    outcome = game_service().play_bot_turn(game_id, version, due_at=_queued_at())
    log.info("bot turn %s@%s: %s", game_id, version, outcome)
    return outcome


def _queued_at() -> float | None:
    """When this job was put on the queue (by the service, a retry, or RQ's scheduler when it was due)."""
    job = get_current_job()
    queued = job.enqueued_at if job is not None else None
    if queued is None:
        return None
    return (queued if queued.tzinfo else queued.replace(tzinfo=UTC)).timestamp()
