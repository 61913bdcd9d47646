"""A match's games yield to people's (service/play/match_pace.py): a person's action through the API notes that
people play, a match's own moves do not, and a match's worker rests after each game's turns while people play,
flat out otherwise."""

from __future__ import annotations

from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient
from prometheus_client import REGISTRY
from rq import Queue, SimpleWorker
from rq.serializers import JSONSerializer

from service.bootstrap import build_services
from service.play.match_pace import (
    ASK_SECONDS,
    NOTE_SECONDS,
    PLAYING_SECONDS,
    REST_MAX_SECONDS,
    MatchPace,
    share_percent_from_env,
)
from service.storage.game_counts import GameCounts
from service.storage.keys import BOT_QUEUE, MATCH_QUEUE, PEOPLE_PLAYING_KEY
from service.storage.outcomes import StoreUnavailable
from service.storage.turn_queue import RQDispatcher
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.test_matches import start
from tests.service.test_registered_bots import games_of, registered
from workers.bot_turns import yield_to_people


class Clock:
    """time.monotonic, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Rests:
    """time.sleep, recorded."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)


def act_as_a_person(client: FlaskClient, game: dict[str, Any]) -> None:
    """The seat to act makes its first legal move through the API."""
    for seat in game["seats"]:
        view = client.get(f"/v1/games/{game['id']}", headers=auth(seat["token"])).get_json()
        if view["you"]["legal"]:
            response = client.post(
                f"/v1/games/{game['id']}/actions", json=view["you"]["legal"][0], headers=auth(seat["token"])
            )
            assert response.status_code == 200, response.get_json()
            return
    raise AssertionError("no seat may act")


def test_a_persons_action_notes_that_people_play_for_a_while_at_most_twice_a_second(
    client: FlaskClient, app: flask.Flask, fake_redis: fakeredis.FakeRedis
) -> None:
    clock = Clock()
    games_of(app).match_pace.clock = clock
    game = create_golf(client, [{"kind": "human"}, {"kind": "human"}], options={"rounds": 1})
    assert not fake_redis.exists(PEOPLE_PLAYING_KEY), "starting a game is not playing it"
    act_as_a_person(client, game)
    assert 0 < fake_redis.pttl(PEOPLE_PLAYING_KEY) <= PLAYING_SECONDS * 1000
    fake_redis.delete(PEOPLE_PLAYING_KEY)
    clock.now += NOTE_SECONDS / 2
    act_as_a_person(client, game)
    assert not fake_redis.exists(PEOPLE_PLAYING_KEY), "noted at most every NOTE_SECONDS a process"
    clock.now += NOTE_SECONDS / 2
    act_as_a_person(client, game)
    assert fake_redis.exists(PEOPLE_PLAYING_KEY)


def test_a_registered_bots_moves_in_a_match_are_not_peoples(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, dispatcher: RecordingDispatcher
) -> None:
    token = registered(client)["token"]
    created = start(client, entrants=[{"level": "greedy"}, {"bot": "acme-golfer"}], deals=1)
    moves = 0
    for _ in range(300):
        dispatcher.drain()
        view = client.get(f"/v1/matches/{created['id']}").get_json()
        if view["status"] == "finished":
            break
        for game in view["games"]:
            seen = client.get(f"/v1/games/{game['game_id']}", headers=auth(token)).get_json()
            if seen["status"] == "active" and seen["you"]["legal"]:
                path = f"/v1/games/{game['game_id']}/actions"
                response = client.post(path, json=seen["you"]["legal"][0], headers=auth(token))
                assert response.status_code == 200, response.get_json()
                moves += 1
    assert view["status"] == "finished" and moves > 3
    assert not fake_redis.exists(PEOPLE_PLAYING_KEY)


def pace(share: int = 25) -> tuple[MatchPace, fakeredis.FakeRedis, Clock, Rests]:
    redis = fakeredis.FakeRedis(decode_responses=True)
    clock, rests = Clock(), Rests()
    return MatchPace(GameCounts(redis), share, clock, rests), redis, clock, rests


def rested_in_all() -> float:
    """The metric of the seconds matches' workers rested, in this process."""
    return REGISTRY.get_sample_value("cardtable_match_rest_seconds_total") or 0.0


