"""GET /v1/games/{id}/disputes when the stored events cannot give the game around a disputed event:
each such view is `{"error": <problem>}` (API.md), whoever asks and whenever the dispute was filed."""

from __future__ import annotations

import json
from typing import Any

import fakeredis
from flask.testing import FlaskClient

from tests.conftest import auth, create_golf

STREAM_DAMAGED = {
    "type": "https://cardtable.invalid/problems/stream_damaged",
    "title": "Internal Server Error",
    "status": 500,
    "code": "stream_damaged",
    "detail": "the stored game does not replay; GET its /audit for the first bad event",
}


def events_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:events"


def disputes_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:disputes"


def damage_event(fake_redis: fakeredis.FakeRedis, game_id: str, seq: int) -> None:
    """The stream's entry for event `seq` is no record's JSON: the game after it does not replay."""
    entries = fake_redis.xrange(events_key(game_id))
    fake_redis.delete(events_key(game_id))
    for n, (_, fields) in enumerate(entries, start=1):
        fake_redis.xadd(events_key(game_id), {"e": "not json {"} if n == seq else fields, id=f"{n}-0")


def listed(client: FlaskClient, game_id: str, token: str | None) -> list[dict[str, Any]]:
    answer = client.get(f"/v1/games/{game_id}/disputes", headers=auth(token) if token else {})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    disputes: list[dict[str, Any]] = answer.get_json()["disputes"]
    return disputes


def test_a_view_the_damaged_stream_cannot_give_is_listed_as_its_problem(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    created = create_golf(client)
    game_id, token = created["id"], created["seats"][0]["token"]
    assert client.get(f"/v1/games/{game_id}").get_json()["version"] == 2
    damage_event(fake_redis, game_id, 2)  # the game is created (event 1), then dealt (event 2)
    filed = client.post(f"/v1/games/{game_id}/disputes", json={"seq": 2, "reason": "x"}, headers=auth(token))
    assert filed.status_code == 201, filed.get_data(as_text=True)
    for who in (None, token):  # the spectator's views were stored when it was filed, the seat's are folded now
        (dispute,) = listed(client, game_id, who)
        assert dispute["before"]["version"] == 1 and dispute["after"] == {"error": STREAM_DAMAGED}
        assert list(dispute["after"]["error"]) == list(STREAM_DAMAGED), "the problem's members in their order"


def test_a_dispute_stored_with_its_views_as_problems_is_listed_as_it_was_stored(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    """A dispute filed by an earlier version of the service keeps the problem documents it stored."""
    created = create_golf(client)
    game_id = created["id"]
    damage_event(fake_redis, game_id, 2)
    audit = client.get(f"/v1/games/{game_id}/audit").get_json()
    views = {"full": False, "before": {"error": STREAM_DAMAGED}, "after": {"error": STREAM_DAMAGED}}
    stored = {"seat": 0, "seq": 2, "reason": "x", "at": "2024-01-01T00:00:00Z", "verdict": audit, "event_ok": False}
    fake_redis.xadd(disputes_key(game_id), {"s": "0", "d": json.dumps({**stored, "views": views})}, id="1-0")
    (dispute,) = listed(client, game_id, None)
    assert dispute == {"id": "1-0", "number": 1, **stored, "before": views["before"], "after": views["after"]}
    assert list(dispute["before"]["error"]) == list(STREAM_DAMAGED)
