"""Schemathesis against the committed openapi.yaml, run in-process on the Flask app (WSGI).

Every operation of the spec is fuzzed (explicit examples, coverage and fuzzing phases, positive
and negative data) with a bounded number of examples. Path parameters are made meaningful: most
cases address a real game (one of each type, seeded first, with humans and bots), and the
Authorization header is, by turns, absent, the token of a seat of that game, the token of a seat
of another game, or junk. Bodies of POST .../actions are often a legal action of the token's seat,
so that 200 answers are checked against their schema too.

Checks on every response: no 5xx; the status code is one the operation documents *explicitly*
(the spec's catch-all `default` response does not count); the content type is the documented one;
the body conforms to the documented schema; problem bodies carry API.md's fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import flask
import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from domain import engine
from service.app import create_app
from service.play.matches import MatchSettings
from tests.conftest import RecordingDispatcher

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
MAX_EXAMPLES = 40
MAX_WAIT = 0.05  # seconds: a generated long-poll may wait up to 30 s; keep the run short

SEATS = {
    "golf": [{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "random"}, {"kind": "human"}],
    "romme": [{"kind": "human"}, {"kind": "bot"}],
    "switch": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "level": "random"}, {"kind": "bot"}],
    "go5": [{"kind": "bot"}, {"kind": "human"}, {"kind": "human"}],
}


class Seeded:
    """The app under test and the games made in it before the fuzzing starts."""

    def __init__(self) -> None:
        self.redis = fakeredis.FakeRedis(decode_responses=True)
        self.dispatcher = RecordingDispatcher()
        self.app: flask.Flask = create_app({"TESTING": True}, redis_client=self.redis, dispatcher=self.dispatcher)
        self.dispatcher.service = self.app.extensions["games"]
        # no bound on running matches: a start must answer alike each time Hypothesis replays it
        self.app.extensions["matches"].settings = MatchSettings(per_client=0, running_max=10**9)
        self.games: dict[str, dict[str, Any]] = {}  # id -> creation response
        self.tokens: dict[str, dict[int, str]] = {}  # id -> seat -> token
        self.finished = ""  # a finished game's id
        self.bot_token = ""  # a registered bot's, which holds a seat of a running game

    def seed(self) -> None:
        client = self.app.test_client()
        self.bot_token = client.post("/v1/bots", json={"name": "fuzz-bot", "games": ["golf"]}).get_json()["token"]
        seats = [{"kind": "bot", "bot": "fuzz-bot"}, {"kind": "human"}]
        assert client.post("/v1/games", json={"game": "golf", "seats": seats}).status_code == 201
        for game, seats in SEATS.items():
            for n in range(2):
                response = client.post("/v1/games", json={"game": game, "seats": seats, "seed": f"{game}-{n}"})
                assert response.status_code == 201, response.get_data(as_text=True)
                created = response.get_json()
                self.games[created["id"]] = created
                self.tokens[created["id"]] = {s["seat"]: s["token"] for s in created["seats"] if "token" in s}
        self.dispatcher.drain()  # bots play until a human is to act
        # one finished game: its record holds the seed, its replay the full view
        response = client.post("/v1/games", json={"game": "golf", "seats": [{"kind": "bot"}] * 2, "seed": "done"})
        created = response.get_json()
        self.games[created["id"]] = created
        self.tokens[created["id"]] = {}
        self.finished = created["id"]
        self.dispatcher.drain()
        assert self.app.extensions["games"].repository.load(created["id"]).snap.finished
        # one finished match: Golf's ladder has entries
        entrants = [{"level": "random"}, {"level": "greedy"}]
        match = {"game": "golf", "options": {"rounds": 1}, "entrants": entrants, "deals": 1, "seed": "ladder"}
        assert client.post("/v1/matches", json=match).status_code == 201
        self.dispatcher.drain()
        assert client.get("/v1/ladder/golf").get_json()["ladder"]

    def version(self, game_id: str) -> int:
        version: int = self.app.extensions["games"].repository.load(game_id).version
        return version

    def legal(self, game_id: str, seat: int) -> list[dict[str, Any]]:
        snap = self.app.extensions["games"].repository.load(game_id).snap
        return engine.legal_actions(snap, seat)


SEEDED = Seeded()
schema = schemathesis.openapi.from_path(OPENAPI)
schema.app = SEEDED.app
schema.config.generation.update(max_examples=MAX_EXAMPLES)
CALLS: dict[str, int] = {}
STATUSES: dict[tuple[str, int], int] = {}


def _strategy_for_auth(game_id: str) -> st.SearchStrategy[str | None]:
    own = list(SEEDED.tokens.get(game_id, {}).values())
    others = [t for gid, tokens in SEEDED.tokens.items() if gid != game_id for t in tokens.values()]
    return _strategy_for_token(own, others)


def _with_token(case: schemathesis.Case, token: str | None) -> schemathesis.Case:
    """The case with `Authorization: Bearer <token>` (none without a token)."""
    headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    case.headers = headers
    return case


def _with_game(case: schemathesis.Case, game: str) -> schemathesis.Case:
    """The case about the game `game` of the catalog."""
    case.path_parameters = {**(case.path_parameters or {}), "game": game}
    return case


def _strategy_for_token(own: list[str], others: list[str]) -> st.SearchStrategy[str | None]:
    """No token, a made-up one, often one of `own`, sometimes one of `others`."""
    choices: list[st.SearchStrategy[str | None]] = [
        st.none(),
        st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=60),
    ]
    if own:
        choices += [st.sampled_from(own)] * 3
    if others:
        choices.append(st.sampled_from(others))
    return st.one_of(choices)


@schema.hook
def flatmap_case(context: schemathesis.HookContext, case: schemathesis.Case) -> st.SearchStrategy[Any]:
    """Most cases address a seeded game, often with a seat token and (for actions) a legal action; a bot's
    turns are asked for with its token or another (its stream, which never ends, with another only)."""
    if case.path == "/v1/bots/me/turns" or case.path == "/v1/bots/me/stream":
        tokens = [SEEDED.bot_token] if case.path.endswith("/turns") else []
        return _strategy_for_token(tokens, []).map(lambda token: _with_token(case, token))
    if "game" in (case.path_parameters or {}):  # a ladder: mostly a game of the catalog's
        games = [game.id for game in engine.all_games()]
        return st.one_of(st.just(case), st.sampled_from(games).map(lambda game: _with_game(case, game)))
    if "game_id" not in (case.path_parameters or {}):
        return st.just(case)

    @st.composite
    def meaningful(draw: st.DrawFn) -> schemathesis.Case:
        if not draw(st.integers(0, 4)) and not case.path.endswith("/stream"):  # one in five keeps the generated id
            return case
        # a live stream of a running game never ends: the stream is fuzzed on the finished game
        following = case.path.endswith("/stream") and case.method.upper() == "GET"
        disputing = case.path.endswith("/disputes") and case.method.upper() == "POST"  # needs a seat of the game
        games = [game for game in SEEDED.games if SEEDED.tokens.get(game)] if disputing else list(SEEDED.games)
        game_id = SEEDED.finished if following else draw(st.sampled_from(games))
        case.path_parameters = {**case.path_parameters, "game_id": game_id}
        token = draw(_strategy_for_auth(game_id))
        headers = dict(_with_token(case, token).headers or {})
        seat = next((s for s, t in SEEDED.tokens.get(game_id, {}).items() if t == token), None)
        method, version = case.method.upper(), SEEDED.version(game_id)
        # the draws do not depend on the games' state, which moves on: hypothesis replays them alike
        pick, index = draw(st.integers(0, 2)), draw(st.integers(0, 2**16))
        if case.path.endswith("/actions") and method == "POST" and seat is not None:
            legal = SEEDED.legal(game_id, seat)
            if legal and pick:
                case.body = dict(legal[index % len(legal)])
                case.headers = {k: v for k, v in headers.items() if k.lower() != "if-match"}
        elif disputing and seat is not None:
            case.body = {"seq": 1 + index % version, "reason": draw(st.text(min_size=1, max_size=50))}
        elif case.path.endswith(("/replay", "/events")) and method == "GET" and pick:
            name = "at" if case.path.endswith("/replay") else "after"
            case.query = {**(case.query or {}), name: index % (version + 1) or (0 if name == "after" else 1)}
        return case

    return meaningful()


@schema.hook
def map_query(context: schemathesis.HookContext, query: dict[str, Any] | None) -> dict[str, Any] | None:
    """A long-poll of the events waits at most MAX_WAIT here (the bound itself is tested elsewhere)."""
    if query and isinstance(query.get("wait"), int | float) and not isinstance(query["wait"], bool):
        query = {**query, "wait": min(query["wait"], MAX_WAIT)}
    return query


def explicitly_documented_status(ctx: Any, response: Any, case: schemathesis.Case) -> bool:
    """Stricter than status_code_conformance: the spec's `default` response does not count."""
    if case.method.upper() != case.operation.method.upper():
        # the coverage phase probes methods the path does not have: 405, or Flask's automatic OPTIONS
        allowed = {405, 200} if case.method.upper() == "OPTIONS" else {405}
        assert response.status_code in allowed, f"{case.method} {case.path}: {response.status_code}, not 405"
        return True
    documented = {int(code) for code in case.operation.definition.raw["responses"] if code.isdigit()}
    assert response.status_code in documented, (
        f"{case.operation.label}: status {response.status_code} is not documented (only {sorted(documented)}): "
        f"{response.text[:300]}"
    )
    return True


