"""Reliability guarantees, proven on real processes: gunicorn, redis-server, `python -m workers`.

1. Concurrency: many clients send the same turn at once: one wins, the stream stays a chain;
   200 all-bot games of the four games played at once by two workers: each turn once.
2. Idempotency: a retry with the same Idempotency-Key answers what the first one did, for the
   life of the game (after it finished, after the API restarts); another body under it is 422.
3. Durability: Redis with appendonly yes + appendfsync always, SIGKILLed under load, loses no
   acknowledged action; while it is down the API answers 503 and writes nothing; it recovers alone.

Figures are printed (run with `-s` to see them).
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import pytest
import redis

from tests.integration.conftest import BIN, ROOT, call, free_port, service_env, stop, wait_until
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain, bearer, scripted_move
from tests.integration.test_workers import Workers

pytestmark = pytest.mark.integration

DURABLE = ("--appendonly", "yes", "--appendfsync", "always")


# ---------------------------------------------------------------- processes


class RedisServer:
    """A redis-server on a fixed port and folder, which a test may kill and start again."""

    def __init__(self, folder: Path, *settings: str) -> None:
        self.folder = folder
        self.port = free_port()
        self.settings = settings
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is required (make test installs it)"
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", ""]
        self.process = subprocess.Popen([*args, *self.settings], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        wait_until(client.ping, 20, "redis-server")
        client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last save; only what is on disk survives."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


class Gunicorn:
    """The API as `make run` serves it, on a Redis of the test's choosing."""

    def __init__(self, redis_url: str, folder: Path) -> None:
        self.redis_url = redis_url
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.log: IO[bytes] | None = None
        self.url = ""
        self.starts = 0

    def start(self) -> str:
        port = free_port()
        self.starts += 1
        self.log = (self.folder / f"gunicorn-{self.starts}.log").open("wb")
        command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--worker-class", "gthread"]
        self.process = subprocess.Popen(
            [*command, "--workers", "2", "--threads", "16", "service.app:create_app()"],
            cwd=ROOT,
            env={**service_env(self.redis_url), "GAMES_PER_MINUTE": "0"},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{port}"
        wait_until(lambda: call("GET", f"{self.url}/healthz")[0] == 200, 30, "gunicorn")
        return self.url

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
        if self.log is not None:
            self.log.close()


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder, *DURABLE)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def api(durable_redis: RedisServer, tmp_path: Path) -> Iterator[Gunicorn]:
    server = Gunicorn(durable_redis.url, tmp_path)
    server.start()
    yield server
    server.stop()


# ---------------------------------------------------------------- helpers


def two_human_golf(api_url: str, rounds: int) -> tuple[dict[str, Any], str, list[str]]:
    seats = [{"kind": "human", "name": "A"}, {"kind": "human", "name": "B"}]
    status, created = call(
        "POST", f"{api_url}/v1/games", {"game": "golf", "seats": seats, "options": {"rounds": rounds}}
    )
    assert status == 201, created
    return created, f"{api_url}/v1/games/{created['id']}", [s["token"] for s in created["seats"]]


