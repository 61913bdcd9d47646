"""Issue 28, item 1: a create or an append whose reply is lost (it ran in Redis, the connection was cut
before the answer came) is applied once and answered as if the reply had come.

The fault proxy (tests/faults/redis_proxy.py) forces the interleaving: it forwards the script, waits
for Redis's reply, and cuts the connection instead of passing it on. Before the fix, redis-py resent
the script on its own: the append met a version conflict and was decided again, the create met an
`exists` and made a second game.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
import redis

from domain import engine
from service.storage.event_store import _APPEND, _CREATE
from service.upkeep.lifecycle import DAY_SECONDS, Lifecycle, LifecycleSettings
from tests.conftest import auth
from tests.faults.conftest import Proxied, game_ids
from tests.faults.redis_proxy import Fault, FaultPlan, RedisProxy, Rule
from tests.service.helpers import stream_entries

pytestmark = pytest.mark.integration

TWO_PEOPLE = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}]}


def stream(upstream: redis.Redis, game_id: str) -> list[dict[str, Any]]:
    """The game's stored records, read straight from Redis."""
    return [json.loads(fields["e"]) for _, fields in stream_entries(upstream, game_id)]


def first_move(proxied: Proxied, created: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, str]]:
    """The game id, a legal first action and the headers of the seat that may send it."""
    for seat in created["seats"]:
        view = proxied.client.get(f"/v1/games/{created['id']}", headers=auth(seat["token"])).get_json()
        legal = view["you"]["legal"]
        if legal:
            return created["id"], legal[0], auth(seat["token"])
    raise AssertionError("nobody may act")


@pytest.mark.parametrize(
    ("key", "with_version"),
    [(None, False), ("retry-me", False), (None, True)],
    ids=["no-key", "idempotency-key", "expected-version"],
)
def test_an_action_whose_reply_is_lost_is_applied_once_and_answered(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, key: str | None, with_version: bool
) -> None:
    game_id, action, headers = first_move(proxied, proxied.create(TWO_PEOPLE))
    before = stream(upstream, game_id)
    proxy.plan = FaultPlan(1, [Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, limit=1)])
    body = {**action, **({"expected_version": len(before)} if with_version else {})}
    extra = {"Idempotency-Key": key} if key else {}
    response = proxied.client.post(f"/v1/games/{game_id}/actions", json=body, headers={**headers, **extra})
    assert proxy.plan.count(Fault.REPLY_LOST) == 1, "the proxy cut no reply"
    # the action was applied once, and the client was told so with the events that were stored
    assert response.status_code == 200, response.get_data(as_text=True)
    stored = stream(upstream, game_id)
    answer = response.get_json()
    assert stored[: len(before)] == before
    assert stored[len(before) :] == answer["events"], "the stream holds something other than the one action"
    assert answer["version"] == len(stored)


def test_a_lost_reply_never_plays_a_move_twice_where_it_would_stay_legal(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    """Rommé with two decks: laying off the first of two equal cards leaves the same lay-off legal. A
    seeded game is played up to such a move, which is then sent without a key and its reply lost:
    before the fix the driver's resend met a conflict and the move was decided again and appended
    twice."""
    created = proxied.create({"game": "romme", "seed": "s0", "seats": [{"kind": "human"}, {"kind": "human"}]})
    games = proxied.app.extensions["games"]
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}
    choices = random.Random(0)
    for _ in range(1000):
        snap = games.repository.load(created["id"]).snap
        seat = snap.to_act()[0]
        body = choices.choice(engine.legal_actions(snap, seat))
        if body in engine.legal_actions(engine.act(snap, seat, body)[0], seat):
            break  # the move to send with its reply lost
        games.submit(created["id"], seat, body)
    else:
        raise AssertionError("the seeded game had no move that stays legal once made")
    before = stream(upstream, created["id"])
    proxy.plan = FaultPlan(6, [Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, limit=1)])
    response = proxied.client.post(f"/v1/games/{created['id']}/actions", json=body, headers=auth(tokens[seat]))
    assert proxy.plan.count(Fault.REPLY_LOST) == 1, "the proxy cut no reply"
    assert response.status_code == 200, response.get_data(as_text=True)
    assert stream(upstream, created["id"]) == before + response.get_json()["events"], "the move was played twice"


