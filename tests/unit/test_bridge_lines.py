"""The `--command` line parser (workers/bridge/command.py): whatever a command writes, a line is either
exactly one of the turn's legal actions or refused with a reason, never an exception that would stop
the bridge; and a line too long to hold is dropped as it is read."""

from __future__ import annotations

import json
import os
import queue
import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.shuffle import SeededStream
from workers.bridge.command import EOF, MAX_LINE_BYTES, TOO_LONG, Accepted, Refused, parse_action_line, read_lines
from workers.bridge.turns import canonical

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
ACTIONS = st.dictionaries(st.sampled_from(["type", "position", "from", "card", "flip"]), JSON_VALUES, max_size=3)


def real_legal_actions() -> list[list[dict[str, Any]]]:
    """The legal actions of a few positions of real games, as turns carry them."""
    found = []
    for game in ("golf", "romme", "switch", "go5"):
        config = engine.make_config(game, engine.get_game(game).min_players, {}, f"lines-{game}")
        snap = engine.start(config)[0]
        rng = SeededStream("lines", game)
        for _ in range(12):
            seat = snap.to_act()[0]
            legal = engine.legal_actions(snap, seat)
            found.append(legal)
            snap = engine.act(snap, seat, rng.choice(legal))[0]
    return found


LEGAL_SETS = st.sampled_from(real_legal_actions()) | st.lists(ACTIONS, max_size=5)
# what Python's json takes or refuses in its own ways: NaN and the infinities, a lone surrogate escaped, a
# byte-order mark, more digits than int() converts, a key twice, a second value, NUL, stray whitespace
ODD_LINES = st.sampled_from(
    [
        b"NaN",
        b'{"type": NaN}',
        b'{"type": -Infinity}',
        b'{"type": "\\ud800"}',
        b'\xef\xbb\xbf{"type": "draw"}',
        b'{"type": ' + b"9" * 5000 + b"}",
        b'{"type": "draw", "type": "flip"}',
        b'{"type": "draw"} {"type": "draw"}',
        b'{"type": "draw"}\x00',
        b'\x0b{"type": "draw"}\x0c',
        b"\xc0\x80",
        b"\xed\xa0\x80",
    ]
)


@st.composite
def lines(draw: st.DrawFn, legal: list[dict[str, Any]]) -> bytes:
    """Any line: raw bytes, any text (not UTF-8 with a lone surrogate), what JSON parsers differ on, JSON
    of any shape, a legal action spelled another way or altered, huge or deeply nested text."""
    kind = draw(st.sampled_from(["bytes", "text", "odd", "json", "legal", "altered", "huge", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "text":  # any text, lone surrogates (not UTF-8) included
        return draw(st.text(st.characters(exclude_categories=()), max_size=60)).encode("utf-8", "surrogatepass")
    if kind == "odd":
        return draw(ODD_LINES)
    if kind == "json":
        return json.dumps(draw(JSON_VALUES)).encode()
    if kind == "huge":
        return b'{"type": "' + b"x" * draw(st.integers(MAX_LINE_BYTES - 20, MAX_LINE_BYTES + 20)) + b'"}'
    if kind == "deep":
        depth = draw(st.integers(1, 100_000))
        return b"[" * depth + b"]" * depth
    if not legal:
        return b"{}"
    action = dict(draw(st.sampled_from(legal)))
    if kind == "altered" and action:
        key = draw(st.sampled_from(sorted(action)))
        action[key] = draw(JSON_VALUES)
    keys = draw(st.permutations(sorted(action)))
    return json.dumps({key: action[key] for key in keys}, indent=draw(st.none() | st.integers(0, 2))).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_a_line_is_one_legal_action_or_refused_with_a_reason(data: st.DataObject) -> None:
    legal = data.draw(LEGAL_SETS)
    line = data.draw(lines(legal)) + data.draw(st.sampled_from([b"", b"\n", b"\r\n"]))
    result = parse_action_line(line, legal)
    if isinstance(result, Accepted):
        assert canonical(result.action) in {canonical(action) for action in legal}
        assert canonical(result.action) == _spelled(line)
        assert all(result.action is not action for action in legal), "the action is a copy, not the turn's own"
    else:
        assert isinstance(result, Refused)
        assert result.reason
        assert not any(canonical(action) == _spelled(line) for action in legal)


def _spelled(line: bytes) -> str | None:
    """The JSON value a UTF-8 line spells (a byte-order mark before it ignored), canonical; None if none."""
    try:
        return canonical(json.loads(line.decode("utf-8-sig")))
    except (ValueError, RecursionError):
        return None


@given(st.sampled_from(real_legal_actions()).filter(bool), st.data())
def test_every_legal_action_is_accepted_however_it_is_spelled(legal: list[dict[str, Any]], data: st.DataObject) -> None:
    action = data.draw(st.sampled_from(legal))
    keys = data.draw(st.permutations(sorted(action)))
    line = json.dumps({key: action[key] for key in keys}, indent=data.draw(st.none() | st.integers(0, 3)))
    assert parse_action_line(line.encode() + b"\n", legal) == Accepted(action)


def test_a_number_spelled_as_a_float_or_a_boolean_is_not_the_legal_integer() -> None:
    legal = [{"type": "flip", "position": 1}]
    assert isinstance(parse_action_line(b'{"type": "flip", "position": 1.0}', legal), Refused)
    assert isinstance(parse_action_line(b'{"type": "flip", "position": true}', legal), Refused)
    assert parse_action_line(b'{"position": 1, "type": "flip"}', legal) == Accepted(legal[0])


def test_only_jsons_whitespace_around_a_line_is_ignored() -> None:
    """Hypothesis found a vertical tab and a form feed around an action taken as that action, which no JSON
    parser reads: RFC 8259's whitespace is space, tab, CR and LF."""
    legal = [{"type": "draw"}]
    assert parse_action_line(b' \t{"type": "draw"}\r\n', legal) == Accepted(legal[0])
    assert isinstance(parse_action_line(b'\x0b{"type": "draw"}\x0c', legal), Refused)


def test_a_byte_order_mark_before_the_action_is_ignored() -> None:
    """Some Windows programs start their output with one (JSON's RFC 8259 lets a parser ignore it)."""
    legal = [{"type": "draw", "from": "stock"}]
    assert parse_action_line(b'\xef\xbb\xbf{"type": "draw", "from": "stock"}\r\n', legal) == Accepted(legal[0])
    assert isinstance(parse_action_line(b'{"type": "draw", "from": "stock"}\xef\xbb\xbf', legal), Refused)


def test_a_line_longer_than_the_limit_is_dropped_as_it_is_read_and_the_next_line_is_read_whole() -> None:
    read_end, write_end = os.pipe()
    got: queue.Queue[Any] = queue.Queue()
    with open(read_end, "rb") as stream:
        reader = threading.Thread(target=read_lines, args=(stream, got))
        reader.start()
        with open(write_end, "wb") as out:
            out.write(b"x" * (10 * MAX_LINE_BYTES) + b"\n" + b'{"type": "draw"}\n')
        reader.join(10)
    assert [got.get_nowait() for _ in range(3)] == [TOO_LONG, b'{"type": "draw"}\n', EOF]
    assert isinstance(parse_action_line(TOO_LONG, [{"type": "draw"}]), Refused)
