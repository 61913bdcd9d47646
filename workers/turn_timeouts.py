"""RQ job: a turn timeout, scheduled with RQ's scheduler when a human is to act (service/play/turn_timeouts.py)."""

from __future__ import annotations

import logging

from service.play.turn_timeouts import play_turn_timeout as play
from workers.context import game_service

log = logging.getLogger(__name__)


def play_turn_timeout(game_id: str, version: int) -> str:
    """Play the `greedy` move for each human seat still due at `version`; a stale version is not an error."""
    outcome = play(game_service(), game_id, version)
    log.info("turn timeout %s@%s: %s", game_id, version, outcome)
    return outcome