def next_move(game_url: str, tokens: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """(token, action, view) of the seat to act, or None when the game is over."""
    status, view = call("GET", game_url, headers=bearer(tokens[0]))
    assert status == 200, view
    if view["status"] == "finished":
        return None
    seat = view["to_act"][0]
    status, view = call("GET", game_url, headers=bearer(tokens[seat]))
    assert status == 200, view
    return tokens[seat], scripted_move(view), view


def act(game_url: str, token: str, action: dict[str, Any], key: str | None = None, **headers: str) -> tuple[int, Any]:
    extra = {"Idempotency-Key": key} if key else {}
    return call("POST", f"{game_url}/actions", action, {**bearer(token), **extra, **headers})


def version_of(game_url: str) -> int:
    status, view = call("GET", game_url)
    assert status == 200, view
    return int(view["version"])


def stream_records(redis_url: str, game_id: str) -> list[dict[str, Any]]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return [json.loads(fields["e"]) for _, fields in client.xrange(f"game:{{{game_id}}}:events")]
    finally:
        client.close()


def audit_ok(game_url: str) -> None:
    status, verdict = call("GET", f"{game_url}/audit")
    assert status == 200, verdict
    assert verdict["chain_ok"] and verdict["replay_ok"], verdict


def send_and_hang_up(api_url: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
    """A client that sends its request and gives up before reading any of the answer."""
    address = urlsplit(api_url)
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", f"Host: {address.netloc}", "Content-Type: application/json"]
    lines += [f"Content-Length: {len(data)}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + data)
        sock.shutdown(socket.SHUT_WR)
    # closed without reading a byte of the response


# ---------------------------------------------------------------- 1. concurrency


def race(count: int, send: Any) -> tuple[list[tuple[int, Any]], float]:
    """Run `send()` in `count` threads released at once; (results, seconds from release to last answer)."""
    barrier = threading.Barrier(count + 1)
    results: list[tuple[int, Any]] = []
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        answer = send()
        with lock:
            results.append(answer)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


def test_32_clients_send_the_same_turn_at_once_exactly_one_is_accepted(api_url: str, redis_url: str) -> None:
    created, game_url, tokens = two_human_golf(api_url, rounds=1)
    rounds = 0
    while (move := next_move(game_url, tokens)) is not None and rounds < 5:
        token, action, view = move
        version = view["version"]
        stamped = {**action, "expected_version": version}
        results, seconds = race(32, lambda t=token, a=stamped: act(game_url, t, a))
        statuses = Counter(status for status, _ in results)
        print(f"\n32 clients, same turn at version {version}: {dict(statuses)} in {seconds * 1000:.0f} ms")
        assert statuses == {200: 1, 409: 31}, statuses
        assert all(body["code"] == "version_conflict" for status, body in results if status == 409)
        (winner,) = [body for status, body in results if status == 200]
        assert winner["version"] == version_of(game_url) == version + len(winner["events"])
        rounds += 1
    assert rounds == 5
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])


@pytest.mark.parametrize("with_version", [False, True], ids=["no-version", "expected-version"])
def test_32_clients_retry_the_same_idempotent_turn_at_once_it_is_appended_once(
    api_url: str, redis_url: str, with_version: bool
) -> None:
    created, game_url, tokens = two_human_golf(api_url, rounds=1)
    move = next_move(game_url, tokens)
    assert move is not None
    token, action, view = move
    if with_version:
        action = {**action, "expected_version": view["version"]}
    results, seconds = race(32, lambda: act(game_url, token, action, key="same-click"))
    statuses = Counter(status for status, _ in results)
    print(
        f"\n32 clients, same Idempotency-Key ({'with' if with_version else 'without'} expected_version): "
        f"{dict(statuses)} in {seconds * 1000:.0f} ms"
    )
    assert statuses == {200: 32}, [body for status, body in results if status != 200][:2]
    assert all(body == results[0][1] for _, body in results), "every retry gets the first answer"
    assert version_of(game_url) == view["version"] + len(results[0][1]["events"]) == results[0][1]["version"]
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])


BOT_GAMES = [  # (game, seats, options): small options from the catalog, so that each game ends soon
    ("golf", 2, {"rounds": 1}),
    ("switch", 4, {"target": 50}),
    ("go5", 2, {"target": 30}),
    ("romme", 2, {"target": 100}),
]
GAME_COUNT = 200