def test_a_create_whose_reply_is_lost_makes_one_game(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    proxy.plan = FaultPlan(2, [Rule("EVALSHA", Fault.REPLY_LOST, script=_CREATE, limit=1)])
    response = proxied.client.post("/v1/games", json=TWO_PEOPLE)
    assert proxy.plan.count(Fault.REPLY_LOST) == 1, "the proxy cut no reply"
    assert response.status_code == 201, response.get_data(as_text=True)
    assert game_ids(upstream) == {response.get_json()["id"]}, "one request made more than one game"


def test_an_action_cut_before_redis_is_sent_again_and_applied_once(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    game_id, action, headers = first_move(proxied, proxied.create(TWO_PEOPLE))
    proxy.plan = FaultPlan(3, [Rule("EVALSHA", Fault.NOT_SENT, script=_APPEND, limit=1)])
    response = proxied.client.post(f"/v1/games/{game_id}/actions", json=action, headers=headers)
    assert proxy.plan.count(Fault.NOT_SENT) == 1
    assert response.status_code == 200, response.get_data(as_text=True)
    assert stream(upstream, game_id)[-len(response.get_json()["events"]) :] == response.get_json()["events"]
    assert len(stream(upstream, game_id)) == response.get_json()["version"]


def test_a_keyed_action_that_got_a_503_is_applied_once_when_retried(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    """The first call ran but its reply was lost, and every resend found Redis unreachable: 503. The
    client's retry with its Idempotency-Key gets the answer of the action applied the first time."""
    game_id, action, headers = first_move(proxied, proxied.create(TWO_PEOPLE))
    before = len(stream(upstream, game_id))
    keyed = {**headers, "Idempotency-Key": "once"}
    proxy.plan = FaultPlan(
        4,
        [
            Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, limit=1),
            Rule("EVALSHA", Fault.NOT_SENT, script=_APPEND, resends=True),
        ],
    )
    refused = proxied.client.post(f"/v1/games/{game_id}/actions", json=action, headers=keyed)
    assert refused.status_code == 503, refused.get_data(as_text=True)
    assert proxy.plan.count(Fault.NOT_SENT) >= 1
    proxy.plan = FaultPlan(4)  # Redis is back
    applied = stream(upstream, game_id)
    assert len(applied) > before, "the first call was applied"
    retried = proxied.client.post(f"/v1/games/{game_id}/actions", json=action, headers=keyed)
    assert retried.status_code == 200, retried.get_data(as_text=True)
    assert stream(upstream, game_id) == applied, "the retry appended again"
    assert retried.get_json()["events"] == applied[before:]


def test_reads_are_still_retried_by_the_driver(proxied: Proxied, proxy: RedisProxy) -> None:
    created = proxied.create(TWO_PEOPLE)
    proxy.plan = FaultPlan(5, [Rule("XRANGE", Fault.NOT_SENT, limit=1)])
    response = proxied.client.get(f"/v1/games/{created['id']}")
    assert proxy.plan.count(Fault.NOT_SENT) == 1
    assert response.status_code == 200, response.get_data(as_text=True)


def test_a_stream_ticket_whose_redeem_reply_is_lost_is_a_503_and_a_new_ticket_opens_the_stream(
    proxied: Proxied, proxy: RedisProxy
) -> None:
    """The ticket's GETDEL ran and its reply was lost. Before the fix the driver resent it, found the
    ticket gone and answered 401 for a valid ticket; now it is sent once, the answer is 503, and the
    client's next ticket opens the stream."""
    created = proxied.create(TWO_PEOPLE)
    game = f"/v1/games/{created['id']}"
    headers = auth(created["seats"][0]["token"])
    ticket = proxied.client.post(f"{game}/stream-tickets", headers=headers).get_json()["ticket"]
    proxy.plan = FaultPlan(7, [Rule("GETDEL", Fault.REPLY_LOST, limit=1)])
    refused = proxied.client.get(f"{game}/stream?ticket={ticket}")
    assert proxy.plan.count(Fault.REPLY_LOST) == 1, "the proxy cut no reply"
    assert refused.status_code == 503, refused.get_data(as_text=True)
    assert refused.get_json()["type"].endswith("store_unavailable")
    again = proxied.client.post(f"{game}/stream-tickets", headers=headers).get_json()["ticket"]
    opened = proxied.client.get(f"{game}/stream?ticket={again}", buffered=False)
    assert opened.status_code == 200
    assert next(opened.response).startswith(b"event: view\n")
    opened.close()


def test_a_create_that_ends_in_a_503_leaves_a_game_that_the_lifecycle_abandons(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis
) -> None:
    """The create ran and its reply was lost, and every resend found Redis unreachable: 503, and a game
    is stored whose tokens nobody has. It is a game like any its creator walked away from: in the
    active index, ended as abandoned by the lifecycle sweep ABANDON_AFTER_DAYS later (creates take no
    idempotency key; the client's retry makes a new game)."""
    proxy.plan = FaultPlan(
        8,
        [
            Rule("EVALSHA", Fault.REPLY_LOST, script=_CREATE, limit=1),
            Rule("EVALSHA", Fault.NOT_SENT, script=_CREATE, resends=True),
        ],
    )
    refused = proxied.client.post("/v1/games", json=TWO_PEOPLE)
    assert refused.status_code == 503, refused.get_data(as_text=True)
    (orphan,) = game_ids(upstream)
    proxy.plan = FaultPlan(8)  # Redis is back
    service = proxied.app.extensions["games"]
    assert service.index.idle(float("inf"), 10) == [orphan], "the game is not in the active index"
    settings = LifecycleSettings()
    later = time.time() + (settings.abandon_after_days + 1) * DAY_SECONDS
    outcome = Lifecycle(service, proxied.app.extensions["storage"], settings, now=lambda: later).run_once()
    assert outcome.abandoned == [orphan]
    assert service.repository.load(orphan).snap.finished
