"""The record corpus (tests/records/): finished records made by every version of the code must
verify forever, with the rules they were played under. The corpus only grows: SHA256SUMS pins
every file, so a record that is changed or removed fails here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from domain.verify import main

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


def test_the_old_format_corpus_covers_every_game_and_kind() -> None:
    """Format 1 (before the nonce): each game seeded by its creator, by the server, stacked (C-5),
    with moves the system played on a turn timeout, and with a person's own moves."""
    old = [load(path) for path in RECORDS if path.parent.name == "cardtable-record-1"]
    for game in GAMES:
        records = [r for r in old if r["game"] == game]
        assert all(r["format"] == "cardtable-record/1" and "nonce" not in r for r in records)
        assert {r["seed_source"] for r in records} == {"creator", "server"}, game
        assert any(r["stacked"] and r["decks"] for r in records), game
        assert any(e.get("reason") == "turn_timeout" for r in records for e in r["events"]), game
        assert any(played_by_a_person(r) for r in records), game


def played_by_a_person(record: dict[str, Any]) -> bool:
    """Some event of the record is a move a person made themselves."""
    people = {seat["seat"] for seat in record["seats"] if seat["kind"] == "human"}
    return any(event["actor"] in people for event in record["events"])
