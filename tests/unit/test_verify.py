"""The offline verifier (domain/verify.py, `python -m domain.verify RECORD.json`), on records built here.

Records are played in the domain by the bots and chained with a hash written here from
API.md (not with domain/chain.py), for every registered game. The tampering catalogue
(`TAMPERS`) is shared with the service tests, which apply it to stored streams and to
downloaded records: each tamper names the seq of the first event that no longer fits.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.bots import choose_action, policy_for
from domain.events import Event
from domain.shuffle import SeededStream
from domain.verify import FIRST_RECORD_FORMAT, RECORD_FORMAT, main, verify

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
GAME_IDS = [game.id for game in engine.all_games()]
MAX_STEPS = 20_000
AT = "2026-01-01T00:00:00.000Z"
NONCE = "0123456789abcdef" * 4
Record = dict[str, Any]


# ---------------------------------------------------------------- the hash chain, from API.md


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical(value: Any) -> str:
    """API.md: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def link(record: dict[str, Any], prev_hash: str) -> str:
    """Set prev_hash and hash of one event record; returns its hash."""
    record["prev_hash"] = prev_hash
    body = {key: value for key, value in record.items() if key not in ("at", "hash")}
    record["hash"] = sha256_hex(prev_hash + canonical(body))
    return str(record["hash"])


def rechain(events: list[dict[str, Any]], commitment: str) -> None:
    """What a careful tamperer does: recompute every prev_hash and hash from the commitment on."""
    prev = commitment
    for record in events:
        prev = link(record, prev)


# ---------------------------------------------------------------- whole games played by the bots


def small_options(describe: Mapping[str, Any]) -> dict[str, Any]:
    """Options that keep a game short, from its catalog entry: a `target` or `rounds` at its minimum."""
    if describe["id"] == "golf":
        return {"rounds": 2}
    return {
        option["name"]: option["minimum"]
        for option in describe["options"]
        if option["name"] in ("target", "rounds") and "minimum" in option
    }


def bot_level(game_id: str, seat: int) -> str:
    """Greedy and random bots in turn where the game has a greedy bot, else random ones."""
    try:
        policy_for(game_id, "greedy")
    except ValueError:
        return "random"
    return "greedy" if seat % 2 == 0 else "random"


def play(config: engine.GameConfig, stop_after: int | None = None) -> tuple[engine.Snapshot[Any], list[Event]]:
    """Bots play the game to its end (or until at least `stop_after` events exist)."""
    snap, events = engine.start(config)
    for step in range(MAX_STEPS):
        if snap.finished or (stop_after is not None and len(events) >= stop_after):
            return snap, events
        seats = snap.to_act()
        assert seats, f"{config.game}: nobody may act at version {snap.version}, but the game is not over"
        seat = seats[step % len(seats)]
        legal = engine.legal_actions(snap, seat)
        rng = SeededStream(config.seed, f"test/{step}")
        action = choose_action(config.game, bot_level(config.game, seat), engine.view(snap, seat), legal, rng)
        snap, new = engine.act(snap, seat, action)
        events += new
    pytest.fail(f"{config.game}: a bot game did not end within {MAX_STEPS} actions ({dict(config.options)})")


def make_record(
    game_id: str,
    *,
    seed: str = "verify-test",
    options: Mapping[str, Any] | None = None,
    players: int | None = None,
    decks: tuple[tuple[str, ...], ...] = (),
    stop_after: int | None = None,
    nonce: str | None = NONCE,
) -> Record:
    """A record as API.md describes it: the seed, nonce and decks only once the game has ended.

    `nonce` None: a cardtable-record/1, as made before the nonce (C-4) and versioned rules.
    """
    game = engine.get_game(game_id)
    players = players or game.min_players
    chosen = dict(options) if options is not None else small_options(game.describe())
    version = None if nonce else 1
    config = engine.make_config(game_id, players, chosen, seed, decks, nonce=nonce, rules_version=version)
    snap, events = play(config, stop_after)
    commitment = sha256_hex(f"{seed}\x00{nonce}" if nonce else seed)  # C-4
    records: list[dict[str, Any]] = []
    prev = commitment
    for seq, event in enumerate(events, start=1):
        record = {"seq": seq, "type": event.type_name(), "actor": event.actor, "data": event.data(), "at": AT}
        prev = link(record, prev)
        records.append(record)
    out: Record = {
        "format": RECORD_FORMAT if nonce else FIRST_RECORD_FORMAT,
        "id": "unit-test",
        "game": game_id,
        **({"rules_version": config.rules_version} if "rules_version" in events[0].data() else {}),
        "options": dict(config.options),
        "seats": [
            {"seat": s, "kind": "bot", "name": f"bot {s}", "level": bot_level(game_id, s)} for s in range(players)
        ],
        "stacked": bool(decks),
        "seed_commitment": commitment,
        "seed_source": "creator",
        "status": "finished" if snap.finished else "active",
        "version": len(records),
        "events": records,
    }
    if snap.finished:
        out["seed"] = seed
        out["decks"] = [list(deck) for deck in decks]
        if nonce:
            out["nonce"] = nonce
    return out


