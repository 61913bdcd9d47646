"""House levels from plug-ins (service/play/plugin_levels.py, docs/bots.md "House levels from plug-ins"): the tests'
own plug-in package (tests/plugins, installed by the fixture `bot_plugins`) gives a good level, `last-legal`, and
one of each way a plug-in fails. The catalog lists a plug-in's level for the games it names, a seat takes it there
(422 elsewhere), the workers play it, and a turn it fails is played by `greedy`, logged, and the game goes on.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import bots, engine, verify
from domain.bots import LEVELS, choose_action
from domain.bots import golf as golf_bot
from service.app import create_app
from service.play import plugin_levels
from service.play.seats import HousePolicy, PluginPolicy, controller_of, new_seat
from service.storage.turn_queue import BOT_QUEUE
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import assert_problem

PLUGINS_LOG = "service.play.plugin_levels"
GOLF_LEVELS = [*LEVELS, "illegal", "last-legal", "raises", "slow"]  # by name after the built-in ones
ONE_ROUND = {"rounds": 1}
Choice = Callable[[engine.GameConfig, engine.Snapshot[Any], int, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def app(bot_plugins: Path, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    """The app, built with the tests' plug-ins installed."""
    application = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


@pytest.fixture
def last_legal_calls(bot_plugins: Path) -> list[int]:
    """The versions at which `last-legal` was asked for a turn, from now on."""
    calls: list[int] = importlib.import_module("cardtable_test_bots.last_legal").calls
    calls.clear()
    return calls


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == PLUGINS_LOG and r.levelno == logging.WARNING]


