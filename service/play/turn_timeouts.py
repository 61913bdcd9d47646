"""Turn timeouts: a human seat that does not act within the game's `turn_seconds` has a move played
for it by the `greedy` policy, through the same command path as every action, recorded with actor
"system", the seat and the reason `turn_timeout`.

The clock of a version starts when the game reaches it (service/play/game_service.py schedules the job after
every append that leaves a human to act) and stops when the game moves on (the job is deleted; one
that already left the schedule finds the version gone and does nothing).
"""

from __future__ import annotations

import logging
from typing import Any

from domain import engine
from domain.bots import choose_action
from service.play.errors import VersionConflict
from service.play.game_service import GameService, LoadedGame

log = logging.getLogger(__name__)
TIMEOUT_LEVEL = "greedy"
TURN_TIMEOUT = "turn_timeout"


def timeout_action(loaded: LoadedGame, seat: int) -> dict[str, Any]:
    """The move the `greedy` policy makes for `seat`, from that seat's own view."""
    view = engine.view(loaded.snap, seat)
    legal = engine.legal_actions(loaded.snap, seat)
    rng = loaded.config.private_stream(f"timeout/{seat}/{loaded.version}")
    return choose_action(loaded.config.game, TIMEOUT_LEVEL, view, legal, rng)


def play_turn_timeout(games: GameService, game_id: str, version: int) -> str:
    """Play a move for each human seat that was to act at `version` and still is.

    Each move is a compare-and-append at the version it was decided on, so a person who acted
    first wins and a second run plays nothing. Says what happened: played, stale (the game moved
    on) or no_human_to_act.
    """
    loaded = games.repository.load(game_id)
    if loaded.version != version:
        return "stale"
    due = loaded.humans_to_act() if loaded.turn_seconds is not None else []
    played = 0
    for seat in due:
        if seat not in loaded.humans_to_act():
            continue  # the moves played so far ended this seat's turn (a round ended, say)
        try:
            answer = games.submit(
                game_id, seat, timeout_action(loaded, seat), expected_version=loaded.version, system_reason=TURN_TIMEOUT
            )
        except VersionConflict:
            break  # someone else appended at this version and scheduled what follows
        played += 1
        log.info("turn timeout %s@%s: played for seat %s", game_id, loaded.version, seat)
        loaded = games.repository.load(game_id)
        if loaded.version != answer["version"]:
            break  # someone else appended after us
    if played:
        return "played"
    return "stale" if due else "no_human_to_act"
