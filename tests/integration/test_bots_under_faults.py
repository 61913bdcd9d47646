"""Registered bots played by bridges under `make run` (real Redis, gunicorn, workers), each bridge SIGKILLed twice
mid-run and started again (issue "Outside bots", Done when):

- `remote-greedy` is a bridge with `--level greedy`; `remote-cmd` a bridge with `--command` (a small program of
  the test's on its stdin and stdout); `never-on` is registered, seated and never connects.
- 42 Golf games seat them beside house bots (the never-on bot's games with a short `turn_seconds`).
- Every game finishes and its audit passes; its stream is a gap-free chain (no version played twice); every
  move of a registered bot's seat was made by its bot or by its turn timeout (none lost); the never-on bot's
  moves were all timeouts, counted in its profile.
- Every view a bridge received (`--log-turns`) equals, in its JSON, the seat's view that the game's events
  rebuild at that version (`/replay?at=` with the bot's token): no hidden card reached a bot.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import BIN, ROOT, call, wait_until
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain
from tests.integration.test_make_run import MakeRun, start_make_run, stop_make_run

pytestmark = pytest.mark.integration
ROUNDS = {"rounds": 2}
HOUSE = [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}]
COMMAND_BOT = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        turn = json.loads(line)
        print(json.dumps(turn["legal"][-1]), flush=True)
    """
)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class BridgeProcess:
    """One bot's bridge, started again after each kill, logging every turn it receives."""

    def __init__(self, run: MakeRun, stream_url: str, token: str, mode: list[str], folder: Path, name: str) -> None:
        self.command = [
            str(BIN / "python"),
            "-m",
            "workers.bridge",
            "--url",
            stream_url,
            "--token",
            token,
            *mode,
            "--concurrency",
            "4",
            "--wait",
            "5",
            "--log-turns",
            str(folder / f"{name}.turns.jsonl"),
        ]
        self.turns_log = folder / f"{name}.turns.jsonl"
        self.output = (folder / f"{name}.log").open("ab")
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.command, cwd=ROOT, stdout=self.output, stderr=subprocess.STDOUT)

    def received(self) -> list[dict[str, Any]]:
        """Every turn the bridge logged (a line cut by a kill is skipped)."""
        turns = []
        for line in self.turns_log.read_text(encoding="utf-8").splitlines() if self.turns_log.exists() else []:
            try:
                turns.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return turns

    def kill_and_restart(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        time.sleep(0.5)
        self.process = self._start()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.output.close()


def register(run: MakeRun, name: str) -> str:
    status, bot = call("POST", f"{run.url}/v1/bots", {"name": name, "games": ["golf"]})
    assert status == 201, bot
    token: str = bot["token"]
    return token


def create(run: MakeRun, seats: list[dict[str, Any]], turn_seconds: int | None = None) -> dict[str, Any]:
    body = {"game": "golf", "seats": seats, "options": ROUNDS, "turn_seconds": turn_seconds}
    status, created = call("POST", f"{run.url}/v1/games", body)
    assert status == 201, created
    return created


def test_bridges_killed_twice_each_lose_no_turn_play_none_twice_and_see_only_their_seats_views(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("bots-under-faults")
    run = start_make_run(folder, workers=2, READS_PER_SECOND="0")  # the checks below read every turn back
    bridges: list[BridgeProcess] = []
    try:
        stream_url = run.url.rsplit(":", 1)[0] + ":" + _stream_port(run)
        tokens = {name: register(run, name) for name in ("remote-greedy", "remote-cmd", "never-on")}
        remote_greedy = {"kind": "bot", "bot": "remote-greedy"}
        remote_cmd = {"kind": "bot", "bot": "remote-cmd"}
        never_on = {"kind": "bot", "bot": "never-on"}
        games = [create(run, [remote_greedy, *HOUSE]) for _ in range(16)]
        games += [create(run, [*HOUSE, remote_cmd]) for _ in range(16)]
        games += [create(run, [remote_greedy, remote_cmd, never_on], turn_seconds=1) for _ in range(6)]
        games += [create(run, [never_on, HOUSE[0]], turn_seconds=1) for _ in range(4)]
        program = folder / "command_bot.py"
        program.write_text(COMMAND_BOT, encoding="utf-8")
        modes = {"remote-greedy": ["--level", "greedy"], "remote-cmd": ["--command", f"{sys.executable} {program}"]}
        bridges = [BridgeProcess(run, stream_url, tokens[name], mode, folder, name) for name, mode in modes.items()]
        for _ in range(2):  # each bridge twice, once it has played a while since its last start
            for bridge in bridges:
                wanted = len(bridge.received()) + 15
                wait_until(lambda b=bridge, n=wanted: len(b.received()) >= n, 120, "the bridge to play some turns")  # type: ignore[misc]
                bridge.kill_and_restart()
        for created in games:
            wait_until(lambda c=created: _status(run, c["id"]) == "finished", 300, "every game to finish")  # type: ignore[misc]
        for bridge in bridges:
            bridge.stop()

        timeouts = dict.fromkeys(tokens, 0)
        for created in games:
            assert_stream_is_a_chain(run.redis_url, created["id"], created["seed_commitment"])
            status, audit = call("GET", f"{run.url}/v1/games/{created['id']}/audit")
            assert status == 200 and audit["chain_ok"] and audit["replay_ok"] and audit["complete"], audit
            status, record = call("GET", f"{run.url}/v1/games/{created['id']}/record")
            bot_seats = {seat["seat"]: seat["bot"] for seat in record["seats"] if "bot" in seat}
            for event in record["events"]:
                seat = event.get("seat") if event["actor"] == "system" else event["actor"]
                if seat in bot_seats and event["actor"] == "system" and event.get("reason") == "turn_timeout":
                    timeouts[bot_seats[seat]] += 1
                elif bot_seats.get(event["actor"]) == "never-on":
                    raise AssertionError(f"the bot that never connected made a move itself: {event}")
        assert timeouts["never-on"] > 0
        status, profile = call("GET", f"{run.url}/v1/bots/never-on")
        assert profile["timeouts"] == timeouts["never-on"] and profile["played"] == 10 and not profile["online"]
        for name in ("remote-greedy", "remote-cmd"):
            status, profile = call("GET", f"{run.url}/v1/bots/{name}")
            assert (profile["played"], profile["playing"], profile["timeouts"]) == (22, 0, timeouts[name]), profile

        checked = 0
        for bridge, name in zip(bridges, ("remote-greedy", "remote-cmd"), strict=True):
            received = bridge.received()
            assert {turn["game_id"] for turn in received} <= {created["id"] for created in games}
            for turn in received:
                status, replay = call(
                    "GET",
                    f"{run.url}/v1/games/{turn['game_id']}/replay?at={turn['version']}",
                    headers={"Authorization": f"Bearer {tokens[name]}"},
                )
                assert status == 200, replay
                replay.pop("at")
                assert canonical(turn["view"]) == canonical(replay), f"{name} got a view its seat may not see"
                checked += 1
        assert checked > 100
    finally:
        for bridge in bridges:
            if bridge.process.poll() is None:
                bridge.stop()
        stop_make_run(run)


def _stream_port(run: MakeRun) -> str:
    """The stream tier's port, as `make run` says it."""
    for line in run.output().splitlines():
        if "stream tier" in line.lower() and "http://" in line:
            return line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1].rstrip(").,")
    raise AssertionError(f"make run did not say where its stream tier is: {run.output()[-2000:]}")


def _status(run: MakeRun, game_id: str) -> str:
    status, view = call("GET", f"{run.url}/v1/games/{game_id}")
    assert status == 200, view
    found: str = view["status"]
    return found
