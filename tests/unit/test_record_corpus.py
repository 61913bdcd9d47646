"""The record corpus (tests/records/): finished records made by every version of the code must
verify forever, with the rules they were played under. The corpus only grows: SHA256SUMS pins
every file, so a record that is changed or removed fails here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from domain.chain import event_hash
from domain.verify import RECORD_FORMAT, main, verify

CORPUS = Path(__file__).resolve().parent.parent / "records"
RECORDS = sorted(CORPUS.glob("*/*.json"))
GAMES = ("golf", "romme", "switch", "go5")


def pinned() -> dict[str, str]:
    """SHA256SUMS: file (relative to the corpus) -> its SHA-256."""
    lines = (CORPUS / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {name.strip(): digest for digest, name in (line.split(maxsplit=1) for line in lines if line.strip())}


def load(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


@pytest.mark.parametrize("path", RECORDS, ids=[f"{p.parent.name}/{p.name}" for p in RECORDS])
def test_every_record_of_the_corpus_passes_the_offline_verifier(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m domain.verify RECORD` exits 0 with the verdict PASS for every record in the corpus."""
    code = main([str(path)])
    out = capsys.readouterr().out
    assert (code, out.splitlines()[-1]) == (0, "PASS"), out


def test_the_corpus_only_grows_every_record_is_pinned_and_unchanged() -> None:
    """Every record is in SHA256SUMS with its digest, and every pinned record is still there."""
    files = {str(path.relative_to(CORPUS)): hashlib.sha256(path.read_bytes()).hexdigest() for path in RECORDS}
    assert files == pinned()


@pytest.mark.parametrize("folder", ["cardtable-record-1", "cardtable-record-2"])
def test_the_corpus_covers_every_game_and_kind_in_each_format(folder: str) -> None:
    """Each game seeded by its creator, by the server, stacked (C-5), with moves the system played on a
    turn timeout, and with a person's own moves; format 1 without a nonce, format 2 revealing one."""
    records = [load(path) for path in RECORDS if path.parent.name == folder]
    fmt = folder.replace("-record-", "-record/")
    for game in GAMES:
        mine = [r for r in records if r["game"] == game]
        assert all(r["format"] == fmt and ("nonce" in r) is (fmt == RECORD_FORMAT) for r in mine), game
        assert {r["seed_source"] for r in mine} == {"creator", "server"}, game
        assert any(r["stacked"] and r["decks"] for r in mine), game
        assert any(e.get("reason") == "turn_timeout" for r in mine for e in r["events"]), game
        assert any(played_by_a_person(r) for r in mine), game


def test_the_same_switch_hand_keeps_the_s9_reading_of_the_rules_it_was_played_under() -> None:
    """S-9: seats 1 to 3 go out on 2H, 2D and a joker, leaving seat 0 alone under a draw of 9. Made in
    rules version 1, seat 0 scores its 7 cards (70); in version 2 it first takes the 9 cards. Both verify."""
    old, new = (
        load(CORPUS / folder / "switch-one-left.json") for folder in ("cardtable-record-1", "cardtable-record-2")
    )
    assert "rules_version" not in old and new["rules_version"] == 2
    scored = [next(e for e in r["events"] if e["type"] == "RoundScored")["data"] for r in (old, new)]
    assert scored[0]["scores"] == [70, 0, 0, 0] and scored[0]["reason"] == scored[1]["reason"] == "one_left"
    drew = [e["data"] for e in new["events"] if e["type"] == "LastHolderDrew"]
    assert drew == [{"seat": 0, "pending": 9, "count": 9}] and scored[1]["scores"][0] > 70


def played_by_a_person(record: dict[str, Any]) -> bool:
    """Some event of the record is a move a person made themselves."""
    people = {seat["seat"] for seat in record["seats"] if seat["kind"] == "human"}
    return any(event["actor"] in people for event in record["events"])


def doc_examples() -> list[tuple[str, list[str]]]:
    """Each `$ .venv/bin/python -m domain.verify PATH` in docs/fairness-and-audit.md with the lines it shows."""
    doc = (CORPUS.parent.parent / "docs" / "fairness-and-audit.md").read_text(encoding="utf-8")
    examples: list[tuple[str, list[str]]] = []
    shown: list[str] | None = None
    for line in doc.splitlines():
        if line.startswith("$ .venv/bin/python -m domain.verify "):
            shown = []
            examples.append((line.split()[-1], shown))
        elif line.startswith(("```", "$")):
            shown = None
        elif shown is not None:
            shown.append(line)
    return examples


def test_the_fairness_docs_show_what_the_verifier_says(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/fairness-and-audit.md: each verifier run it shows prints exactly what the doc says."""
    examples = doc_examples()
    assert len(examples) == 2
    root = CORPUS.parent.parent
    for path, shown in examples:
        assert main([str(root / path)]) == 0
        assert capsys.readouterr().out.splitlines() == shown


def test_a_record_is_replayed_under_its_own_rules_version() -> None:
    """V-9: in the Go5 record where a joker is laid off onto a first set (allowed from rules version 2),
    the verifier passes it as version 2; relabelled as version 1 (chain redone) it fails at that lay-off."""
    record = load(CORPUS / "cardtable-record-2" / "go5-joker-in-first-set.json")
    assert verify(record).ok
    lay_off = next(e for e in record["events"] if e["type"] == "CardLaidOff" and e["data"]["card"] == "joker")
    record["rules_version"] = record["events"][0]["data"]["rules_version"] = 1
    prev = record["seed_commitment"]
    for event in record["events"]:
        event["prev_hash"] = prev
        event["hash"] = prev = event_hash(prev, event)
    verdict = verify(record)
    assert verdict.chain_ok and verdict.first_bad_seq == lay_off["seq"] and "(V-9)" in verdict.detail, verdict
