"""A Python client generated from openapi.yaml by openapi-python-client plays one game of each game to the end.

The client is generated into a temporary folder and used alone: its typed models and its API functions, never
a raw HTTP call. A human seat takes its moves from the view's `you.legal`, the bots play through a real RQ
worker, and the finished game's record is downloaded and verified by /audit and by domain.verify.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import random
import subprocess
import sys
import typing
from collections.abc import Iterator
from http import HTTPStatus
from types import ModuleType
from typing import Any

import httpx
import pytest

from domain.verify import verify
from tests.generated_client import generate_client
from tests.integration.conftest import call, service_env, start_worker

pytestmark = pytest.mark.integration

PACKAGE = "cardtable_client"
MAX_REQUESTS = 3000  # a game that has not ended after this many of our reads and moves does not end
LONG_POLL_SECONDS = 10.0
IDLE_POLLS = 3  # long-polls in a row without an event: the bots have stopped


@dataclasses.dataclass(frozen=True)
class Setup:
    """One short game: few seats, an option that ends it after the first round."""

    game: str
    bots: int
    options: dict[str, Any]


SETUPS = [
    Setup("golf", 1, {"rounds": 1}),
    Setup("romme", 1, {"target": 1}),
    Setup("switch", 3, {"target": 1}),  # Switch needs four players (S-1)
    Setup("go5", 1, {"target": 1}),
]


@dataclasses.dataclass(frozen=True)
class Generated:
    """The generated package: its models and its API modules, by name."""

    package: ModuleType
    models: ModuleType

    def api(self, tag: str, operation: str) -> ModuleType:
        """The module of one operation, e.g. api("games", "get_game")."""
        return importlib.import_module(f"{PACKAGE}.api.{tag}.{operation}")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    """The client generated from openapi.yaml, imported from a temporary folder."""
    folder = tmp_path_factory.mktemp("generated-client")
    generate_client(folder, PACKAGE)
    sys.path.insert(0, str(folder))
    try:
        yield Generated(importlib.import_module(PACKAGE), importlib.import_module(f"{PACKAGE}.models"))
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def bot_worker(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """One RQ worker plays the bots of all four games (one per game would add its start and stop to each)."""
    yield from start_worker(service_env(redis_url), tmp_path_factory.mktemp("worker"))


def client_for(generated: Generated, api_url: str, token: str | None = None) -> Any:
    """A generated Client (or AuthenticatedClient with a seat's token); a long-poll fits in its timeout."""
    timeout = httpx.Timeout(LONG_POLL_SECONDS + 30)
    if token is None:
        return generated.package.Client(base_url=api_url, timeout=timeout, raise_on_unexpected_status=True)
    return generated.package.AuthenticatedClient(
        base_url=api_url, token=token, timeout=timeout, raise_on_unexpected_status=True
    )


def camel(name: str) -> str:
    """`take_discard` -> `TakeDiscard`, `go5` -> `Go5`: how the contract spells a name in a schema's name."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclasses.dataclass(frozen=True)
class GameModels:
    """The generated models of one game, by the contract's names: <Game>GameView, <Game>You, <Game><Type>Action."""

    models: ModuleType
    game: str

    def model(self, name: str) -> type:
        """The generated class of the game's schema `<Game><name>`."""
        found = getattr(self.models, f"{camel(self.game)}{name}", None)
        assert isinstance(found, type), f"the generated client has no model {camel(self.game)}{name}"
        return found

    def actions(self, action_types: list[str]) -> tuple[type, ...]:
        """One generated model per action type, <Game><Type>Action."""
        return tuple(self.model(f"{camel(action_type)}Action") for action_type in action_types)

    def legal_variants(self) -> tuple[type, ...]:
        """The models that the generated `<Game>You.legal` is declared to hold (its list's union)."""
        hints = typing.get_type_hints(self.model("You"), localns=vars(self.models))
        (item,) = typing.get_args(hints["legal"])
        return typing.get_args(item) or (item,)


def check_setup_in_catalog(generated: Generated, client: Any, setup: Setup) -> tuple[type, ...]:
    """The catalog, read through the client, offers the game for these seats, greedy bots and these options;
    returns the generated action models of its action types, which must be exactly what `legal` may hold."""
    catalog = generated.api("catalog", "get_catalog").sync(client=client)
    assert isinstance(catalog, generated.models.Catalog), catalog
    game = next(game for game in catalog.games if game.id == setup.game)
    assert game.players.min_ <= setup.bots + 1 <= game.players.max_ and "greedy" in game.bot_levels
    offered = {option.name: option for option in game.options}
    for name, value in setup.options.items():
        assert offered[name].minimum <= value < offered[name].default, (name, offered[name])
    typed = GameModels(generated.models, setup.game)
    actions = typed.actions(game.actions)
    assert set(typed.legal_variants()) == set(actions), "`legal` holds the game's action models, each type its own"
    return actions


def create_game(generated: Generated, api_url: str, setup: Setup) -> Any:
    """POST /v1/games through the client: one human in seat 0, greedy bots after it."""
    models = generated.models
    seats = [models.SeatRequest(kind=models.SeatKind.HUMAN, name="Ana")]
    seats += [models.SeatRequest(kind=models.SeatKind.BOT, level="greedy")] * setup.bots
    body = models.CreateGame(
        game=setup.game,
        seats=seats,
        seed=f"generated-client-{setup.game}",
        options=models.CreateGameOptions.from_dict(setup.options),
    )
    created = generated.api("games", "create_game").sync(client=client_for(generated, api_url), body=body)
    assert isinstance(created, models.GameCreated), created
    return created


@dataclasses.dataclass
class Table:
    """One game as seat 0 plays it through the generated client."""

    generated: Generated
    typed: GameModels
    actions: tuple[type, ...]  # the game's generated action models
    seat: Any  # the AuthenticatedClient with seat 0's token
    game_id: str
    rng: random.Random
    moves: int = 0
    conflicts: int = 0
    idle: int = 0  # long-polls in a row that saw no event

    def view(self) -> Any:
        """GET the game: the oneOf on `game` gives this game's view, with its own table and you, and the
        model holds all of the view (it gives back what was sent)."""
        answer = self.generated.api("games", "get_game").sync_detailed(self.game_id, client=self.seat)
        view = answer.parsed
        assert isinstance(view, self.typed.model("GameView")), answer
        assert view.to_dict() == json.loads(answer.content), "a part of the view the models do not hold"
        assert isinstance(view.table, self.typed.model("Table")), view.table
        assert isinstance(view.you, self.typed.model("You")), view.you
        assert all(isinstance(action, self.actions) for action in view.you.legal), view.you.legal
        return view

    def choose(self, view: Any) -> Any:
        """One of seat 0's legal actions: an instance of one of the game's action models, sent as it came."""
        assert view.you.legal, f"seat 0 is to act but has no legal action: {view}"
        action = self.rng.choice(view.you.legal)
        assert action.type_ in {action_type.value for action_type in view.actions}, (action, view.actions)
        return action

    def refuse_stale_version(self, view: Any) -> None:
        """An If-Match one version behind is refused with the generated Problem model, 409 version_conflict."""
        answer = self.generated.api("games", "post_action").sync_detailed(
            self.game_id, client=self.seat, body=self.choose(view), if_match=f'"{view.version - 1}"'
        )
        assert answer.status_code == HTTPStatus.CONFLICT, answer
        problem = answer.parsed
        assert isinstance(problem, self.generated.models.Problem) and problem.code == "version_conflict", problem

    def move(self, view: Any) -> None:
        """Send one legal action against the view's version; a 409 (a bot moved in between) is read again."""
        action = self.choose(view)
        action.expected_version = view.version
        answer = self.generated.api("games", "post_action").sync_detailed(self.game_id, client=self.seat, body=action)
        if answer.status_code == HTTPStatus.CONFLICT:
            assert isinstance(answer.parsed, self.generated.models.Problem), answer
            self.conflicts += 1
            return
        assert answer.status_code == HTTPStatus.OK and isinstance(answer.parsed, self.generated.models.ActionResult)
        assert answer.parsed.version > view.version and isinstance(answer.parsed.state, self.typed.model("GameView"))
        self.moves += 1

    def wait_for_bots(self, view: Any) -> None:
        """Long-poll the events after the view's version until the bots have moved."""
        page = self.generated.api("games", "get_events").sync(
            self.game_id, client=self.seat, after=view.version, wait=LONG_POLL_SECONDS
        )
        assert isinstance(page, self.generated.models.Events), page
        self.idle = 0 if page.events else self.idle + 1
        assert self.idle < IDLE_POLLS, (
            f"no event after version {view.version} in {IDLE_POLLS} long-polls: are the bots playing?"
        )

    def play_to_the_end(self) -> Any:
        """Seat 0 moves whenever it is to act, otherwise waits for the bots; returns the finished game's view."""
        stale_refused = False
        for _ in range(MAX_REQUESTS):
            view = self.view()
            if view.status == self.generated.models.GameStatus.FINISHED:
                return view
            if 0 not in view.to_act:
                self.wait_for_bots(view)
            elif not stale_refused:
                self.refuse_stale_version(view)
                stale_refused = True
            else:
                self.move(view)
        raise AssertionError(f"the game {self.game_id} did not end ({self.moves} moves, {self.conflicts} conflicts)")


@pytest.mark.parametrize("setup", SETUPS, ids=[setup.game for setup in SETUPS])
def test_generated_client_plays_a_game_to_the_end_and_verifies_its_record(
    generated: Generated, api_url: str, bot_worker: Any, setup: Setup
) -> None:
    models = generated.models
    actions = check_setup_in_catalog(generated, client_for(generated, api_url), setup)
    created = create_game(generated, api_url, setup)
    assert created.game == setup.game and len(created.seats) == setup.bots + 1
    token = created.seats[0].token
    assert isinstance(token, str), "the human seat's token is shown once, at creation"
    typed = GameModels(models, setup.game)
    seat = client_for(generated, api_url, token)
    table = Table(generated, typed, actions, seat, created.id, random.Random(f"human-{setup.game}"))

    view = table.play_to_the_end()
    assert table.moves > 0, "seat 0 never acted"
    assert isinstance(view.result, typed.model("Result")) and view.result.winners, view.result
    assert view.version > created.version

    answer = generated.api("history", "get_record").sync_detailed(created.id, client=seat)
    record = answer.parsed
    assert isinstance(record, typed.model("Record")), answer  # the game's own record: its events parse as its own
    assert record.to_dict() == json.loads(answer.content), "the typed record holds every field of the download"
    assert record.status == models.GameStatus.FINISHED and record.game == setup.game
    assert record.events[-1].seq == view.version, "the record holds every event up to the game's end"
    verdict = verify(json.loads(answer.content))  # the record as downloaded, byte for byte
    assert verdict.ok, verdict
    audit = generated.api("history", "get_audit").sync(created.id, client=seat)
    assert isinstance(audit, models.Verdict), audit
    assert audit.chain_ok and audit.replay_ok and audit.complete and audit.first_bad_seq is None, audit


def test_generated_client_registers_a_bot_and_takes_its_turns_typed(
    generated: Generated, api_url: str, bot_worker: Any
) -> None:
    """The bot operations through the client: register, seat, take a turn (its view typed as the game's) and
    play it with the turn's version and id."""
    models = generated.models
    anyone = client_for(generated, api_url)
    registration = models.RegisterBot(name="typed-bot", games=["golf"])
    bot = generated.api("bots", "register_bot").sync(client=anyone, body=registration)
    assert isinstance(bot, models.RegisteredBot) and bot.token, bot
    seats = [{"kind": "bot", "bot": "typed-bot"}, {"kind": "bot", "level": "greedy"}]
    status, created = call("POST", f"{api_url}/v1/games", {"game": "golf", "seats": seats, "options": {"rounds": 1}})
    assert status == 201, created
    as_bot = client_for(generated, api_url, bot.token)
    turns = generated.api("bots", "get_bot_turns").sync(client=as_bot, wait=10)
    assert isinstance(turns, models.Turns) and turns.turns, turns
    turn = turns.turns[0]
    assert turn.game_id == created["id"] and turn.turn == f"{created['id']}:{turn.version}"
    assert turn.view.to_dict()["you"]["legal"] == [action.to_dict() for action in turn.legal]
    body = {**turn.legal[0].to_dict(), "expected_version": turn.version}
    headers = {"Authorization": f"Bearer {bot.token}", "Idempotency-Key": turn.turn}
    status, answer = call("POST", f"{api_url}/v1/games/{created['id']}/actions", body, headers)
    assert status == 200, answer
    profile = generated.api("bots", "get_bot").sync("typed-bot", client=anyone)
    assert isinstance(profile, models.Bot) and profile.online and profile.playing == 1
