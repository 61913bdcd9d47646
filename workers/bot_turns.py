"""RQ job: play one bot turn through the same command path as a person's action."""

from __future__ import annotations

import logging

from workers.context import game_service

log = logging.getLogger(__name__)


def play_bot_turn(game_id: str, version: int) -> str:
    """Play the bot seat due at `version`; a stale version or a conflict is not an error."""
    outcome = game_service().play_bot_turn(game_id, version)
    log.info("bot turn %s@%s: %s", game_id, version, outcome)
    return outcome
