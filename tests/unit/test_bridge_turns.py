"""What the bridge makes of a turn the service hands out (workers/bridge/turns.py `parse_turn`): whatever
JSON comes, a Turn with every field of its type or BadTurn, never another exception that would stop the
poller; a turn as the service sends it is read as it came; and the time left before any deadline is one
the bridge's waits can take."""

from __future__ import annotations

import json
import math
import sys
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from workers.bridge.command import CommandPlayer
from workers.bridge.turns import DEFAULT_DEADLINE_SECONDS, MAX_DEADLINE_SECONDS, BadTurn, Turn, parse_turn

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KINDS = {"turn": str, "game_id": str, "game": str, "seat": int, "version": int, "deadline": str}
OFFSETS = st.timedeltas(min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23, minutes=59)).map(
    lambda offset: timezone(timedelta(minutes=offset // timedelta(minutes=1)))
)
# RFC 3339 deadlines from year 1 to 9999, in any offset, and as the service writes them ("...Z")
DEADLINES = (
    st.datetimes(timezones=OFFSETS).map(datetime.isoformat)
    | st.datetimes(timezones=st.just(UTC)).map(lambda at: at.isoformat().replace("+00:00", "Z"))
    | st.datetimes().map(datetime.isoformat)
)
SERVER_DATES = st.none() | st.datetimes() | st.datetimes(timezones=st.just(UTC))
ACTION = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    """A turn as the service writes it, through JSON."""
    turn = {
        "turn": draw(st.text(max_size=20)),
        "game_id": draw(st.text(max_size=20)),
        "game": draw(st.text(max_size=10)),
        "rules_version": draw(st.integers(1, 5)),
        "seat": draw(st.integers(0, 7)),
        "version": draw(st.integers(0, 2**53)),
        "deadline": draw(DEADLINES | st.text(max_size=30)),
        "view": draw(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)),
        "legal": draw(st.lists(ACTION, max_size=5)),
    }
    return json.loads(json.dumps(turn))  # type: ignore[no-any-return]


def wrong_for(name: str) -> st.SearchStrategy[Any]:
    """JSON values that are not of the field's kind (a boolean is no integer, 1.0 no integer either)."""
    if name == "view":
        return JSON_VALUES.filter(lambda value: not isinstance(value, dict))
    if name == "legal":
        return JSON_VALUES.filter(
            lambda value: not isinstance(value, list) or not all(isinstance(action, dict) for action in value)
        )
    kind = KINDS[name]
    return JSON_VALUES.filter(lambda value: not isinstance(value, kind) or isinstance(value, bool))


@st.composite
def altered_turns(draw: st.DrawFn) -> dict[str, Any]:
    """A turn with some of its fields dropped or given any JSON value, and fields of its own added."""
    turn = draw(turns())
    for name in draw(st.lists(st.sampled_from(sorted(turn)), unique=True)):
        if draw(st.booleans()):
            del turn[name]
        else:
            turn[name] = draw(JSON_VALUES)
    turn.update(draw(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=2)))
    return turn


def parsed(raw: Any, received: float, server_date: datetime | None) -> Turn | BadTurn:
    try:
        return parse_turn(raw, received, server_date)
    except BadTurn as error:
        return error


@given(JSON_VALUES | altered_turns(), st.floats(0, 1e9), SERVER_DATES)
def test_any_json_is_a_turn_with_fields_of_their_kinds_or_bad_turn(
    raw: Any, received: float, server_date: datetime | None
) -> None:
    result = parsed(raw, received, server_date)
    if isinstance(result, BadTurn):
        assert str(result)
        return
    assert isinstance(raw, dict)
    for name, kind in KINDS.items():
        assert isinstance(raw[name], kind) and not isinstance(raw[name], bool)
    assert isinstance(result.view, dict) and isinstance(result.legal, list)
    assert all(isinstance(action, dict) for action in result.legal)
    assert math.isfinite(result.remaining(received))


@given(turns(), st.floats(0, 1e9), SERVER_DATES)
def test_a_turn_as_the_service_sends_it_is_read_as_it_came(
    raw: dict[str, Any], received: float, server_date: datetime | None
) -> None:
    turn = parse_turn(raw, received, server_date)
    assert (turn.id, turn.game_id, turn.game, turn.seat, turn.version, turn.deadline) == (
        raw["turn"],
        raw["game_id"],
        raw["game"],
        raw["seat"],
        raw["version"],
        raw["deadline"],
    )
    assert turn.view == raw["view"] and turn.legal == raw["legal"]


@given(turns(), st.sampled_from(sorted(KINDS) + ["view", "legal"]), st.data())
def test_a_turn_without_a_field_or_with_one_of_another_kind_is_bad(
    raw: dict[str, Any], name: str, data: st.DataObject
) -> None:
    if data.draw(st.booleans()):
        del raw[name]
    else:
        raw[name] = data.draw(wrong_for(name))
    with pytest.raises(BadTurn, match=repr(name)):
        parse_turn(raw, 0.0, None)


@given(turns(), DEADLINES, st.datetimes(timezones=st.just(UTC)), st.floats(0, 1e9))
# a far deadline received late on the monotonic clock: `received + cap - received` was 6e-8 past the cap
@example(
    {"turn": "t", "game_id": "g", "game": "golf", "seat": 0, "version": 1, "deadline": "", "view": {}, "legal": []},
    "9999-01-01T00:00:00Z",
    datetime(2000, 2, 1, tzinfo=UTC),
    536266112.22575563,
)
def test_the_time_left_is_counted_from_the_services_clock_and_any_deadline_can_be_waited_for(
    raw: dict[str, Any], deadline: str, server_date: datetime, received: float
) -> None:
    raw["deadline"] = deadline
    turn = parse_turn(raw, received, server_date)
    due = datetime.fromisoformat(deadline)
    left = ((due if due.tzinfo else due.replace(tzinfo=UTC)) - server_date).total_seconds()
    assert turn.remaining(received) == pytest.approx(min(left, MAX_DEADLINE_SECONDS), abs=1e-3)
    assert turn.remaining(received) <= MAX_DEADLINE_SECONDS


@given(turns(), st.text(max_size=30).filter(lambda text: not _iso(text)), SERVER_DATES)
def test_a_deadline_that_cannot_be_read_leaves_the_default_time(
    raw: dict[str, Any], deadline: str, server_date: datetime | None
) -> None:
    raw["deadline"] = deadline
    assert parse_turn(raw, 100.0, server_date).remaining(100.0) == DEFAULT_DEADLINE_SECONDS


def _iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def test_a_command_is_asked_a_turn_whose_deadline_is_centuries_away() -> None:
    """The wait for the command's line is bounded: an unbounded one (a deadline in the year 9999) was more
    than the platform's timers take, and the turn was left unplayed with an OverflowError."""
    legal = [{"type": "draw", "from": "stock"}]
    raw = {
        "turn": "g:3",
        "game_id": "g",
        "game": "golf",
        "seat": 1,
        "version": 3,
        "deadline": "9999-12-31T23:59:59Z",
        "view": {},
        "legal": legal,
    }
    turn = parse_turn(raw, time.monotonic(), datetime(2026, 1, 1, tzinfo=UTC))
    script = "import json, sys; print(json.dumps(json.loads(sys.stdin.readline())['legal'][0]), flush=True)"
    player = CommandPlayer(f"{sys.executable} -c {json.dumps(script)}")
    try:
        assert player.decide(turn) == legal[0]
    finally:
        player.stop()
