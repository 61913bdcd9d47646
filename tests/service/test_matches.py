"""Matches on duplicate deals (rules C-8, shared/API.md "Matches"): every 4xx of a match's creation; its games
dealt from the deal seeds and seated by rotation; a deal's games closed to all but their seats' own views until
the deal is done, and the match's seed revealed once it has finished; no game started twice for one (deal,
rotation) however often or wherever the match is advanced; a lost start repaired; the record checked offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from domain.duplicate_deals import deal_seed, match_commitment, seating
from domain.verify import main as verify_main
from domain.verify_match import verify_match
from service.api.match_routes import MatchGameSchema
from service.play.loaded_game import LoadedGame
from service.play.matches import Matches, MatchSettings, game_id_of
from service.storage import keys
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import assert_problem
from tests.service.test_registered_bots import registered

GOLF = {"game": "golf", "options": {"rounds": 1}}
THREE = [{"level": "random"}, {"level": "greedy"}, {"level": "expert"}]


def matches_of(app: flask.Flask) -> Matches:
    found: Matches = app.extensions["matches"]
    return found


def start(client: FlaskClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/matches", json={**GOLF, "entrants": THREE, "deals": 2, **body})
    assert response.status_code == 201, response.get_json()
    assert response.headers["Location"] == f"/v1/matches/{response.get_json()['id']}"
    created: dict[str, Any] = response.get_json()
    return created


def play_out(client: FlaskClient, dispatcher: RecordingDispatcher, match_id: str) -> dict[str, Any]:
    for _ in range(200):
        dispatcher.drain()
        view: dict[str, Any] = client.get(f"/v1/matches/{match_id}").get_json()
        if view["status"] == "finished":
            return view
    raise AssertionError("the match did not finish")


# ---------------------------------------------------------------- creation and its refusals


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"entrants": [{"level": "greedy"}]}, 422, "entrants"),  # one entrant: golf needs 2 or more
        ({"entrants": [{"level": "greedy"}] * 3}, 422, "entrants"),  # an entrant twice
        ({"entrants": [{"level": "greedy"}, {"level": "grandmaster"}]}, 422, "entrants.1"),
        ({"entrants": [{"level": "greedy"}, {"bot": "nobody-here"}]}, 422, "entrants"),
        ({"entrants": [{"level": "greedy"}, {"bot": "switcher"}]}, 422, "entrants"),  # not registered for golf
        ({"entrants": [{"level": "greedy"}, {"level": "random", "bot": "acme-golfer"}]}, 422, "entrants.1"),
        ({"entrants": [{"level": "greedy"}, {}]}, 422, "entrants.1"),
        ({"options": {"rounds": 0}}, 422, "options"),
        ({"options": {"no_such_option": 1}}, 422, "options"),
        ({"deals": 0}, 422, "deals"),
        ({"deals": 1001}, 422, "deals"),
        ({"game": "chess"}, 422, "game"),
        ({"seed": ""}, 422, "seed"),
        ({"deals": "2"}, 400, "deals"),
        ({"entrants": "greedy"}, 400, "entrants"),
    ],
)
def test_a_match_that_cannot_be_played_is_refused_naming_the_field_and_nothing_is_stored(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, body: dict[str, Any], status: int, field: str
) -> None:
    registered(client)
    registered(client, "switcher", ["switch"])
    before = set(fake_redis.keys("*"))
    response = client.post("/v1/matches", json={**GOLF, "entrants": THREE, "deals": 2, **body})
    problem = assert_problem(response, status)
    assert field in problem["detail"], problem
    assert set(fake_redis.keys("*")) - before <= {key for key in fake_redis.keys("ratelimit:*")}


def test_the_operator_caps_running_matches_per_client_and_in_all(fake_redis: fakeredis.FakeRedis) -> None:
    from service.app import create_app

    app = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=RecordingDispatcher())
    matches_of(app).settings = MatchSettings(per_client=1, running_max=2)
    client = app.test_client()
    start(client)
    refused = client.post("/v1/matches", json={**GOLF, "entrants": THREE, "deals": 2})
    assert_problem(refused, 429, "rate_limited")
    assert refused.headers["Retry-After"]
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    start(other)
    third = app.test_client()
    third.environ_base["REMOTE_ADDR"] = "192.0.2.8"
    assert_problem(third.post("/v1/matches", json={**GOLF, "entrants": THREE, "deals": 2}), 503, "matches_full")


# ---------------------------------------------------------------- its games, by C-8


def test_a_matchs_games_are_dealt_from_the_deal_seeds_and_seated_by_rotation(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """C-8: deal d's games have the seed deal_seed(d) and their own nonces; game r seats entrant (i + r) mod n."""
    created = start(client, seed="demo", deals=2)
    assert "seed" not in created and "nonce" not in created
    view = play_out(client, dispatcher, created["id"])
    assert view["seed"] == "demo" and match_commitment("demo", view["nonce"]) == created["seed_commitment"]
    labels = ["random", "greedy", "expert"]
    nonces = set()
    for game in view["games"]:
        record = client.get(f"/v1/games/{game['game_id']}/record").get_json()
        assert record["seed"] == deal_seed("demo", game["deal"])
        assert record["match"] == {"match": created["id"], "deal": game["deal"], "rotation": game["rotation"]}
        assert [seat["level"] for seat in record["seats"]] == list(seating(labels, game["rotation"]))
        assert game["seats"] == list(seating(labels, game["rotation"]))
        nonces.add(record["nonce"])
    assert MatchGameSchema(many=True).validate(view["games"]) == {}, "dumped as it is: in the documented shape"
    assert len(view["games"]) == 6 and len(nonces) == 6
    assert deal_seed("demo", 0) == "734d8d8cb5b4b60cf1203bdc8862d1a1a801831b0dbeb0cad504a207b45de106"
    assert view["progress"] == {"games_finished": 6, "games_total": 6}
    assert [result["entrant"] for result in view["results"]] == labels
    assert all(result["hands"] == 6 for result in view["results"]), "each entrant: 2 deals x 3 games x 1 hand"


