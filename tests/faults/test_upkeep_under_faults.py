"""The fault suite (issue 28), pack, export and import: concurrent players play games to their end through
the HTTP API while the lifecycle sweep packs finished games (at once: compact_after_seconds=0) and the
archive exports them and imports each back once (to be exported again); at the end a seeded half of
the files is imported again. All through the fault proxy, which loses the replies of the scripts of
packing (`_WRITE_PACKED`, `_DROP_UNPACKED`), export (`_READ_GAME`, `_DELETE`) and import (`_RESTORE`)
after they ran, cuts them before Redis, delays them, and delays and cuts plain reads and appends. Then:
  - every acknowledged event is there exactly once: in the stream, the packed value or the exported
    file, wherever the game is, and nothing else was stored (no action applied twice);
  - a game reported exported is gone from Redis at once, and from Redis and its indexes after
    later sweeps, unless it is imported;
  - an imported game answers its record exactly as the file says;
  - every game's /audit passes, and domain.verify passes on every file;
  - every fault rule fired.
Seeded (the plan's random source, the players' choices, which files come back) and bounded (a fixed
number of games, each played to its end, and a fixed number of archive rounds after the last move).
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from domain.verify import verify
from service.storage.archive_store import _DELETE, _RESTORE
from service.storage.event_store import _APPEND
from service.storage.game_index import ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY
from service.storage.packed_games import unpack
from service.storage.packing import _DROP_UNPACKED, _WRITE_PACKED
from service.storage.scripts import _READ_GAME
from service.upkeep.archive import Archive
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.faults.conftest import Proxied, game_ids
from tests.faults.redis_proxy import Fault, FaultPlan, RedisProxy, Rule
from tests.faults.test_concurrent_players import Told, check_records_are_what_was_told, run_all, take_a_turn
from tests.service.helpers import stream_entries
from tests.service.storage_races import events_in_file, read_file

pytestmark = pytest.mark.integration

GAMES = 6
ROUNDS_AFTER_PLAY = 2  # archive rounds once every game has ended: each exports what the last one imported
MOVES_PER_PLAYER = 400  # a bound: a game of Golf (2 rounds) ends long before (about 30 moves a seat)
# Looks at the game while the other seat plays are bounded apart from moves: how many a move takes depends
# on how the threads share the CPU (alone up to 8; under a loaded machine more).
LOOKS_PER_MOVE = 50
WAIT_SECONDS = 0.002  # between two looks while the other seat plays
PAUSE_SECONDS = 0.01  # between sweeps, so that the players get their turns
TWO_PEOPLE = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}], "options": {"rounds": 2}}


def once(fault: Fault, script: str) -> Rule:
    """The first run of `script` gets `fault` (a resend of the same command passes)."""
    return Rule("EVALSHA", fault, script=script, limit=1)


RULES = [
    once(Fault.REPLY_LOST, _WRITE_PACKED),
    once(Fault.NOT_SENT, _WRITE_PACKED),
    once(Fault.REPLY_LOST, _DROP_UNPACKED),
    once(Fault.NOT_SENT, _DROP_UNPACKED),
    once(Fault.REPLY_LOST, _DELETE),
    once(Fault.NOT_SENT, _DELETE),
    once(Fault.REPLY_LOST, _RESTORE),
    once(Fault.NOT_SENT, _RESTORE),
    Rule("EVALSHA", Fault.REPLY_LOST, script=_READ_GAME, limit=3),
    # a game's reads are the same command each time: a delay may hit one read of it again
    Rule("EVALSHA", Fault.DELAY, script=_READ_GAME, probability=0.3, delay_seconds=0.005, resends=True),
    Rule("EVALSHA", Fault.DELAY, script=_WRITE_PACKED, delay_seconds=0.005),
    Rule("EVALSHA", Fault.DELAY, script=_DELETE, delay_seconds=0.005),
    Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, probability=0.05),
    Rule("GET", Fault.NOT_SENT, limit=2),  # the first two reads of a packed value (few games are read packed)
    Rule("GET", Fault.DELAY, probability=0.5, delay_seconds=0.002, resends=True),
    Rule("XRANGE", Fault.NOT_SENT, probability=0.02),
    Rule("XRANGE", Fault.DELAY, probability=0.05, delay_seconds=0.002),
]
EXPORTED = "exported"
MAY_BE_KEPT = {"kept: still running", "kept: it changed while it was exported (export again)"}


@dataclasses.dataclass
class Upkeep:
    """What the sweep and the archive did: per game, the archive's steps in order."""

    steps: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    surprises: list[str] = dataclasses.field(default_factory=list)
    players_done: threading.Event = dataclasses.field(default_factory=threading.Event)
    archive_done: threading.Event = dataclasses.field(default_factory=threading.Event)
    passes: int = 0  # sweep passes so far
    swept_before: float = 0.0  # when the last whole pass began: games that ended before were up for packing
    swept: threading.Condition = dataclasses.field(default_factory=threading.Condition)

    def after_next_pass(self) -> datetime:
        """Wait until the sweep has made one more whole pass; when it began."""
        with self.swept:
            seen = self.passes
            self.swept.wait_for(lambda: self.passes > seen + 1, timeout=30)
            return datetime.fromtimestamp(self.swept_before, UTC)

    def last(self, game_id: str) -> str | None:
        return self.steps.get(game_id, [None])[-1]


