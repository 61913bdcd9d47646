"""What the bridge's client makes of any HTTP answer (workers/bridge/client.py): whatever the body and the
`Retry-After` and `Date` headers hold, an Answer whose body is the JSON or None, whose Retry-After is a
wait the bridge can take and whose Date is a time or None, never an exception that would stop the poller
(it catches only the client's own)."""

from __future__ import annotations

import math
import threading
from datetime import datetime

from hypothesis import example, given
from hypothesis import strategies as st

from workers.bridge.client import RETRY_AFTER_MAX_SECONDS, _answer

HEADER_VALUES = st.none() | st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=40)
NUMBERS = st.floats(allow_nan=True, allow_infinity=True).map(repr) | st.integers().map(str)
BODIES = st.binary(max_size=300) | st.integers(1, 100_000).map(lambda depth: b"[" * depth + b"]" * depth)


@given(st.integers(100, 599), BODIES, HEADER_VALUES | NUMBERS, HEADER_VALUES)
@example(503, b"[" * 100_000 + b"]" * 100_000, "1e12", None)
@example(429, b"{}", "inf", None)
@example(429, b"{}", "nan", "Mon, 01 Jan 2024 00:00:00 GMT")
def test_any_answer_is_read_without_raising_and_its_retry_after_can_be_waited_for(
    status: int, raw: bytes, retry_after: str | None, date: str | None
) -> None:
    headers = {name: value for name, value in (("Retry-After", retry_after), ("Date", date)) if value is not None}
    answer = _answer(status, raw, headers)
    assert answer.status == status
    if answer.retry_after is not None:
        assert math.isfinite(answer.retry_after) and 0 <= answer.retry_after <= RETRY_AFTER_MAX_SECONDS
    assert answer.date is None or isinstance(answer.date, datetime)


def test_a_retry_after_is_taken_as_the_service_says_up_to_its_most() -> None:
    assert RETRY_AFTER_MAX_SECONDS < threading.TIMEOUT_MAX  # a wait the platform's timers take
    assert _answer(503, b"", {"Retry-After": "7"}).retry_after == 7.0
    assert _answer(503, b"", {"Retry-After": "-3"}).retry_after == 0.0
    assert _answer(503, b"", {"Retry-After": "1e12"}).retry_after == RETRY_AFTER_MAX_SECONDS
    assert _answer(503, b"", {"Retry-After": "nan"}).retry_after is None
    assert _answer(503, b"", {"Retry-After": "soon"}).retry_after is None


def test_a_body_too_deeply_nested_to_read_is_no_body() -> None:
    assert _answer(200, b"[" * 100_000 + b"]" * 100_000, {}).body is None
    assert _answer(200, b'{"turns": []}', {}).body == {"turns": []}
