"""Scale: the event store on a three-master Redis Cluster, and several API processes serving the same games.

The cluster set-up (tests/integration/conftest.py, `cluster_stack`) is three `redis-server --cluster-enabled
yes` on free ports joined with `redis-cli --cluster create`, a plain redis-server for the RQ queue
(QUEUE_REDIS_URL), gunicorn and workers. The games' end-to-end tests run on it too (the `stack` fixture).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from service.storage.turn_queue import WAITING_KEY, bot_job_id
from tests.integration.conftest import Stack, call, start_api, start_worker, wait_until
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain, bearer
from tests.integration.test_guarantees import act, next_move, race, two_human_golf, version_of

pytestmark = pytest.mark.integration

GAME_KEYS = ("events", "meta", "idem", "disputes")


def cluster_client(stack: Stack) -> RedisCluster:
    client = stack.store()
    assert isinstance(client, RedisCluster)
    return client


def golf_for_two(api_url: str, seats: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """A Golf game with no initial flips (seat 1 acts first); (creation answer, human tokens)."""
    seats = seats or [{"kind": "human", "name": "A"}, {"kind": "human", "name": "B"}]
    body = {"game": "golf", "seats": seats, "options": {"initial_flips": 0, "rounds": 1}}
    status, created = call("POST", f"{api_url}/v1/games", body)
    assert status == 201, created
    return created, [seat.get("token", "") for seat in created["seats"]]


# ---------------------------------------------------------------- the cluster


def test_the_keys_of_a_game_share_one_slot_and_games_spread_over_the_masters(cluster_stack: Stack) -> None:
    created, tokens = golf_for_two(cluster_stack.api_url)
    game_url = f"{cluster_stack.api_url}/v1/games/{created['id']}"
    reveal = {"type": "flip", "position": 0, "expected_version": created["version"]}
    status, answer = act(game_url, tokens[1], reveal, key="first-flip")
    assert status == 200, answer
    status, dispute = call("POST", f"{game_url}/disputes", {"seq": 1, "reason": "check"}, bearer(tokens[0]))
    assert status == 201, dispute

    store = cluster_client(cluster_stack)
    keys = [f"game:{{{created['id']}}}:{name}" for name in GAME_KEYS]
    assert all(store.exists(key) == 1 for key in keys), "every key of the game was written"
    slots = {key: store.cluster_keyslot(key) for key in keys}  # CLUSTER KEYSLOT, computed by the server
    assert len(set(slots.values())) == 1, slots

    others = [golf_for_two(cluster_stack.api_url)[0]["id"] for _ in range(11)]
    primaries = store.get_primaries()  # type: ignore[no-untyped-call]
    masters = [redis.Redis(host=node.host, port=node.port) for node in primaries]
    assert len(masters) == 3
    holders = []
    for game_id in [created["id"], *others]:
        slot = store.cluster_keyslot(f"game:{{{game_id}}}:events")
        found = [m for m, node in enumerate(masters) if node.cluster("COUNTKEYSINSLOT", slot)]
        assert len(found) == 1, f"the keys of {game_id} are on exactly one master"
        holders.append(found[0])
    assert len(set(holders)) >= 2, f"12 games all on one master of three: {holders}"


def test_the_queue_lives_on_its_own_redis_and_a_lost_queue_loses_no_bot_turn(
    cluster_stack: Stack, tmp_path: Path
) -> None:
    seats = [{"kind": "human", "name": "A"}, {"kind": "bot", "level": "greedy"}]
    created, _ = golf_for_two(cluster_stack.api_url, seats)  # seat 1, a bot, is due; no worker runs yet
    game_id, version = created["id"], created["version"]
    store, queue = cluster_client(cluster_stack), cluster_stack.queue()

    assert store.zscore(WAITING_KEY, game_id) == version, "the due turn is noted beside the game's events"
    assert queue.zscore(WAITING_KEY, game_id) is None
    assert queue.exists(f"rq:job:{bot_job_id(game_id, version)}") == 1, "its job is on the queue's Redis"
    assert store.keys("rq:*", target_nodes=RedisCluster.PRIMARIES) == [], "RQ keeps nothing on the cluster"

    queue.flushdb()  # the queue's Redis loses everything: the waiting index still names the game
    worker = start_worker(cluster_stack.env(), tmp_path)
    try:
        next(worker)
        status, page = call("GET", f"{cluster_stack.api_url}/v1/games/{game_id}/events?after={version}&wait=30")
    finally:
        worker.close()
    assert status == 200 and page["events"], "the reconciler enqueued the lost turn and a worker played it"
    assert {event["actor"] for event in page["events"]} == {1}


def test_sixteen_clients_send_the_same_turn_on_the_cluster_exactly_one_is_accepted(cluster_stack: Stack) -> None:
    created, game_url, tokens = two_human_golf(cluster_stack.api_url, rounds=1)
    turns = 0
    while (move := next_move(game_url, tokens)) is not None and turns < 5:
        token, action, view = move
        stamped = {**action, "expected_version": view["version"]}
        results, _ = race(16, lambda t=token, a=stamped: act(game_url, t, a))
        statuses = Counter(status for status, _ in results)
        assert statuses == {200: 1, 409: 15}, statuses
        assert all(body["code"] == "version_conflict" for status, body in results if status == 409)
        (winner,) = [body for status, body in results if status == 200]
        assert winner["version"] == version_of(game_url) == view["version"] + len(winner["events"])
        turns += 1
    assert turns == 5
    assert_stream_is_a_chain(cluster_stack.redis_url, created["id"], created["seed_commitment"])


# ---------------------------------------------------------------- several API processes


def two_apis(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two gunicorn processes (one worker each, so each has one game cache) on two ports, one store."""
    folder = tmp_path_factory.mktemp(f"{stack.name}-pair")
    apis = [start_api(stack.env(), (folder / f"{name}.log").open("wb"), workers=1) for name in "ab"]
    try:
        with ThreadPoolExecutor(2) as pool:  # start (and below, stop) both at once
            first, second = pool.map(next, apis)
        yield first, second
    finally:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda api: api.close(), apis))


