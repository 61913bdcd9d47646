"""Check a game record from scratch: `python -m domain.verify RECORD.json` (or a gzipped `.json.gz`).

No Redis, no network. The checks, in order: the hash chain; that the revealed
seed and nonce match their commitment (C-4); then a re-run of the whole game
under the rules version it was played under: every round re-dealt from the
seed (or the stacked decks), every action re-decided by the rules, every
system step (deals, scores, the result) recomputed, and each compared with
what the record says. A record of a running game carries no seed: it is
checked as far as that allows, and the verdict says so.

Record formats: `cardtable-record/2` states `rules_version` and, once the game
has ended, reveals the `nonce`; `cardtable-record/1` (made before the nonce)
has neither: its commitment is the seed's own hash and its rules version is 1.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from domain import engine
from domain.chain import canonical_json, event_hash, record_actor
from domain.errors import DomainError
from domain.events import SYSTEM, Event
from domain.shuffle import commitment

RECORD_FORMAT = "cardtable-record/2"
FIRST_RECORD_FORMAT = "cardtable-record/1"
"""Records made before the nonce and versioned rules: still verified, with rules version 1."""
RECORD_FORMATS = (FIRST_RECORD_FORMAT, RECORD_FORMAT)
MATCH_FORMAT = "cardtable-match/1"  # a match's record (domain/verify_match.py)
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


def check_chain(events: Sequence[Any], seed_commitment: str) -> tuple[int | None, str]:
    """(first bad seq, why) of the hash chain; (None, "") when it holds."""
    prev = seed_commitment
    for index, record in enumerate(events):
        seq = index + 1
        if not isinstance(record, Mapping):
            return seq, f"event {seq} is not an event record"
        if record.get("seq") != seq:
            return seq, f"event {seq} is missing or out of place (found seq {record.get('seq')!r})"
        if record.get("prev_hash") != prev:
            return seq, f"event {seq} does not link to the event before it (prev_hash)"
        if record.get("hash") != event_hash(prev, dict(record)):
            return seq, f"event {seq} was changed after it was written (hash)"
        prev = str(record["hash"])
    return None, ""


def config_of(record: Record, seed: str, nonce: str | None) -> engine.GameConfig:
    """The game's config as the record states it (no `rules_version`: version 1)."""
    decks = tuple(tuple(deck) for deck in record.get("decks") or ())
    version = record.get("rules_version", 1)
    players, options = len(record["seats"]), record["options"]
    return engine.make_config(record["game"], players, options, seed, decks, nonce=nonce, rules_version=version)


def replay(config: engine.GameConfig, events: Sequence[Any]) -> engine.Snapshot[Any]:
    """Re-run the game from scratch against the recorded events; Mismatch at the first departure.

    An event's seq is its place in the record (check_chain insists that the two agree), so an
    event inserted, dropped or moved is named where it sits, whatever seq it claims.
    """
    snap, produced = engine.start(config)
    _compare(produced, events, 0)
    cursor = len(produced)
    while cursor < len(events):
        if _is_abandonment(events[cursor]):
            snap, produced = _abandon(snap, events[cursor], cursor + 1)
            _compare(produced, events, cursor)
            cursor += len(produced)
            continue
        index, event = _acting_event(snap, events, cursor)
        try:
            action = event.to_action()
            if action is None or event.actor == SYSTEM:
                raise Mismatch(index + 1, f"event {index + 1}: {event.type_name()} is no player's action")
            snap, produced = engine.act(snap, _seat(event.actor), action)
        except DomainError as error:
            rule = f" ({error.rule})" if error.rule else ""
            raise Mismatch(
                index + 1, f"event {index + 1}: the rules refuse this action: {error.detail}{rule}"
            ) from error
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            raise Mismatch(index + 1, f"event {index + 1}: not a valid {snap.game.id} action: {error}") from error
        _compare(produced, events, cursor)
        cursor += len(produced)
    return snap


def _is_abandonment(record: Any) -> bool:
    return isinstance(record, Mapping) and record.get("type") == engine.GameAbandoned.type_name()


