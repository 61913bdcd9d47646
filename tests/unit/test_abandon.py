"""A game that nobody plays any more ends as abandoned (domain/engine.py `abandon`): every game's fold,
its views and the offline verifier accept it, and the verifier refuses an abandonment that the engine
would not produce."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from domain import engine
from domain.errors import RuleViolation
from domain.verify import verify
from tests.unit.test_verify import GAME_IDS, ROOT, link, play, rechain, sha256_hex, small_options

SEED = "abandon-test"
AT = "2026-01-01T00:00:00.000Z"
REASON = "no action for 30 days"


def half_played(game_id: str) -> tuple[engine.Snapshot[Any], list[Any]]:
    """A game of `game_id` stopped after a dozen events, still running (as a record of format 1: no nonce,
    rules version 1)."""
    game = engine.get_game(game_id)
    config = engine.make_config(game_id, game.min_players, small_options(game.describe()), SEED, rules_version=1)
    snap, events = play(config, stop_after=12)
    assert not snap.finished
    return snap, events


def as_record(game_id: str, snap: engine.Snapshot[Any], events: list[Any]) -> dict[str, Any]:
    """The record of a finished game, chained from the seed's commitment."""
    records: list[dict[str, Any]] = []
    prev = sha256_hex(SEED)
    for seq, event in enumerate(events, start=1):
        record = {"seq": seq, "type": event.type_name(), "actor": event.actor, "data": event.data(), "at": AT}
        prev = link(record, prev)
        records.append(record)
    players = snap.config.players
    return {
        "format": "cardtable-record/1",
        "game": game_id,
        "options": dict(snap.config.options),
        "seats": [{"seat": s, "kind": "bot", "name": f"bot {s}", "level": "random"} for s in range(players)],
        "stacked": False,
        "seed_commitment": sha256_hex(SEED),
        "status": "finished",
        "version": len(records),
        "events": records,
        "seed": SEED,
        "decks": [],
    }


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_an_abandoned_game_has_ended_without_a_winner_and_its_seed_is_revealed(game_id: str) -> None:
    snap, _ = half_played(game_id)
    totals = list(snap.game.standing(snap.state)[1])
    ended, events = engine.abandon(snap, REASON)
    assert [e.type_name() for e in events] == ["GameAbandoned", "SeedRevealed"]
    assert events[0].data() == {"reason": REASON} and events[1].data()["seed"] == SEED
    assert ended.finished and ended.seed_revealed and ended.version == snap.version + 2
    for view in (engine.view(ended, None), engine.view(ended, 0), engine.full_view(ended)):
        assert view["status"] == "finished" and view["to_act"] == [] and view["actions"] == []
        assert view["result"] == {"totals": totals, "winners": [], "abandoned": True, "reason": REASON}
    assert engine.legal_actions(ended, 0) == []
    with pytest.raises(RuleViolation) as refused:
        engine.act(ended, snap.to_act()[0], engine.legal_actions(snap, snap.to_act()[0])[0])
    assert refused.value.code == "game_finished"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_fold_and_the_verifier_accept_an_abandoned_game(game_id: str) -> None:
    snap, events = half_played(game_id)
    ended, more = engine.abandon(snap, REASON)
    folded = engine.fold(snap.config, [*events, *more])
    assert folded.finished and folded.abandoned == REASON and folded.version == ended.version
    verdict = verify(as_record(game_id, ended, [*events, *more]))
    assert verdict.ok, verdict.detail
    assert verdict.result is not None and verdict.result["abandoned"] is True


def test_a_game_that_has_ended_cannot_be_abandoned() -> None:
    game = engine.get_game("golf")
    config = engine.make_config("golf", 2, small_options(game.describe()), SEED)
    snap, _ = play(config)
    assert snap.finished
    with pytest.raises(RuleViolation) as refused:
        engine.abandon(snap, REASON)
    assert refused.value.code == "game_finished" and refused.value.rule == game.end_rule


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_verifier_refuses_an_abandonment_in_the_middle_or_with_a_changed_reason(game_id: str) -> None:
    snap, events = half_played(game_id)
    ended, more = engine.abandon(snap, REASON)
    record = as_record(game_id, ended, [*events, *more])
    abandoned_at = len(events) + 1

    changed = json.loads(json.dumps(record))
    changed["events"][abandoned_at - 1]["data"]["reason"] = 30  # not a text
    rechain(changed["events"], record["seed_commitment"])
    verdict = verify(changed)
    assert not verdict.ok and verdict.first_bad_seq == abandoned_at, verdict.detail

    # an abandonment that the game's actions go on after: the seed's reveal is missing where it must be
    moved = json.loads(json.dumps(record))
    abandonment = moved["events"].pop(abandoned_at - 1)
    moved["events"].insert(abandoned_at - 3, abandonment)
    for seq, event in enumerate(moved["events"], start=1):
        event["seq"] = seq
    rechain(moved["events"], record["seed_commitment"])
    verdict = verify(moved)
    assert not verdict.ok and verdict.first_bad_seq == abandoned_at - 1, verdict.detail


def test_the_command_line_verifier_reads_a_gzipped_record(tmp_path: Path) -> None:
    snap, events = half_played("golf")
    ended, more = engine.abandon(snap, REASON)
    path = tmp_path / "game.json.gz"
    path.write_bytes(gzip.compress(json.dumps(as_record("golf", ended, [*events, *more])).encode()))
    done = subprocess.run(
        [sys.executable, "-m", "domain.verify", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("PASS"), done.stdout + done.stderr
    path.write_bytes(gzip.compress(b"{not json"))
    done = subprocess.run(
        [sys.executable, "-m", "domain.verify", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "cannot read" in done.stderr
