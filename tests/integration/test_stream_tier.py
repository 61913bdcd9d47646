"""`make run`'s stream tier: watchers on its own port get every event of a game played through the API's port.

The stream tier is a second gunicorn under supervisord (scripts/supervisord.conf, `[program:stream]`, under SCHED_IDLE;
the bot workers at nice WORKER_PRIORITY)
on STREAM_PORT, fed by the same Redis Streams XREAD: an SSE stream and a long-poll opened on it follow
a two-human Golf game from its first event to its last while every action goes to PORT.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import call, free_port
from tests.integration.test_guarantees import act, next_move, two_human_golf
from tests.integration.test_make_run import start_make_run, stop_make_run

pytestmark = pytest.mark.integration


class StreamWatcher(threading.Thread):
    """GET .../stream from seq 0 to the stream's end; `first` is set once a message has arrived."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.records: list[dict[str, Any]] = []
        self.first = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with urllib.request.urlopen(self.url, timeout=60) as response:
                assert response.headers["Content-Type"].startswith("text/event-stream")
                for line in response:
                    if line.startswith(b"data: "):
                        self.records.append(json.loads(line[len(b"data: ") :]))
                        self.first.set()
        except BaseException as error:  # surfaced by the test
            self.error = error
        finally:
            self.first.set()


class LongPollWatcher(threading.Thread):
    """GET .../events?after=<last>&wait=10 again and again until the game's last event."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.records: list[dict[str, Any]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            after = 0
            while not self.records or self.records[-1]["type"] != "SeedRevealed":
                status, body = call("GET", f"{self.url}?after={after}&wait=10")
                assert status == 200, body
                self.records += body["events"]
                after = self.records[-1]["seq"] if self.records else after
        except BaseException as error:  # surfaced by the test
            self.error = error


def children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux)."""
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_watchers_on_the_stream_tier_get_every_event_of_a_game_played_through_the_api(tmp_path: Path) -> None:
    stream_port = free_port()
    run = start_make_run(tmp_path, STREAM_PORT=str(stream_port))
    try:
        stream_url = f"http://127.0.0.1:{stream_port}"
        assert f"listens at {stream_url}" in run.output()
        assert run.pid("stream") != run.pid("api")  # its own processes
        # Under SCHED_IDLE (STREAM_PRIORITY's default): on a shared host the stream tier gets only the CPU no
        # action wants; its gevent worker, forked from that master, inherits it.
        stream_tier = [run.pid("stream"), *children(run.pid("stream"))]
        assert {os.sched_getscheduler(pid) for pid in stream_tier} == {os.SCHED_IDLE}
        assert os.sched_getscheduler(run.pid("api")) == os.SCHED_OTHER
        # The bot workers at nice WORKER_PRIORITY (default 10) above the API: people's requests get the CPU first.
        api_nice = os.getpriority(os.PRIO_PROCESS, run.pid("api"))
        for worker in ("worker:worker-0", "bot-worker"):
            assert os.getpriority(os.PRIO_PROCESS, run.pid(worker)) == min(19, api_nice + 10), worker
        created, game_url, tokens = two_human_golf(run.url, rounds=1)
        game_path = f"/v1/games/{created['id']}"
        stream = StreamWatcher(f"{stream_url}{game_path}/stream?after=0")
        poll = LongPollWatcher(f"{stream_url}{game_path}/events")
        stream.start()
        poll.start()
        assert stream.first.wait(30) and stream.error is None  # following before the first action
        actions = 0
        while (move := next_move(game_url, tokens)) is not None:
            token, action, _ = move
            status, answer = act(game_url, token, action)
            assert status == 200, answer
            actions += 1
        stream.join(60)
        poll.join(60)
        assert stream.error is None and poll.error is None, (stream.error, poll.error)
        status, body = call("GET", f"{run.url}{game_path}/events")
        assert status == 200
        assert actions > 10
        assert stream.records == body["events"]
        assert poll.records == body["events"]
        assert [record["seq"] for record in body["events"]] == list(range(1, len(body["events"]) + 1))
    finally:
        stop_make_run(run)
