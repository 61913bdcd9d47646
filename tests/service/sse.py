"""Reading a Server-Sent Events answer of the Flask test client, message by message, with a time limit."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from werkzeug.test import TestResponse

END = object()


class SseReader:
    """Parses the stream in a background thread; `next()` gives one message or fails after `timeout`."""

    def __init__(self, response: TestResponse) -> None:
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "text/event-stream", response.mimetype
        self.response = response
        self._messages: queue.Queue[Any] = queue.Queue()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffer = ""
        try:
            for chunk in self.response.response:
                if self._closing.is_set():
                    break
                buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
                while "\n\n" in buffer:
                    frame, buffer = buffer.split("\n\n", 1)
                    self._messages.put(parse(frame))
        except Exception as error:  # surfaced to the test by next()
            self._messages.put(error)
        finally:
            self.response.close()  # in this thread: the generator ends, and with it the stream's follower
        self._messages.put(END)

    def next(self, timeout: float = 5) -> dict[str, Any] | None:
        """The next message ({"comment"} or {"id"?, "event", "data"}); None once the stream has ended."""
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout} s") from None
        if isinstance(message, Exception):
            raise message
        if message is END:
            self._messages.put(END)
            return None
        found: dict[str, Any] = message
        return found

    def until(self, check: Any, timeout: float = 5) -> list[dict[str, Any]]:
        """Messages up to and including the first for which check(message) is true."""
        seen = []
        while True:
            message = self.next(timeout)
            assert message is not None, f"the stream ended before the awaited message; saw {seen}"
            seen.append(message)
            if check(message):
                return seen

    def rest(self, timeout: float = 10) -> list[dict[str, Any]]:
        """Every message until the stream ends."""
        out = []
        while (message := self.next(timeout)) is not None:
            out.append(message)
        return out

    def close(self) -> None:
        """Stop reading at the next message (a heartbeat at the latest)."""
        self._closing.set()


def parse(frame: str) -> dict[str, Any]:
    """One SSE message: a comment, or its fields with `data` parsed as JSON."""
    if frame.startswith(":"):
        return {"comment": frame[1:].strip()}
    fields: dict[str, Any] = {}
    for line in frame.split("\n"):
        name, _, value = line.partition(": ")
        assert name in ("id", "event", "data", "retry"), f"unexpected field in {frame!r}"
        assert name not in fields, f"a field twice in {frame!r}"
        fields[name] = value
    fields["data"] = json.loads(fields["data"])
    return fields


def events_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The event records among messages (not views, not comments), checking id and type against the record."""
    records = []
    for message in messages:
        if "comment" in message or message.get("event") == "view":
            continue
        record = message["data"]
        assert message["id"] == str(record["seq"]) and message["event"] == record["type"], message
        records.append(record)
    return records