def problem_fields(ctx: Any, response: Any, case: schemathesis.Case) -> bool:
    """Every error is application/problem+json with API.md's fields and a snake_case code."""
    if response.status_code >= 400:
        content_type = (response.headers.get("content-type") or [""])[0]
        assert content_type.startswith("application/problem+json"), response.headers
        body = response.json()
        assert body["status"] == response.status_code, body
        assert re.fullmatch(r"[a-z][a-z0-9_]*", body["code"]), body
        assert body["detail"].strip() and body["title"].strip(), body
    return True


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    explicitly_documented_status,
    problem_fields,
]


SUCCESS = {
    "GET /v1/games/{game_id}": 200,
    "GET /v1/games/{game_id}/events": 200,
    "GET /v1/games/{game_id}/replay": 200,
    "GET /v1/games/{game_id}/record": 200,
    "GET /v1/games/{game_id}/audit": 200,
    "GET /v1/games/{game_id}/disputes": 200,
    "POST /v1/games/{game_id}/disputes": 201,
    "POST /v1/games/{game_id}/actions": 200,
    "POST /v1/games": 201,
    "GET /v1/games/{game_id}/stream": 200,
    "POST /v1/games/{game_id}/stream-tickets": 201,
    "POST /v1/bots": 201,
    "GET /v1/bots": 200,
    "GET /v1/bots/me/turns": 200,
    "GET /v1/ladder/{game}": 200,
}


