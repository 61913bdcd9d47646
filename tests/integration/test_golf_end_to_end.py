"""A whole Golf game over HTTP against gunicorn, a real redis-server and a real RQ worker."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from domain.cards import canonical_deck
from domain.chain import event_hash
from domain.shuffle import commitment, shuffle
from tests.integration.conftest import Stack, assert_record_and_audit_pass, call, store_client

pytestmark = pytest.mark.integration


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def scripted_move(view: dict[str, Any]) -> dict[str, Any]:
    """A simple human: reveal two cards, then draw and turn up cards until none is face down."""
    you = view["you"]
    face_down = [i for i, slot in enumerate(you["hand"]) if slot["state"] == "down"]
    if view["phase"] == "setup":
        return {"type": "reveal", "positions": face_down[:2]}
    if you["drawn"] is not None:
        return {"type": "discard", "flip": face_down[0] if face_down else None}
    if "draw" in view["actions"]:
        return {"type": "draw", "from": "stock"}
    return {"type": "take_discard", "position": 0}


def test_human_against_three_greedy_bots_plays_to_the_end(stack: Stack, stack_worker: Any) -> None:
    """On one redis-server and on a Redis Cluster (the `stack` fixture)."""
    api_url, redis_url = stack.api_url, stack.redis_url
    seats = [{"kind": "human", "name": "Ana"}] + [{"kind": "bot", "level": "greedy"} for _ in range(3)]
    status, created = call(
        "POST", f"{api_url}/v1/games", {"game": "golf", "seats": seats, "seed": "table-7", "options": {"rounds": 3}}
    )
    assert status == 201, created
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][0]["token"]
    assert created["seed_commitment"] != commitment("table-7")  # salted by the secret nonce (C-4)

    status, first = call("GET", game_url, headers=bearer(token))
    deck = shuffle(canonical_deck(), "table-7", "round/1")
    assert first["table"]["discard"] == [deck[24]], "G-3 / C-4: the 25th card of the round deck starts the pile"

    moves = 0
    after = 0
    while True:
        status, view = call("GET", game_url, headers=bearer(token))
        assert status == 200, view
        if view["status"] == "finished":
            break
        if 0 in view["to_act"]:
            status, answer = call(
                "POST",
                f"{game_url}/actions",
                {**scripted_move(view), "expected_version": view["version"]},
                bearer(token),
            )
            assert status in (200, 409), answer
            moves += 1
            assert moves < 2000, "the game does not end"
            continue
        after = view["version"]
        status, page = call("GET", f"{game_url}/events?after={after}&wait=10")
        assert status == 200 and page["events"], "the bots stopped moving (is the worker running?)"

    assert view["result"]["winners"], view["result"]
    assert len(view["result"]["totals"]) == 4
    status, page = call("GET", f"{game_url}/events?after=0")
    events = page["events"]
    assert events[-1]["type"] == "SeedRevealed" and events[-1]["data"]["seed"] == "table-7"
    assert commitment("table-7", events[-1]["data"]["nonce"]) == created["seed_commitment"]
    assert [e["type"] for e in events].count("RoundScored") == 3
    assert {e["actor"] for e in events} >= {0, 1, 2, 3, "system"}, "every seat acted"
    assert_record_and_audit_pass(game_url)
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])


def assert_stream_is_a_chain(redis_url: str, game_id: str, seed_commitment: str) -> None:
    """No gap, no duplicate, every hash links to the one before (API.md, Events)."""
    client = store_client(redis_url)
    entries: Any = client.xrange(f"game:{{{game_id}}}:events")
    records = [json.loads(fields["e"]) for _, fields in entries]
    assert [entry_id for entry_id, _ in entries] == [f"{n}-0" for n in range(1, len(entries) + 1)]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    prev = seed_commitment
    for record in records:
        assert record["prev_hash"] == prev
        assert record["hash"] == event_hash(prev, record)
        prev = record["hash"]


def test_eight_clients_send_the_same_turn_exactly_one_wins(api_url: str, redis_url: str) -> None:
    seats = [{"kind": "human", "name": "A"}, {"kind": "human", "name": "B"}]
    status, created = call(
        "POST", f"{api_url}/v1/games", {"game": "golf", "seats": seats, "options": {"initial_flips": 0}}
    )
    assert status == 201, created
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][1]["token"]  # seat 1 sits left of the dealer and starts
    status, view = call("GET", game_url, headers=bearer(token))
    assert view["to_act"] == [1]

    barrier = threading.Barrier(8)
    results: list[int] = []

    def send() -> None:
        barrier.wait()
        status, _ = call(
            "POST",
            f"{game_url}/actions",
            {"type": "flip", "position": 0, "expected_version": view["version"]},
            bearer(token),
        )
        results.append(status)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [200] + [409] * 7
    status, after = call("GET", game_url, headers=bearer(token))
    assert after["version"] == view["version"] + 1
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])
