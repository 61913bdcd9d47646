"""`make run` as a user starts it: supervisord keeps Redis, the worker and the API running.

Each test starts `make run` itself (PORT, VAR_DIR and REDIS_PORT in a temporary folder) and kills
its children with SIGKILL, as a crash would: the one that died comes back on its own while the others
keep serving, and stopping `make run` (SIGTERM to make, or SIGINT to its process group as Ctrl-C in
a terminal does) leaves no process and no RQ scheduler lock behind.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.conftest import (
    BIN,
    ROOT,
    call,
    free_port,
    service_env,
    start_redis,
    start_worker,
    stop,
    wait_until,
)
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain
from tests.integration.test_guarantees import act, next_move, stream_records, two_human_golf
from tests.integration.test_workers import bot_games, make_service, unfinished

pytestmark = pytest.mark.integration
SCHEDULER_LOCK = "rq:scheduler-lock:bots"
RESUME_SECONDS = 2.0  # the API serves again within 2 s of Redis being back (issue 16)
BOT_RESUME_SECONDS = 10.0  # the next bot turn: about a second alone, several on a loaded machine
EXPERT = {"kind": "bot", "level": "expert", "think_ms": 30}  # about 30 ms a move: the game lasts a while
FOUR_BOTS = [EXPERT, {"kind": "bot", "level": "greedy"}, EXPERT, {"kind": "bot", "level": "random"}]


@dataclasses.dataclass
class MakeRun:
    """A running `make run` and where its parts are."""

    process: subprocess.Popen[bytes]
    url: str
    var: Path
    log: Path
    redis_port: int

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def ctl(self, *args: str) -> str:
        """supervisorctl against this run's supervisord."""
        socket_url = f"unix://{self.var}/run/supervisor.sock"
        command = [str(BIN / "supervisorctl"), "-s", socket_url, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout

    def pid(self, name: str) -> int:
        """The pid of a child (redis, api, worker:worker-0), once it runs."""
        found: list[int] = []

        def running() -> bool:
            text = self.ctl("pid", name).strip()
            found[:] = [int(text)] if text.isdigit() and int(text) > 0 else []
            return bool(found)

        wait_until(running, 60, f"{name} to run")
        return found[0]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def descendants(self) -> set[int]:
        """Every process below `make run` (supervisord, Redis, workers with their schedulers, gunicorn)."""
        return descendants_of(self.process.pid)


def descendants_of(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def make_run_env(folder: Path, workers: int = 1, **settings: str) -> dict[str, str]:
    """The environment of a `make run` on free ports with everything it writes under `folder`
    (`settings`: more of its environment, REDIS_URL for one, or its own PORT, STREAM_PORT, VAR_DIR)."""
    env = {
        **os.environ,
        "PORT": str(free_port()),
        "STREAM_PORT": str(free_port()),
        "REDIS_PORT": str(free_port()),
        "VAR_DIR": str(folder / "var"),
        "VENV": str(BIN.parent),
        "WORKERS": str(workers),
        "GAMES_PER_MINUTE": "0",
        "EXPERT_GAMES_PER_CLIENT": "0",  # its games with expert seats outlast the tests that made them
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("REDIS_URL", "QUEUE_REDIS_URL", "PROMETHEUS_MULTIPROC_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    env.update(settings)
    return env


def spawn_make_run(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`make run` in a session of its own, its output in `log`."""
    with log.open("wb") as out:
        # As a terminal's shell starts it: SIGINT at its default disposition even when the tests run with
        # it ignored (a background job of a non-interactive shell), which make and bash would inherit.
        return subprocess.Popen(
            ["env", "--default-signal=INT", "make", "--no-print-directory", "run"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def start_make_run(folder: Path, workers: int = 1, **settings: str) -> MakeRun:
    """`make run` (`make_run_env`), once it says it is up."""
    env = make_run_env(folder, workers, **settings)
    log = folder / "make-run.log"
    process = spawn_make_run(env, log)
    run = MakeRun(process, f"http://127.0.0.1:{env['PORT']}", Path(env["VAR_DIR"]), log, int(env["REDIS_PORT"]))
    try:
        wait_until(lambda: "Card table is up" in run.output(), 180, "make run to say it is up")
    except AssertionError:
        stop_make_run(run)
        raise AssertionError(run.output()[-3000:]) from None
    assert f"point your client at {run.url}" in run.output()
    return run


def stop_make_run(run: MakeRun, how: str = "sigterm") -> None:
    """Stop as a user does: SIGTERM to make, or SIGINT to its process group (Ctrl-C in a terminal)."""
    if run.process.poll() is not None:
        return
    if how == "sigint":
        os.killpg(run.process.pid, signal.SIGINT)
    else:
        run.process.send_signal(signal.SIGTERM)
    try:
        run.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        for pid in run.descendants():
            os.kill(pid, signal.SIGKILL)
        run.process.kill()
        run.process.wait()


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeRun]:
    run = start_make_run(tmp_path_factory.mktemp("make-run"))
    yield run
    stop_make_run(run)


def create(run: MakeRun, seats: list[dict[str, Any]], game: str = "golf", **options: Any) -> dict[str, Any]:
    status, created = call("POST", f"{run.url}/v1/games", {"game": game, "seats": seats, "options": options})
    assert status == 201, created
    return created


def view_of(run: MakeRun, game_id: str) -> dict[str, Any]:
    status, view = call("GET", f"{run.url}/v1/games/{game_id}")
    assert status == 200, view
    return view


def wait_finished(run: MakeRun, created: dict[str, Any], seconds: float) -> None:
    """The game ends; its stream is a gap-free chain (no version played twice) and its audit passes."""
    wait_until(lambda: view_of(run, created["id"])["status"] == "finished", seconds, "the bot game to finish")
    assert_stream_is_a_chain(run.redis_url, created["id"], created["seed_commitment"])
    status, audit = call("GET", f"{run.url}/v1/games/{created['id']}/audit")
    assert status == 200 and audit["chain_ok"] and audit["replay_ok"] and audit["complete"], audit


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]  # (sample name, labels) -> value


def scrape(run: MakeRun) -> Samples:
    """GET /metrics, parsed as Prometheus text: (sample name, labels) -> value."""
    with urllib.request.urlopen(f"{run.url}/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(value for (sample, have), value in samples.items() if sample == name and wanted <= set(have))


# ---------------------------------------------------------------- a child dies, the rest keep serving


def test_redis_killed_under_make_run_gives_503_then_serves_again_by_itself_losing_no_acknowledged_action(
    make_run: MakeRun,
) -> None:
    played, played_url, played_tokens = two_human_golf(make_run.url, rounds=9)
    _, game_url, tokens = two_human_golf(make_run.url, rounds=2)
    bots = create(make_run, FOUR_BOTS, rounds=18)
    before = scrape(make_run)
    acknowledged: list[dict[str, Any]] = []
    done = threading.Event()

    def play() -> None:  # actions as fast as they go, through the outage and after it
        while not done.is_set():
            try:
                move = next_move(played_url, played_tokens)
            except AssertionError:
                continue  # the view was a 503 while Redis was away
            if move is None:
                return
            token, action, view = move
            status, answer = act(played_url, token, {**action, "expected_version": view["version"]})
            if status == 200:
                acknowledged.append(answer)
            else:
                assert (status, answer["code"]) in ((503, "store_unavailable"), (409, "version_conflict")), answer

    player = threading.Thread(target=play)
    player.start()
    supervisord = int((make_run.var / "run" / "supervisord.pid").read_text())
    try:
        wait_until(lambda: len(acknowledged) >= 10, 60, "actions under way")
        old_redis = make_run.pid("redis")
        api, worker = make_run.pid("api"), make_run.pid("worker:worker-0")
        # supervisord is paused while Redis dies, so that the outage lasts long enough to look at
        os.kill(supervisord, signal.SIGSTOP)
        try:
            os.kill(old_redis, signal.SIGKILL)
            wait_until(lambda: not alive(old_redis), 10, "redis-server to die")
            status, answer = act(game_url, tokens[0], {"type": "flip", "position": 0, "expected_version": 1})
            assert (status, answer["code"]) == (503, "store_unavailable"), answer
            status, answer = call("GET", f"{make_run.url}/readyz")
            assert (status, answer["code"]) == (503, "store_unavailable"), answer
            assert call("GET", f"{make_run.url}/healthz")[0] == 200
        finally:
            os.kill(supervisord, signal.SIGCONT)
        client = redis.Redis(port=make_run.redis_port)
        wait_until(client.ping, 60, "supervisord to start redis-server again")
        back = time.monotonic()
        moved = int(client.xlen(f"game:{{{bots['id']}}}:events"))

        def acts() -> bool:
            move = next_move(game_url, tokens)
            assert move is not None
            token, action, view = move
            return act(game_url, token, {**action, "expected_version": view["version"]})[0] == 200

        wait_until(acts, 30, "an action to succeed again")
        action_resumed = time.monotonic() - back
        wait_until(lambda: client.xlen(f"game:{{{bots['id']}}}:events") > moved, 60, "a bot turn again")
        bot_resumed = time.monotonic() - back
        client.close()
    finally:
        done.set()
        player.join(timeout=60)
    print(
        f"\nredis SIGKILLed after {len(acknowledged)} acknowledged actions; the next action was acknowledged "
        f"{action_resumed:.2f} s and a bot turn played {bot_resumed:.2f} s after Redis answered again"
    )
    assert make_run.pid("redis") != old_redis
    assert (make_run.pid("api"), make_run.pid("worker:worker-0")) == (api, worker), "only Redis was started again"
    assert action_resumed <= RESUME_SECONDS and bot_resumed <= BOT_RESUME_SECONDS
    stored = {record["seq"]: record for record in stream_records(make_run.redis_url, played["id"])}
    for answer in acknowledged:
        for event in answer["events"]:
            assert stored[event["seq"]] == event, "an acknowledged event is stored exactly as answered"
    assert_stream_is_a_chain(make_run.redis_url, played["id"], played["seed_commitment"])
    after = scrape(make_run)
    assert total(after, "cardtable_store_errors_total") > total(before, "cardtable_store_errors_total")
    wait_finished(make_run, bots, 240)


def test_a_killed_worker_is_started_again_and_a_bot_game_finishes_with_no_version_played_twice(
    make_run: MakeRun,
) -> None:
    client = redis.Redis(port=make_run.redis_port)
    created = create(make_run, FOUR_BOTS, rounds=9)
    worker = make_run.pid("worker:worker-0")
    wait_until(lambda: client.get(SCHEDULER_LOCK) is not None, 30, "the worker's scheduler to hold its lock")
    scheduler = descendants_of(worker)
    assert scheduler, "RQ's scheduler runs as the worker's child"
    wait_until(lambda: view_of(make_run, created["id"])["version"] > 20, 60, "the bots to play")
    api, redis_pid = make_run.pid("api"), make_run.pid("redis")
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: not any(alive(pid) for pid in scheduler), 30, "the orphaned scheduler to stop")
    assert make_run.pid("worker:worker-0") != worker
    wait_finished(make_run, created, 240)
    assert (make_run.pid("api"), make_run.pid("redis")) == (api, redis_pid), "only the worker was started again"
    client.close()


def test_a_killed_api_is_started_again(make_run: MakeRun) -> None:
    api = make_run.pid("api")
    api_workers = descendants_of(api)
    assert api_workers, "gunicorn's worker processes"
    worker, redis_pid = make_run.pid("worker:worker-0"), make_run.pid("redis")
    created = create(make_run, FOUR_BOTS)
    os.kill(api, signal.SIGKILL)
    wait_until(lambda: make_run.pid("api") != api, 60, "supervisord to start the API again")
    wait_until(lambda: not any(alive(pid) for pid in api_workers), 30, "the dead master's workers to leave")
    wait_until(lambda: call("GET", f"{make_run.url}/healthz")[0] == 200, 60, "the API to answer again")
    assert view_of(make_run, created["id"])["id"] == created["id"]
    assert (make_run.pid("worker:worker-0"), make_run.pid("redis")) == (worker, redis_pid)
    wait_finished(make_run, created, 240)  # no bot game of this test plays on into the next


# ---------------------------------------------------------------- metrics and request ids


def test_metrics_parse_as_prometheus_text_and_move_with_requests_and_bot_turns(make_run: MakeRun) -> None:
    before = scrape(make_run)
    requests_before = total(before, "cardtable_http_requests_total", route="/v1/games/<game_id>", status="200")
    created = create(make_run, FOUR_BOTS)
    wait_finished(make_run, created, 240)
    status, _ = call("GET", f"{make_run.url}/v1/games/{created['id']}/events?after=0&wait=1")
    assert status == 200
    after = scrape(make_run)
    assert total(after, "cardtable_http_requests_total", route="/v1/games/<game_id>", status="200") > requests_before
    assert not any(dict(labels).get("route", "").startswith("/v1/games/" + created["id"]) for _, labels in after), (
        "routes are URL rules, not paths"
    )

    # a job counts its turns after their append: the game's last ones may not be counted yet
    def counted() -> bool:
        return golf_change(before, scrape(make_run), "cardtable_bot_turns_total") >= 10

    wait_until(counted, 30, "the worker's bot turns counted in the same metrics")
    # A worker counts a turn after storing it, and a scrape reads the counter and the histogram one
    # after the other: the two agree on a scrape that no turn fell into.
    wait_until(lambda: turns_and_delays_agree(scrape(make_run)), 60, "a scrape with each bot turn's delay")
    assert golf_change(before, after, "cardtable_games_finished") >= 1
    assert ("cardtable_bot_queue_depth", (("state", "queued"),)) in after
    assert total(after, "cardtable_watchers_open", kind="longpoll") == 0, "no long-poll is open now"
    assert total(after, "cardtable_store_up") == 1


def test_a_match_yields_while_a_person_plays_and_still_finishes(make_run: MakeRun) -> None:
    """While a person's actions come through the API, the matches' workers rest after each game's turns
    (service/play/match_pace.py), shown in the metrics; the match finishes all the same."""
    rested = total(scrape(make_run), "cardtable_match_rest_seconds_total")
    body = {"game": "golf", "options": {"rounds": 1}, "entrants": [{"level": "greedy"}, {"level": "random"}]}
    status, match = call("POST", f"{make_run.url}/v1/matches", {**body, "deals": 40})
    assert status == 201, match
    _, game_url, tokens = two_human_golf(make_run.url, rounds=9)
    deadline = time.monotonic() + 60
    while total(scrape(make_run), "cardtable_match_rest_seconds_total") <= rested:
        assert time.monotonic() < deadline, "no rest of a match's worker while a person played"
        found = next_move(game_url, tokens)
        assert found is not None, "the person's game ended before any rest"
        token, action, view = found
        status, answer = act(game_url, token, {**action, "expected_version": view["version"]})
        assert status == 200, answer

    def finished() -> bool:
        status, view = call("GET", f"{make_run.url}/v1/matches/{match['id']}")
        return status == 200 and view["status"] == "finished"

    wait_until(finished, 120, "the match to finish")


def golf_change(before: Samples, after: Samples, name: str) -> float:
    """How much golf's samples of `name` grew between two scrapes."""
    return total(after, name, game="golf") - total(before, name, game="golf")


def turns_and_delays_agree(samples: Samples) -> bool:
    """Whether every counted bot turn has its delay observed."""
    delays = total(samples, "cardtable_bot_turn_delay_seconds_count")
    return total(samples, "cardtable_bot_turns_total") == delays


def test_a_long_poll_is_counted_while_it_waits(make_run: MakeRun) -> None:
    created = create(make_run, [{"kind": "human"}, {"kind": "human"}])
    url = f"{make_run.url}/v1/games/{created['id']}/events?after=99&wait=20"
    poll = threading.Thread(target=call, args=("GET", url))
    poll.start()
    try:
        wait_until(lambda: total(scrape(make_run), "cardtable_watchers_open", kind="longpoll") == 1, 15, "the gauge")
    finally:
        poll.join(timeout=30)
    assert total(scrape(make_run), "cardtable_watchers_open", kind="longpoll") == 0


def test_a_request_has_one_access_line_the_apps(make_run: MakeRun) -> None:
    """gunicorn's own access line (no request id) is not written beside the app's JSON line: the health
    checks `make run` made on starting and a request now are in the log once each."""
    request = urllib.request.Request(f"{make_run.url}/v1/catalog", headers={"X-Request-Id": "one-line"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    wait_until(lambda: '"request_id": "one-line"' in make_run.output(), 10, "the app's access line")
    lines = [json.loads(line) for line in make_run.output().splitlines() if line.startswith("{")]
    assert [entry for entry in lines if entry["logger"] == "cardtable.access" and entry["path"] == "/healthz"]
    assert [entry["message"] for entry in lines if entry["logger"] == "gunicorn.access"] == []


def test_the_request_id_is_echoed_and_carried_by_the_json_log_line(make_run: MakeRun) -> None:
    request = urllib.request.Request(f"{make_run.url}/v1/catalog", headers={"X-Request-Id": "trace-42.a:b"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["X-Request-Id"] == "trace-42.a:b"
    request = urllib.request.Request(f"{make_run.url}/v1/catalog", headers={"X-Request-Id": "no spaces <allowed>"})
    with urllib.request.urlopen(request, timeout=30) as response:
        generated = response.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", generated)

    def logged(request_id: str) -> dict[str, Any] | None:
        for line in make_run.output().splitlines():
            if request_id in line and line.startswith("{"):
                entry: dict[str, Any] = json.loads(line)
                if entry.get("request_id") == request_id:
                    return entry
        return None

    wait_until(lambda: logged("trace-42.a:b") and logged(generated), 10, "the access log lines")
    entry = logged("trace-42.a:b")
    assert entry is not None
    assert (entry["route"], entry["status"], entry["method"]) == ("/v1/catalog", 200, "GET")


# ---------------------------------------------------------------- stopping


@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_stopping_make_run_leaves_no_process_and_no_scheduler_lock(tmp_path: Path, how: str) -> None:
    run = start_make_run(tmp_path, workers=2)
    try:
        created = create(run, [{"kind": "human"}, {"kind": "bot"}])
        client = redis.Redis(port=run.redis_port)
        wait_until(lambda: client.get(SCHEDULER_LOCK) is not None, 30, "a scheduler to hold its lock")
        client.close()
        schedulers = descendants_of(run.pid("worker:worker-0")) | descendants_of(run.pid("worker:worker-1"))
        assert schedulers, "one worker's scheduler runs as its child"
        status = run.ctl("status")  # as docs/operations.md shows it
        for name in ("api", "redis", "worker:worker-0", "worker:worker-1", "bot-worker", "match-worker:match-worker-0"):
            assert re.search(rf"^{re.escape(name)} +RUNNING +pid \d+", status, re.MULTILINE), status
        children = run.descendants()
        assert len(children) >= 8, children  # bash, supervisord, redis, 2 workers, a scheduler, gunicorn and its 2
    finally:
        stop_make_run(run, how)
    assert run.process.returncode is not None
    left = [pid for pid in children if alive(pid)]
    assert not left, f"processes left after {how}: {left}"
    assert "Stopping..." in run.output()
    assert "supervisord ended by itself" not in run.output(), "it was asked to stop"
    # The data folder as Redis left it, in a redis-server of the test's own: no scheduler lock is held.
    process, port = start_redis(run.var / "redis", "--appendonly", "yes")
    try:
        with redis.Redis(port=port) as client:
            assert client.keys("rq:scheduler-lock:*") == []
            assert client.exists(f"game:{{{created['id']}}}:events"), "the append-only file was read"
    finally:
        stop(process)


# ---------------------------------------------------------------- a worker on a host of its own


def test_a_worker_without_a_shared_metrics_folder_serves_its_own_metrics(redis_url: str, tmp_path: Path) -> None:
    port = free_port()
    env = {**service_env(redis_url), "METRICS_PORT": str(port)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    worker = start_worker(env, tmp_path)
    next(worker)
    try:
        service = make_service(redis_url)
        games = bot_games(service, 1, [{"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "random"}])

        def bot_turns() -> float:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
                families = text_string_to_metric_families(response.read().decode())
                return sum(s.value for f in families for s in f.samples if s.name == "cardtable_bot_turns_total")

        wait_until(lambda: not unfinished(service, games), 120, "the bot game to finish")
        # a job counts its turns after their append (one append for a game of one round): wait for the count
        wait_until(lambda: bot_turns() >= 10, 30, "the worker's metrics to count the game's bot turns")
    finally:
        worker.close()
