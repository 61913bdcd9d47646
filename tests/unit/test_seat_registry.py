"""What plays a seat is looked up in one registry (service/play/seats.py): nothing else in the service or
the workers asks what kind a seat is."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "service" / "play" / "seats.py"
KIND_TEST = re.compile(r"""(==|!=)\s*["'](human|bot)["']|["'](human|bot)["']\s*(==|!=)""")


def kind_tests() -> list[str]:
    """Every line of service/ and workers/ (outside the registry) that compares a value with a seat kind."""
    found = []
    for path in sorted([*ROOT.joinpath("service").rglob("*.py"), *ROOT.joinpath("workers").rglob("*.py")]):
        if path == REGISTRY:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if KIND_TEST.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_seat_kind_is_compared_outside_the_seat_registry() -> None:
    assert REGISTRY.exists()
    assert kind_tests() == []


def test_the_check_finds_a_kind_test() -> None:
    """The pattern above catches the comparisons it is there to forbid."""
    assert KIND_TEST.search('if seat.kind == "bot":') and KIND_TEST.search("'human' != kind")
    assert not KIND_TEST.search('SEAT_KINDS = ("human", "bot")')