def play_to_end(proxied: Proxied, told: Told, game_id: str, token: str, player: int) -> None:
    """One seat's client: sends one of its legal actions whenever it has some, until the game has ended
    (or is gone: exported); see take_a_turn."""
    client = proxied.app.test_client()
    choices = random.Random(player)
    sent = 0
    for _ in range(LOOKS_PER_MOVE * MOVES_PER_PLAYER):
        outcome = take_a_turn(client, told, game_id, token, player, sent, choices, gone=True)
        if outcome is None:
            return
        if outcome:
            sent += 1
            if sent == MOVES_PER_PLAYER:
                break
        else:  # the other seat's turn
            time.sleep(WAIT_SECONDS)
    told.surprises.append(f"game {game_id}: player {player} did not see its end")


def sweep(lifecycle: Lifecycle, upkeep: Upkeep) -> None:
    """The lifecycle sweep, pass after pass, until the archive is done."""
    while not upkeep.archive_done.is_set():
        began = lifecycle.now()
        lifecycle.run_once()
        with upkeep.swept:
            upkeep.passes += 1
            upkeep.swept_before = began
            upkeep.swept.notify_all()
        time.sleep(PAUSE_SECONDS)


def archive_rounds(proxied: Proxied, archive: Archive, folder: Path, upkeep: Upkeep, upstream: redis.Redis) -> None:
    """Archive rounds, each after a whole sweep pass and of the games that ended before it began (so that
    most are packed first), until ROUNDS_AFTER_PLAY rounds after the players are done."""
    try:
        after_play = 0
        while after_play < ROUNDS_AFTER_PLAY:
            if upkeep.players_done.is_set():
                after_play += 1
            archive_round(proxied, archive, folder, upkeep, upstream, upkeep.after_next_pass())
    finally:
        upkeep.archive_done.set()


def archive_round(
    proxied: Proxied, archive: Archive, folder: Path, upkeep: Upkeep, upstream: redis.Redis, before: datetime
) -> None:
    """Export every game that ended `before`; import each one back the first time it was exported."""
    outcomes = archive.export(before, folder)
    for game_id, outcome in sorted(outcomes.items()):
        upkeep.steps.setdefault(game_id, []).append(outcome)
        if outcome != EXPORTED:
            if outcome not in MAY_BE_KEPT:
                upkeep.surprises.append(f"export {game_id}: {outcome}")
            continue
        # its keys at once; its index entries too after the later sweeps: the sweep's index walk, if it
        # read the game just before the delete, may note it again, and its next pass forgets it
        check_gone(upstream, game_id, upkeep, "just after its export", indexes=False)
        if upkeep.steps[game_id].count(EXPORTED) == 1:
            import_back(proxied, archive, folder, game_id, upkeep)


def import_back(proxied: Proxied, archive: Archive, folder: Path, game_id: str, upkeep: Upkeep) -> None:
    """Import the game's file; it must come back, and answer its record exactly as the file."""
    path = folder / f"{game_id}.json.gz"
    found, outcome = archive.import_file(path)
    upkeep.steps[game_id].append(outcome)
    if (found, outcome) != (game_id, "imported"):
        upkeep.surprises.append(f"import {game_id}: {found} {outcome}")
        return
    record = proxied.app.test_client().get(f"/v1/games/{game_id}/record")
    if record.status_code != 200 or record.get_json() != record_in(path):
        upkeep.surprises.append(f"import {game_id}: its record is not the file's ({record.status_code})")


def record_in(path: Path) -> dict[str, Any]:
    """The game's public record in an archive file (the file without its private part)."""
    document = read_file(path)
    document.pop("private")
    return document


