"""Mutation fuzzing of every game's actions through `engine.act` (C-2, and each game's rules).

Random positions of golf, romme, switch and go5 (random seed, options and player count, random
legal play), and at each one hostile variants of the legal actions (tests/action_fuzz.py): at least
10,000 cases per game. Every case must either be accepted or be refused with a DomainError of the
promised shape: a RuleViolation naming its rule id, or an InvalidInput. Any other exception is a
crash (a 500 at the API). The run is seeded: a failure names the position and the action, and
`ACTION_FUZZ_SEED` / `ACTION_FUZZ_CASES` explore further.
"""

from __future__ import annotations

import collections
import os
import pathlib
import random
import re
import traceback
from typing import Any

import pytest

from domain import engine
from domain.errors import DomainError, InvalidInput, RuleViolation
from tests.action_fuzz import (
    CASES_VARIABLE,
    GAMES,
    MIN_CASES,
    SEED_VARIABLE,
    STOP_SWAPS,
    Mutator,
    Position,
    check_refusal,
    check_replay,
    fuzz_settings,
    positions,
    repro_position,
    vocabulary,
)

SEED, CASES_PER_GAME = fuzz_settings(os.environ)
GAMES_PER_GAME = 5
POSITIONS_PER_RANDOM_GAME = 5
MAX_STEPS = 400


@pytest.mark.parametrize("swap", STOP_SWAPS, ids=["lay_off-unknown-set", "lay_off", "meld"])
def test_go5_swap_that_gives_a_stop_card_is_refused_by_v6(swap: dict[str, Any]) -> None:
    """V-6 / V-8 (c): a stop card is never in a hand, so it cannot be given in a swap (it was a KeyError)."""
    snap = repro_position()
    assert snap.to_act() == (0,) and snap.state.phase == "play" and snap.state.stops[0] == 0
    assert "stop" not in snap.state.hands[0]
    with pytest.raises(RuleViolation) as refusal:
        engine.act(snap, 0, swap)
    assert (refusal.value.code, refusal.value.rule) == ("stop_never_in_hand", "V-6")


def test_go5_swap_that_gives_a_card_not_in_the_hand_is_refused_by_v8() -> None:
    """V-8 (c): the given card comes from the hand, whatever set it would fit."""
    snap = repro_position()
    swap = {**STOP_SWAPS[1], "give": "5-zigzag-orange"}
    assert "5-zigzag-orange" not in snap.state.hands[0]
    with pytest.raises(RuleViolation) as refusal:
        engine.act(snap, 0, swap)
    assert (refusal.value.code, refusal.value.rule) == ("card_not_in_hand", "V-8")


@pytest.fixture(scope="module")
def fuzz_positions() -> dict[str, list[Position]]:
    rng = random.Random(SEED)
    return {game: positions(game, rng, GAMES_PER_GAME, POSITIONS_PER_RANDOM_GAME, MAX_STEPS) for game in GAMES}


@pytest.mark.parametrize("game", GAMES)
def test_mutated_actions_are_accepted_or_refused_with_a_rule_id_or_an_input_error(
    game: str, fuzz_positions: dict[str, list[Position]]
) -> None:
    """C-2 and every rule: no hostile variant of a legal action crashes `engine.act`."""
    rng = random.Random(f"{SEED}/{game}")
    mutator = Mutator(rng, vocabulary(fuzz_positions))
    found = fuzz_positions[game]
    per_position = -(-CASES_PER_GAME // len(found))
    failures: dict[tuple[str, ...], str] = {}
    outcomes: collections.Counter[str] = collections.Counter()
    refusal_codes: set[str] = set()
    for position in found:
        for seat, action in mutator.cases(game, position, per_position):
            shown = repr(action)  # before the game sees it
            try:
                _, events = engine.act(position.snap, seat, action)
                why = check_replay(position.snap, seat, events)
                if why is not None:
                    failures.setdefault(("replay", why), f"{why}; {position.origin} seat={seat} action={shown}")
            except DomainError as error:
                outcomes[type(error).__name__] += 1
                refusal_codes.add(error.code)
                why = check_refusal(error)
                if why is not None:
                    failures.setdefault(("shape", why), f"{position.origin} seat={seat} action={shown}")
            except Exception as error:  # any other exception is the finding
                outcomes["crash"] += 1
                frame = traceback.extract_tb(error.__traceback__)[-1]
                where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
                failures.setdefault(
                    (type(error).__name__, where),
                    f"{type(error).__name__}: {error} at {where}; {position.origin} seat={seat} action={shown}",
                )
            else:
                outcomes["accepted"] += 1
    assert not failures, f"seed {SEED}: {len(failures)} kind(s) of failure:\n" + "\n".join(failures.values())
    assert sum(outcomes.values()) >= 10_000
    # The cases get past the parser to the rules, and reach many different refusals.
    assert outcomes[RuleViolation.__name__] >= 500, outcomes
    assert outcomes[InvalidInput.__name__] >= 1_000, outcomes
    assert len(refusal_codes) >= 10, sorted(refusal_codes)


def test_the_fuzzing_doc_command_sets_what_the_tests_read() -> None:
    """docs/fuzzing.md: its command's variables pick the seed and the case count, its files exist."""
    root = pathlib.Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "fuzzing.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"```sh\n(.*?)\n```", doc, re.DOTALL)
    words = command.split()
    settings = dict(word.split("=", 1) for word in words if "=" in word)
    assert fuzz_settings(settings) == (int(settings[SEED_VARIABLE]), int(settings[CASES_VARIABLE]))
    assert int(settings[CASES_VARIABLE]) > MIN_CASES
    files = [word for word in words if word.startswith("tests/")]
    assert files and all((root / name).is_file() for name in files)
    assert f"at least {MIN_CASES:,} cases per game" in doc.replace("\n  ", " ")
