"""A 100-deal Golf match under `make run` (issue "Matches and a ladder", Done when): `random`, `greedy`, `expert`
and a registered bot played by the bridge (`--level greedy`), with a worker SIGKILLed during it (one of those
that play matches' quick bots). It finishes; its
record verifies offline; `expert` beats `random` with the interval clear of 0; the remote greedy and the house
greedy are not told apart (their paired interval holds 0); no game was started twice; the ladder orders
`random` below the others and `python -m workers.ladder rebuild` gives it again byte for byte.

The expert here thinks 20 ms a move (EXPERT_THINK_MS_MAX), so that the match fits in the suite: enough to beat
`random` by far, not to tell it from `greedy` in 100 deals (at its default 300 ms in Golf it is ahead of
greedy by about 1.5 points a hand, docs/strength.md), so the ladder's order between those two is not asserted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from domain import engine
from domain.verify import main as verify_main
from service.play.ladder import serialized
from tests.integration.conftest import ROOT, call, wait_until
from tests.integration.test_make_run import MakeRun, start_make_run, stop_make_run

pytestmark = pytest.mark.integration
DEALS = 100
Z_95, Z_999 = 1.96, 3.29  # the match's interval is 95%; two equal players fall outside it 1 time in 20, so the
# test asks that they fall inside the 99.9% interval (1 time in 1,000 outside by chance)
# The order round the table is the same in every game of a match (C-8), and the seat after `random` gains from its
# discards (about 1.5 points a hand in Golf, docs/strength.md): the expert sits there, and each greedy after a
# player of about its own strength (the expert at 20 ms, the house greedy), so that the two greedies are compared
# on equal terms. With the house greedy after `random` the two differed by about that much and the test failed.
ENTRANTS = [{"level": "random"}, {"level": "expert"}, {"level": "greedy"}, {"bot": "remote-greedy"}]
MATCH_WORKER = "match-worker:match-worker-0"
SETTINGS = {
    "READS_PER_SECOND": "0",
    "EXPERT_THINK_MS_MAX": "20",  # a quick expert: still far better than random, and the match fits in the suite
    "MATCH_DEALS_AT_ONCE": "12",
}


def paired(view: dict[str, Any], entrant: str, other: str) -> dict[str, Any]:
    result = next(result for result in view["results"] if result["entrant"] == entrant)
    found: dict[str, Any] = next(pair for pair in result["paired"] if pair["vs"] == other)
    return found


def test_a_100_deal_golf_match_survives_a_killed_worker_and_its_record_verifies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("match-under-faults")
    run: MakeRun = start_make_run(folder, workers=2, **SETTINGS)
    bridge: subprocess.Popen[bytes] | None = None
    try:
        status, bot = call("POST", f"{run.url}/v1/bots", {"name": "remote-greedy", "games": ["golf"]})
        assert status == 201, bot
        command = [sys.executable, "-m", "workers.bridge", "--url", run.url, "--token", bot["token"]]
        bridge = subprocess.Popen(
            [*command, "--level", "greedy", "--concurrency", "12"],
            cwd=ROOT,
            stdout=(folder / "bridge.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        body = {"game": "golf", "options": {"rounds": 1}, "entrants": ENTRANTS, "deals": DEALS, "seed": "faults"}
        status, match = call("POST", f"{run.url}/v1/matches", body)
        assert status == 201, match
        url = f"{run.url}/v1/matches/{match['id']}"

        def games_finished() -> int:
            found: int = call("GET", url)[1]["progress"]["games_finished"]
            return found

        wait_until(lambda: games_finished() >= 40, 300, "a tenth of the match")
        worker = run.pid(MATCH_WORKER)  # one of the workers that play the match's quick bots (bots-match)
        run.ctl("signal", "KILL", MATCH_WORKER)
        wait_until(lambda: run.pid(MATCH_WORKER) != worker, 60, "the killed worker to be started again")
        wait_until(lambda: call("GET", url)[1]["status"] == "finished", 900, "the match to finish")
        view = call("GET", url)[1]

        assert view["progress"] == {"games_finished": DEALS * 4, "games_total": DEALS * 4}
        assert len({game["game_id"] for game in view["games"]}) == DEALS * 4, "no game twice"
        expert_vs_random = paired(view, "expert", "random")
        assert expert_vs_random["ci95"][1] < 0, f"expert beats random (lower is better in Golf): {expert_vs_random}"
        remote_vs_house = paired(view, "bot:remote-greedy", "greedy")
        low, high = remote_vs_house["ci95"]
        mean, half = remote_vs_house["mean"], (high - low) / 2 * Z_999 / Z_95
        assert mean - half <= 0 <= mean + half, f"the remote and the house greedy are told apart: {remote_vs_house}"

        status, record = call("GET", f"{url}/record")
        assert status == 200, record
        path = Path(folder / "match.json")
        path.write_text(json.dumps(record), encoding="utf-8")
        assert verify_main([str(path)]) == 0

        ladders = {}
        for game in engine.all_games():
            status, served = call("GET", f"{run.url}/v1/ladder/{game.id}")
            assert status == 200, served
            ladders[game.id] = served["ladder"]
        order = [entry["entrant"] for entry in ladders["golf"]]
        assert order[-1] == "random", order  # expert above greedy needs the expert's full think time: see below
        rebuilt = folder / "ladders.json"
        command = [
            sys.executable,
            "-m",
            "workers.ladder",
            "--redis-url",
            run.redis_url,
            "rebuild",
            "--out",
            str(rebuilt),
        ]
        subprocess.run(command, cwd=ROOT, check=True, timeout=300)
        assert rebuilt.read_text(encoding="utf-8") == serialized(ladders) + "\n", "the rebuild is the served ladder"
    finally:
        if bridge is not None:
            bridge.send_signal(signal.SIGTERM)
            bridge.wait(30)
        stop_make_run(run)