def create(client: FlaskClient, game: str, seats: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = client.post("/v1/games", json={"game": game, "seats": seats, **extra})
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def bots_of(level: str, count: int = 2) -> list[dict[str, Any]]:
    return [{"kind": "bot", "level": level}] * count


def play_offline(record: dict[str, Any], choose: Choice) -> list[tuple[str, Any, Any]]:
    """The game of `record` (its seed and nonce, revealed at its end) played again here, each seat to act by
    `choose`: its events as the record shows them."""
    config = engine.make_config(
        record["game"], len(record["seats"]), record["options"], record["seed"], nonce=record["nonce"]
    )
    snap, events = engine.start(config)
    while not snap.finished:
        seat = snap.to_act()[0]
        snap, more = engine.act(snap, seat, choose(config, snap, seat, engine.view(snap, seat)))
        events += more
    return [(e.type_name(), e.actor, json.loads(json.dumps(e.data()))) for e in events]


def recorded(record: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(e["type"], e["actor"], e["data"]) for e in record["events"]]


def last_legal(config: engine.GameConfig, snap: engine.Snapshot[Any], seat: int, view: dict[str, Any]) -> Any:
    return view["you"]["legal"][-1]


def greedy(config: engine.GameConfig, snap: engine.Snapshot[Any], seat: int, view: dict[str, Any]) -> Any:
    """What a greedy house seat plays: its stream is the seat's and the version's."""
    stream = config.private_stream(f"bot/{seat}/{snap.version}")
    return choose_action(config.game, "greedy", view, view["you"]["legal"], stream)


def finished_record(client: FlaskClient, dispatcher: RecordingDispatcher, game_id: str) -> dict[str, Any]:
    dispatcher.drain()
    record: dict[str, Any] = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["status"] == "finished", record["status"]
    assert verify.verify(record).ok
    return record


# ---------------------------------------------------------------- found, listed, offered


def test_the_catalog_lists_a_plug_in_s_level_for_the_games_it_names_only(client: FlaskClient) -> None:
    games = {game["id"]: game for game in client.get("/v1/catalog").get_json()["games"]}
    assert games["golf"]["bot_levels"] == GOLF_LEVELS
    assert all(games[other]["bot_levels"] == list(LEVELS) for other in ("switch", "romme", "go5"))


def test_a_plug_in_that_fails_to_load_or_is_of_no_use_is_logged_and_left_out_and_the_app_starts(
    bot_plugins: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        app = create_app({"TESTING": True}, redis_client=fakeredis.FakeRedis(decode_responses=True))
    said = "\n".join(warnings_of(caplog))
    assert "bot plug-in 'broken-import' (cardtable_test_bots.broken) left out: it failed to load: " in said
    assert "No module named 'cardtable_test_bots_missing_dependency'" in said
    assert "bot plug-in 'shapeless' (cardtable_test_bots.faulty:SHAPELESS) left out: `games` must be" in said
    assert "bot plug-in 'greedy' (cardtable_test_bots.faulty:RAISES) left out: 'greedy' is a built-in level" in said
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    golf = next(game for game in client.get("/v1/catalog").get_json()["games"] if game["id"] == "golf")
    assert golf["bot_levels"] == GOLF_LEVELS


def test_no_plug_in_replaces_greedy_the_turn_timeout_s_policy(app: flask.Flask) -> None:
    """The tests' package declares a level `greedy` too: it is left out, and greedy stays the domain's own."""
    assert bots.policy_for("golf", "greedy") is golf_bot.greedy
    assert bots.plugin_level("greedy") is None


def test_a_seat_takes_a_plug_in_s_level_for_a_game_it_plays_and_only_for_one(client: FlaskClient) -> None:
    created = create(client, "golf", [{"kind": "human"}, {"kind": "bot", "level": "last-legal"}])
    assert created["seats"][1] == {"seat": 1, "kind": "bot", "name": "last-legal bot 1", "level": "last-legal"}
    elsewhere = client.post("/v1/games", json={"game": "switch", "seats": bots_of("last-legal", 4)})
    assert_problem(elsewhere, 422, "invalid_bot_seat")
    assert "'last-legal' does not play switch" in elsewhere.get_json()["detail"]
    for unknown in ("no-such-level", "broken-import", "shapeless"):
        response = client.post("/v1/games", json={"game": "golf", "seats": bots_of(unknown)})
        assert_problem(response, 400, "invalid_request")


# ---------------------------------------------------------------- played


def test_a_plug_in_s_level_plays_a_game_to_its_end_through_the_bot_queue(
    client: FlaskClient, dispatcher: RecordingDispatcher, last_legal_calls: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    created = create(client, "golf", bots_of("last-legal"), options=ONE_ROUND)
    assert set(dispatcher.queues.values()) == {BOT_QUEUE}
    record = finished_record(client, dispatcher, created["id"])

    assert recorded(record) == play_offline(record, last_legal), "every turn was the plug-in's choice"
    actions = [e for e in record["events"] if isinstance(e["actor"], int)]
    assert len(last_legal_calls) == len(actions) and not warnings_of(caplog)
    assert [seat["level"] for seat in record["seats"]] == ["last-legal", "last-legal"]
    bots.use_plugin_levels([])  # the record needs no plug-in: it holds the moves
    replay = client.get(f"/v1/games/{created['id']}/replay?at=5")
    assert replay.status_code == 200, replay.get_json()
    assert verify.verify(client.get(f"/v1/games/{created['id']}/record").get_json()).ok


def test_a_person_plays_beside_a_plug_in_s_level(
    client: FlaskClient, dispatcher: RecordingDispatcher, last_legal_calls: list[int]
) -> None:
    created = create(client, "golf", [{"kind": "human"}, {"kind": "bot", "level": "last-legal"}], options=ONE_ROUND)
    token, game_id = created["seats"][0]["token"], created["id"]
    for _ in range(200):
        dispatcher.drain()
        view = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
        if view["status"] == "finished":
            break
        action = {**view["you"]["legal"][-1], "expected_version": view["version"]}
        assert client.post(f"/v1/games/{game_id}/actions", json=action, headers=auth(token)).status_code == 200
    assert view["status"] == "finished" and last_legal_calls


@pytest.mark.parametrize(
    ("level", "said"),
    [
        ("raises", "raised RuntimeError: the plug-in's own bug"),
        ("illegal", "answered {'type': 'take_everything'} in golf, which is not a legal action"),
    ],
)
def test_a_turn_the_plug_in_fails_is_played_by_greedy_logged_and_the_game_goes_on(
    client: FlaskClient, dispatcher: RecordingDispatcher, caplog: pytest.LogCaptureFixture, level: str, said: str
) -> None:
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        created = create(client, "golf", bots_of(level), options=ONE_ROUND)
        record = finished_record(client, dispatcher, created["id"])

    assert recorded(record) == play_offline(record, greedy), "every turn was greedy's, as a greedy seat plays it"
    turns = [e for e in record["events"] if isinstance(e["actor"], int)]
    warned = warnings_of(caplog)
    assert len(warned) == len(turns), warned[:3]
    assert all(f"bot plug-in '{level}' (cardtable_test_bots.faulty:" in w and said in w for w in warned), warned[0]
    assert all(w.endswith("greedy plays its turn") for w in warned)


def test_a_plug_in_that_thinks_past_the_expert_s_cap_has_its_turn_played_by_greedy(
    bot_plugins: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plugin_levels.install()
    config = engine.make_config("golf", 2, ONE_ROUND, "slow-plug-in", nonce="n")
    snap, _ = engine.start(config)
    seat = snap.to_act()[0]
    seats = [new_seat(i, {"kind": "bot", "level": "slow"}, "golf", 2000) for i in range(2)]
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        player = controller_of(seats[seat])
        assert isinstance(player, PluginPolicy)
        caplog.clear()
        assert player.decide(snap, seat, 50) == HousePolicy("greedy").decide(snap, seat, 50)
        slow = "bot plug-in 'slow' (cardtable_test_bots.faulty:SLOW)"
        assert warnings_of(caplog) == [f"{slow} thought longer than 50 ms in golf; greedy plays its turn"]
        caplog.clear()
        assert player.decide(snap, seat, 2000) == engine.legal_actions(snap, seat)[-1], "within the cap: its own"
        assert warnings_of(caplog) == []


def test_the_cap_on_a_plug_in_s_think_time_is_the_expert_s_setting(
    monkeypatch: pytest.MonkeyPatch, bot_plugins: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """EXPERT_THINK_MS_MAX: what the workers' bot turns give an expert, and a plug-in, a move."""
    monkeypatch.setenv("EXPERT_THINK_MS_MAX", "20")
    dispatcher = RecordingDispatcher()
    app = create_app({"TESTING": True}, redis_client=fakeredis.FakeRedis(decode_responses=True), dispatcher=dispatcher)
    dispatcher.service = app.extensions["games"]
    client = app.test_client()
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        created = create(client, "golf", [{"kind": "human"}, {"kind": "bot", "level": "slow"}], options=ONE_ROUND)
        dispatcher.drain()
    assert "bot plug-in 'slow' (cardtable_test_bots.faulty:SLOW) thought longer than 20 ms in golf" in "\n".join(
        warnings_of(caplog)
    )
    assert client.get(f"/v1/games/{created['id']}").get_json()["version"] > created["version"], "the bot played"


def test_a_plug_in_not_installed_where_the_turn_is_played_has_greedy_play_its_turns(
    client: FlaskClient, dispatcher: RecordingDispatcher, caplog: pytest.LogCaptureFixture
) -> None:
    """Installed where the game was made, not in the worker (or gone since it started): the game still ends."""
    created = create(client, "golf", bots_of("last-legal"), options=ONE_ROUND)
    bots.use_plugin_levels([])
    with caplog.at_level(logging.WARNING, logger=PLUGINS_LOG):
        record = finished_record(client, dispatcher, created["id"])
    assert recorded(record) == play_offline(record, greedy)
    assert "bot plug-in 'last-legal': not installed here for golf; greedy plays its turn" in warnings_of(caplog)
