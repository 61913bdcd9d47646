"""GET /v1/ladder/{game} and `python -m workers.ladder rebuild`, over matches played in-process (C-8, shared/API.md
"The ladder"): the rebuild from the match records equals the served ladder byte for byte; the served ladder needs
no game record; a match finished twice counts once; equal deal scores tie."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain import bots, engine
from domain.bots import PluginLevel, expert, policy_for
from domain.shuffle import SeededStream
from service.app import create_app
from service.bootstrap import Services, build_services
from service.play.game_history import GameHistory
from service.play.ladder import Ladders, serialized
from service.play.matches import Matches
from service.play.ports import NoDispatcher
from tests.conftest import RecordingDispatcher
from tests.service.helpers import assert_problem
from workers import ladder as ladder_cli

GOLF = {"rounds": 1}


@pytest.fixture(autouse=True)
def quick_expert(monkeypatch: pytest.MonkeyPatch) -> None:
    """The expert thinks little: these tests are about the ladder, not its strength."""
    search = expert.search

    def cheap(view: Any, legal: Any, rng: Any, budget: expert.Budget) -> dict[str, Any]:
        return search(view, legal, rng, expert.Budget(samples=1, think_ms=budget.think_ms, max_candidates=2))

    monkeypatch.setattr(expert, "search", cheap)


def play_match(
    client: FlaskClient, dispatcher: RecordingDispatcher, levels: Sequence[str], deals: int, seed: str
) -> dict[str, Any]:
    """A Golf match of these levels, played to its end by the bot turns; its view."""
    body = {"game": "golf", "options": GOLF, "entrants": [{"level": level} for level in levels], "deals": deals}
    created = client.post("/v1/matches", json={**body, "seed": seed})
    assert created.status_code == 201, created.get_json()["detail"]
    dispatcher.drain()
    view: dict[str, Any] = client.get(f"/v1/matches/{created.get_json()['id']}").get_json()
    assert view["status"] == "finished", view["progress"]
    return view


def served(client: FlaskClient) -> str:
    """Every game's served ladder (GET /v1/ladder/{game}'s `ladder`), serialized as the rebuild's output is."""
    ladders = {}
    for game in engine.all_games():
        response = client.get(f"/v1/ladder/{game.id}")
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["game"] == game.id
        ladders[game.id] = response.get_json()["ladder"]
    return serialized(ladders)


def other_process(fake_redis: fakeredis.FakeRedis) -> Services:
    """The object graph a command-line tool builds on the same store (nothing of the app's kept)."""
    return build_services({}, redis_client=fake_redis, dispatcher=NoDispatcher())


def rebuilt(fake_redis: fakeredis.FakeRedis, tmp_path: Path) -> str:
    """`python -m workers.ladder rebuild --out FILE`, in another object graph on the same store: the file's text."""
    out = tmp_path / "ladder.json"
    assert ladder_cli.main(["rebuild", "--out", str(out)], services=other_process(fake_redis)) == 0
    return out.read_text(encoding="utf-8").removesuffix("\n")