def check_gone(upstream: redis.Redis, game_id: str, upkeep: Upkeep, when: str, indexes: bool = True) -> None:
    """The game has no key left in Redis and (with `indexes`) is in none of the indexes."""
    keys = sorted(upstream.scan_iter(match=f"game:{{{game_id}}}:*"))
    indexed = [key for key in (ACTIVE_KEY, FINISHED_KEY, UNPACKED_KEY) if upstream.zscore(key, game_id) is not None]
    indexed = indexed if indexes else []
    if keys or indexed:
        upkeep.surprises.append(f"game {game_id} was exported but is back {when}: {keys} {indexed}")


def stored_records(
    upstream: redis.Redis, raw: redis.Redis, game_id: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The game's records in its stream, and in its packed value (each empty when there is none)."""
    stream = [json.loads(fields["e"]) for _, fields in stream_entries(upstream, game_id)]
    value = raw.get(f"game:{{{game_id}}}:packed")
    packed = [json.loads(text) for _, text in unpack(value).entries] if isinstance(value, bytes) else []
    return stream, packed


@pytest.mark.parametrize("seed", [28, 1028])
def test_players_packing_export_and_import_under_faults_lose_double_and_resurrect_nothing(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, redis_port: int, tmp_path: Path, seed: int
) -> None:
    service = proxied.app.extensions["games"]
    store = proxied.app.extensions["storage"]
    lifecycle = Lifecycle(service, store, LifecycleSettings(compact_after_seconds=0))
    archive = Archive(proxied.app.extensions["history"], store)
    told, upkeep = Told(), Upkeep()
    for _ in range(GAMES):
        told.created.append(proxied.create(TWO_PEOPLE))
    plan = proxy.plan = FaultPlan(seed, RULES)
    players = [(game["id"], seat["token"]) for game in told.created for seat in game["seats"]]
    seats = list(enumerate(players))

    def play_all() -> None:
        try:
            run_all([lambda g=g, t=t, n=n: play_to_end(proxied, told, g, t, seed + n) for n, (g, t) in seats])
        finally:
            upkeep.players_done.set()

    upkeeping: list[Callable[[], None]] = [
        play_all,
        lambda: sweep(lifecycle, upkeep),
        lambda: archive_rounds(proxied, archive, tmp_path, upkeep, upstream),
    ]
    run_all(upkeeping)
    chooser = random.Random(seed)
    for game_id in sorted(told_ids(told)):  # a seeded half of the games gone comes back once more
        if upkeep.last(game_id) == EXPORTED and chooser.random() < 0.5:
            import_back(proxied, archive, tmp_path, game_id, upkeep)
    for _ in range(2):  # later sweeps bring nothing back
        lifecycle.run_once()
    proxy.plan = FaultPlan(seed)  # the checks read without faults

    assert not told.surprises, told.surprises
    assert not upkeep.surprises, upkeep.surprises
    for rule in RULES:
        assert plan.used(rule), f"the plan never injected {rule}"
    raw = redis.Redis(port=redis_port)  # bytes: a packed value is not text
    for game in told.created:
        game_id, path = game["id"], tmp_path / f"{game['id']}.json.gz"
        answers = told.answers.get(game_id, [])
        stream, packed = stored_records(upstream, raw, game_id)
        if upkeep.last(game_id) == EXPORTED:
            check_gone(upstream, game_id, upkeep, "after the later sweeps")
            check_records_are_what_was_told(events_in_file(path), game, answers)
            assert verify(record_in(path)).ok, f"the file of {game_id} does not verify"
            continue
        assert EXPORTED in upkeep.steps.get(game_id, []), f"game {game_id} ended but was never exported: {upkeep.steps}"
        assert not stream and packed, f"game {game_id} is not packed (stream: {len(stream)})"
        check_records_are_what_was_told(packed, game, answers)
        assert proxied.client.get(f"/v1/games/{game_id}/record").get_json() == record_in(path)
        audit = proxied.client.get(f"/v1/games/{game_id}/audit").get_json()
        assert audit["chain_ok"] and audit["replay_ok"] and audit["first_bad_seq"] is None, audit
    assert not upkeep.surprises, upkeep.surprises
    assert game_ids(upstream) == {game_id for game_id in told_ids(told) if upkeep.last(game_id) != EXPORTED}


def told_ids(told: Told) -> set[str]:
    return {game["id"] for game in told.created}
