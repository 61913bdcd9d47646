"""GET /v1/games/{id}/stream (Server-Sent Events) and POST .../stream-tickets, on fakeredis."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.play.stream_tickets import TICKET_SECONDS
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import assert_problem, redis_dump
from tests.service.sse import SseReader, events_of

HEARTBEAT = 0.05
TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]
TWO_BOTS = [{"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]


@pytest.fixture
def app(fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    """The app with short heartbeats."""
    settings = {"TESTING": True, "STREAM_HEARTBEAT_SECONDS": HEARTBEAT}
    application = create_app(settings, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


def stream(client: FlaskClient, game_id: str, query: str = "", headers: dict[str, str] | None = None) -> SseReader:
    return SseReader(client.get(f"/v1/games/{game_id}/stream{query}", headers=headers or {}, buffered=False))


def ticket(client: FlaskClient, game_id: str, token: str) -> str:
    response = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(token))
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert set(body) == {"ticket", "expires_in"} and body["expires_in"] == TICKET_SECONDS
    assert body["ticket"] != token and len(body["ticket"]) >= 22
    text: str = body["ticket"]
    return text


def reveal_both(client: FlaskClient, created: dict[str, Any]) -> None:
    """Both seats of a two-human Golf game turn up two cards (two new events)."""
    for seat in (0, 1):
        action = {"type": "reveal", "positions": [0, 1]}
        response = client.post(f"/v1/games/{created['id']}/actions", json=action, headers=auth(token_of(created, seat)))
        assert response.status_code == 200, response.get_data(as_text=True)


def token_of(created: dict[str, Any], seat: int) -> str:
    token: str = created["seats"][seat]["token"]
    return token


def all_events(client: FlaskClient, game_id: str, after: int = 0) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(f"/v1/games/{game_id}/events?after={after}").get_json()["events"]
    return events


# ---------------------------------------------------------------- events and resuming


@pytest.mark.parametrize("how", ["last_event_id", "after", "last_event_id_over_after"])
def test_resuming_gives_exactly_the_missed_events(client: FlaskClient, how: str) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    seen = 1  # the client saw event 1, then lost its connection; the game moved on
    reveal_both(client, created)
    version = len(all_events(client, game_id))
    assert version > seen + 1
    query, headers = {
        "last_event_id": ("", {"Last-Event-ID": str(seen)}),
        "after": (f"?after={seen}", {}),
        "last_event_id_over_after": ("?after=0", {"Last-Event-ID": str(seen)}),
    }[how]
    reader = stream(client, game_id, query, headers)
    messages = reader.until(lambda m: m.get("id") == str(version))
    reader.close()
    assert events_of(messages) == all_events(client, game_id, after=seen)
    assert all("comment" in m or m.get("event") != "view" for m in messages), "a spectator gets no view"


def test_events_appended_while_following_arrive_in_order(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    reader = stream(client, game_id, f"?after={created['version']}")
    assert reader.next() == {"comment": "heartbeat"}  # following, nothing new yet
    reveal_both(client, created)
    version = len(all_events(client, game_id))
    messages = reader.until(lambda m: m.get("id") == str(version))
    reader.close()
    assert events_of(messages) == all_events(client, game_id, after=created["version"])


def test_heartbeats_arrive_while_nothing_happens(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    started = time.monotonic()  # before the stream opens: its first heartbeat comes a heartbeat after that
    reader = stream(client, created["id"], f"?after={created['version']}")
    beats = [reader.next(timeout=10) for _ in range(3)]
    reader.close()
    assert beats == [{"comment": "heartbeat"}] * 3
    assert time.monotonic() - started >= 2 * HEARTBEAT


def test_the_stream_closes_after_the_last_event(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create_golf(client, seats=TWO_BOTS, options={"rounds": 1})
    reader = stream(client, created["id"])
    mover = threading.Thread(target=dispatcher.drain)  # the bots play the game to its end while we follow
    mover.start()
    messages = reader.rest(timeout=10)
    mover.join()
    records = events_of(messages)
    assert records == all_events(client, created["id"])
    assert records[-1]["type"] == "SeedRevealed"
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))


def test_a_finished_game_streams_its_events_then_ends_and_then_answers_204(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    created = create_golf(client, seats=TWO_BOTS, options={"rounds": 1})
    dispatcher.drain()
    events = all_events(client, created["id"])
    assert events[-1]["type"] == "SeedRevealed"
    messages = stream(client, created["id"], f"?after={len(events) - 3}").rest()
    assert events_of(messages) == events[-3:]
    done = client.get(f"/v1/games/{created['id']}/stream", headers={"Last-Event-ID": str(len(events))})
    assert done.status_code == 204 and done.get_data() == b""  # EventSource stops reconnecting on a 204


# ---------------------------------------------------------------- a seat's view


def test_a_seat_stream_sends_that_seat_view_after_each_change(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    token = token_of(created, 0)
    reader = stream(client, game_id, f"?after={created['version']}&ticket={ticket(client, game_id, token)}")
    first = reader.next()
    assert first is not None and first["event"] == "view" and "id" not in first
    assert first["data"] == client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    reveal_both(client, created)
    version = len(all_events(client, game_id))
    messages = reader.until(lambda m: m.get("event") == "view" and m["data"]["version"] == version)
    reader.close()
    assert messages[-1]["data"] == client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
    assert messages[-1]["data"]["you"]["seat"] == 0


# ---------------------------------------------------------------- tickets


def test_a_ticket_opens_one_stream_only(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    once = ticket(client, game_id, token_of(created, 1))
    stream(client, game_id, f"?ticket={once}").close()
    assert_problem(client.get(f"/v1/games/{game_id}/stream?ticket={once}"), 401, "unauthorized")


def test_a_ticket_expires(app: flask.Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.extensions["tickets"], "seconds", 1)
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    response = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(token_of(created, 0)))
    assert response.get_json()["expires_in"] == 1
    time.sleep(1.3)
    assert_problem(client.get(f"/v1/games/{game_id}/stream?ticket={response.get_json()['ticket']}"), 401)


def test_a_ticket_opens_only_its_own_game(client: FlaskClient) -> None:
    first = create_golf(client, seats=TWO_HUMANS)
    second = create_golf(client, seats=TWO_HUMANS)
    foreign = ticket(client, first["id"], token_of(first, 0))
    assert_problem(client.get(f"/v1/games/{second['id']}/stream?ticket={foreign}"), 401, "unauthorized")
    stream(client, first["id"], f"?ticket={foreign}").close()  # unspent by the refusal: still good at home


def test_a_ticket_needs_the_seat_token_of_that_game(client: FlaskClient) -> None:
    first = create_golf(client, seats=TWO_HUMANS)
    second = create_golf(client, seats=TWO_HUMANS)
    path = f"/v1/games/{first['id']}/stream-tickets"
    assert_problem(client.post(path), 401, "unauthorized")
    assert_problem(client.post(path, headers=auth(token_of(second, 0))), 401, "unauthorized")
    assert_problem(client.post("/v1/games/nosuchgame/stream-tickets", headers=auth(token_of(first, 0))), 404)


def test_redis_keeps_only_the_ticket_digest_with_an_expiry(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis
) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    issued = ticket(client, created["id"], token_of(created, 0))
    keys = [key for key in fake_redis.keys("*") if ":ticket:" in key]
    assert len(keys) == 1 and keys[0].startswith(f"game:{{{created['id']}}}:ticket:")
    assert 0 < fake_redis.ttl(keys[0]) <= TICKET_SECONDS
    assert issued not in str(redis_dump(fake_redis))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "query", ["?after=-1", "?after=1.5", "?after=%2B1", "?after=1e3", "?after=x", "?after=", "?after=%201"]
)
def test_a_bad_after_is_400(client: FlaskClient, query: str) -> None:
    created = create_golf(client)
    assert_problem(client.get(f"/v1/games/{created['id']}/stream{query}"), 400, "invalid_request")


@pytest.mark.parametrize("header", ["-1", "1.5", "x", "", "99999999999999999"])
def test_a_bad_last_event_id_is_400(client: FlaskClient, header: str) -> None:
    created = create_golf(client)
    response = client.get(f"/v1/games/{created['id']}/stream", headers={"Last-Event-ID": header})
    assert_problem(response, 400, "invalid_request")


def test_an_unknown_game_is_404(client: FlaskClient) -> None:
    assert_problem(client.get("/v1/games/nosuchgame/stream"), 404, "game_not_found")
    assert_problem(client.get("/v1/games/no%20such/stream"), 404, "game_not_found")