def _abandon(
    snap: engine.Snapshot[Any], record: Mapping[str, Any], seq: int
) -> tuple[engine.Snapshot[Any], list[Event]]:
    """The game abandoned as event `seq` says, by the engine's rule for it (a running game only)."""
    try:
        event = snap.game.catalog.build(record["type"], SYSTEM, record["data"])
        assert isinstance(event, engine.GameAbandoned)
        if not isinstance(event.reason, str):
            raise ValueError(f"reason {event.reason!r} is no text")
        return engine.abandon(snap, event.reason)
    except DomainError as error:
        rule = f" ({error.rule})" if error.rule else ""
        raise Mismatch(seq, f"event {seq}: the rules refuse this abandonment: {error.detail}{rule}") from error
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise Mismatch(seq, f"event {seq}: not a valid abandonment: {error}") from error


def _seat(actor: Any) -> int:
    if isinstance(actor, bool) or not isinstance(actor, int):
        raise ValueError(f"actor {actor!r} is no seat")
    return actor


def _acting_event(snap: engine.Snapshot[Any], events: Sequence[Any], cursor: int) -> tuple[int, Event]:
    """The first event at or after `cursor` that a seat caused, with its index: it names the action."""
    for index in range(cursor, len(events)):
        record = events[index]
        if not isinstance(record, Mapping):
            raise Mismatch(index + 1, f"event {index + 1} is not an event record")
        if record.get("actor") != SYSTEM or "seat" in record:  # a seat's action, perhaps played by the system
            try:
                return index, snap.game.catalog.build(record["type"], record_actor(record), record["data"])
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise Mismatch(index + 1, f"event {index + 1}: not a {snap.game.id} event: {error}") from error
    raise Mismatch(cursor + 1, f"event {cursor + 1}: system events that no action or rule produced")


def _compare(produced: Sequence[Event], events: Sequence[Any], cursor: int) -> None:
    for offset, event in enumerate(produced):
        position = cursor + offset
        seq = position + 1
        if position >= len(events):
            if event.type_name() == "SeedRevealed":
                return  # a running game's record ends before the reveal
            raise Mismatch(seq, f"event {seq} is missing: the rules produce {event.type_name()} here")
        record = events[position]
        if not isinstance(record, Mapping):
            raise Mismatch(seq, f"event {seq} is not an event record")
        misfit = _stand_in_misfit(record)
        if misfit:
            raise Mismatch(seq, f"event {seq}: {misfit}")
        expected = {"type": event.type_name(), "actor": event.actor, "data": event.data()}
        actor = record["seat"] if "seat" in record else record.get("actor")  # the seat whose action it is
        found = {"type": record.get("type"), "actor": actor, "data": record.get("data")}
        if canonical_json(expected) != canonical_json(found):  # JSON, not Python, equality: 1 is not true
            raise Mismatch(seq, f"event {seq}: the rules give {_brief(expected)}, the record says {_brief(found)}")


def _stand_in_misfit(record: Mapping[str, Any]) -> str | None:
    """Why a record's `seat` and `reason` (the system played that seat's action) do not fit; None if they do."""
    if "seat" not in record and "reason" not in record:
        return None
    seat, reason = record.get("seat"), record.get("reason")
    if record.get("actor") != SYSTEM or isinstance(seat, bool) or not isinstance(seat, int):
        return 'a seat\'s action played by the system has actor "system" and the seat in `seat`'
    if not isinstance(reason, str) or not reason:
        return "a seat's action played by the system says why in `reason`"
    return None


