"""Check a game record from scratch: `python -m domain.verify RECORD.json`.

No Redis, no network. The checks, in order: the hash chain; that the revealed
seed matches its commitment; then a re-run of the whole game: every round
re-dealt from the seed (or the stacked decks), every action re-decided by the
rules, every system step (deals, scores, the result) recomputed, and each
compared with what the record says. A record of a running game carries no
seed: it is checked as far as that allows, and the verdict says so.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.chain import event_hash
from domain.errors import DomainError
from domain.events import SYSTEM, Event
from domain.shuffle import commitment

RECORD_FORMAT = "cardtable-record/1"
Record = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of every check; `first_bad_seq` names the first event that fails one."""

    chain_ok: bool
    replay_ok: bool | None
    first_bad_seq: int | None
    detail: str
    complete: bool = True
    result: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True only when every check ran and passed."""
        return self.chain_ok and bool(self.replay_ok) and self.complete

    def as_dict(self) -> dict[str, Any]:
        """JSON form (the audit endpoint's body)."""
        return {
            "chain_ok": self.chain_ok,
            "replay_ok": self.replay_ok,
            "first_bad_seq": self.first_bad_seq,
            "complete": self.complete,
            "detail": self.detail,
        }


class Mismatch(Exception):
    """The record departs from the rules at `seq`."""

    def __init__(self, seq: int, detail: str) -> None:
        super().__init__(detail)
        self.seq = seq
        self.detail = detail


def check_chain(events: Sequence[Record], seed_commitment: str) -> tuple[int | None, str]:
    """(first bad seq, why) of the hash chain; (None, "") when it holds."""
    prev = seed_commitment
    for index, record in enumerate(events):
        seq = index + 1
        if record.get("seq") != seq:
            return seq, f"event {seq} is missing or out of place (found seq {record.get('seq')!r})"
        if record.get("prev_hash") != prev:
            return seq, f"event {seq} does not link to the event before it (prev_hash)"
        if record.get("hash") != event_hash(prev, dict(record)):
            return seq, f"event {seq} was changed after it was written (hash)"
        prev = str(record["hash"])
    return None, ""


def config_of(record: Record, seed: str) -> engine.GameConfig:
    """The game's config as the record states it."""
    decks = tuple(tuple(deck) for deck in record.get("decks") or ())
    return engine.make_config(record["game"], len(record["seats"]), record["options"], seed, decks)


def replay(config: engine.GameConfig, events: Sequence[Record]) -> engine.Snapshot[Any]:
    """Re-run the game from scratch against the recorded events; Mismatch at the first departure."""
    snap, produced = engine.start(config)
    _compare(produced, events, 0)
    cursor = len(produced)
    while cursor < len(events):
        event = _acting_event(snap, events, cursor)
        action = event.to_action()
        if action is None or event.actor == SYSTEM:
            raise Mismatch(events[cursor]["seq"], f"{event.type_name()} is no player's action")
        try:
            snap, produced = engine.act(snap, int(event.actor), action)
        except DomainError as error:
            rule = f" ({error.rule})" if error.rule else ""
            raise Mismatch(events[cursor]["seq"], f"the rules refuse this action: {error.detail}{rule}") from error
        _compare(produced, events, cursor)
        cursor += len(produced)
    return snap


def _acting_event(snap: engine.Snapshot[Any], events: Sequence[Record], cursor: int) -> Event:
    """The first event at or after `cursor` that a seat caused: it names the action."""
    for record in events[cursor:]:
        if record.get("actor") != SYSTEM:
            try:
                return snap.game.catalog.build(record["type"], record["actor"], record["data"])
            except (KeyError, TypeError, ValueError) as error:
                raise Mismatch(record["seq"], f"not a {snap.game.id} event: {error}") from error
    raise Mismatch(events[cursor]["seq"], "system events that no action or rule produced")


def _compare(produced: Sequence[Event], events: Sequence[Record], cursor: int) -> None:
    for offset, event in enumerate(produced):
        position = cursor + offset
        if position >= len(events):
            if event.type_name() == "SeedRevealed":
                return  # a running game's record ends before the reveal
            raise Mismatch(position + 1, f"the record ends where the rules produce {event.type_name()}")
        record = events[position]
        expected = {"type": event.type_name(), "actor": event.actor, "data": event.data()}
        found = {"type": record.get("type"), "actor": record.get("actor"), "data": record.get("data")}
        if expected != found:
            raise Mismatch(record["seq"], f"the rules give {_brief(expected)}, the record says {_brief(found)}")


def _brief(event: Mapping[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, separators=(",", ":"))[:300]


def verify(record: Record, seed: str | None = None) -> Verdict:
    """Every check on a record; `seed` may be given by an auditor who holds it."""
    events: Sequence[Record] = record.get("events") or []
    first_bad, why = check_chain(events, record.get("seed_commitment", ""))
    seed = seed if seed is not None else record.get("seed")
    if seed is None:
        detail = why or "hash chain intact; the game is still running, so its seed is secret and the deal and "
        detail += "" if why else "the actions cannot be re-checked yet"
        return Verdict(first_bad is None, None, first_bad, detail, complete=False)
    if commitment(seed) != record.get("seed_commitment"):
        seq = next((e["seq"] for e in events if e.get("type") == "SeedRevealed"), len(events))
        return Verdict(first_bad is None, False, min(seq, first_bad or seq), "the seed does not match its commitment")
    try:
        snap = replay(config_of(record, seed), events)
    except Mismatch as error:
        seq = error.seq if first_bad is None else min(first_bad, error.seq)
        return Verdict(first_bad is None, False, seq, why or error.detail)
    except DomainError as error:
        return Verdict(first_bad is None, False, 1, f"the record's setup is refused: {error.detail}")
    if first_bad is not None:
        return Verdict(False, True, first_bad, why)
    result = engine.view(snap, None).get("result")
    state = "finished" if snap.finished else "running; re-checked with the seed up to its last event"
    return Verdict(True, True, None, f"every check passed ({len(events)} events, game {state})", True, result)


def main(argv: Sequence[str]) -> int:
    """CLI: print the verdict; exit 0 only for a record that passes every check."""
    if len(argv) != 1:
        print("usage: python -m domain.verify RECORD.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"cannot read the record: {error}", file=sys.stderr)
        return 2
    verdict = verify(record)
    print(json.dumps(verdict.as_dict(), indent=2))
    print("PASS" if verdict.ok else ("INCOMPLETE" if verdict.chain_ok and not verdict.complete else "FAIL"))
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