@pytest.fixture(scope="module", autouse=True)
def seeded_games() -> Iterator[Seeded]:
    if not SEEDED.games:
        SEEDED.seed()
    yield SEEDED
    # the fuzzing reached past the validation: each game operation this worker ran succeeded at least once
    missing = [label for label, status in SUCCESS.items() if label in CALLS and not STATUSES.get((label, status))]
    assert not missing, f"never a success for {missing}: {sorted(STATUSES.items())}"


@schema.parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_conforms_to_openapi(case: schemathesis.Case) -> None:
    response = case.call()
    label = case.operation.label
    CALLS[label] = CALLS.get(label, 0) + 1
    STATUSES[(label, response.status_code)] = STATUSES.get((label, response.status_code), 0) + 1
    case.validate_response(response, checks=CHECKS)


def test_spec_operations_are_all_fuzzed() -> None:
    """Guard: the spec still lists every operation this test is meant to cover."""
    labels = {op.ok().label for op in schema.get_all_operations()}
    assert len(labels) == 26, sorted(labels)


def test_stateful_sequences_follow_the_links_from_a_created_game() -> None:
    """Schemathesis chains calls by the spec's links: a created game's id feeds its view, actions,
    events, replay, record and audit; every response in every chain passes the same checks."""
    links = schema.raw_schema["paths"]["/v1/games"]["post"]["responses"]["201"]["links"]
    assert {link["operationId"] for link in links.values()} >= {"getGame", "postAction", "getAudit"}
    followed: list[str] = []

    # the games' operations only: a bot's registration or a match's start answers 201 once and 409 or 429
    # when Hypothesis replays the same step, which it takes for a strategy that depends on outside state
    games_only = schema.include(path_regex=r"^/v1/(games|catalog)")

    class Machine(games_only.as_state_machine()):  # type: ignore[misc]
        def validate_response(self, response: Any, case: schemathesis.Case, **kwargs: Any) -> None:
            followed.append(case.operation.label)
            case.validate_response(response, checks=CHECKS)

    Machine.run(
        settings=hypothesis.settings(
            max_examples=20,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(hypothesis.HealthCheck),
            derandomize=True,
        )
    )
    assert "POST /v1/games" in followed and len(set(followed)) > 1, sorted(set(followed))