_FINISHED: dict[str, Record] = {}


def finished_record(game_id: str) -> Record:
    """A finished game of each kind, played once per test process; callers get a deep copy."""
    if game_id not in _FINISHED:
        _FINISHED[game_id] = make_record(game_id)
    return copy.deepcopy(_FINISHED[game_id])


def running_record(game_id: str) -> Record:
    """A game stopped half-way: no seed, no decks, status active."""
    total = len(finished_record(game_id)["events"])
    record = make_record(game_id, stop_after=max(3, total // 2))
    assert record["status"] == "active" and "seed" not in record, "the game ended before half its events"
    return record


# ---------------------------------------------------------------- tampering


def middle_action(events: list[dict[str, Any]], spare: int = 2) -> int:
    """The seq of a player's event with data in the middle of the game, with `spare` events after it."""
    candidates = [e["seq"] for e in events[: len(events) - spare] if e["actor"] != "system" and e["data"]]
    assert candidates, "no player event with data to tamper with"
    return int(candidates[len(candidates) // 2])


def last_system_result(events: list[dict[str, Any]]) -> int:
    """The seq of the last system event with data before the seed's reveal (the result or a score)."""
    candidates = [e["seq"] for e in events[:-1] if e["actor"] == "system" and e["data"] and e["seq"] > 1]
    assert candidates, "no scoring event"
    return int(candidates[-1])


def changed(value: Any) -> Any:
    """A different value that no rule allows: an unknown card, a number far out of range, ...

    Out of range on purpose: in a multi-deck game another real card or position can make a
    different but valid game, which no check can tell from the original once the chain is redone.
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1000
    if isinstance(value, str):
        return "XX"
    if isinstance(value, list):
        return [changed(value[0]), *value[1:]] if value else [0]
    if isinstance(value, dict):
        if not value:
            return {"x": 1}
        key = sorted(value)[0]
        return {**value, key: changed(value[key])}
    return 0


def seed_revealed(events: list[dict[str, Any]]) -> dict[str, Any]:
    last = events[-1]
    assert last["type"] == "SeedRevealed", "a finished game's last event reveals the seed"
    return last


@dataclasses.dataclass(frozen=True)
class Tamper:
    """One way to falsify a finished game's events; `apply` edits a record in place.

    Returns (the seq of the first event that no longer fits, whether the hash chain still holds).
    """

    name: str
    apply: Callable[[Record], tuple[int, bool]]
    in_stream: bool = True  # False: only a record can show it (the stream holds no header)

    def __repr__(self) -> str:
        return self.name


def _data_changed(record: Record, *, again: bool = False) -> tuple[int, bool]:
    events = record["events"]
    seq = middle_action(events)
    events[seq - 1]["data"] = changed(events[seq - 1]["data"])
    if again:
        rechain(events, record["seed_commitment"])
    return seq, again


def _deleted(record: Record) -> tuple[int, bool]:
    seq = middle_action(record["events"])
    del record["events"][seq - 1]
    return seq, False


def _swapped(record: Record) -> tuple[int, bool]:
    events = record["events"]
    seq = middle_action(events)
    events[seq - 1], events[seq] = events[seq], events[seq - 1]
    return seq, False


def _inserted_copy(record: Record) -> tuple[int, bool]:
    """An action recorded twice: the copy right after the original."""
    events = record["events"]
    seq = middle_action(events)
    events.insert(seq, copy.deepcopy(events[seq - 1]))
    return seq + 1, False


def _inserted_old_event(record: Record) -> tuple[int, bool]:
    """An early event copied into the middle of the game."""
    events = record["events"]
    seq = middle_action(events)
    events.insert(seq - 1, copy.deepcopy(events[1]))
    return seq, False


def _seed_changed(record: Record, *, again: bool = False) -> tuple[int, bool]:
    events = record["events"]
    last = seed_revealed(events)
    last["data"] = {**last["data"], "seed": "another-seed"}
    if "seed" in record:
        record["seed"] = "another-seed"
    if again:
        rechain(events, record["seed_commitment"])
    return int(last["seq"]), again


def _actor_changed(record: Record) -> tuple[int, bool]:
    """A player's action credited to the next seat, chain recomputed."""
    events = record["events"]
    seq = middle_action(events)
    event = events[seq - 1]
    event["actor"] = (event["actor"] + 1) % len(record["seats"])
    rechain(events, record["seed_commitment"])
    return seq, True


def _result_changed(record: Record) -> tuple[int, bool]:
    """The final scores or winners rewritten, chain recomputed."""
    events = record["events"]
    seq = last_system_result(events)
    events[seq - 1]["data"] = changed(events[seq - 1]["data"])
    rechain(events, record["seed_commitment"])
    return seq, True


def _reveal_dropped(record: Record) -> tuple[int, bool]:
    """The last event (the seed's reveal) left out of a record that still says the game finished."""
    events = record["events"]
    seq = seed_revealed(events)["seq"]
    events.pop()
    return int(seq), True


TAMPERS = [
    Tamper("data_changed", _data_changed),
    Tamper("data_changed_chain_recomputed", lambda r: _data_changed(r, again=True)),
    Tamper("deleted", _deleted),
    Tamper("swapped", _swapped),
    Tamper("inserted_copy", _inserted_copy),
    Tamper("inserted_old_event", _inserted_old_event),
    Tamper("seed_changed", _seed_changed),
    Tamper("seed_changed_chain_recomputed", lambda r: _seed_changed(r, again=True)),
    Tamper("actor_changed_chain_recomputed", _actor_changed),
    Tamper("result_changed_chain_recomputed", _result_changed),
    Tamper("reveal_dropped", _reveal_dropped, in_stream=False),
]
STREAM_TAMPERS = [t for t in TAMPERS if t.in_stream]


# ---------------------------------------------------------------- the CLI


def run_cli(path: Path, *, cwd: Path = ROOT) -> tuple[int, dict[str, Any] | None, str, str]:
    """(exit code, the verdict JSON or None, the last line, stderr) of `python -m domain.verify`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [PYTHON, "-m", "domain.verify", str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    lines = done.stdout.strip().splitlines()
    verdict = json.loads("\n".join(lines[:-1])) if len(lines) > 1 else None
    return done.returncode, verdict, lines[-1] if lines else "", done.stderr


def write(tmp_path: Path, record: Any, name: str = "record.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


# ---------------------------------------------------------------- a full pass


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_finished_game_passes_every_check(game_id: str) -> None:
    record = finished_record(game_id)
    assert record["events"][0]["type"] == "GameCreated"
    assert record["events"][-1] == seed_revealed(record["events"])
    verdict = verify(record)
    assert verdict.ok, verdict
    assert (verdict.chain_ok, verdict.replay_ok, verdict.first_bad_seq, verdict.complete) == (True, True, None, True)
    assert "passed" in verdict.detail
    game = engine.get_game(game_id)
    config = engine.make_config(game_id, len(record["seats"]), record["options"], record["seed"], nonce=record["nonce"])
    final = engine.fold(config, (game.catalog.build(e["type"], e["actor"], e["data"]) for e in record["events"]))
    assert final.finished
    assert verdict.result == engine.view(final, None)["result"], "the verdict carries the recomputed result"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_cli_passes_a_finished_game_with_exit_0(game_id: str, tmp_path: Path) -> None:
    code, verdict, last, stderr = run_cli(write(tmp_path, finished_record(game_id)), cwd=tmp_path)
    assert code == 0, (last, verdict, stderr)
    assert last == "PASS"
    assert verdict is not None and verdict["first_bad_seq"] is None and verdict["complete"] is True


def test_the_verdict_is_the_audit_body() -> None:
    verdict = verify(finished_record("golf"))
    assert verdict.as_dict() == {
        "chain_ok": True,
        "replay_ok": True,
        "first_bad_seq": None,
        "complete": True,
        "detail": verdict.detail,
    }


# ---------------------------------------------------------------- a running game


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_running_games_record_is_checked_as_far_as_it_can_be_and_says_incomplete(
    game_id: str, tmp_path: Path
) -> None:
    record = running_record(game_id)
    verdict = verify(record)
    assert not verdict.ok
    assert verdict.complete is False
    assert verdict.chain_ok is True and verdict.first_bad_seq is None
    assert verdict.replay_ok is None, "without the seed the deal and the actions cannot be re-checked"
    assert "seed" in verdict.detail and "running" in verdict.detail
    code, printed, last, _ = run_cli(write(tmp_path, record))
    assert code != 0
    assert last.startswith("INCOMPLETE"), last
    assert printed is not None and printed["complete"] is False


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_running_game_checked_with_its_seed_passes_but_is_not_complete(game_id: str) -> None:
    """An auditor who holds the seed re-checks the game so far; the result is not known yet."""
    record = running_record(game_id)
    verdict = verify(record, seed="verify-test", nonce=NONCE)
    assert (verdict.chain_ok, verdict.replay_ok, verdict.first_bad_seq) == (True, True, None), verdict
    assert verdict.complete is False and not verdict.ok
    assert not verify(record, seed="verify-test").ok, "the nonce is part of the commitment"
    wrong = verify(record, seed="not-the-seed", nonce=NONCE)
    assert not wrong.ok and wrong.replay_ok is False and "commitment" in wrong.detail


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_broken_chain_in_a_running_games_record_fails_and_is_not_just_incomplete(
    game_id: str, tmp_path: Path
) -> None:
    record = running_record(game_id)
    seq = middle_action(record["events"], spare=0)  # any player event with data
    record["events"][seq - 1]["data"] = changed(record["events"][seq - 1]["data"])
    verdict = verify(record)
    assert verdict.chain_ok is False and verdict.first_bad_seq == seq
    code, _, last, _ = run_cli(write(tmp_path, record))
    assert code == 1 and last.startswith("FAIL"), last


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_running_games_first_event_must_match_the_records_header(game_id: str) -> None:
    """Without the seed, what can be checked is: the chain, and that the events fit the header."""
    record = running_record(game_id)
    created = record["events"][0]
    created["data"] = {**created["data"], "players": created["data"]["players"] + 1}
    rechain(record["events"], record["seed_commitment"])
    verdict = verify(record)
    assert verdict.chain_ok is True
    assert verdict.first_bad_seq == 1 and not verdict.ok, verdict


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_running_games_events_must_be_events_of_its_game(game_id: str) -> None:
    record = running_record(game_id)
    seq = middle_action(record["events"], spare=0)
    record["events"][seq - 1]["type"] = "NoSuchEvent"
    rechain(record["events"], record["seed_commitment"])
    verdict = verify(record)
    assert verdict.chain_ok is True and verdict.first_bad_seq == seq and not verdict.ok, verdict


# ---------------------------------------------------------------- tampering


@pytest.mark.parametrize("tamper", TAMPERS, ids=repr)
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_tampering_is_caught_at_the_first_bad_event(game_id: str, tamper: Tamper) -> None:
    record = finished_record(game_id)
    seq, chain_holds = tamper.apply(record)
    verdict = verify(record)
    assert not verdict.ok
    assert verdict.first_bad_seq == seq, verdict
    assert verdict.chain_ok is chain_holds, verdict
    if chain_holds:
        assert verdict.replay_ok is False, "with the chain intact the re-run of the game must find it"
    assert f"event {seq}" in verdict.detail, verdict.detail


@pytest.mark.parametrize("tamper", TAMPERS, ids=repr)
def test_the_cli_names_the_first_bad_event_and_exits_1(tamper: Tamper, tmp_path: Path) -> None:
    record = finished_record("golf")
    seq, _ = tamper.apply(record)
    code, verdict, last, stderr = run_cli(write(tmp_path, record))
    assert code == 1, stderr
    assert verdict is not None and verdict["first_bad_seq"] == seq
    assert last.startswith("FAIL") and str(seq) in last, last


def test_a_golf_swap_that_claims_another_card_is_caught_by_the_rules() -> None:
    """A believable forgery: the card a swap put on the discard pile, chain recomputed."""
    record = finished_record("golf")
    events = record["events"]
    swap = next(e for e in events if e["type"] in ("DrawnCardSwapped", "DiscardTaken"))
    swap["data"]["replaced"] = next(c for c in ("AS", "KH", "7D", "2C", "10S") if c != swap["data"]["replaced"])
    rechain(events, record["seed_commitment"])
    verdict = verify(record)
    assert verdict.chain_ok and verdict.replay_ok is False and verdict.first_bad_seq == swap["seq"], verdict
    assert "the rules give" in verdict.detail


def test_a_seed_that_does_not_match_its_commitment_fails_at_the_reveal() -> None:
    record = finished_record("golf")
    record["seed"] = "another-seed"  # only the header's seed: the events are untouched
    verdict = verify(record)
    assert verdict.chain_ok is True and verdict.replay_ok is False
    assert verdict.first_bad_seq == record["events"][-1]["seq"]
    assert "commitment" in verdict.detail


def test_a_nonce_that_does_not_open_the_commitment_fails_at_the_reveal() -> None:
    """C-4: the revealed nonce is checked with the seed: another nonce, or none, does not open the commitment."""
    for nonce in ("f" * 64, None):
        record = finished_record("golf")
        if nonce is None:
            del record["nonce"]
        else:
            record["nonce"] = nonce
        verdict = verify(record)
        assert verdict.chain_ok is True and verdict.replay_ok is False
        assert verdict.first_bad_seq == record["events"][-1]["seq"] and "commitment" in verdict.detail


def test_a_record_reveals_the_nonce_in_its_last_event_and_the_chain_holds_it() -> None:
    """C-4: SeedRevealed carries the seed and the nonce; a nonce changed there breaks the chain."""
    record = finished_record("golf")
    assert seed_revealed(record["events"])["data"] == {"seed": "verify-test", "nonce": NONCE}
    assert record["events"][0]["data"]["rules_version"] == record["rules_version"] == 2
    seed_revealed(record["events"])["data"]["nonce"] = "f" * 64
    record["nonce"] = "f" * 64
    verdict = verify(record)
    assert not verdict.chain_ok and verdict.first_bad_seq == record["events"][-1]["seq"]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_an_old_format_record_without_a_nonce_still_passes(game_id: str, tmp_path: Path) -> None:
    """C-4: a cardtable-record/1, made before the nonce: its commitment is sha256(seed), its events
    state no rules version (version 1), and it passes every check, in the CLI too."""
    record = make_record(game_id, nonce=None)
    assert record["format"] == "cardtable-record/1" and "nonce" not in record and "rules_version" not in record
    assert record["seed_commitment"] == sha256_hex(record["seed"])
    assert "rules_version" not in record["events"][0]["data"] and seed_revealed(record["events"])["data"].keys() == {
        "seed"
    }
    assert verify(record).ok
    code, _, last, _ = run_cli(write(tmp_path, record))
    assert (code, last) == (0, "PASS")


def test_a_record_that_claims_another_rules_version_than_its_first_event_fails_at_event_1() -> None:
    """A record's rules version (missing: 1) is the one its first event states, with or without the seed."""
    for record in (finished_record("go5"), running_record("go5")):
        assert record["rules_version"] == record["events"][0]["data"]["rules_version"] == 3
        record["rules_version"] = 2
        verdict = verify(record)
        assert not verdict.ok and verdict.first_bad_seq == 1, verdict.detail
    old = make_record("golf", nonce=None)
    old["rules_version"] = 3  # golf has no version 3: refused at the setup
    assert verify(old).first_bad_seq == 1


def test_an_untouched_copy_still_passes_after_the_tampering_tests() -> None:
    """The tampers edit copies: the cached record itself is intact."""
    for game_id in GAME_IDS:
        assert verify(finished_record(game_id)).ok


def test_the_time_of_an_event_is_not_part_of_the_chain() -> None:
    """`at` is metadata (API.md: the hash covers the event without at/hash)."""
    record = finished_record("golf")
    for event in record["events"]:
        event["at"] = "2030-01-01T00:00:00Z"
    assert verify(record).ok


def test_a_record_that_claims_more_events_than_it_holds_fails() -> None:
    record = finished_record("golf")
    record["version"] += 2
    verdict = verify(record)
    assert not verdict.ok and verdict.first_bad_seq == len(record["events"]) + 1


def test_a_record_cut_short_and_posing_as_running_is_never_a_pass(tmp_path: Path) -> None:
    """Without its end a game's result cannot be recomputed, even with the seed in the record."""
    record = finished_record("golf")
    del record["events"][-5:]
    record.update(status="active", version=len(record["events"]))
    verdict = verify(record)
    assert not verdict.ok and verdict.complete is False
    code, _, last, _ = run_cli(write(tmp_path, record))
    assert code != 0 and last.startswith("INCOMPLETE"), last


# ---------------------------------------------------------------- stacked decks (C-5)


def stacked_golf_deck() -> tuple[str, ...]:
    """A permutation of the 52 cards: the canonical order reversed."""
    ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    return tuple(reversed([rank + suit for suit in "SHDC" for rank in ranks]))


def test_a_stacked_game_passes_with_its_decks_and_fails_without_them() -> None:
    record = make_record("golf", options={"rounds": 2}, decks=(stacked_golf_deck(),))
    assert record["stacked"] is True and record["decks"] == [list(stacked_golf_deck())]
    assert verify(record).ok
    record["decks"] = []
    verdict = verify(record)
    assert not verdict.ok and verdict.first_bad_seq == 1, "GameCreated says stacked"


def test_a_stacked_game_with_another_deck_order_fails_at_the_first_event_that_shows_a_card() -> None:
    record = make_record("golf", options={"rounds": 1}, decks=(stacked_golf_deck(),))
    record["decks"] = [list(reversed(stacked_golf_deck()))]
    verdict = verify(record)
    first_card = next(e["seq"] for e in record["events"] if e["type"] == "CardsRevealed")
    assert not verdict.ok and verdict.chain_ok and verdict.first_bad_seq == first_card, verdict


def test_a_stacked_deck_that_is_not_a_permutation_is_refused_at_the_first_event() -> None:
    record = make_record("golf", options={"rounds": 1}, decks=(stacked_golf_deck(),))
    record["decks"] = [list(stacked_golf_deck()[:-1]) + ["KS"]]  # two KS, no AS
    verdict = verify(record)
    assert not verdict.ok and verdict.first_bad_seq == 1 and "deck" in verdict.detail


# ---------------------------------------------------------------- robustness and the CLI's contract


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 60) | st.sampled_from(["", "AS", "system", "x" * 3]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["seq", "a", "type"]), inner),
    max_leaves=6,
)
EVENT_FIELDS = ["seq", "type", "actor", "data", "prev_hash", "hash"]
HEADER_FIELDS = ["game", "options", "seed", "seed_commitment", "events", "status", "version"]
CLAIMS = ("status", "version")  # checked when present (an audit's record has neither); not deleted here


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_damage_gives_a_verdict_and_never_a_pass(data: st.DataObject) -> None:
    """Wrong types, missing fields, junk events: always a verdict, never an exception, never ok."""
    record = finished_record("golf")
    original = canonical(record)
    events = record["events"]
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        where = data.draw(st.sampled_from(["event field", "event", "header"]), label="where")
        if where == "header":
            key = data.draw(st.sampled_from(HEADER_FIELDS), label="header field")
            if key not in CLAIMS and data.draw(st.booleans(), label="delete"):
                record.pop(key, None)
            else:
                record[key] = data.draw(JSON_VALUES, label="value")
        elif isinstance(record.get("events"), list) and record["events"]:
            events = record["events"]
            index = data.draw(st.integers(0, len(events) - 1), label="index")
            if where == "event":
                events[index] = data.draw(JSON_VALUES, label="event")
            elif isinstance(events[index], dict):
                field = data.draw(st.sampled_from(EVENT_FIELDS), label="field")
                if data.draw(st.booleans(), label="delete"):
                    events[index].pop(field, None)
                else:
                    events[index][field] = data.draw(JSON_VALUES, label="value")
    verdict = verify(record)
    if canonical(record) != original:
        assert not verdict.ok, verdict
        assert isinstance(verdict.detail, str) and verdict.detail


@pytest.mark.parametrize(
    ("content", "wanted"),
    [
        ("[1, 2]", "not a cardtable-record/1"),
        ('"a string"', "not a cardtable-record/1"),
        ('{"format": "cardtable-record/0", "events": []}', "not a cardtable-record/1"),
        ("{not json", "cannot read"),
    ],
)
def test_the_cli_refuses_what_is_not_a_record_with_exit_2(content: str, wanted: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    code, _, _, stderr = run_cli(path)
    assert code == 2 and wanted in stderr, stderr
    assert "Traceback" not in stderr


def test_the_cli_usage_and_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


NO_NETWORK = """
import runpy, socket, sys
def refuse(*args, **kwargs):
    raise OSError("the verifier tried to use the network")
socket.socket = refuse
socket.create_connection = refuse
sys.argv = ["domain.verify", sys.argv[1]]
try:
    runpy.run_module("domain.verify", run_name="__main__", alter_sys=True)
except SystemExit as done:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("redis", "flask", "service", "fakeredis"))
    assert not loaded, loaded
    raise
"""


def test_the_verifier_needs_no_redis_and_no_network(tmp_path: Path) -> None:
    path = write(tmp_path, finished_record("golf"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REDIS_URL": "redis://192.0.2.1:1/0"}
    done = subprocess.run(
        [PYTHON, "-c", NO_NETWORK, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "PASS"


def test_make_verify_runs_the_verifier(tmp_path: Path) -> None:
    """`make verify RECORD=...` (with -o: never reinstall the virtualenv from a test)."""
    good = write(tmp_path, finished_record("golf"), "good.json")
    bad_record = finished_record("golf")
    seq, _ = TAMPERS[0].apply(bad_record)
    bad = write(tmp_path, bad_record, "bad.json")
    make = ["make", "--no-print-directory", "-o", ".venv/.installed", "-o", "install", "VENV=.venv"]
    passed = subprocess.run([*make, "verify", f"RECORD={good}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.strip().splitlines()[-1] == "PASS"
    failed = subprocess.run([*make, "verify", f"RECORD={bad}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0 and "FAIL" in failed.stdout and str(seq) in failed.stdout.splitlines()[-1]
    usage = subprocess.run([*make, "verify"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert usage.returncode != 0 and "usage: make verify RECORD=" in usage.stdout + usage.stderr


# ---------------------------------------------------------------- C-9: the event limit


def limited_record(game_id: str, limit: int) -> Record:
    """A finished game of bots that its event limit ended (C-9)."""
    record = make_record(game_id, options={"max_events": limit})
    assert limit - engine.ACTION_EVENTS_MAX < record["version"] <= limit
    assert record["events"][-2]["data"]["reason"] == "event_limit"
    return record


def with_limit(record: Record, limit: int) -> Record:
    """The record as if its game had been made with another max_events: options, first event and chain."""
    changed = copy.deepcopy(record)
    changed["options"]["max_events"] = limit
    changed["events"][0]["data"]["options"]["max_events"] = limit
    rechain(changed["events"], changed["seed_commitment"])
    return changed


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_c9_a_game_its_event_limit_ended_passes_with_its_result(game_id: str) -> None:
    """C-9: the end at the event limit is re-checked like any event: the verdict passes and its result
    says event_limit, with the totals of the hands scored so far."""
    record = limited_record(game_id, 40)
    verdict = verify(record)
    assert verdict.ok, verdict.detail
    end = record["events"][-2]["data"]
    assert verdict.result == {"totals": end["totals"], "winners": end["winners"], "reason": "event_limit"}


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_c9_an_event_limit_end_that_is_not_due_fails_where_it_stands(game_id: str) -> None:
    """C-9: a record whose game could go on (its max_events is larger) but ends with event_limit fails at that end."""
    record = with_limit(limited_record(game_id, 40), 60)
    verdict = verify(record)
    end = record["version"] - 1
    assert verdict.chain_ok and verdict.replay_ok is False and verdict.first_bad_seq == end, verdict.detail


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_c9_a_game_that_goes_on_past_its_event_limit_fails_where_the_end_was_due(game_id: str) -> None:
    """C-9: a record that goes on where its max_events leaves no room for a move besides the end fails at that
    event: the end was due once an append left fewer than ACTION_EVENTS_MAX + 2 events of room (27 or 28 with
    30), so the end stands at 28 or 29."""
    record = with_limit(limited_record(game_id, 40), 30)
    verdict = verify(record)
    assert verdict.chain_ok and verdict.replay_ok is False and verdict.first_bad_seq in (28, 29), verdict.detail
    assert "GameEnded" in verdict.detail
