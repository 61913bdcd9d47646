"""A whole Rommé game over HTTP: one scripted human and greedy bots, against gunicorn, a real
redis-server and a real RQ worker; then the record and its audit."""

from __future__ import annotations

from typing import Any

import pytest

from domain import romme_melds as rm
from domain.cards import canonical_deck
from domain.shuffle import commitment, shuffle
from tests.integration.conftest import Stack, assert_record_and_audit_pass, call
from tests.integration.test_golf_end_to_end import assert_stream_is_a_chain

pytestmark = pytest.mark.integration

SEED = "romme-table-3"
TARGET = 300


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def scripted_moves(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A simple human, from its own view only, as moves to try in turn: cut; draw (or, with an empty
    stock, take the pile with a three-card meld, R-21); lay a set of three natural cards when it sees
    one; otherwise discard its most costly card (the last card goes out, R-11)."""
    actions = view["actions"]
    hand: list[str] = view["you"]["hand"]
    if "cut" in actions:
        return [{"type": "cut", "position": 54}]
    if "draw" in actions:
        return [{"type": "draw"}]
    if "take_discard" in actions and "discard" not in actions:
        top = view["table"]["discard_top"]
        takes = [(kind, cards) for kind, cards in rm.minimal_melds([*hand, top]) if top in cards]
        return [{"type": "take_discard", "meld": {"kind": kind, "cards": list(cards)}} for kind, cards in takes]
    moves: list[dict[str, Any]] = []
    meld = three_of_a_kind(hand)
    if meld is not None and len(hand) > 3:
        moves.append({"type": "meld", "kind": "set", "cards": meld})
    costly = max(hand, key=lambda c: (c != "JK", rm.card_value(c)))
    moves.append({"type": "discard", "card": costly})
    return moves


def three_of_a_kind(hand: list[str]) -> list[str] | None:
    """Three natural cards of one rank in three suits (a set, R-12), if the hand holds them."""
    by_rank: dict[str, dict[str, str]] = {}
    for card in hand:
        if card != "JK":
            by_rank.setdefault(card[:-1], {})[card[-1]] = card
    for cards in by_rank.values():
        if len(cards) >= 3:
            return sorted(cards.values())[:3]
    return None


def test_human_against_two_greedy_bots_plays_to_the_end(stack: Stack, stack_worker: Any) -> None:
    """On one redis-server and on a Redis Cluster (the `stack` fixture)."""
    api_url, redis_url = stack.api_url, stack.redis_url
    seats = [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "greedy"}]
    body = {"game": "romme", "seats": seats, "seed": SEED, "options": {"target": TARGET}}
    status, created = call("POST", f"{api_url}/v1/games", body)
    assert status == 201, created
    assert created["seed_commitment"] != commitment(SEED)  # salted by the secret nonce (C-4)
    assert created["stacked"] is False
    game_url = f"{api_url}/v1/games/{created['id']}"
    token = created["seats"][0]["token"]

    status, first = call("GET", game_url, headers=bearer(token))
    assert status == 200 and first["phase"] == "cut" and first["to_act"] == [2], "R-3: right of dealer 0 cuts"

    moves = 0
    while True:
        status, view = call("GET", game_url, headers=bearer(token))
        assert status == 200, view
        if view["status"] == "finished":
            break
        if 0 in view["to_act"]:
            for move in scripted_moves(view):
                status, answer = call(
                    "POST", f"{game_url}/actions", {**move, "expected_version": view["version"]}, bearer(token)
                )
                if status != 422:
                    break
                assert answer["code"] in ("illegal_meld",) and answer["rule"], answer  # e.g. a set join past 8
            assert status in (200, 409), answer
            moves += 1
            assert moves < 3000, "the game does not end"
            continue
        status, page = call("GET", f"{game_url}/events?after={view['version']}&wait=10")
        assert status == 200 and page["events"], "the bots stopped moving (is the worker running?)"

    result = view["result"]
    assert len(result["winners"]) == 1 and len(result["totals"]) == 3
    assert max(result["totals"]) == result["totals"][result["winners"][0]]
    status, page = call("GET", f"{game_url}/events?after=0")
    events = page["events"]
    assert events[-1]["type"] == "SeedRevealed" and events[-1]["data"]["seed"] == SEED
    assert commitment(SEED, events[-1]["data"]["nonce"]) == created["seed_commitment"]
    assert {e["actor"] for e in events} >= {0, 1, 2, "system"}, "every seat acted"
    assert sum(1 for e in events if e["type"] == "RoundScored") >= 1
    assert [e["type"] for e in events if e["type"] == "DeckCut"], "every round was cut"
    totals = [0, 0, 0]
    for event in events:
        if event["type"] == "RoundScored":
            totals = [t + s for t, s in zip(totals, event["data"]["scores"], strict=True)]
    assert totals == result["totals"]

    deck = shuffle(canonical_deck(2, 6), SEED, "round/1")
    cut = next(e for e in events if e["type"] == "DeckCut")
    grabs = [e for e in events if e["type"] == "LuckyGrab"]
    if deck[cut["data"]["position"] - 1] not in ("QS", "JK"):
        assert not grabs or grabs[0]["seq"] > cut["seq"] + 1, "R-4: no grab when the card at the cut is plain"

    assert_record_and_audit_pass(game_url)
    assert_stream_is_a_chain(redis_url, created["id"], created["seed_commitment"])
