"""RQ job: a turn timeout, scheduled with RQ's scheduler when a human is to act (service/play/due_turns.py)."""

from __future__ import annotations

import logging

from service.play import due_turns
from workers.context import game_service

log = logging.getLogger(__name__)


def play_turn_timeout(game_id: str, version: int) -> str:
    """Play the `greedy` move for each human seat still due at `version`; a stale version is not an error."""
    outcome = due_turns.play_turn_timeout(game_service(), game_id, version)
    log.info("turn timeout %s@%s: %s", game_id, version, outcome)
    return outcome
