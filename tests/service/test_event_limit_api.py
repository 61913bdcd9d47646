"""C-9 over HTTP: `max_events` is an option of every game, with the operator's default and ceiling
(MAX_EVENTS_DEFAULT, MAX_EVENTS_LIMIT); a game that reaches it ends with `event_limit`, by a person's
action or a bot's, and its record verifies."""

from __future__ import annotations

from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain import engine
from domain.options import MAX_EVENTS_DEFAULT
from domain.verify import verify
from service.app import create_app
from service.play.event_limits import MAX_EVENTS_CEILING, EventLimitsError, event_limits_from_env
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import assert_problem


def catalog_option(client: FlaskClient, game: str) -> dict[str, Any]:
    entry = next(g for g in client.get("/v1/catalog").get_json()["games"] if g["id"] == game)
    return dict(next(option for option in entry["options"] if option["name"] == "max_events"))


def test_c9_an_all_bot_game_created_with_a_small_max_events_ends_with_event_limit(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """C-9: Switch with four random bots (a game that may run for ever) asked for 60 events ends within its
    last move's room of 60, its last bot turn followed by GameEnded (reason event_limit) and the seed's reveal;
    the record verifies."""
    seats = [{"kind": "bot", "level": "random"} for _ in range(4)]
    created = client.post("/v1/games", json={"game": "switch", "seats": seats, "options": {"max_events": 60}})
    assert created.status_code == 201, created.get_json()
    game_url = f"/v1/games/{created.get_json()['id']}"
    dispatcher.drain(limit=1000)
    view = client.get(game_url).get_json()
    assert view["status"] == "finished" and 60 - engine.ACTION_EVENTS_MAX < view["version"] <= 60
    assert view["result"]["reason"] == "event_limit"
    record = client.get(f"{game_url}/record").get_json()
    assert record["options"]["max_events"] == 60 and len(record["events"]) == view["version"]
    assert [e["type"] for e in record["events"][-2:]] == ["GameEnded", "SeedRevealed"]
    assert record["events"][-2]["data"]["reason"] == "event_limit"
    assert record["events"][-3]["actor"] != "system"  # a bot's action made the append that filled it
    verdict = verify(record)
    assert verdict.ok and verdict.result == view["result"], verdict.detail


def test_c9_a_persons_action_that_leaves_room_only_for_the_end_ends_the_game(client: FlaskClient) -> None:
    """C-9: two people play Golf with max_events 30; the action that leaves room only for the closing events
    is answered with them, and nothing more may be played."""
    seats = [{"kind": "human"}, {"kind": "human"}]
    created = client.post("/v1/games", json={"game": "golf", "seats": seats, "options": {"max_events": 30}}).get_json()
    game_url, tokens = f"/v1/games/{created['id']}", [seat["token"] for seat in created["seats"]]
    answer: dict[str, Any] = {}
    for _ in range(30):
        view = client.get(game_url).get_json()
        if view["status"] == "finished":
            break
        seat = view["to_act"][0]
        legal = client.get(game_url, headers=auth(tokens[seat])).get_json()["you"]["legal"]
        answer = client.post(f"{game_url}/actions", json=legal[0], headers=auth(tokens[seat])).get_json()
    assert 30 - engine.ACTION_EVENTS_MAX < answer["version"] <= 30
    assert [e["type"] for e in answer["events"][-2:]] == ["GameEnded", "SeedRevealed"]
    assert answer["events"][-2]["data"]["reason"] == "event_limit" and answer["events"][0]["actor"] != "system"
    late = client.post(f"{game_url}/actions", json={"type": "draw"}, headers=auth(tokens[0]))
    assert_problem(late, 422, "game_finished")


def test_c9_max_events_over_the_ceiling_is_refused_by_name_and_nothing_is_stored(
    client: FlaskClient, fake_redis: Any
) -> None:
    """C-9: a creator may ask for less than the ceiling, not more: a 400 problem naming the option."""
    before = fake_redis.dbsize()
    for asked in (MAX_EVENTS_CEILING + 1, 9, "many"):
        body = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}], "options": {"max_events": asked}}
        problem = assert_problem(client.post("/v1/games", json=body), 400, "invalid_option")
        assert "max_events" in problem["detail"]
    assert fake_redis.dbsize() == before
    assert catalog_option(client, "golf") | {"description": ""} == {
        "name": "max_events",
        "description": "",
        "default": MAX_EVENTS_DEFAULT,
        "minimum": 10,
        "maximum": MAX_EVENTS_CEILING,
    }


def test_c9_the_operators_default_and_ceiling_are_in_the_catalog_and_bind_new_games(
    monkeypatch: pytest.MonkeyPatch, fake_redis: Any
) -> None:
    """C-9: MAX_EVENTS_DEFAULT and MAX_EVENTS_LIMIT are what the catalog shows and what a new game gets."""
    monkeypatch.setenv("MAX_EVENTS_DEFAULT", "300")
    monkeypatch.setenv("MAX_EVENTS_LIMIT", "1000")
    app: flask.Flask = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=RecordingDispatcher())
    client = app.test_client()
    for game in ("golf", "romme", "switch", "go5"):
        option = catalog_option(client, game)
        assert (option["default"], option["maximum"]) == (300, 1000)
    seats = [{"kind": "human"}, {"kind": "human"}]
    created = client.post("/v1/games", json={"game": "golf", "seats": seats}).get_json()
    record = client.get(f"/v1/games/{created['id']}/record").get_json()
    assert record["options"]["max_events"] == 300
    over = {"game": "golf", "seats": seats, "options": {"max_events": 1001}}
    assert "at most 1000" in assert_problem(client.post("/v1/games", json=over), 400, "invalid_option")["detail"]


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"MAX_EVENTS_DEFAULT": "lots"}, "MAX_EVENTS_DEFAULT"),
        ({"MAX_EVENTS_LIMIT": "9"}, "MAX_EVENTS_LIMIT"),
        ({"MAX_EVENTS_LIMIT": "-5"}, "MAX_EVENTS_LIMIT"),
        ({"MAX_EVENTS_DEFAULT": "600", "MAX_EVENTS_LIMIT": "500"}, r"MAX_EVENTS_DEFAULT \(600\) must be at most"),
    ],
)
def test_c9_a_bad_event_limit_setting_stops_the_start_with_its_name(
    environ: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch, fake_redis: Any
) -> None:
    """C-9's settings are checked at start-up: the app does not start, and the error names the setting."""
    with pytest.raises(EventLimitsError, match=named):
        event_limits_from_env(environ)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(EventLimitsError, match=named):
        create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=RecordingDispatcher())


def test_c9_the_settings_default_to_the_domains_default_and_the_ceiling() -> None:
    limits = event_limits_from_env({})
    assert (limits.default, limits.ceiling) == (MAX_EVENTS_DEFAULT, MAX_EVENTS_CEILING)
    assert event_limits_from_env({"MAX_EVENTS_LIMIT": "500"}).default == 500  # the default follows a lower limit