@pytest.fixture(scope="session")
def single_pair(single_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield from two_apis(single_stack, tmp_path_factory)


@pytest.fixture(scope="session")
def cluster_pair(cluster_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    yield from two_apis(cluster_stack, tmp_path_factory)


@pytest.fixture
def api_pair(stack: Stack, request: pytest.FixtureRequest) -> tuple[str, str]:
    """Two API processes, A and B, on the test's stack."""
    pair: tuple[str, str] = request.getfixturevalue(f"{stack.name}_pair")
    return pair


def view_through(api_url: str, game_id: str, token: str) -> dict[str, Any]:
    status, view = call("GET", f"{api_url}/v1/games/{game_id}", headers=bearer(token))
    assert status == 200, view
    return dict(view)


def test_a_write_through_one_api_process_is_seen_by_the_next_read_and_decision_through_the_other(
    stack: Stack, api_pair: tuple[str, str]
) -> None:
    a, b = api_pair
    created, tokens = golf_for_two(a)
    game_id = created["id"]
    start = view_through(a, game_id, tokens[1])
    assert view_through(b, game_id, tokens[1])["version"] == start["version"], "both processes hold the game"
    assert start["to_act"] == [1]

    status, answer = act(f"{b}/v1/games/{game_id}", tokens[1], {"type": "flip", "position": 0, **at(start)})
    assert status == 200, answer
    seen = view_through(a, game_id, tokens[1])
    assert seen["version"] == answer["version"] > start["version"], "A's next read has B's write"
    assert seen["you"]["hand"][0]["state"] == "up" and seen["to_act"] == [0]

    through_a = f"{a}/v1/games/{game_id}"
    status, stale = act(through_a, tokens[1], {"type": "flip", "position": 1, **at(start)})
    assert status == 409 and stale["code"] == "version_conflict", stale
    status, refused = act(through_a, tokens[1], {"type": "flip", "position": 1})
    assert status == 422 and (refused["code"], refused["rule"]) == ("not_your_turn", "C-2"), refused
    status, accepted = act(through_a, tokens[0], {"type": "flip", "position": 0})
    assert status == 200, accepted
    assert accepted["events"][0]["seq"] == seen["version"] + 1, "decided on the state after B's write"

    for turn in range(6):  # writes alternate between the processes; each read goes to the other one
        writer, reader = (b, a) if turn % 2 == 0 else (a, b)
        move = next_move(f"{reader}/v1/games/{game_id}", tokens)
        assert move is not None
        token, action, view = move
        status, answer = act(f"{writer}/v1/games/{game_id}", token, {**action, **at(view)})
        assert status == 200, answer
        assert view_through(reader, game_id, token)["version"] == answer["version"]
    assert_stream_is_a_chain(stack.redis_url, game_id, created["seed_commitment"])


def test_a_long_poll_on_one_api_process_wakes_for_a_write_through_the_other(
    stack: Stack, api_pair: tuple[str, str]
) -> None:
    a, b = api_pair
    created, tokens = golf_for_two(b)
    game_id, version = created["id"], created["version"]
    node = store_node(stack, f"game:{{{game_id}}}:events")
    blocked_before = blocked_reads(node)
    action = {"type": "flip", "position": 0, "expected_version": version}
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(call, "GET", f"{a}/v1/games/{game_id}/events?after={version}&wait=30")
        wait_until(lambda: blocked_reads(node) > blocked_before, 20, "the long-poll to block in Redis")
        status, answer = act(f"{b}/v1/games/{game_id}", tokens[1], action, key="click-1")
        assert status == 200, answer
        status, page = waiting.result()
    assert status == 200 and page["events"] == answer["events"], page

    status, again = act(f"{a}/v1/games/{game_id}", tokens[1], action, key="click-1")
    assert status == 200 and again == answer, "a retry through the other process answers as the first time"
    assert version_of(f"{b}/v1/games/{game_id}") == answer["version"], "and appends nothing"


def at(view: dict[str, Any]) -> dict[str, int]:
    return {"expected_version": int(view["version"])}


def store_node(stack: Stack, key: str) -> redis.Redis:
    """A plain client of the Redis server that holds `key`."""
    store = stack.store()
    if isinstance(store, RedisCluster):
        node = store.get_node_from_key(key)  # type: ignore[no-untyped-call]
        return redis.Redis(host=node.host, port=node.port)
    return redis.Redis.from_url(stack.redis_url)


def blocked_reads(node: redis.Redis) -> int:
    """Clients of this server blocked in XREAD right now."""
    return sum(1 for client in node.client_list() if client.get("cmd") == "xread" and "b" in client.get("flags", ""))
