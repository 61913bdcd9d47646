"""RQ job: the bot turns due at a version (service/play/due_turns.py), by a person's command path."""

from __future__ import annotations

import logging
from datetime import UTC

from rq import get_current_job

from service.play.due_turns import play_bot_turns
from workers.context import game_service

log = logging.getLogger(__name__)


def play_bot_chain(game_id: str, version: int) -> str:
    """Play the bot turn due at `version` and the bot turns right after it; a stale version or a
    conflict is not an error."""
    outcome = play_bot_turns(game_service(), game_id, version, due_at=_queued_at())
    log.info("bot turn %s@%s: %s", game_id, version, outcome)
    return outcome


play_bot_turn = play_bot_chain  # the name queued jobs call it by (BOT_TURN_JOB): it stays


def _queued_at() -> float | None:
    """When this job was put on the queue (by the service, a retry, or RQ's scheduler when it was due)."""
    job = get_current_job()
    queued = job.enqueued_at if job is not None else None
    if queued is None:
        return None
    return (queued if queued.tzinfo else queued.replace(tzinfo=UTC)).timestamp()