def test_200_all_bot_games_at_once_finish_with_every_turn_played_once(tmp_path: Path) -> None:
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    gunicorn = Gunicorn(server.url, tmp_path)
    workers = Workers(server.url, tmp_path)
    connection = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        api_url = gunicorn.start()
        workers.start()
        workers.start()
        bodies = []
        for number in range(GAME_COUNT):
            game, players, options = BOT_GAMES[number % len(BOT_GAMES)]
            levels = ["greedy", "random"] if game == "golf" else ["greedy"]
            seats = [{"kind": "bot", "level": levels[i % len(levels)]} for i in range(players)]
            bodies.append({"game": game, "seats": seats, "options": options, "seed": f"load-{number}"})

        started = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda body: call("POST", f"{api_url}/v1/games", body), bodies))
        created_in = time.monotonic() - started
        assert all(status == 201 for status, _ in answers), [a for a in answers if a[0] != 201][:3]
        games = {created["id"]: created for _, created in answers}
        assert len(games) == GAME_COUNT

        def last_type(game_id: str) -> str:
            entries = connection.xrevrange(f"game:{{{game_id}}}:events", "+", "-", count=1)
            return str(json.loads(entries[0][1]["e"])["type"])

        pending = set(games)

        def all_finished() -> bool:
            pending.difference_update([g for g in list(pending) if last_type(g) == "SeedRevealed"])
            return not pending

        wait_until(all_finished, 240, f"all {GAME_COUNT} games to finish")
        finished_in = time.monotonic() - started
        turns = sum(connection.xlen(f"game:{{{game_id}}}:events") for game_id in games)
        print(
            f"\n{GAME_COUNT} bot games ({', '.join(g for g, *_ in BOT_GAMES)}): created in {created_in:.1f} s, "
            f"all finished {finished_in:.1f} s after the first creation; {turns} events, "
            f"{turns / finished_in:.0f} events/s with 2 workers"
        )

        by_game: Counter[str] = Counter()
        for game_id, created in games.items():
            assert_stream_is_a_chain(server.url, game_id, created["seed_commitment"])
            game_url = f"{api_url}/v1/games/{game_id}"
            status, view = call("GET", game_url)
            assert status == 200 and view["status"] == "finished", view
            assert view["version"] == connection.xlen(f"game:{{{game_id}}}:events")
            audit_ok(game_url)
            by_game[created["game"]] += 1
        assert by_game == {game: GAME_COUNT // len(BOT_GAMES) for game, *_ in BOT_GAMES}
        played = Counter(
            (game_id, version) for _, game_id, version, outcome in workers.outcomes() if outcome == "played"
        )
        assert played and max(played.values()) == 1, "no bot job played the same (game, version) twice"
        assert {number for number, *_ in workers.outcomes()} == {0, 1}, "both workers played"
        assert connection.zcard("bots:waiting") == 0, "no finished game waits for a bot"
    finally:
        workers.stop_all()
        gunicorn.stop()
        connection.close()
        server.stop()


# ---------------------------------------------------------------- 2. idempotency


def test_an_idempotent_retry_answers_as_the_first_time_for_the_life_of_the_game(
    api: Gunicorn, durable_redis: RedisServer
) -> None:
    created, game_url, tokens = two_human_golf(api.url, rounds=2)
    path = urlsplit(game_url).path + "/actions"
    answers: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}  # (token, key) -> (action, answer)
    after_conflict = after_timeout = moves = 0
    while (move := next_move(game_url, tokens)) is not None:
        token, action, view = move
        version = view["version"]
        key = f"move-{moves}"
        mode = moves % 3
        if mode == 0:  # success, then the same request again
            status, first = act(game_url, token, action, key)
            assert status == 200, first
            assert act(game_url, token, action, key) == (200, first)
            assert version_of(game_url) == first["version"], "the retry appended nothing"
        elif mode == 1:  # the client gave up before the answer, then retries
            send_and_hang_up(api.url, path, action, {**bearer(token), "Idempotency-Key": key})
            wait_until(lambda v=version: version_of(game_url) > v, 30, "the abandoned request to be applied")
            status, first = act(game_url, token, action, key)
            assert status == 200, first
            assert first["version"] == version_of(game_url), "the retry appended nothing"
            stored = stream_records(durable_redis.url, created["id"])[version:]
            assert first["events"] == stored, "the retry's answer is the abandoned request's"
            after_timeout += 1
        else:  # a conflict (stale version), the same retry, then the action at the current version
            stale = {**action, "expected_version": version - 1}
            status, problem = act(game_url, token, stale, key)
            assert (status, problem["code"]) == (409, "version_conflict"), problem
            assert act(game_url, token, stale, key) == (409, problem), "a retry after a 409 is a 409 again"
            assert version_of(game_url) == version, "nothing was appended"
            # a refused attempt does not use the key up: the same action at the current version is taken once
            status, first = act(game_url, token, action, key, **{"If-Match": f'"{version}"'})
            assert status == 200, first
            assert act(game_url, token, stale, key) == (200, first), "from now on the key answers the success"
            after_conflict += 1
        reused = act(game_url, token, {"type": "flip", "position": 99}, key)
        assert (reused[0], reused[1]["code"]) == (422, "idempotency_key_reused"), reused
        answers[(token, key)] = (action, first)
        moves += 1
    assert after_conflict >= 3 and after_timeout >= 3, (after_conflict, after_timeout)
    final = version_of(game_url)

    def replay_all(when: str) -> None:
        for (token, key), (action, first) in answers.items():
            assert act(game_url, token, action, key) == (200, first), f"{key} {when}"
            status, problem = act(game_url, token, {"type": "flip", "position": 99}, key)
            assert (status, problem["code"]) == (422, "idempotency_key_reused"), f"{key} {when}"
        assert version_of(game_url) == final, f"retries appended nothing {when}"

    replay_all("after the game finished")
    api.stop()
    api.start()
    game_url = f"{api.url}/v1/games/{created['id']}"
    replay_all("after the API restarted")
    print(
        f"\nidempotency: {len(answers)} keys ({after_timeout} abandoned, {after_conflict} after a 409) replayed twice"
    )
    assert_stream_is_a_chain(durable_redis.url, created["id"], created["seed_commitment"])
    audit_ok(game_url)


