"""Meld validity against the conformance cases of an independent implementation (R-12, R-13, R-14).

/work/shared/conformance/romme-melds.json lists sets and runs (runs in the order they
are laid) with the expected verdict; every case must agree with our validity function,
with the meld action the API accepts, and with the enumeration of melds a hand can form.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from domain import romme_melds as rm
from domain.errors import RuleViolation
from tests.unit.romme_helpers import Table

CASES_FILE = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "romme-melds.json"


EMBEDDED: list[tuple[str, str, bool, str]] = [
    ("set", "QH QD QC", True, "test/rules.test.js:13-14"),
    ("set", "QH QH QC", True, "test/rules.test.js:19-20"),
    ("set", "AC AC AH", True, "test/rules.test.js:31-33"),
    ("set", "QH KD QC", False, "test/rules.test.js:37-38"),
    ("set", "QH QD JK", True, "test/rules.test.js:42-45"),
    ("run", "7H 8H 9H", True, "test/rules.test.js:49-51"),
    ("run", "7H 8D 9H", False, "test/rules.test.js:55-56"),
    ("run", "7H JK 9H", True, "test/rules.test.js:60-64"),
    ("run", "QH JK JK", True, "test/rules.test.js:81-84"),
    ("run", "7H 8H 9H 10H", True, "test/rules.test.js:93-96"),
    ("run", "7H 8H 9H 10D", False, "test/rules.test.js:100-102"),
    ("set", "QH QD QC QS", True, "test/rules.test.js:106-109"),
    ("set", "QH QD QC QH", True, "test/rules.test.js:113-116"),
    ("run", "KH AH 2H", True, "test/luck-and-ownership.test.js:35-37"),
    ("run", "QH KH AH 2H 3H", True, "test/luck-and-ownership.test.js:41-42"),
    ("run", "AH JK 3H", True, "test/luck-and-ownership.test.js:46-49"),
    ("run", "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH", True, "test/luck-and-ownership.test.js:53-54"),
    ("run", "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH JK", False, "test/luck-and-ownership.test.js:53,55"),
    ("run", "QH KH AH 2H", True, "test/luck-and-ownership.test.js:59-63"),
    ("run", "KH AH 2H 3H", True, "test/luck-and-ownership.test.js:59-64"),
    ("set", "7H 7D 7C", True, "test/game-manager.test.js:455-461"),
    ("run", "5H JK 7H", True, "test/game-manager.test.js:492-500"),
    ("set", "QH JK JK", True, "test/game-manager.test.js:527-539"),
    ("run", "JK 7H 8H 9H", True, "test/game-manager.test.js:595-600"),
    ("set", "7H 7D 7C 7S", True, "test/game-manager.test.js:753-765"),
    ("run", "QS KS JK", True, "test/game-manager.test.js:853-858"),
    ("set", "7S 7H 7D", True, "test/game-manager.test.js:953-954"),
    ("set", "7C 7S 7H", True, "test/game-manager.test.js:955-956"),
    ("run", "3H 4H 5H", True, "test/game-manager.test.js:962"),
    ("run", "8H 9H 10H", True, "test/game-manager.test.js:963"),
    ("set", "10S 10C 10H 10H 10D", True, "test/game-manager.test.js:1316-1325"),
    ("run", "8H 9H 10H JH QH", True, "test/game-manager.test.js:1332-1342"),
    ("set", "10S 10C 10D 10H 3C", False, "test/game-manager.test.js:1348-1360"),
    ("set", "5H 5S 5C", True, "test/game-manager.test.js:1562-1571"),
    ("set", "KC KH KS", True, "test/game-manager.test.js:1644"),
    ("set", "3C 3H 3S", True, "test/game-manager.test.js:1645"),
    ("run", "5D 6D 7D", True, "test/game-manager.test.js:1646"),
    ("run", "QD JK AD", True, "test/game-manager.test.js:2294-2300"),
    ("run", "QH KH JK", True, "test/game-manager.test.js:2456-2461"),
    ("run", "7D 8D 9D JK JD", True, "test/game-manager.test.js:2563-2574"),
    ("run", "7D 8D 9D 10D JD", True, "test/game-manager.test.js:2605-2609"),
    ("set", "9H 9H JK", True, "test/bot.test.js:120-125"),
    ("set", "AS JK JK", True, "test/bot.test.js:155-160"),
    ("set", "9H 9S 9D 9C", True, "test/bot.test.js:377-383"),
    ("run", "4H 5H 6H 7H 8H", True, "test/bot.test.js:397-403"),
]
"""A copy of the cases (kind, cards, valid, source), used when the shared file is not at hand (a checkout
without the project folder); when it is, the copy must equal it."""


def load_cases() -> list[dict[str, Any]]:
    if not CASES_FILE.is_file():
        return [{"kind": k, "cards": c.split(), "valid": v, "source": s} for k, c, v, s in EMBEDDED]
    cases: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]
    return cases


CASES = load_cases()


def case_id(case: dict[str, Any]) -> str:
    return f"{case['kind']}-{'-'.join(case['cards'])}-{'ok' if case['valid'] else 'bad'}"


def test_the_embedded_copy_is_the_case_list_in_use() -> None:
    """The cases run are the shared file's (CI has it beside the project); the copy must equal them."""
    assert [(c["kind"], " ".join(c["cards"]), c["valid"], c["source"]) for c in CASES] == EMBEDDED


