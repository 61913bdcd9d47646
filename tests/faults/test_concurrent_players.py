"""The fault suite (issue 28): concurrent players create and play games through the HTTP API while the
proxy loses the replies of creates and appends (they ran), cuts them before Redis (they did not run)
and delays reads. Then, against what each client was told:
  - no acknowledged event is lost: each answer's events are stored at their seq, as answered;
  - no action is applied twice: the stream holds nothing but the creation and the answered actions;
  - no request made two games: Redis holds exactly the games whose creation was answered;
  - every game's /audit passes.
Seeded (the plan's random source and each player's choices) and bounded (a fixed number of games
and actions). Pack, export and import can join by adding rules for their commands.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import threading
from typing import Any

import pytest
import redis

from service.storage.event_store import _APPEND, _CREATE
from tests.conftest import auth
from tests.faults.conftest import Proxied, game_ids
from tests.faults.redis_proxy import Fault, FaultPlan, RedisProxy, Rule
from tests.service.helpers import stream_entries

pytestmark = pytest.mark.integration

GAMES = 4
ACTIONS_PER_PLAYER = 25
CREATE_LOST = Rule("EVALSHA", Fault.REPLY_LOST, script=_CREATE, limit=2)
CREATE_NOT_SENT = Rule("EVALSHA", Fault.NOT_SENT, script=_CREATE, limit=1)
APPEND_LOST = Rule("EVALSHA", Fault.REPLY_LOST, script=_APPEND, probability=0.2)
APPEND_NOT_SENT = Rule("EVALSHA", Fault.NOT_SENT, script=_APPEND, probability=0.1)
READS_DELAYED = Rule("XRANGE", Fault.DELAY, probability=0.05, delay_seconds=0.002)
READS_CUT = Rule("XRANGE", Fault.NOT_SENT, probability=0.02)
RULES = [CREATE_LOST, CREATE_NOT_SENT, APPEND_LOST, APPEND_NOT_SENT, READS_DELAYED, READS_CUT]
TWO_PEOPLE = {"game": "golf", "seats": [{"kind": "human"}, {"kind": "human"}]}


@dataclasses.dataclass
class Told:
    """What the clients were told: games created, and each answered action's events."""

    created: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    answers: dict[str, list[list[dict[str, Any]]]] = dataclasses.field(default_factory=dict)
    surprises: list[str] = dataclasses.field(default_factory=list)  # answers no client should get
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def create_games(proxied: Proxied, told: Told) -> None:
    """GAMES creations at once, each from its own client."""

    def create() -> None:
        response = proxied.app.test_client().post("/v1/games", json=TWO_PEOPLE)
        with told.lock:
            if response.status_code == 201:
                told.created.append(response.get_json())
            else:
                told.surprises.append(f"create: {response.status_code} {response.get_data(as_text=True)}")

    run_all([create] * GAMES)


def play(proxied: Proxied, told: Told, game_id: str, token: str, player: int) -> None:
    """One seat's client: sends one of its legal actions whenever it has some, ACTIONS_PER_PLAYER
    times; odd players send an Idempotency-Key (and retry a 503 with it), every third player its
    expected_version."""
    client = proxied.app.test_client()
    choices = random.Random(player)
    sent = 0
    for attempt in itertools.count():
        if sent >= ACTIONS_PER_PLAYER or attempt > 50 * ACTIONS_PER_PLAYER:
            return
        outcome = take_a_turn(client, told, game_id, token, player, sent, choices)
        if outcome is None:
            return
        sent += outcome


