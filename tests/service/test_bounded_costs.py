"""Every request's work is bounded by its answer: disputes a page at a time with the verdict stored
when filed, a limit of disputes per seat, strict integers in every query (fakeredis)."""

from __future__ import annotations

import json
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import assert_problem
from tests.service.test_history_api import (
    Scenario,
    create,
    disputes_key,
    events_key,
    get_json,
    play_with_humans,
    replay,
    rewrite_stream,
    without_at,
)
from tests.service.test_snapshots import FoldCounter

GOLF = Scenario("golf", "golf", 2, {"rounds": 1})


def app_with(fake_redis: fakeredis.FakeRedis, **settings: Any) -> flask.Flask:
    dispatcher = RecordingDispatcher()
    app = create_app({"TESTING": True, **settings}, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = app.extensions["games"]
    return app


def played_golf(app: flask.Flask, stop_after: int | None = None) -> dict[str, Any]:
    """A Golf game of two people, played to its end (or for `stop_after` actions)."""
    client = app.test_client()
    created = create(client, GOLF, humans=2)
    dispatcher = app.extensions["games"].turns.dispatcher
    play_with_humans(client, app, dispatcher, created, stop_after=stop_after)
    return created


def file(client: FlaskClient, game_id: str, token: str, seq: int, reason: str = "this looks wrong") -> Any:
    return client.post(f"/v1/games/{game_id}/disputes", json={"seq": seq, "reason": reason}, headers=auth(token))


def tokens(created: dict[str, Any]) -> list[str]:
    return [seat["token"] for seat in created["seats"] if "token" in seat]


# ---------------------------------------------------------------- strict integers


BAD_INTEGERS = ["١", "1_000", "+1", " 1", "1 ", "1.0", "-1", "0x1", "1e3", "", "one", "²", "9" * 30]


def test_every_integer_query_parameter_takes_ascii_digits_only(fake_redis: fakeredis.FakeRedis) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = played_golf(app, stop_after=2)
    gid = created["id"]
    for path, name in (("events", "after"), ("replay", "at"), ("disputes", "after"), ("disputes", "limit")):
        for bad in BAD_INTEGERS:
            response = client.get(f"/v1/games/{gid}/{path}", query_string={name: bad})
            body = assert_problem(response, 400, "invalid_request")
            assert name in body["detail"], body
        assert client.get(f"/v1/games/{gid}/{path}", query_string={name: "1"}).status_code == 200
    for bad in ("١", "1_0", "+1", " 1", "nan", "inf", "1e1", "-0"):
        assert_problem(client.get(f"/v1/games/{gid}/events", query_string={"wait": bad}), 400, "invalid_request")
    assert client.get(f"/v1/games/{gid}/events", query_string={"wait": "0.5", "after": "1"}).status_code == 200


# ---------------------------------------------------------------- disputes: filed once, listed a page at a time


def test_disputes_come_a_page_at_a_time_and_each_answer_says_where_the_next_page_is(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    app = app_with(fake_redis, DISPUTES_PER_SEAT=30)
    client = app.test_client()
    created = played_golf(app)
    gid = created["id"]
    version = get_json(client, f"/v1/games/{gid}")["version"]
    filed = []
    for n in range(60):
        response = file(client, gid, tokens(created)[n % 2], 1 + n % version, f"dispute {n}")
        assert response.status_code == 201, response.get_data(as_text=True)
        filed.append(response.get_json())
    assert [d["number"] for d in filed] == list(range(1, 61))
    first = get_json(client, f"/v1/games/{gid}/disputes")
    assert [d["reason"] for d in first["disputes"]] == [f"dispute {n}" for n in range(50)], "50 by default"
    assert first["next"] == f"/v1/games/{gid}/disputes?after=50&limit=50"
    second = get_json(client, first["next"])
    assert [d["number"] for d in second["disputes"]] == list(range(51, 61)) and second["next"] is None
    seen, path = [], f"/v1/games/{gid}/disputes?limit=7"
    while path:
        page = get_json(client, path, tokens(created)[1])
        assert len(page["disputes"]) <= 7
        seen += page["disputes"]
        path = page["next"]
    assert [d["id"] for d in seen] == [d["id"] for d in filed]
    assert all("you" in d["after"] and d["after"]["you"]["seat"] == 1 for d in seen), "the caller's own views"
    assert len(get_json(client, f"/v1/games/{gid}/disputes?limit=200")["disputes"]) == 60
    for bad in ("0", "201"):
        assert_problem(client.get(f"/v1/games/{gid}/disputes?limit={bad}"), 400, "invalid_request")
    assert get_json(client, f"/v1/games/{gid}/disputes?after=60") == {"disputes": [], "next": None}


def test_a_seat_files_at_most_twenty_disputes_a_game_then_gets_a_clear_422(fake_redis: fakeredis.FakeRedis) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = played_golf(app, stop_after=3)
    gid = created["id"]
    first, second = tokens(created)
    for _ in range(20):
        assert file(client, gid, first, 1).status_code == 201
    refused = assert_problem(file(client, gid, first, 1), 422, "too_many_disputes")
    assert "20" in refused["detail"]
    assert fake_redis.xlen(disputes_key(gid)) == 20, "a refused dispute stores nothing"
    assert file(client, gid, second, 1).status_code == 201, "the limit is each seat's own"
    limited = app_with(fake_redis, DISPUTES_PER_SEAT=21).test_client()
    assert file(limited, gid, first, 1).status_code == 201, "DISPUTES_PER_SEAT sets the limit"
    assert_problem(file(limited, gid, first, 1), 422, "too_many_disputes")


def test_the_disputes_list_costs_the_same_however_many_disputes_the_game_holds(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in folded events (engine.advance), by a new API process each time (nothing cached)."""
    app = app_with(fake_redis, DISPUTES_PER_SEAT=100)
    client = app.test_client()
    running = played_golf(app, stop_after=12)
    finished = played_golf(app)
    counter = FoldCounter(monkeypatch)

    def cost(gid: str, token: str | None) -> int:
        fresh = app_with(fake_redis).test_client()
        folded, page = counter.during(lambda: get_json(fresh, f"/v1/games/{gid}/disputes?limit=10", token))
        assert len(page["disputes"]) == 10
        return int(folded)

    for created in (running, finished):
        gid = created["id"]
        version = get_json(client, f"/v1/games/{gid}")["version"]
        for n in range(10):
            assert file(client, gid, tokens(created)[0], version - n).status_code == 201
        few = {who: cost(gid, who) for who in (None, tokens(created)[1])}
        for n in range(180):
            assert file(client, gid, tokens(created)[n % 2], 1 + n % version).status_code == 201
        many = {who: cost(gid, who) for who in (None, tokens(created)[1])}
        assert many == few, (few, many)
        assert few[tokens(created)[1]] > 0, "a seat's views are folded (the counter counts)"
        # the game itself is loaded once (a fold of its events); the views around ten events near
        # its end fold at most the events since their snapshot each, not the game once per dispute
        assert few[tokens(created)[1]] <= version + 20 * 256


def test_a_spectator_of_a_running_game_gets_the_views_stored_with_each_dispute_without_a_fold(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = played_golf(app, stop_after=10)
    gid = created["id"]
    version = get_json(client, f"/v1/games/{gid}")["version"]
    for seq in (1, version // 2, version):
        assert file(client, gid, tokens(created)[0], seq).status_code == 201
    counter = FoldCounter(monkeypatch)
    client.get(f"/v1/games/{gid}")  # the game as loaded is cached in this process
    folded, listed = counter.during(lambda: get_json(client, f"/v1/games/{gid}/disputes"))
    assert folded == 0
    for dispute in listed["disputes"]:
        seq = dispute["seq"]
        assert dispute["after"] == without_at(replay(client, gid, seq))
        assert dispute["before"] == (without_at(replay(client, gid, seq - 1)) if seq > 1 else None)
        assert "you" not in dispute["after"] and "stock" not in dispute["after"]["table"]


def test_after_the_game_ends_a_spectator_sees_every_card_around_a_dispute_filed_while_it_ran(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = create(client, GOLF, humans=2)
    dispatcher = app.extensions["games"].turns.dispatcher
    play_with_humans(client, app, dispatcher, created, stop_after=4)
    gid = created["id"]
    running_view = get_json(client, f"/v1/games/{gid}")
    seq = running_view["version"]
    assert file(client, gid, tokens(created)[0], seq).status_code == 201
    while_running = get_json(client, f"/v1/games/{gid}/disputes")["disputes"][0]
    assert while_running["after"] == without_at(replay(client, gid, seq)) and "you" not in while_running["after"]
    play_with_humans(client, app, dispatcher, created)
    assert get_json(client, f"/v1/games/{gid}")["status"] == "finished"
    for api in (client, app_with(fake_redis).test_client()):
        ended = get_json(api, f"/v1/games/{gid}/disputes")["disputes"][0]
        assert ended["after"] == without_at(replay(api, gid, seq)) and "stock" in ended["after"]["table"]
        assert ended["verdict"] == while_running["verdict"], "the verdict is the one stored when it was filed"
        mine = get_json(api, f"/v1/games/{gid}/disputes", tokens(created)[0])["disputes"][0]
        assert mine["after"] == without_at(replay(api, gid, seq, tokens(created)[0])) and "you" in mine["after"]


def test_the_verdict_is_the_audit_when_the_dispute_was_filed(fake_redis: fakeredis.FakeRedis) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = played_golf(app)
    gid = created["id"]
    token = tokens(created)[0]
    record = get_json(client, f"/v1/games/{gid}/record")
    last = len(record["events"])
    before = file(client, gid, token, last).get_json()
    assert before["event_ok"] is True and before["verdict"] == get_json(client, f"/v1/games/{gid}/audit")
    record["events"][4]["data"] = {**record["events"][4]["data"], "forged": True}
    rewrite_stream(fake_redis, gid, record["events"])
    audit = get_json(client, f"/v1/games/{gid}/audit")
    assert audit["first_bad_seq"] == 5
    after = file(client, gid, token, last).get_json()
    assert after["verdict"] == audit and after["event_ok"] is False
    assert file(client, gid, token, 4).get_json()["event_ok"] is True, "the events before the first bad one are ok"
    listed = get_json(client, f"/v1/games/{gid}/disputes")["disputes"]
    assert [(d["verdict"]["first_bad_seq"], d["event_ok"]) for d in listed] == [(None, True), (5, False), (5, True)]
    stored = json.loads(fake_redis.xrange(disputes_key(gid))[1][1]["d"])
    assert stored["verdict"] == audit, "the verdict is stored with the dispute"
    assert fake_redis.xlen(events_key(gid)) == last


def test_a_dispute_filed_before_verdicts_were_stored_is_listed_with_the_audit_of_the_game_now(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    created = played_golf(app, stop_after=4)
    gid = created["id"]
    old = {"seat": 0, "seq": 2, "reason": "filed long ago", "at": "2026-11-30T12:41:56.635Z"}
    fake_redis.xadd(disputes_key(gid), {"d": json.dumps(old)}, id="1764506516635-0")
    listed = get_json(client, f"/v1/games/{gid}/disputes")["disputes"]
    assert [(d["id"], d["number"]) for d in listed] == [("1764506516635-0", 1764506516635)]
    assert listed[0]["verdict"] == get_json(client, f"/v1/games/{gid}/audit") and listed[0]["event_ok"] is True
    assert listed[0]["after"] == without_at(replay(client, gid, 2))
    newer = file(client, gid, tokens(created)[0], 1).get_json()
    assert newer["number"] == 1764506516636, "numbers go on after the old stream's last id"
    assert [d["number"] for d in get_json(client, f"/v1/games/{gid}/disputes?after=1764506516635")["disputes"]] == [
        1764506516636
    ]