# ---------------------------------------------------------------- 3. durability


def test_redis_killed_under_load_loses_no_acknowledged_action_and_the_api_recovers(
    api: Gunicorn, durable_redis: RedisServer
) -> None:
    created, game_url, tokens = two_human_golf(api.url, rounds=4)
    acknowledged: list[dict[str, Any]] = []
    for _ in range(10):  # a calm start
        move = next_move(game_url, tokens)
        assert move is not None
        token, action, view = move
        status, answer = act(game_url, token, {**action, "expected_version": view["version"]})
        assert status == 200, answer
        acknowledged.append(answer)

    refusals: list[tuple[int, Any]] = []
    stop_playing = threading.Event()

    def play() -> None:  # as fast as it can, until Redis is gone
        while not stop_playing.is_set():
            try:
                move = next_move(game_url, tokens)
            except AssertionError:
                return  # the view is unavailable: Redis is gone
            assert move is not None
            token, action, view = move
            status, answer = act(game_url, token, {**action, "expected_version": view["version"]})
            if status != 200:
                refusals.append((status, answer))
                return
            acknowledged.append(answer)

    player = threading.Thread(target=play)
    player.start()
    wait_until(lambda: len(acknowledged) >= 15, 30, "actions under way")
    durable_redis.kill()
    player.join(timeout=60)
    assert not player.is_alive()
    print(
        f"\ndurability: SIGKILL after {len(acknowledged)} acknowledged actions (version {acknowledged[-1]['version']})"
    )
    assert all(status == 503 and body["code"] == "store_unavailable" for status, body in refusals), refusals

    # Redis is down: actions and reads are 503 store_unavailable, the process itself is up
    pid = api.process.pid if api.process else None
    token = tokens[0]
    down_key = "while-down"
    flip = {"type": "flip", "position": 0}
    started = time.monotonic()
    status, problem = act(game_url, token, flip, down_key)
    action_503_ms = (time.monotonic() - started) * 1000
    assert (status, problem["code"]) == (503, "store_unavailable"), problem
    for url in (game_url, f"{game_url}/events?after=0", f"{game_url}/audit", f"{api.url}/readyz"):
        status, problem = call("GET", url)
        assert (status, problem["code"]) == (503, "store_unavailable"), (url, problem)
    status, problem = call("POST", f"{api.url}/v1/games", {"game": "golf", "seats": [{"kind": "human"}] * 2})
    assert (status, problem["code"]) == (503, "store_unavailable"), problem
    assert call("GET", f"{api.url}/healthz")[0] == 200

    # Redis comes back on the same folder and port; the same gunicorn recovers by itself
    started = time.monotonic()
    durable_redis.start()
    wait_until(lambda: call("GET", f"{api.url}/readyz")[0] == 200, 30, "the API to reach Redis again")
    print(
        f"durability: an action while Redis was down: 503 in {action_503_ms:.0f} ms; "
        f"ready again {time.monotonic() - started:.1f} s after redis-server started again"
    )
    assert api.process is not None and api.process.pid == pid and api.process.poll() is None

    stored = stream_records(durable_redis.url, created["id"])
    last_acked = acknowledged[-1]["version"]
    assert len(stored) in (last_acked, last_acked + 1), "at most the one unanswered action beyond the last answer"
    for answer in acknowledged:
        for event in answer["events"]:
            assert stored[event["seq"] - 1] == event, f"acknowledged event {event['seq']} is stored as answered"
    assert_stream_is_a_chain(durable_redis.url, created["id"], created["seed_commitment"])
    audit_ok(game_url)
    status, view = call("GET", game_url)
    assert status == 200 and view["version"] == len(stored)

    # the game goes on to its end
    moves = 0
    while (move := next_move(game_url, tokens)) is not None:
        token, action, view = move
        status, answer = act(game_url, token, {**action, "expected_version": view["version"]}, f"after-{moves}")
        assert status == 200, answer
        moves += 1
        assert moves < 500
    assert moves > 0
    assert_stream_is_a_chain(durable_redis.url, created["id"], created["seed_commitment"])
    audit_ok(game_url)
