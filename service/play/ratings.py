"""The ladder (shared/API.md "The ladder"): every entrant of a game's finished matches, rated by openskill's
Plackett-Luce model (pinned in pyproject.toml, its default parameters: mu 25, sigma 25/3, beta 25/6, tau 25/300).

Each deal of a finished match is one rated contest of the match's entrants, ranked by their deal scores (C-8:
the better score first, equal scores tie), deal after deal, match after match in the order the matches
finished. Pure computation: the same matches in the same order give the same floats, and rating more matches
on top of a ladder (`rate`) gives what rating all of them from scratch does, so a ladder can be kept and
extended. A rating is shown rounded to ROUND_DIGITS decimals, its ordinal (mu - 3 sigma) from the unrounded
mu and sigma; the entries are ordered best ordinal first, equal ordinals by entrant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openskill.models import PlackettLuce

from domain.duplicate_deals import deal_ranks

ROUND_DIGITS = 6
MODEL = PlackettLuce(mu=25.0, sigma=25.0 / 3.0, beta=25.0 / 6.0, tau=25.0 / 300.0)


@dataclasses.dataclass(frozen=True)
class RatedMatch:
    """One finished match as the ladder sees it: its entrants' labels (a level or `bot:<name>`), each scored
    deal's scores by entrant (C-8: mean points per hand), and the hands each entrant played."""

    entrants: tuple[str, ...]
    deal_scores: tuple[tuple[float, ...], ...]
    hands: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Standing:
    """An entrant's rating (unrounded) and what it was rated on."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    matches: int = 0
    deals: int = 0
    hands: int = 0


def rate(standings: Mapping[str, Standing], matches: Iterable[RatedMatch], lowest_wins: bool) -> dict[str, Standing]:
    """The standings after `matches`, in their order, on top of `standings` (left as they are)."""
    out = dict(standings)
    for match in matches:
        for deal, scores in enumerate(match.deal_scores):
            if len(scores) != len(match.entrants):
                raise ValueError(f"deal {deal} has {len(scores)} scores for {len(match.entrants)} entrants")
        for label, hands in zip(match.entrants, match.hands, strict=True):
            was = out.get(label, Standing())
            out[label] = dataclasses.replace(
                was, matches=was.matches + 1, deals=was.deals + len(match.deal_scores), hands=was.hands + hands
            )
        for scores in match.deal_scores:
            teams = [[MODEL.rating(mu=out[label].mu, sigma=out[label].sigma)] for label in match.entrants]
            rated = MODEL.rate(teams, ranks=[float(rank) for rank in deal_ranks(scores, lowest_wins)])
            for label, (rating,) in zip(match.entrants, rated, strict=True):
                out[label] = dataclasses.replace(out[label], mu=rating.mu, sigma=rating.sigma)
    return out


def entries(standings: Mapping[str, Standing]) -> list[dict[str, Any]]:
    """The ladder's entries, best ordinal first (equal ordinals by entrant)."""
    shown = [
        {
            "entrant": label,
            "rating": {
                "mu": round(standing.mu, ROUND_DIGITS),
                "sigma": round(standing.sigma, ROUND_DIGITS),
                "ordinal": round(MODEL.rating(mu=standing.mu, sigma=standing.sigma).ordinal(), ROUND_DIGITS),
            },
            "matches": standing.matches,
            "deals": standing.deals,
            "hands": standing.hands,
        }
        for label, standing in standings.items()
    ]
    return sorted(shown, key=lambda entry: (-entry["rating"]["ordinal"], entry["entrant"]))


def ladder(matches: Sequence[RatedMatch], lowest_wins: bool) -> list[dict[str, Any]]:
    """The ladder of these finished matches, in the order they finished."""
    return entries(rate({}, matches, lowest_wins))
