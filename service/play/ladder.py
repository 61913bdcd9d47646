"""The ladder of each game (shared/API.md "The ladder"): its finished matches rated by service/play/ratings.py, in the
order they finished (`matches:finished:<game>`).

The served ladder reads each finished match's header: its entrants, its `results` (the hands each played) and
its `deal_scores` (kept with the results when the match finished, service/play/matches.py), so it needs no game
record; a match finished before headers kept deal scores has them recomputed from its record. A process keeps
each game's ladder with the list of matches it rated, and rates only the matches finished since, as long as
that list is how the game's finished list still begins (otherwise, a match indexed late, it rates them all
again): rating on top of kept standings gives what rating from scratch does (tests/unit/test_ladder.py).

`rebuild` recomputes every game's ladder from the match records alone (`Matches.record`: the games' records'
scored hands), as `python -m workers.ladder rebuild` does; `serialized` is the one serialization of ladders,
`{game: entries}` as canonical JSON (domain/chain.py: sorted keys, no spaces, UTF-8), in which the rebuilt
ladders and the served ones (`GET /v1/ladder/{game}`'s `ladder`) are the same bytes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.chain import canonical_json
from domain.duplicate_deals import DealGame, deal_game, entrant_label
from service.play.errors import LadderNotFound, MatchNotFound
from service.play.matches import Matches, scores_by_deal
from service.play.ports import MatchBook
from service.play.ratings import RatedMatch, Standing, entries, rate

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class _Kept:
    """A game's ladder as this process last rated it: the finished matches it rated, in order, and the standings."""

    looked_at: tuple[str, ...] = ()
    rated: int = 0  # those of them still stored
    standings: Mapping[str, Standing] = dataclasses.field(default_factory=dict)


def rated_match(labels: Sequence[str], played: Sequence[DealGame]) -> RatedMatch:
    """A finished match as the ladder sees it, from its games' scored hands."""
    scores = [tuple(deal) for deal in scores_by_deal(len(labels), played) if deal is not None]
    hands = sum(len(game.hands) for game in played)  # every entrant plays every hand, in one seat or another
    return RatedMatch(tuple(labels), tuple(scores), (hands,) * len(labels))


def rated_from_record(record: Mapping[str, Any]) -> RatedMatch:
    """A finished match as the ladder sees it, from its match record (`cardtable-match/1`) alone."""
    round_scored = engine.get_game(record["game"]).round_scored.__name__
    played = [
        deal_game(int(game["deal"]), int(game["rotation"]), kept["events"], round_scored)
        for game, kept in zip(record["games"], record["records"], strict=True)
    ]
    return rated_match([entrant_label(entrant) for entrant in record["entrants"]], played)


def rated_from_header(meta: Mapping[str, str]) -> RatedMatch | None:
    """A finished match as the ladder sees it, from its stored header; None for one kept without deal scores."""
    if "deal_scores" not in meta:
        return None
    labels = tuple(entrant_label(entrant) for entrant in json.loads(meta["entrants"]))
    scores = tuple(tuple(deal) for deal in json.loads(meta["deal_scores"]) if deal is not None)
    hands = tuple(int(result["hands"]) for result in json.loads(meta["results"]))
    return RatedMatch(labels, scores, hands)


def serialized(ladders: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """Ladders by game as one JSON text, the records' canonical JSON: sorted keys, no spaces, UTF-8 (the
    rebuild's output)."""
    return canonical_json(ladders)


class Ladders:
    """The ladder use cases: a game's ladder as served, and every ladder rebuilt from the match records."""

    def __init__(self, store: MatchBook, matches: Matches) -> None:
        self.store = store
        self.matches = matches
        self._kept: dict[str, _Kept] = {}

    def ladder(self, game: str) -> dict[str, Any]:
        """`GET /v1/ladder/{game}`: {"game", "matches" (finished matches rated), "ladder" (entries, best first)}."""
        found = engine.registered(game)
        if found is None:
            raise LadderNotFound(game)
        finished = tuple(self.store.finished_of(game))
        kept = self._kept.get(game, _Kept())
        if finished[: len(kept.looked_at)] != kept.looked_at:
            kept = _Kept()  # a match was indexed late, between two rated already: rate them all again
        fresh = [rated for rated in map(self._rated, finished[len(kept.looked_at) :]) if rated is not None]
        kept = _Kept(finished, kept.rated + len(fresh), rate(kept.standings, fresh, found.lowest_wins))
        self._kept[game] = kept
        return {"game": game, "matches": kept.rated, "ladder": entries(kept.standings)}

    def ratings_of(
        self, entrant: str, games: Sequence[str], seen: dict[str, list[dict[str, Any]]] | None = None
    ) -> dict[str, dict[str, Any]]:
        """An entrant's rating in each of these games' ladders where it has one (a bot profile's `ratings`);
        `seen`: the ladders already read for the same answer (a page of profiles reads each game's once)."""
        seen = {} if seen is None else seen
        found = {}
        for game in games:
            if game not in seen:
                seen[game] = self.ladder(game)["ladder"]
            ladder = seen[game]
            place = next((rank for rank, e in enumerate(ladder, 1) if e["entrant"] == entrant), None)
            if place is not None:
                found[game] = {**ladder[place - 1]["rating"], "rank": place}
        return found

    def _rated(self, match_id: str) -> RatedMatch | None:
        """A finished match from its header (from its record if the header has no deal scores); None if gone."""
        meta = self.store.meta(match_id)
        if meta is None:
            log.warning("the finished match %s is listed but not stored: left out of the ladder", match_id)
            return None
        return rated_from_header(meta) or rated_from_record(self.matches.record(match_id))

    def rebuild(self) -> dict[str, list[dict[str, Any]]]:
        """Every game's ladder entries, recomputed from its finished matches' records alone."""
        ladders = {}
        for game in engine.all_games():
            rated = []
            for match_id in self.store.finished_of(game.id):
                try:
                    rated.append(rated_from_record(self.matches.record(match_id)))
                except MatchNotFound:
                    log.warning("the finished match %s is listed but not stored: left out of the ladder", match_id)
            ladders[game.id] = entries(rate({}, rated, game.lowest_wins))
        return ladders
