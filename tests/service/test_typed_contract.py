"""The typed contract holds for real games: every legal action, view, answer and event record of
games played to their end validates against its schema in openapi.yaml, and the answers that
flask-smorest dumps through the typed schemas are the raw views, field for field.

Each game is played by its seats' tokens through the service (fakeredis), one seat by the greedy
policy and the others at random, with short games' options; at every step the acting seat's and a
spectator's views are checked, and at the end the record and replays at several steps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import flask
import jsonschema_rs
import pytest
import yaml
from marshmallow import Schema

from domain import engine
from domain.bots import policy_for
from domain.shuffle import SeededStream
from service.api.action_event_schemas import camel
from service.api.game_routes import ActionResultSchema, GameViewSchema
from service.api.history_routes import DisputeSchema, DisputesSchema, RecordSchema, ReplaySchema, listed_page
from service.play.game_history import DISPUTES_PAGE, GameHistory
from service.play.game_service import GameService
from service.play.game_view import render
from tests.conftest import RecordingDispatcher

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
GAMES: dict[str, tuple[int, dict[str, Any]]] = {  # players and options of a short game
    "golf": (3, {"rounds": 2}),
    "romme": (2, {"target": 1}),
    "switch": (4, {"target": 1}),
    "go5": (3, {"target": 1}),
}
SEEDS = ("typed-1", "typed-2", "typed-3")
MAX_ACTIONS = 3000


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))["components"]
    return found


class Contract:
    """Validators of the document's component schemas, by name (JSON Schema 2020-12, as OpenAPI 3.1;
    jsonschema-rs, the validator schemathesis uses, for thousands of values a game)."""

    def __init__(self, components: dict[str, Any]) -> None:
        self.components = components
        self.validators: dict[str, jsonschema_rs.Draft202012Validator] = {}
        self.checked: dict[str, int] = {}

    def validate(self, name: str, value: Any) -> None:
        if name not in self.validators:
            schema = {"components": self.components, "$ref": f"#/components/schemas/{name}"}
            self.validators[name] = jsonschema_rs.Draft202012Validator(schema)
        try:
            self.validators[name].validate(value)
        except jsonschema_rs.ValidationError as error:
            raise AssertionError(f"{name}: {error}"[:3000]) from None
        self.checked[name] = self.checked.get(name, 0) + 1


def as_json(value: Any) -> Any:
    """The value as a client receives it."""
    return json.loads(json.dumps(value))


def dumped_is_raw(schema: Schema, raw: dict[str, Any]) -> None:
    """flask-smorest dumps answers through their schema: nothing may be lost or changed."""
    assert as_json(schema.dump(raw)) == as_json(raw)


def play(app: flask.Flask, contract: Contract, game_id: str, seed: str) -> tuple[str, list[str]]:
    """Play one game to its end through the service, checking every step; its id and seat tokens."""
    service: GameService = app.extensions["games"]
    players, options = GAMES[game_id]
    created = service.create_game(game_id, [{"kind": "human"}] * players, options, seed, (), None)
    gid = created["id"]
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}
    greedy, rng = policy_for(game_id, "greedy"), SeededStream(seed, "typed-contract")
    name = camel(game_id)
    view_schema, result_schema = GameViewSchema(), ActionResultSchema()
    for _ in range(MAX_ACTIONS):
        loaded = service.repository.load(gid)
        snap = loaded.snap
        if snap.finished:
            break
        seat = (snap.to_act() or snap.out_of_turn())[0]
        spectator = render(loaded, snap, None)
        view = render(loaded, snap, seat)
        for raw in (spectator, view):
            dumped_is_raw(view_schema, raw)
            contract.validate("GameView", as_json(raw))
            contract.validate(f"{name}GameView", as_json(raw))
        legal = engine.legal_actions(snap, seat)
        assert legal and view["you"]["legal"] == legal
        for action in legal:
            contract.validate(f"{name}Action", as_json(action))
            contract.validate("Action", as_json(action))
        chosen = greedy(engine.view(snap, seat), legal, rng) if seat == 0 else dict(rng.choice(legal))
        answer = service.submit(gid, seat, chosen)
        dumped_is_raw(result_schema, answer)
        contract.validate("ActionResult", as_json(answer))
    assert service.repository.load(gid).snap.finished, f"{game_id} {seed} did not end in {MAX_ACTIONS} actions"
    return gid, list(tokens.values())


def check_history(app: flask.Flask, contract: Contract, gid: str, name: str, tokens: list[str | None]) -> None:
    """The record, its every event and replays at several steps for every caller."""
    history: GameHistory = app.extensions["history"]
    record = history.record(gid)
    dumped_is_raw(RecordSchema(), record)
    contract.validate("Record", as_json(record))
    contract.validate(f"{name}Record", as_json(record))
    for event in record["events"]:
        contract.validate(f"{name}EventRecord", as_json(event))
        contract.validate("EventRecord", as_json(event))
    last = record["events"][-1]["seq"]
    replay_schema = ReplaySchema()
    for at in sorted({1, 2, last // 3, last // 2, last}):
        for token in tokens:
            replay = history.replay(gid, at, token)
            dumped_is_raw(replay_schema, replay)
            contract.validate("Replay", as_json(replay))
            contract.validate(f"{name}Replay", as_json(replay))
    seat_token = next(token for token in tokens if token)
    for seq in (1, last // 2, last):
        dispute = history.file_dispute(gid, seat_token, seq, "typed contract")
        dumped_is_raw(DisputeSchema(), dispute)
        contract.validate("Dispute", as_json(dispute))
    for token in (None, seat_token):  # a finished game: the caller sees every card without a token
        page = listed_page(gid, history.disputes(gid, token), DISPUTES_PAGE)
        assert len(page["disputes"]) == 3
        dumped_is_raw(DisputesSchema(), page)
        contract.validate("Disputes", as_json(page))


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_real_games_fit_their_typed_schemas(app: flask.Flask, components: dict[str, Any], game_id: str) -> None:
    contract = Contract(components)
    for seed in SEEDS:
        gid, tokens = play(app, contract, game_id, seed)
        check_history(app, contract, gid, camel(game_id), [None, *tokens])
    name = camel(game_id)
    assert contract.checked[f"{name}Action"] > 50 and contract.checked[f"{name}EventRecord"] > 20, contract.checked


def test_the_schemas_refuse_what_the_rules_refuse(components: dict[str, Any]) -> None:
    """The validators can fail: wrong type, missing field, unknown field, another game's action."""
    contract = Contract(components)
    bad: list[tuple[str, dict[str, Any]]] = [
        ("GolfAction", {"type": "draw"}),  # `from` is required
        ("GolfAction", {"type": "swap", "position": "1"}),
        ("GolfAction", {"type": "flip", "position": 1, "card": "AS"}),
        ("GolfAction", {"type": "play", "cards": ["AS"]}),  # a Switch action
        ("RommeAction", {"type": "take_discard", "meld": 3}),  # a meld id is lay_off's
        ("RommeAction", {"type": "meld", "kind": "pair", "cards": ["AS"]}),
        ("Go5Action", {"type": "swap", "from_seat": 1, "set": 1, "take": "joker", "give": "stop", "then": {}}),
        ("SwitchAction", {"type": "play", "cards": ["1-dots-red"]}),  # a Go5 card code
        ("Action", {"type": "cut"}),
    ]
    for name, value in bad:
        with pytest.raises(AssertionError):
            contract.validate(name, value)
    contract.validate("Action", {"type": "cut", "position": 5})
    contract.validate(
        "Go5Action",
        {"type": "swap", "from_seat": 1, "set": 1, "take": "joker", "give": "stop", "then": {"lay_off": {"set": 2}}},
    )


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_system_moves_and_an_abandoned_game_fit_their_schemas(
    app: flask.Flask, dispatcher: RecordingDispatcher, components: dict[str, Any], game_id: str
) -> None:
    """Turn timeouts (records of actor "system" with the seat and the reason) and an abandoned
    game (GameAbandoned, a result without winners) validate and dump unchanged too."""
    contract, service = Contract(components), app.extensions["games"]
    players, options = GAMES[game_id]
    seats = [{"kind": "human"}, *[{"kind": "bot", "level": "random"}] * (players - 1)]
    created = service.create_game(game_id, seats, options, "typed-timeouts", (), 5)
    gid, token = created["id"], created["seats"][0]["token"]
    for _ in range(4):
        dispatcher.drain()
        assert dispatcher.fire_timeouts() == ["played"]
    service.abandon(gid, "idle")
    loaded = service.repository.load(gid)
    assert loaded.snap.finished and loaded.snap.abandoned == "idle"
    record = app.extensions["history"].record(gid)
    stand_ins = [event for event in record["events"] if event["actor"] == "system" and "seat" in event]
    assert len(stand_ins) == 4 and record["events"][-2]["type"] == "GameAbandoned", record["events"][-3:]
    check_history(app, contract, gid, camel(game_id), [None, token])
    for seat in (None, 0):
        view = render(loaded, loaded.snap, seat)
        assert view["result"]["abandoned"] is True
        dumped_is_raw(GameViewSchema(), view)
        contract.validate(f"{camel(game_id)}GameView", as_json(view))