def test_c8_the_rebuild_from_the_match_records_equals_the_served_ladder_byte_for_byte(
    client: FlaskClient,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = served(client)
    assert json.loads(empty) == {game.id: [] for game in engine.all_games()}
    assert rebuilt(fake_redis, tmp_path) == empty

    first = play_match(client, dispatcher, ["random", "greedy", "expert"], deals=2, seed="ladder-1")
    after_one = served(client)  # kept by this process ...
    play_match(client, dispatcher, ["greedy", "random"], deals=2, seed="ladder-2")
    after_two = served(client)  # ... and extended by the second match
    assert after_two != after_one
    assert rebuilt(fake_redis, tmp_path) == after_two
    assert ladder_cli.main(["rebuild"], services=other_process(fake_redis)) == 0
    assert capsys.readouterr().out == after_two + "\n"

    golf = client.get("/v1/ladder/golf").get_json()
    assert golf["matches"] == 2
    entries = {entry["entrant"]: entry for entry in golf["ladder"]}
    assert set(entries) == {"random", "greedy", "expert"}
    assert (entries["random"]["matches"], entries["random"]["deals"]) == (2, 4)
    assert (entries["expert"]["matches"], entries["expert"]["deals"]) == (1, 2)
    hands = {result["entrant"]: result["hands"] for result in first["results"]}
    assert entries["expert"]["hands"] == hands["expert"] == 2 * 3  # 2 deals, 3 games each, 1 hand each
    ordinals = [entry["rating"]["ordinal"] for entry in golf["ladder"]]
    assert ordinals == sorted(ordinals, reverse=True)


def test_a_match_indexed_late_is_rated_in_its_place(
    client: FlaskClient, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis, tmp_path: Path
) -> None:
    """A match whose place among the finished ones was written late (the next pass over the running matches puts
    it back) lands between matches this process rated already: the kept ladder is rated again, in the new order."""
    play_match(client, dispatcher, ["random", "greedy"], deals=2, seed="late-1")
    second = play_match(client, dispatcher, ["greedy", "expert"], deals=2, seed="late-2")
    in_finish_order = served(client)
    matches: Matches = client.application.extensions["matches"]
    matches.store.index_finished(second["id"], "golf", 0)  # now the first to have finished
    assert rebuilt(fake_redis, tmp_path) == served(client) != in_finish_order


def test_the_served_ladder_needs_no_game_record(
    client: FlaskClient,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each finished match keeps its deal scores with its results: a new process serves the ladder from the
    matches' headers alone."""
    play_match(client, dispatcher, ["random", "expert"], deals=2, seed="headers")
    before = served(client)

    def no_record(self: GameHistory, game_id: str) -> dict[str, Any]:
        raise AssertionError(f"the ladder read the record of {game_id}")

    monkeypatch.setattr(GameHistory, "record", no_record)
    fresh = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=RecordingDispatcher())
    assert served(fresh.test_client()) == before


def test_a_match_finished_twice_counts_once(
    app: flask.Flask,
    client: FlaskClient,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    tmp_path: Path,
) -> None:
    """The finishing step may run again (a reconciler pass, a game's end seen in two processes): the ladder is
    the same, from a process that kept it or from a new one, and the match is rated once."""
    match = play_match(client, dispatcher, ["random", "greedy", "expert"], deals=2, seed="twice")
    once = served(client)
    matches: Matches = app.extensions["matches"]
    meta = matches.store.meta(match["id"])
    assert meta is not None
    matches.advance(match["id"])
    matches.clock_ms = lambda: 1  # a finish that would have a time of its own
    matches._finish(match["id"], meta, json.loads(meta["entrants"]))

    assert matches.store.meta(match["id"]) == meta
    assert matches.store.finished_of("golf") == [match["id"]]
    assert served(client) == once
    assert serialized(Ladders(matches.store, matches).rebuild()) == once
    assert rebuilt(fake_redis, tmp_path) == once
    assert client.get("/v1/ladder/golf").get_json()["matches"] == 1


@pytest.fixture
def twins(app: flask.Flask) -> Iterator[None]:
    """Two plug-in levels that play alike: Golf's greedy policy with one fixed stream for its ties, so that in each
    game of a deal every seat plays as it did in the others. (Installed once the app has found its plug-ins.)"""
    greedy = policy_for("golf", "greedy")

    def twin(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream) -> dict[str, Any]:
        return greedy(view, legal, SeededStream("twin", "ties"))

    before = bots.plugin_levels()
    bots.use_plugin_levels([*before, PluginLevel("twin-a", ("golf",), twin), PluginLevel("twin-b", ("golf",), twin)])
    yield
    bots.use_plugin_levels(before)


@pytest.mark.usefixtures("twins")
def test_c8_equal_deal_scores_tie_on_the_ladder(
    client: FlaskClient, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis, tmp_path: Path
) -> None:
    """Two entrants that play alike score the same on every deal of a duplicate match: they tie each contest
    and end level, listed by name."""
    match = play_match(client, dispatcher, ["twin-b", "twin-a"], deals=2, seed="twins")
    (twin_b, twin_a) = match["results"]
    assert twin_b["paired"][0]["mean"] == 0 and twin_b["mean_points_per_hand"] == twin_a["mean_points_per_hand"]
    ladder = client.get("/v1/ladder/golf").get_json()["ladder"]
    assert [entry["entrant"] for entry in ladder] == ["twin-a", "twin-b"]
    assert ladder[0]["rating"] == ladder[1]["rating"]
    assert ladder[0]["rating"]["sigma"] < 25 / 3  # rated: two tied contests
    assert rebuilt(fake_redis, tmp_path) == served(client)


def test_the_ladder_of_a_game_not_in_the_catalog_is_not_found(client: FlaskClient) -> None:
    response = client.get("/v1/ladder/chess")
    assert_problem(response, 404, "ladder_not_found")


def test_a_bot_profile_shows_its_rating_in_each_ladder_it_is_in(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """shared/API.md "Registered bots": a profile holds the bot's ladder ratings (none before its first match)."""
    token = client.post("/v1/bots", json={"name": "rated-bot", "games": ["golf", "switch"]}).get_json()["token"]
    assert client.get("/v1/bots/rated-bot").get_json()["ratings"] == {}
    body = {
        "game": "golf",
        "options": {"rounds": 1},
        "entrants": [{"bot": "rated-bot"}, {"level": "random"}],
        "deals": 2,
    }
    match = client.post("/v1/matches", json=body).get_json()
    for _ in range(500):
        dispatcher.drain()
        for turn in client.get("/v1/bots/me/turns", headers={"Authorization": f"Bearer {token}"}).get_json()["turns"]:
            action = {**turn["legal"][-1], "expected_version": turn["version"]}
            client.post(
                f"/v1/games/{turn['game_id']}/actions", json=action, headers={"Authorization": f"Bearer {token}"}
            )
        if client.get(f"/v1/matches/{match['id']}").get_json()["status"] == "finished":
            break
    ladder = client.get("/v1/ladder/golf").get_json()["ladder"]
    rank = [entry["entrant"] for entry in ladder].index("bot:rated-bot") + 1
    ratings = client.get("/v1/bots/rated-bot").get_json()["ratings"]
    assert ratings == {"golf": {**ladder[rank - 1]["rating"], "rank": rank}}
    listed = client.get("/v1/bots?game=golf").get_json()["bots"]
    assert [bot["ratings"] for bot in listed if bot["name"] == "rated-bot"] == [ratings]