def take_a_turn(
    client: Any,
    told: Told,
    game_id: str,
    token: str,
    player: int,
    sent: int,
    choices: random.Random,
    gone: bool = False,
) -> bool | None:
    """One look at the game as the seat's client and, when the seat may act, one of its legal actions: odd
    players send an Idempotency-Key (`p<player>-<sent>`, and retry a 503 with it), every third player its
    expected_version. True when it sent one, False when it had none to send, None when the client stops
    (the game ended, or an answer no client should get). `gone`: a game may be gone (exported) by then."""
    keyed, versioned = player % 2 == 1, player % 3 == 0
    view = client.get(f"/v1/games/{game_id}", headers=auth(token))
    if view.status_code == 404 and gone:
        return None
    if view.status_code != 200:
        told.surprises.append(f"view: {view.status_code} {view.get_data(as_text=True)}")
        return None
    state = view.get_json()
    if state["status"] != "active":
        return None
    if not state["you"]["legal"]:
        return False
    body = {
        **choices.choice(state["you"]["legal"]),
        **({"expected_version": state["version"]} if versioned else {}),
    }
    headers = {**auth(token), **({"Idempotency-Key": f"p{player}-{sent}"} if keyed else {})}
    for _ in range(3 if keyed else 1):  # a 503 is retried with the same key
        response = client.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)
        if response.status_code != 503:
            break
    if response.status_code == 200:
        with told.lock:
            told.answers.setdefault(game_id, []).append(response.get_json()["events"])
    elif response.status_code not in (409, 422, *((404,) if gone else ())):  # another seat moved first
        told.surprises.append(f"action: {response.status_code} {response.get_data(as_text=True)}")
    return True


def run_all(jobs: list[Any]) -> None:
    """Run the jobs at once, each in its own thread; re-raise the first error."""
    errors: list[BaseException] = []

    def guarded(job: Any) -> None:
        try:
            job()
        except BaseException as error:  # handed to the test thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a client hung"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("seed", [28, 1028])
def test_concurrent_players_under_lost_replies_and_cut_connections(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, seed: int
) -> None:
    plan = proxy.plan = FaultPlan(seed, RULES)
    told = Told()
    create_games(proxied, told)
    players = [(game["id"], seat["token"]) for game in told.created for seat in game["seats"] if "token" in seat]
    run_all([lambda g=g, t=t, n=n: play(proxied, told, g, t, seed + n) for n, (g, t) in enumerate(players)])
    proxy.plan = FaultPlan(seed)  # the checks read without faults

    assert not told.surprises, told.surprises
    for rule in RULES:
        assert plan.used(rule), f"the plan never injected {rule}"
    assert len(told.created) == GAMES
    for game in told.created:
        check_stream_is_what_was_told(upstream, game, told.answers.get(game["id"], []))
        audit = proxied.client.get(f"/v1/games/{game['id']}/audit").get_json()
        assert audit["chain_ok"] and audit["replay_ok"] and audit["first_bad_seq"] is None, audit
    assert game_ids(upstream) == {game["id"] for game in told.created}, "a request made more than one game"


def check_stream_is_what_was_told(
    upstream: redis.Redis, game: dict[str, Any], answers: list[list[dict[str, Any]]]
) -> None:
    """The stream is the creation's records, then exactly the answered actions' events, each once."""
    stored = [json.loads(fields["e"]) for _, fields in stream_entries(upstream, game["id"])]
    check_records_are_what_was_told(stored, game, answers)


def check_records_are_what_was_told(
    stored: list[dict[str, Any]], game: dict[str, Any], answers: list[list[dict[str, Any]]]
) -> None:
    """The game's stored records (from its stream, its packed value or its file) are the creation's
    records, then exactly the answered actions' events, each once."""
    created = game["version"]
    by_seq: dict[int, dict[str, Any]] = {}
    for events in answers:
        for event in events:
            assert event["seq"] not in by_seq, f"seq {event['seq']} was answered to two actions"
            by_seq[event["seq"]] = event
    for seq, event in by_seq.items():
        assert seq <= len(stored) and stored[seq - 1] == event, f"answered event {seq} is not stored as answered"
    unanswered = [record["seq"] for record in stored[created:] if record["seq"] not in by_seq]
    assert not unanswered, f"stored events no client was told of (an action applied twice?): {unanswered}"
