"""Check a match record (`cardtable-match/1`, `GET /v1/matches/{id}/record`) on its own, by C-8: the match's
commitment opens to its seed and nonce, every game is there once, each game's seed is its deal's seed and its
seats are its rotation's, every game's record passes the verifier (its chain, every action, every score), and the
results are what the games' hands give. The first thing that does not match is named."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from domain import engine
from domain.duplicate_deals import deal_game, deal_seed, entrant_label, match_commitment, results, seating
from domain.verify import MATCH_FORMAT, verify


@dataclasses.dataclass(frozen=True)
class MatchVerdict:
    """Whether the match record holds up, and what was checked or where it first failed."""

    ok: bool
    detail: str
    games_checked: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail, "games_checked": self.games_checked}


class _Misfit(Exception):
    pass


def verify_match(record: Mapping[str, Any]) -> MatchVerdict:
    """The verdict on a match record (see the module's docstring)."""
    checked = 0
    try:
        entrants, seed = _header(record)
        count = len(entrants)
        games, records = record["games"], record["records"]
        expected = [(deal, rotation) for deal in range(int(record["deals"])) for rotation in range(count)]
        if sorted((game["deal"], game["rotation"]) for game in games) != expected or len(records) != len(games):
            raise _Misfit(f"the match should hold one game for each of {record['deals']} deals x {count} rotations")
        if len({json.dumps(r.get("options"), sort_keys=True) for r in records}) > 1:
            raise _Misfit("its games were not all played with the same options")
        played = []
        for game, game_record in zip(games, records, strict=True):
            _check_game(record, game, game_record, entrants, seed)
            checked += 1
            round_scored = engine.get_game(record["game"]).round_scored.__name__
            played.append(deal_game(game["deal"], game["rotation"], game_record["events"], round_scored))
        labels = [entrant_label(entrant) for entrant in entrants]
        if _as_recorded(results(labels, played), record["results"]) != record["results"]:
            raise _Misfit("its results are not what its games' hands give (C-8)")
    except _Misfit as misfit:
        return MatchVerdict(False, str(misfit), checked)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return MatchVerdict(False, f"the match record is not well-formed: {error!r}", checked)
    return MatchVerdict(True, f"every check passed ({checked} games, results recomputed)", checked)


def _as_recorded(recomputed: list[dict[str, Any]], recorded: Any) -> list[dict[str, Any]]:
    """The recomputed results in the fields a record holds: one made before matches counted the moves played
    at an entrant's deadlines has no `timeouts`, and stays valid."""
    if isinstance(recorded, list) and recorded and all(isinstance(r, dict) and "timeouts" not in r for r in recorded):
        return [{name: value for name, value in result.items() if name != "timeouts"} for result in recomputed]
    return recomputed


def _header(record: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str]:
    if record.get("format") != MATCH_FORMAT:
        raise _Misfit(f"not a {MATCH_FORMAT} record")
    if record.get("status") != "finished" or "seed" not in record or "nonce" not in record:
        raise _Misfit("the match has not finished: its seed and nonce are not in the record")
    if match_commitment(record["seed"], record["nonce"]) != record["seed_commitment"]:
        raise _Misfit("its seed and nonce do not open its seed_commitment (C-8)")
    return list(record["entrants"]), str(record["seed"])


def _check_game(
    record: Mapping[str, Any],
    game: Mapping[str, Any],
    game_record: Mapping[str, Any],
    entrants: list[Mapping[str, Any]],
    seed: str,
) -> None:
    deal, rotation = game["deal"], game["rotation"]
    name = f"the game of deal {deal}, rotation {rotation} ({game['game_id']})"
    if game_record.get("id") != game["game_id"] or game_record.get("game") != record["game"]:
        raise _Misfit(f"{name}: its record is another game's")
    if game_record.get("match") != {"match": record["id"], "deal": deal, "rotation": rotation}:
        raise _Misfit(f"{name}: its record does not say this match, deal and rotation")
    if game_record.get("seed") != deal_seed(seed, deal):
        raise _Misfit(f"{name}: its seed is not deal_seed({deal}) of the match's seed (C-8)")
    options = game_record.get("options") or {}
    if any(options.get(option) != value for option, value in record["options"].items()):
        raise _Misfit(f"{name}: its options are not the match's")
    seated = [entrant_label(entrant) for entrant in seating(entrants, rotation)]
    if [entrant_label(seat) for seat in game_record["seats"]] != seated:
        raise _Misfit(f"{name}: its seats are not rotation {rotation}'s {seated} (C-8)")
    verdict = verify(dict(game_record))
    if not verdict.ok:
        raise _Misfit(f"{name}: {verdict.detail}")
