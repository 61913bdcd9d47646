"""A whole Switch game over HTTP against gunicorn, a real redis-server and a real RQ worker."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.chain import event_hash
from domain.shuffle import commitment, shuffle
from tests.integration.conftest import Stack, assert_record_and_audit_pass, call, store_client
from tests.unit.switch_helpers import canonical

pytestmark = pytest.mark.integration


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def scripted_move(view: dict[str, Any]) -> dict[str, Any]:
    """A simple human: name the first suit, answer a pending draw, play the first plain card, else a J, else draw."""
    legal = view["you"]["legal"]
    plain = [a for a in legal if a["type"] == "play" and "suit" not in a]
    return dict((plain or legal)[0])


def test_human_against_three_greedy_bots_plays_to_the_end(stack: Stack, stack_worker: Any) -> None:
    """On one redis-server and on a Redis Cluster (the `stack` fixture)."""
    api_url, redis_url = stack.api_url, stack.redis_url
    seats = [{"kind": "human", "name": "Ana"}] + [{"kind": "bot", "level": "greedy"} for _ in range(3)]
    body = {"game": "switch", "seats": seats, "seed": "switch-7", "options": {"target": 100}}
    status, created = call("POST", f"{api_url}/v1/games", body)
    assert status == 201, created
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][0]["token"]
    assert created["seed_commitment"] != commitment("switch-7")  # salted by the secret nonce (C-4)

    status, first = call("GET", game_url, headers=bearer(token))
    deck = shuffle(canonical(), "switch-7", "round/1")
    assert first["table"]["discard"][0] == deck[28], "S-2 / C-4: the 29th card of the round deck is the start card"

    moves = 0
    while True:
        status, view = call("GET", game_url, headers=bearer(token))
        assert status == 200, view
        if view["status"] == "finished":
            break
        if 0 in view["to_act"]:
            assert view["actions"] == sorted({a["type"] for a in view["you"]["legal"]})
            action = {**scripted_move(view), "expected_version": view["version"]}
            status, answer = call("POST", f"{game_url}/actions", action, bearer(token))
            assert status in (200, 409), answer
            moves += 1
            assert moves < 3000, "the game does not end"
            continue
        status, page = call("GET", f"{game_url}/events?after={view['version']}&wait=10")
        assert status == 200 and page["events"], "the bots stopped moving (is the worker running?)"

    assert view["result"]["winners"], view["result"]
    assert len(view["result"]["totals"]) == 4 and max(view["result"]["totals"]) >= 100
    status, page = call("GET", f"{game_url}/events?after=0")
    events = page["events"]
    assert events[-1]["type"] == "SeedRevealed" and events[-1]["data"]["seed"] == "switch-7"
    assert commitment("switch-7", events[-1]["data"]["nonce"]) == created["seed_commitment"]
    assert events[-2]["type"] == "GameEnded"
    assert {e["actor"] for e in events} >= {0, 1, 2, 3, "system"}, "every seat acted"
    assert_record_and_audit_pass(game_url)
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])


def assert_stream_is_a_chain(redis_url: str, game_id: str, seed_commitment: str) -> None:
    """No gap, no duplicate, every hash links to the one before (API.md, Events)."""
    client = store_client(redis_url)
    entries: Any = client.xrange(f"game:{{{game_id}}}:events")
    records = [json.loads(fields["e"]) for _, fields in entries]
    assert [entry_id for entry_id, _ in entries] == [f"{n}-0" for n in range(1, len(entries) + 1)]
    prev = seed_commitment
    for record in records:
        assert record["prev_hash"] == prev
        assert record["hash"] == event_hash(prev, record)
        prev = record["hash"]