def test_the_file_has_cases_of_both_kinds_and_verdicts() -> None:
    assert len(CASES) >= 40
    assert {(c["kind"], c["valid"]) for c in CASES} == {("set", True), ("set", False), ("run", True), ("run", False)}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_validity_agrees_with_the_independent_implementation(case: dict[str, Any]) -> None:
    problem = rm.meld_problem(case["kind"], case["cards"])
    assert (problem is None) == case["valid"], problem
    assert rm.is_valid_meld(case["kind"], case["cards"]) == case["valid"]
    if problem is not None:
        assert problem.rule in {"R-12", "R-13", "R-14"}
        assert problem.rule == ("R-12" if case["kind"] == "set" else "R-13")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_enumeration_finds_exactly_the_valid_cases(case: dict[str, Any]) -> None:
    """A hand of exactly these cards can form this meld (in this order) iff the case is valid."""
    cards = tuple(case["cards"])
    formed = set(rm.iter_melds(cards))
    wanted = (case["kind"], rm.sort_cards(cards) if case["kind"] == "set" else cards)
    normal = {(kind, rm.sort_cards(c) if kind == "set" else c) for kind, c in formed}
    assert (wanted in normal) == case["valid"]


@pytest.mark.parametrize("case", [c for c in CASES if c["valid"]], ids=case_id)
def test_valid_cases_say_what_each_joker_stands_for(case: dict[str, Any]) -> None:
    cards = case["cards"]
    stands = rm.represented(case["kind"], cards)
    assert len(stands) == len(cards)
    for card, meant in zip(cards, stands, strict=True):
        if card != "JK":
            assert meant == card
        elif case["kind"] == "set":
            assert meant == rm.set_rank(cards)
        else:
            assert meant != "JK" and meant[-1] == next(c for c in cards if c != "JK")[-1]


def test_a_few_joker_meanings_by_hand() -> None:
    assert rm.represented("run", ["JK", "7H", "8H", "9H"])[0] == "6H"
    assert rm.represented("run", ["QH", "JK", "JK"]) == ("QH", "KH", "AH")
    assert rm.represented("run", ["QD", "JK", "AD"])[1] == "KD"
    assert rm.represented("set", ["AS", "JK", "JK"]) == ("AS", "A", "A")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_meld_action_accepts_exactly_the_valid_cases(case: dict[str, Any]) -> None:
    """Through the rules engine: the first player holds the cards, draws, and lays them."""
    table = Table.dealt(2, {1: case["cards"]})
    table.draw(1)
    action = {"type": "meld", "kind": case["kind"], "cards": case["cards"]}
    if case["valid"]:
        table.act(1, action)
        assert table.melds(1)[0]["cards"] == case["cards"]
    else:
        error = table.refused(1, action, RuleViolation)
        assert error.code == "illegal_meld" and error.rule in {"R-12", "R-13"}