def test_a_match_worker_rests_while_people_play_so_its_turns_take_the_share_of_its_time() -> None:
    match_pace, redis, clock, rests = pace(share=25)
    before = rested_in_all()
    assert match_pace.rest_after(0.02) == 0.0 and rests.taken == [], "nobody plays: flat out"
    redis.set(PEOPLE_PLAYING_KEY, "1")
    clock.now += ASK_SECONDS
    assert match_pace.rest_after(0.02) == pytest.approx(0.06)  # 0.02 of every 0.08 seconds: 25%
    assert rests.taken == [pytest.approx(0.06)]
    assert rested_in_all() == pytest.approx(before + 0.06), "the rest is counted for the operator"
    redis.delete(PEOPLE_PLAYING_KEY)
    assert match_pace.rest_after(0.01) == pytest.approx(0.03), "asked at most every ASK_SECONDS"
    clock.now += ASK_SECONDS
    assert match_pace.rest_after(0.01) == 0.0


def test_one_rest_is_bounded() -> None:
    match_pace, redis, _, rests = pace(share=1)
    redis.set(PEOPLE_PLAYING_KEY, "1")
    assert match_pace.rest_after(1.0) == REST_MAX_SECONDS and rests.taken == [REST_MAX_SECONDS]


def test_a_share_of_100_percent_never_rests() -> None:
    match_pace, redis, _, rests = pace(share=100)
    redis.set(PEOPLE_PLAYING_KEY, "1")
    assert match_pace.rest_after(0.5) == 0.0 and rests.taken == []


def test_a_match_plays_on_when_it_cannot_ask_whether_people_play(caplog: pytest.LogCaptureFixture) -> None:
    match_pace, _, _, rests = pace()

    def away() -> bool:
        raise StoreUnavailable("Redis went away for a moment")

    match_pace.counts.people_playing = away  # type: ignore[method-assign]
    assert match_pace.rest_after(0.02) == 0.0 and rests.taken == []
    assert "could not ask whether people are playing" in caplog.text


def test_only_a_match_job_rests(fake_redis: fakeredis.FakeRedis) -> None:
    services = build_services({}, redis_client=fake_redis, dispatcher=RecordingDispatcher())
    rests = Rests()
    services.games.match_pace.sleep = rests
    fake_redis.set(PEOPLE_PLAYING_KEY, "1")
    assert yield_to_people(services.games, BOT_QUEUE, 0.0) == 0.0, "a person's opponent never waits"
    assert yield_to_people(services.games, MATCH_QUEUE, 0.0) > 0 and len(rests.taken) == 1


def test_a_match_job_rests_after_each_games_turns_while_people_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the worker's job: one rest a game, and the match still finishes."""
    server = fakeredis.FakeServer()
    queue_client = fakeredis.FakeRedis(server=server)
    store_client = fakeredis.FakeRedis(server=server, decode_responses=True)
    services = build_services({}, redis_client=store_client, dispatcher=RQDispatcher(queue_client))
    rests = Rests()
    services.games.match_pace.sleep = rests
    store_client.set(PEOPLE_PLAYING_KEY, "1")
    match = services.matches.create("golf", [{"level": "greedy"}, {"level": "random"}], 2, {"rounds": 1})
    monkeypatch.setattr("workers.bot_turns.game_service", lambda: services.games)
    monkeypatch.setattr("workers.bot_turns.dispatcher", lambda: services.dispatcher)
    monkeypatch.setattr("workers.bot_turns.CHAIN_SECONDS", 60.0)  # time enough for a deal whatever the machine
    queue = Queue(MATCH_QUEUE, connection=queue_client, serializer=JSONSerializer)
    SimpleWorker([queue], connection=queue_client, serializer=JSONSerializer).work(burst=True)
    view = services.matches.view(match["id"])
    assert view["status"] == "finished" and view["progress"]["games_finished"] == 4
    assert len(rests.taken) == 4 and all(rest > 0 for rest in rests.taken), rests.taken


@pytest.mark.parametrize("text", ["0", "101", "a quarter", "25%", "-5"])
def test_a_share_that_is_not_a_percent_from_1_to_100_is_refused_naming_the_setting(text: str) -> None:
    with pytest.raises(ValueError, match="MATCH_SHARE_WHILE_PEOPLE_PLAY"):
        share_percent_from_env({"MATCH_SHARE_WHILE_PEOPLE_PLAY": text})
    assert share_percent_from_env({}) == 10 and share_percent_from_env({"MATCH_SHARE_WHILE_PEOPLE_PLAY": "100"}) == 100
