"""The ladder's ratings (service/play/ratings.py): each deal of a finished match one Plackett-Luce contest,
entrants ranked by deal score (C-8: the better score first, equal scores tie), in the order the matches finished."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from service.play.ratings import MODEL, ROUND_DIGITS, RatedMatch, entries, ladder, rate
from workers import ladder as ladder_cli

BOTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def match(entrants: str, *deals: tuple[float, ...], hands: int = 1) -> RatedMatch:
    labels = tuple(entrants.split(","))
    return RatedMatch(labels, tuple(deals), tuple(hands * len(deals) * len(labels) for _ in labels))


def by_entrant(found: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {entry["entrant"]: entry for entry in found}


def test_c8_each_deal_is_one_plackett_luce_contest_ranked_by_deal_score() -> None:
    """Lower is better in Golf: the deal's scores (3, 5, 9) rank greedy, expert, random."""
    found = ladder([match("random,greedy,expert", (9.0, 3.0, 5.0))], lowest_wins=True)
    model = PlackettLuce()
    teams = [[model.rating()] for _ in range(3)]
    [[greedy], [expert], [random]] = model.rate([teams[0], teams[1], teams[2]], ranks=[0, 1, 2])
    assert [entry["entrant"] for entry in found] == ["greedy", "expert", "random"]
    assert by_entrant(found)["greedy"]["rating"] == {
        "mu": round(greedy.mu, 6),
        "sigma": round(greedy.sigma, 6),
        "ordinal": round(greedy.ordinal(), 6),
    }
    assert [by_entrant(found)[label]["rating"]["mu"] for label in ("expert", "random")] == [  # type: ignore[index]
        round(expert.mu, 6),
        round(random.mu, 6),
    ]


def test_c8_better_is_higher_where_the_highest_total_wins() -> None:
    """Rommé, Go5: the same scores rank the other way round."""
    found = ladder([match("a,b", (10.0, 20.0))], lowest_wins=False)
    assert [entry["entrant"] for entry in found] == ["b", "a"]


def test_c8_equal_deal_scores_tie() -> None:
    """Two entrants level on every deal end level: same rating, and the order between them is by label."""
    found = ladder([match("zed,amy,bob", (4.0, 4.0, 7.0), (2.5, 2.5, 1.0))], lowest_wins=True)
    ratings = by_entrant(found)
    assert ratings["zed"]["rating"] == ratings["amy"]["rating"]
    assert ratings["zed"]["rating"] != ratings["bob"]["rating"]
    assert [entry["entrant"] for entry in found].index("amy") < [entry["entrant"] for entry in found].index("zed")


def test_a_tie_differs_from_a_win() -> None:
    tied = by_entrant(ladder([match("a,b", (4.0, 4.0))], lowest_wins=True))
    won = by_entrant(ladder([match("a,b", (3.0, 4.0))], lowest_wins=True))
    assert tied["a"]["rating"] != won["a"]["rating"]
    assert tied["a"]["rating"] == tied["b"]["rating"]


def test_counts_matches_deals_and_hands() -> None:
    found = by_entrant(
        ladder(
            [match("a,b", (1.0, 2.0), (2.0, 1.0), hands=3), match("a,c", (1.0, 1.0))],
            lowest_wins=True,
        )
    )
    assert (found["a"]["matches"], found["a"]["deals"], found["a"]["hands"]) == (2, 3, 12 + 2)
    assert (found["b"]["matches"], found["b"]["deals"], found["b"]["hands"]) == (1, 2, 12)
    assert (found["c"]["matches"], found["c"]["deals"], found["c"]["hands"]) == (1, 1, 2)


def test_the_order_of_matches_counts_and_the_same_order_gives_the_same_bytes() -> None:
    first, second = match("a,b", (1.0, 2.0)), match("a,b", (2.0, 1.0))
    once = json.dumps(ladder([first, second], lowest_wins=True))
    assert json.dumps(ladder([first, second], lowest_wins=True)) == once
    assert json.dumps(ladder([second, first], lowest_wins=True)) != once


def test_rating_more_matches_on_top_equals_rating_all_from_scratch() -> None:
    """What lets a process keep a game's ladder and rate only the matches finished since."""
    matches = [match("a,b,c", (1.0, 2.0, 3.0)), match("b,c", (0.5, 0.25)), match("c,a,b", (2.0, 2.0, 1.0))]
    kept = rate({}, matches[:2], lowest_wins=True)
    assert entries(rate(kept, matches[2:], lowest_wins=True)) == ladder(matches, lowest_wins=True)


def test_an_entrant_of_a_match_without_a_scored_deal_is_listed_unrated() -> None:
    found = by_entrant(ladder([match("a,b")], lowest_wins=True))
    assert found["a"]["rating"] == {"mu": 25.0, "sigma": round(25 / 3, 6), "ordinal": round(25 - 3 * (25 / 3), 6)}
    assert (found["a"]["matches"], found["a"]["deals"]) == (1, 0)


def ladder_doc() -> str:
    """docs/bots.md's "The ladder", its lines joined."""
    text = BOTS_DOC.read_text(encoding="utf-8").split("### The ladder\n", 1)[1].split("\n## ", 1)[0]
    return re.sub(r"\s+", " ", text)


def test_the_ladder_doc_states_the_model_and_the_rounding_used() -> None:
    doc = ladder_doc()
    assert "starts at mu 25 and sigma 25/3, with beta 25/6 and tau 25/300" in doc
    assert (MODEL.mu, MODEL.sigma, MODEL.beta, MODEL.tau) == (25, 25 / 3, 25 / 6, 25 / 300)
    assert "`ordinal` is `mu - 3 sigma`" in doc and "rounded to 6 decimals" in doc and ROUND_DIGITS == 6
    assert "sorted keys, no spaces, UTF-8" in doc


def test_c8_the_ladder_doc_shows_what_one_deal_gives() -> None:
    """docs/bots.md: one Golf deal, greedy scoring less than random, two games of one hand each."""
    text = BOTS_DOC.read_text(encoding="utf-8").split("### The ladder\n", 1)[1]
    shown = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])
    rated = ladder([RatedMatch(("random", "greedy"), ((7.0, 3.5),), (2, 2))], lowest_wins=True)
    assert shown == {"game": "golf", "matches": 1, "ladder": rated}


def test_the_rebuild_command_is_as_the_doc_says(capsys: pytest.CaptureFixture[str]) -> None:
    assert "`python -m workers.ladder rebuild [--out FILE]`" in ladder_doc() and "`--redis-url`" in ladder_doc()
    with pytest.raises(SystemExit) as done:
        ladder_cli.main(["rebuild", "--help"])
    assert done.value.code == 0
    assert "usage: python -m workers.ladder rebuild [-h] [--out FILE]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        ladder_cli.main(["--help"])
    assert "--redis-url" in capsys.readouterr().out