def _brief(event: Mapping[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, separators=(",", ":"))[:300]


def verify(record: Record, seed: str | None = None, redact: bool = False, nonce: str | None = None) -> Verdict:
    """Every check on a record; `seed` and `nonce` may be given by an auditor who holds them.

    `redact`: an auditor holding the seed of a running game says where the record departs from
    the rules but not what the rules would have given (that could show hidden cards).

    `complete` is True only when the seed is known and the events run to the game's end (the
    seed's reveal), so that the deal, every action, the scores and the result were re-checked.
    """
    raw_events = record.get("events")
    events: Sequence[Any] = raw_events if isinstance(raw_events, list) else []
    commitment_claimed = record.get("seed_commitment")
    first_bad, why = check_chain(events, commitment_claimed if isinstance(commitment_claimed, str) else "")
    chain_ok = first_bad is None
    failures: list[tuple[int, str]] = [] if first_bad is None else [(first_bad, why)]
    claims = _claims(record, events)
    failures += claims
    if seed is None:
        seed, nonce = record.get("seed"), record.get("nonce")
    if seed is None:
        misfits = _fits_header(record, events)
        if failures or misfits:
            replay_ok = False if misfits or claims else None
            return _failed(chain_ok, failures + misfits, complete=False, replay_ok=replay_ok)
        detail = "hash chain intact and the events fit the game; the game is still running, so its seed is "
        detail += "secret and the deal and the actions cannot be re-checked yet"
        return Verdict(True, None, None, detail, complete=False)
    reveal = next(
        (i + 1 for i, e in enumerate(events) if isinstance(e, Mapping) and e.get("type") == "SeedRevealed"), None
    )
    if not _opens(commitment_claimed, seed, nonce):
        where = f"event {reveal}: " if reveal else ""
        failures.append((reveal or 0, f"{where}the seed does not match its commitment"))
        return _failed(chain_ok, failures, complete=reveal is not None)
    try:
        snap = replay(config_of(record, seed, nonce), events)
    except Mismatch as error:
        detail = f"event {error.seq} departs from what the rules give" if redact else error.detail
        return _failed(chain_ok, [*failures, (error.seq, detail)], complete=reveal is not None)
    except DomainError as error:
        return _failed(chain_ok, [*failures, (1, f"event 1: the record's setup is refused: {error.detail}")], True)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return _failed(chain_ok, [*failures, (1, f"event 1: the record's game, seats or options: {error}")], True)
    status = "finished" if snap.seed_revealed else "active"
    claimed = record.get("status", status)
    if claimed == "finished" and status != "finished":
        seq = len(events) + 1
        failures.append((seq, f"event {seq} is missing: the record says the game finished, its events do not"))
    elif claimed != status:
        failures.append((0, f"the record says the game is {claimed!r}, its events say {status}"))
    if failures:
        return _failed(chain_ok, failures, complete=snap.seed_revealed)
    if not snap.seed_revealed:
        detail = f"every check passed so far ({len(events)} events); the game is still running, so it is not complete"
        return Verdict(True, True, None, detail, complete=False)
    result = engine.view(snap, None).get("result")
    return Verdict(True, True, None, f"every check passed ({len(events)} events, game finished)", True, result)


def _opens(claimed: Any, seed: Any, nonce: Any) -> bool:
    """The seed and nonce (None: a record made before the nonce) open the claimed commitment (C-4)."""
    if not isinstance(seed, str) or not (nonce is None or isinstance(nonce, str)):
        return False
    try:
        return bool(commitment(seed, nonce) == claimed)
    except UnicodeEncodeError:  # a lone surrogate from the JSON: no UTF-8, so no commitment opens
        return False


def _failed(chain_ok: bool, failures: list[tuple[int, str]], complete: bool, replay_ok: bool | None = False) -> Verdict:
    """The verdict naming the earliest failure (seq 0: a claim of the record that no one event breaks).

    `replay_ok` is False when the re-run of the game disagrees with the record (its events, its
    seed or its own claims of version and status), None when it could not run (no seed).
    """
    seq, detail = min(failures, key=lambda failure: failure[0] or 1 << 62)  # the first check to fail wins a tie
    return Verdict(chain_ok, replay_ok, seq or None, detail, complete)


def _claims(record: Record, events: Sequence[Any]) -> list[tuple[int, str]]:
    """The record's own count of its events (`version`) against the events it holds."""
    if "version" not in record or record["version"] == len(events):
        return []
    version = record["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        return [(0, f"the record's version {version!r} is not a number of events")]
    seq = min(version, len(events)) + 1
    if version > len(events):
        return [(seq, f"event {seq} is missing: the record says it has {version} events, it holds {len(events)}")]
    return [(seq, f"event {seq} is beyond the record's version {version}")]


def _fits_header(record: Record, events: Sequence[Any]) -> list[tuple[int, str]]:
    """Without the seed: the first event states the record's game, and every event is one of the game's."""
    try:
        game = engine.get_game(record["game"])
        players = len(record["seats"])
        header = {
            "game": record["game"],
            "players": players,
            "options": dict(record["options"]),
            "seed_commitment": record["seed_commitment"],
            "stacked": bool(record.get("stacked")),
            "rules_version": record.get("rules_version", 1),  # missing: 1, in the record as in its first event
        }
    except (DomainError, KeyError, TypeError, ValueError) as error:
        return [(1, f"event 1: the record's game, seats or options: {error}")]
    for index, event in enumerate(events):
        seq = index + 1
        if not isinstance(event, Mapping):
            return [(seq, f"event {seq} is not an event record")]
        misfit = _stand_in_misfit(event)
        if misfit:
            return [(seq, f"event {seq}: {misfit}")]
        actor = event["seat"] if "seat" in event else event.get("actor")
        if actor != SYSTEM and (isinstance(actor, bool) or not isinstance(actor, int) or not 0 <= actor < players):
            return [(seq, f"event {seq}: actor {actor!r} is neither a seat nor the system")]
        try:
            built = game.catalog.build(event["type"], actor, event["data"])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            return [(seq, f"event {seq}: not a {game.id} event: {error}")]
        if (seq == 1) != isinstance(built, engine.GameCreated):
            return [(seq, f"event {seq}: a game's first event, and only that, is GameCreated")]
        if seq == 1 and canonical_json({"rules_version": 1, **built.data()}) != canonical_json(header):
            return [(1, f"event 1: GameCreated says {_brief(built.data())}, the record {_brief(header)}")]
        if isinstance(built, engine.SeedRevealed):
            return [(seq, f"event {seq}: the seed is revealed in the events, but the record holds no seed")]
    return []


def read_record(path: str) -> Any:
    """The JSON of a record file, plain or gzipped (an archive's `<id>.json.gz`)."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


USAGE = "python -m domain.verify RECORD.json (or RECORD.json.gz; a game's record or a match's)"
EXIT_CODES = (
    "Checks a game record on its own and prints the verdict. "
    "Exit codes: 0 PASS, 1 FAIL or INCOMPLETE, 2 no record (unreadable, not a record, or bad arguments)."
)


def main(argv: Sequence[str]) -> int:
    """CLI: print the verdict; exit 0 only for a record that passes every check, 1 otherwise, 2 for no record."""
    if list(argv) in (["-h"], ["--help"]):
        print(f"{USAGE}\n\n{EXIT_CODES}")
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print(f"usage: {USAGE}", file=sys.stderr)
        return 2
    try:
        record = read_record(argv[0])
    except (OSError, EOFError, ValueError) as error:
        print(f"cannot read the record: {error}", file=sys.stderr)
        return 2
    if isinstance(record, dict) and record.get("format") == MATCH_FORMAT:
        return _main_match(record)
    if not isinstance(record, dict) or record.get("format") not in RECORD_FORMATS:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        print(f"not a {' or '.join(RECORD_FORMATS)} record (found {found!r})", file=sys.stderr)
        return 2
    verdict = verify(record)
    print(json.dumps(verdict.as_dict(), indent=2))
    if verdict.ok:
        print("PASS")
    elif not verdict.chain_ok or verdict.replay_ok is False or verdict.first_bad_seq is not None:
        print("FAIL" + (f" at event {verdict.first_bad_seq}" if verdict.first_bad_seq else ""))
    else:
        print("INCOMPLETE")
    return 0 if verdict.ok else 1


def _main_match(record: dict[str, Any]) -> int:
    """A match record's verdict (domain/verify_match.py): PASS and 0, or FAIL naming the first misfit and 1."""
    from domain.verify_match import verify_match  # it imports this module: imported where it is needed

    verdict = verify_match(record)
    print(json.dumps(verdict.as_dict(), indent=2))
    print("PASS" if verdict.ok else f"FAIL: {verdict.detail}")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
