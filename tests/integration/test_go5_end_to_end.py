"""A whole Go5 game over HTTP against gunicorn, a real redis-server and a real RQ worker."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.chain import event_hash
from domain.shuffle import commitment
from tests.integration.conftest import Stack, assert_record_and_audit_pass, call, store_client

pytestmark = pytest.mark.integration


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def scripted_move(view: dict[str, Any], turn_no: int) -> dict[str, Any]:
    """A simple person, from the view alone: call Go5 when offered, draw (now and then the discard),
    play a stop card when there is one, discard the first card of the hand."""
    you = view["you"]
    if you["go5"]:
        return {"type": "go5", "set": you["go5"][0]}
    if view["phase"] == "draw":
        source = "discard" if turn_no % 4 == 3 and view["table"]["discard_top"] else "stock"
        return {"type": "draw", "from": source}
    if "stop" in view["actions"]:
        return {"type": "stop"}
    return {"type": "discard", "card": you["hand"][0]}


def test_person_against_three_greedy_bots_plays_to_the_end(stack: Stack, stack_worker: Any) -> None:
    """On one redis-server and on a Redis Cluster (the `stack` fixture)."""
    api_url, redis_url = stack.api_url, stack.redis_url
    seats = [{"kind": "human", "name": "Ana"}] + [{"kind": "bot", "level": "greedy"} for _ in range(3)]
    body = {"game": "go5", "seats": seats, "seed": "table-5", "options": {"target": 60}}
    status, created = call("POST", f"{api_url}/v1/games", body)
    assert status == 201, created
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][0]["token"]
    assert created["seed_commitment"] != commitment("table-5")  # salted by the secret nonce (C-4)

    moves = 0
    while True:
        status, view = call("GET", game_url, headers=bearer(token))
        assert status == 200, view
        if view["status"] == "finished":
            break
        if 0 in view["to_act"]:
            action = scripted_move(view, moves)
            status, answer = call(
                "POST", f"{game_url}/actions", {**action, "expected_version": view["version"]}, bearer(token)
            )
            assert status in (200, 409) or (status == 422 and action["type"] == "go5"), answer
            moves += 1
            assert moves < 2000, "the game does not end"
            continue
        status, page = call("GET", f"{game_url}/events?after={view['version']}&wait=10")
        assert status == 200 and page["events"], "the bots stopped moving (is the worker running?)"

    result = view["result"]
    assert result["winners"] and len(result["totals"]) == 4 and max(result["totals"]) >= 60
    status, page = call("GET", f"{game_url}/events?after=0")
    events = page["events"]
    assert events[-1]["type"] == "SeedRevealed" and events[-1]["data"]["seed"] == "table-5"
    assert commitment("table-5", events[-1]["data"]["nonce"]) == created["seed_commitment"]
    assert {e["actor"] for e in events} >= {0, 1, 2, 3, "system"}, "every seat acted"
    types = {e["type"] for e in events}
    assert {"SetMelded", "CardDiscarded", "RoundScored", "GameEnded"} <= types
    assert_record_and_audit_pass(game_url)
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])


def assert_stream_is_a_chain(redis_url: str, game_id: str, seed_commitment: str) -> None:
    """No gap, no duplicate, every hash links to the one before (API.md, Events)."""
    client = store_client(redis_url)
    entries: Any = client.xrange(f"game:{{{game_id}}}:events")
    records = [json.loads(fields["e"]) for _, fields in entries]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    prev = seed_commitment
    for record in records:
        assert record["prev_hash"] == prev
        assert record["hash"] == event_hash(prev, record)
        prev = record["hash"]