def test_the_games_of_one_deal_run_one_after_another_and_deals_at_once_are_bounded(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    matches_of(app).settings = MatchSettings(deals_at_once=2)
    created = start(client, deals=4)
    seen_running: list[set[tuple[int, int]]] = []
    for _ in range(5000):
        view = client.get(f"/v1/matches/{created['id']}").get_json()
        running = {(g["deal"], g["rotation"]) for g in view["games"] if g["status"] == "active"}
        seen_running.append(running)
        if view["status"] == "finished":
            break
        dispatcher.drain(limit=3)
    assert view["status"] == "finished"
    assert max(len(running) for running in seen_running) == 2, "two deals at once"
    for running in seen_running:
        deals = [deal for deal, _ in running]
        assert len(deals) == len(set(deals)), "one game of a deal at a time"
        assert len(deals) <= 2, "at most deals_at_once deals at once"


# ---------------------------------------------------------------- no peeking across a deal


def test_a_deals_games_are_closed_to_all_but_their_seats_own_views_until_the_deal_is_done(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    created = start(client, entrants=[{"bot": "acme-golfer"}, {"level": "greedy"}], deals=1)
    first = game_id_of(created["id"], 0, 0)
    for path in ("", "/events", "/record", "/replay?at=1", "/stream"):
        response = client.get(f"/v1/games/{first}{path}")
        problem = assert_problem(response, 403, "deal_in_play")
        assert int(response.headers["Retry-After"]) > 0 and "C-8" in problem["detail"]
    assert_problem(client.get(f"/v1/matches/{created['id']}/record"), 403, "deal_in_play")
    own = client.get(f"/v1/games/{first}", headers=auth(token))
    assert own.status_code == 200 and own.get_json()["you"]["seat"] == 0, "the seat's own view is served"
    assert own.get_json()["match"] == {"match": created["id"], "deal": 0, "rotation": 0}
    while client.get(f"/v1/matches/{created['id']}").get_json()["status"] != "finished":
        dispatcher.drain()
        for turn in client.get("/v1/bots/me/turns", headers=auth(token)).get_json()["turns"]:
            body = {**turn["legal"][-1], "expected_version": turn["version"]}
            client.post(f"/v1/games/{turn['game_id']}/actions", json=body, headers=auth(token))
        second = game_id_of(created["id"], 0, 1)
        if client.get(f"/v1/matches/{created['id']}").get_json()["progress"]["games_finished"] == 1:
            assert_problem(client.get(f"/v1/games/{first}/record"), 403, "deal_in_play")
            assert_problem(client.get(f"/v1/games/{second}"), 403, "deal_in_play")
    for path in ("", "/events", "/record", "/replay?at=1"):
        assert client.get(f"/v1/games/{first}{path}").status_code == 200, path
    assert client.get(f"/v1/matches/{created['id']}/record").status_code == 200


# ---------------------------------------------------------------- never twice, never stalled


def test_advancing_a_match_again_and_again_starts_no_game_twice(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    created = start(client, deals=2)
    matches = matches_of(app)
    assert matches.advance(created["id"]) == 0, "each deal's first game is running already"
    meta = fake_redis.hgetall(keys.match_key(created["id"], "meta"))
    entrants = json.loads(meta["entrants"])
    matches._start(created["id"], meta, entrants, 0, 0)  # a second start of the same game, as a racing process
    assert len(fake_redis.keys(f"game:{{{game_id_of(created['id'], 0, 0)}}}:events")) == 1
    view = play_out(client, dispatcher, created["id"])
    assert matches.advance(created["id"]) == 0 and matches.advance_running() == 0
    assert len(view["games"]) == 6 and len(set(g["game_id"] for g in view["games"])) == 6
    assert client.get(f"/v1/matches/{created['id']}").get_json()["results"] == view["results"]


def test_a_start_lost_between_its_note_and_its_game_is_started_by_the_next_pass(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    """A process that stopped after noting a game as started, before storing it, or whose end-of-game step was
    lost: the reconciler's pass (`advance_running`) finds the game missing, or ended, and goes on."""
    matches = matches_of(app)
    matches.games.when_ended.clear()  # the end-of-game step is lost: only the passes advance the match
    created = start(client, deals=1)
    first = game_id_of(created["id"], 0, 0)
    for key in fake_redis.keys(f"game:{{{first}}}:*"):
        fake_redis.delete(key)  # as if the process stopped before the game was stored
    assert matches.advance_running() == 1, "the lost game is started again"
    for _ in range(100):
        dispatcher.drain()
        matches.advance_running()
        if client.get(f"/v1/matches/{created['id']}").get_json()["status"] == "finished":
            break
    assert client.get(f"/v1/matches/{created['id']}").get_json()["status"] == "finished"


def test_a_pass_looks_only_at_the_deals_in_play_however_long_the_match(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: fakeredis.FakeRedis,
    dispatcher: RecordingDispatcher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every game's end-of-game step lost, the passes alone play the match: each reads the games of the deals
    from the first not yet done and opened to the last begun, never the whole match, and raises that first deal
    as the deals are done and opened."""
    matches = matches_of(app)
    matches.settings = MatchSettings(deals_at_once=2)
    matches.games.when_ended.clear()
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=8)
    meta_key = keys.match_key(created["id"], "meta")
    windows: list[range | None] = []
    real_states = matches.store.game_states

    def recorded(match_id: str, deals: range | None = None, count: int = 0) -> dict[tuple[int, int], str]:
        windows.append(deals)
        return real_states(match_id, deals, count)

    monkeypatch.setattr(matches.store, "game_states", recorded)
    opened_before = 0
    for _ in range(200):
        dispatcher.drain()
        matches.advance_running()
        opened = int(fake_redis.hget(meta_key, "deals_opened") or 0)
        assert opened >= opened_before, "never lowered"
        opened_before = opened
        if fake_redis.hget(meta_key, "status") == "finished":
            break
    assert fake_redis.hget(meta_key, "status") == "finished" and opened_before == 8
    assert None not in windows, "no pass read every game of the match"
    assert max(len(window) for window in windows if window is not None) <= 4, windows
    assert not any(
        fake_redis.hexists(keys.MATCHES_EMBARGO_KEY, game_id_of(created["id"], d, r))
        for d in range(8)
        for r in range(2)
    )


def test_a_pass_looks_at_each_started_games_last_record_and_folds_none(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconciler pass runs every 2 s beside people's games, past the rests a match takes while they play: it
    tells a started game that has ended by its last record (the seed's reveal) and loads none (in a whole bench
    run a pass spent most of its time folding the deals' games in play)."""
    matches = matches_of(app)
    matches.games.when_ended.clear()  # the end-of-game step is lost: only the passes advance the match
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=3)
    loads: list[str] = []
    real_load = matches.games.load

    def load(game_id: str) -> Any:
        loads.append(game_id)
        return real_load(game_id)

    for _ in range(100):
        dispatcher.drain()
        monkeypatch.setattr(matches.games, "load", load)
        matches.advance_running()
        monkeypatch.setattr(matches.games, "load", real_load)
        if matches.view(created["id"])["status"] == "finished":
            break
    assert matches.view(created["id"])["status"] == "finished", "the passes alone played the match"
    assert loads == [], "a pass folded a game"


@pytest.mark.parametrize("counts", [True, False], ids=["counts-kept", "made-before-counts"])
def test_of_two_last_games_ending_at_once_the_later_finishes_the_match(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    fake_redis: fakeredis.FakeRedis,
    monkeypatch: pytest.MonkeyPatch,
    counts: bool,
) -> None:
    """The last games of two deals end in two processes at once, the second wholly inside the first's step (forced
    here: after the first has noted its end, or, for a match made before the counts were kept, read the match's
    games): the match finishes with no pass, and each game is counted once."""
    matches = matches_of(app)
    two = [{"level": "random"}, {"level": "greedy"}]
    deferred: list[LoadedGame] = []

    def game_ended(loaded: LoadedGame) -> None:  # each deal's last game: its end-of-game step is held back
        assert loaded.place is not None
        (deferred.append if loaded.place.rotation == len(two) - 1 else matches.game_ended)(loaded)

    matches.games.when_ended[:] = [game_ended]
    created = start(client, entrants=two, deals=2)
    meta_key = keys.match_key(created["id"], "meta")
    if not counts:
        fake_redis.hdel(meta_key, "finished_games", "deals_begun")
    while len(deferred) < 2:
        assert dispatcher.drain(), "the match stalled before its last games ended"
    first, second = deferred
    read = "end_game" if counts else "game_states"
    real_read = getattr(matches.store, read)
    calls = []

    def read_then_the_other_end(match_id: str, *args: Any) -> Any:
        found = real_read(match_id, *args)
        calls.append(match_id)
        if len(calls) == 1:  # the first end has read: the second ends wholly now
            matches.game_ended(second)
        return found

    monkeypatch.setattr(matches.store, read, read_then_the_other_end)
    matches.game_ended(first)
    view = client.get(f"/v1/matches/{created['id']}").get_json()
    assert view["status"] == "finished" and view["progress"]["games_finished"] == 4
    assert fake_redis.hget(meta_key, "finished_games") == ("4" if counts else None)


def test_a_games_end_reads_none_of_the_matchs_other_games(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game's end costs the same at any length of match: it notes the game, starts what follows (the deal's next
    game, else the first deal not begun, at most MATCH_DEALS_AT_ONCE deals at once) and finishes the match with
    its last game, all without reading the match's games; the match's header is read once a process (and once
    when the match finishes, for the time it finished)."""
    matches = matches_of(app)
    matches.settings = MatchSettings(deals_at_once=2)
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=5)
    reads, header_reads = [], []
    real_states, real_meta = matches.store.game_states, matches.store.meta
    monkeypatch.setattr(matches.store, "game_states", lambda match_id: reads.append(match_id) or real_states(match_id))
    most_at_once = 0
    while (view := matches.view(created["id"]))["status"] != "finished":
        reads.clear()
        most_at_once = max(most_at_once, len({g["deal"] for g in view["games"] if g["status"] == "active"}))
        monkeypatch.setattr(
            matches.store, "meta", lambda match_id: header_reads.append(match_id) or real_meta(match_id)
        )
        assert dispatcher.drain(limit=1), "the match stalled"
        monkeypatch.setattr(matches.store, "meta", real_meta)
        assert reads == [], "a game's end read the match's games"
    assert view["progress"] == {"games_finished": 10, "games_total": 10} and most_at_once == 2
    assert header_reads == [created["id"]] * 2, "the header is read by the first game's end, and by the finish"
    assert [(g["deal"], g["rotation"]) for g in view["games"]] == [(d, r) for d in range(5) for r in range(2)]


def test_a_matchs_finish_reads_each_games_events_once_and_folds_none_of_its_games(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finish computes the results from the games' recorded events alone: at 400 games, loading (folding)
    each game for its whole record took 0.4 s of a match worker's CPU at the match's end, beside people's
    actions and past the rests a match takes while they play (docs/performance.md), against 0.08 s for the
    events. The results are those `make verify` recomputes from the record (the offline test below)."""
    matches = matches_of(app)
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=3)
    while matches.view(created["id"])["progress"]["games_finished"] < 5:
        assert dispatcher.drain(limit=1), "the match stalled"
    loads: list[str] = []
    reads: list[str] = []
    real_load, real_read = matches.history.repository.load, matches.history.store.read
    monkeypatch.setattr(matches.history.repository, "load", lambda game_id: loads.append(game_id) or real_load(game_id))

    def read(game_id: str, after: int = 0, count: int | None = None) -> Any:
        if after == 0:  # a whole game's events, not a load's events past its cached version
            reads.append(game_id)
        return real_read(game_id, after, count)

    monkeypatch.setattr(matches.history.store, "read", read)
    view = play_out(client, dispatcher, created["id"])
    ids = [game_id_of(created["id"], deal, rotation) for deal in range(3) for rotation in range(2)]
    assert view["status"] == "finished" and len(view["results"]) == 2
    assert set(loads) <= {ids[-1]}, "the finish folded games other than the one whose end finished the match"
    assert sorted(set(reads)) == sorted(ids) and len(reads) == len(ids), "each game's events read once"


def test_a_games_end_in_a_match_that_is_no_longer_running_notes_and_starts_nothing(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> None:
    """The header a process keeps says the match runs; the store's own look at its status decides."""
    matches = matches_of(app)
    matches.settings = MatchSettings(deals_at_once=1)
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=3)
    assert dispatcher.drain(limit=1)  # the first game's end: the header is kept
    meta_key = f"match:{{{created['id']}}}:meta"
    fake_redis.hset(meta_key, "status", "finished")  # as if finished by another process meanwhile
    games_before = fake_redis.hgetall(f"match:{{{created['id']}}}:games")
    dispatcher.drain()
    assert fake_redis.hgetall(f"match:{{{created['id']}}}:games") == games_before, "nothing noted, nothing started"
    assert fake_redis.hget(meta_key, "finished_games") == "1"


def test_a_games_end_that_a_pass_noted_first_is_counted_once_and_starts_nothing_more(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, fake_redis: fakeredis.FakeRedis
) -> None:
    matches = matches_of(app)
    matches.settings = MatchSettings(deals_at_once=1)
    deferred: list[LoadedGame] = []
    matches.games.when_ended[:] = [deferred.append]
    created = start(client, entrants=[{"level": "random"}, {"level": "greedy"}], deals=3)
    dispatcher.drain()  # the first game ends; its end-of-game step is held back
    assert len(deferred) == 1 and matches.advance_running() == 1, "the pass notes the end and starts the next game"
    matches.games.when_ended[:] = [matches.game_ended]
    matches.game_ended(deferred[0])  # the held-back end arrives after the pass
    meta_key = keys.match_key(created["id"], "meta")
    assert fake_redis.hget(meta_key, "finished_games") == "1" and fake_redis.hget(meta_key, "deals_begun") == "1"
    view = play_out(client, dispatcher, created["id"])
    assert view["progress"] == {"games_finished": 6, "games_total": 6}
    assert fake_redis.hget(meta_key, "finished_games") == "6" and fake_redis.hget(meta_key, "deals_begun") == "3"


def test_the_matches_list_newest_first_a_page_at_a_time(client: FlaskClient, app: flask.Flask) -> None:
    matches_of(app).settings = MatchSettings(per_client=0, running_max=10)
    ids = [start(client)["id"] for _ in range(3)]
    first = client.get("/v1/matches?limit=2").get_json()
    assert [m["id"] for m in first["matches"]] == ids[::-1][:2] and "games" not in first["matches"][0]
    rest = client.get(first["next"]).get_json()
    assert [m["id"] for m in rest["matches"]] == ids[:1] and rest["next"] is None
    assert_problem(client.get("/v1/matches/no-such-match"), 404, "match_not_found")
    assert_problem(client.get("/v1/matches/no%20such"), 404, "match_not_found")


# ---------------------------------------------------------------- the record, checked offline


def test_a_bot_that_never_plays_still_counts_with_its_timeouts_shown(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    """Issue "Matches", item 2: a registered bot that times out still counts; its moves played at its
    deadlines are shown in the results (and recomputed by the offline check)."""
    registered(client, "sleepy-golfer")
    created = start(client, entrants=[{"level": "greedy"}, {"bot": "sleepy-golfer"}], deals=2)
    for _ in range(400):
        dispatcher.drain()
        dispatcher.fire_timeouts()  # the bot never asks for its turns: each is played at its deadline
        view = client.get(f"/v1/matches/{created['id']}").get_json()
        if view["status"] == "finished":
            break
    else:
        raise AssertionError("the match did not finish")
    timeouts = {result["entrant"]: result["timeouts"] for result in view["results"]}
    record = client.get(f"/v1/matches/{created['id']}/record").get_json()
    played_for_bot = 0
    for game, kept in zip(record["games"], record["records"], strict=True):
        seat = game["seats"].index("bot:sleepy-golfer")
        played_for_bot += len({r["at"] for r in kept["events"] if r.get("seat") == seat and r["actor"] == "system"})
        assert not [r for r in kept["events"] if r.get("seat") == seat and r["actor"] == seat], "the bot moved"
    assert timeouts == {"greedy": 0, "bot:sleepy-golfer": played_for_bot} and played_for_bot > 0
    assert all(result["hands"] == 4 for result in view["results"]), "the bot's hands count as any entrant's"
    assert verify_match(record).ok, verify_match(record).detail
    record["results"][1]["timeouts"] += 1
    assert "results" in verify_match(record).detail


def test_a_match_record_made_before_timeouts_were_counted_still_verifies(
    client: FlaskClient, dispatcher: RecordingDispatcher
) -> None:
    created = start(client, deals=1, seed="older")
    play_out(client, dispatcher, created["id"])
    record = client.get(f"/v1/matches/{created['id']}/record").get_json()
    for result in record["results"]:
        del result["timeouts"]
    assert verify_match(record).ok, verify_match(record).detail
    record["results"][0]["hands"] += 1
    assert not verify_match(record).ok


def test_the_match_record_verifies_offline_and_a_changed_one_is_named(
    client: FlaskClient, dispatcher: RecordingDispatcher, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    created = start(client, deals=2, seed="offline")
    play_out(client, dispatcher, created["id"])
    record = client.get(f"/v1/matches/{created['id']}/record").get_json()
    assert verify_match(record).ok, verify_match(record).detail
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record))
    assert verify_main([str(path)]) == 0 and "PASS" in capsys.readouterr().out

    def changed(change: Any) -> str:
        copy = json.loads(json.dumps(record))
        change(copy)
        verdict = verify_match(copy)
        assert not verdict.ok
        return verdict.detail

    assert "seed_commitment" in changed(lambda r: r.update(nonce="0" * 64))
    assert "seats" in changed(lambda r: r["records"][1]["seats"].reverse())
    assert "results" in changed(lambda r: r["results"][0].update(mean_points_per_hand=0.5))
    assert "one game for each" in changed(lambda r: (r["games"].pop(), r["records"].pop()))
    assert "deal 1, rotation 0" in changed(lambda r: r["records"][3]["events"][3]["data"].update(round=9))
    path.write_text(json.dumps({**record, "nonce": "0" * 64}))
    assert verify_main([str(path)]) == 1 and "FAIL" in capsys.readouterr().out
