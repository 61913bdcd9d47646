"""A Python client generated from openapi.yaml by openapi-python-client plays one game of each game to the end.

The client is generated into a temporary folder and used alone: its typed models and its API functions, never
a raw HTTP call. A human seat takes its moves from the view's `you.legal`, the bots play through a real RQ
worker, and the finished game's record is downloaded and verified by /audit and by domain.verify.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
import subprocess
import sys
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from domain.verify import verify
from tests.integration.conftest import BIN, ROOT, service_env, start_worker

pytestmark = pytest.mark.integration

PACKAGE = "cardtable_client"
# no post hooks: the generator would run ruff on its output, which this test does not need
GENERATOR_CONFIG = "post_hooks: []\n"
MAX_REQUESTS = 3000  # a game that has not ended after this many of our reads and moves does not end
LONG_POLL_SECONDS = 10.0


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


def generate_client(folder: Path) -> str:
    """Run openapi-python-client on the committed openapi.yaml; returns what it printed. Any warning fails."""
    config = folder / "generator.yaml"
    config.write_text(GENERATOR_CONFIG)
    command = [str(BIN / "openapi-python-client"), "generate", "--path", str(ROOT / "openapi.yaml")]
    command += ["--output-path", str(folder / PACKAGE), "--meta", "none", "--config", str(config)]
    command += ["--fail-on-warning"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    printed = done.stdout + done.stderr
    assert done.returncode == 0, f"the generator failed on openapi.yaml:\n{printed}"
    assert "warning" not in printed.lower(), f"the generator could not read all of openapi.yaml:\n{printed}"
    return printed


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
    generate_client(folder)
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


def check_setup_in_catalog(generated: Generated, client: Any, setup: Setup) -> None:
    """The catalog, read through the client, offers the game for these seats, greedy bots and these options."""
    catalog = generated.api("catalog", "get_catalog").sync(client=client)
    assert isinstance(catalog, generated.models.Catalog), catalog
    game = next(game for game in catalog.games if game.id == setup.game)
    assert game.players.min_ <= setup.bots + 1 <= game.players.max_ and "greedy" in game.bot_levels
    offered = {option.name: option for option in game.options}
    for name, value in setup.options.items():
        assert offered[name].minimum <= value < offered[name].default, (name, offered[name])


def create_game(generated: Generated, api_url: str, setup: Setup) -> Any:
    """POST /v1/games through the client: one human in seat 0, greedy bots after it."""
    models = generated.models
    check_setup_in_catalog(generated, client_for(generated, api_url), setup)
    seats = [models.SeatRequest(kind=models.SeatRequestKind.HUMAN, name="Ana")]
    seats += [models.SeatRequest(kind=models.SeatRequestKind.BOT, level=models.SeatRequestLevel.GREEDY)] * setup.bots
    body = models.CreateGame(
        game=setup.game,
        seats=seats,
        seed=f"generated-client-{setup.game}",
        options=models.CreateGameOptions.from_dict(setup.options),
    )
    created = generated.api("games", "create_game").sync(client=client_for(generated, api_url), body=body)
    assert isinstance(created, models.GameCreated), created
    return created


def choose(generated: Generated, view: Any, rng: random.Random) -> Any:
    """One of the human seat's legal actions, as the client's Action model."""
    models = generated.models
    assert isinstance(view.you, models.GameViewYou), view.you
    legal = view.you["legal"]
    assert legal, f"seat 0 is to act but has no legal action: {view}"
    return models.Action.from_dict(rng.choice(legal))


def refuse_stale_version(generated: Generated, seat: Any, view: Any, action: Any) -> None:
    """An If-Match one version behind is refused with the generated Problem model, 409 version_conflict."""
    answer = generated.api("games", "post_action").sync_detailed(
        view.id, client=seat, body=action, if_match=f'"{view.version - 1}"'
    )
    assert answer.status_code == HTTPStatus.CONFLICT, answer
    problem = answer.parsed
    assert isinstance(problem, generated.models.Problem) and problem.code == "version_conflict", problem


def play_to_the_end(generated: Generated, seat: Any, game_id: str, rng: random.Random) -> tuple[Any, int]:
    """Seat 0 moves whenever it is to act (reading again after a 409), otherwise waits for the bots' events;
    returns the final view and how many moves seat 0 made."""
    models = generated.models
    get_game = generated.api("games", "get_game")
    post_action = generated.api("games", "post_action")
    get_events = generated.api("games", "get_events")
    moves = conflicts = 0
    stale_refused = False
    for _ in range(MAX_REQUESTS):
        view = get_game.sync(game_id, client=seat)
        assert isinstance(view, models.GameView), view
        if view.status == models.GameViewStatus.FINISHED:
            return view, moves
        if 0 in view.to_act and not stale_refused:
            refuse_stale_version(generated, seat, view, choose(generated, view, rng))
            stale_refused = True
            continue
        if 0 in view.to_act:
            action = choose(generated, view, rng)
            action.expected_version = view.version
            answer = post_action.sync_detailed(game_id, client=seat, body=action)
            if answer.status_code == HTTPStatus.CONFLICT:  # a bot moved in between: decide on the new version
                assert isinstance(answer.parsed, models.Problem), answer
                conflicts += 1
                continue
            assert answer.status_code == HTTPStatus.OK and isinstance(answer.parsed, models.ActionResult), answer
            assert answer.parsed.version > view.version
            moves += 1
            continue
        page = get_events.sync(game_id, client=seat, after=view.version, wait=LONG_POLL_SECONDS)
        assert isinstance(page, models.Events), page
        assert page.events, f"no event after version {view.version} in {LONG_POLL_SECONDS} s: are the bots playing?"
        assert all(isinstance(event, models.EventRecord) for event in page.events)
    raise AssertionError(f"the {game_id} game did not end ({moves} moves, {conflicts} conflicts)")


@pytest.mark.parametrize("setup", SETUPS, ids=[setup.game for setup in SETUPS])
def test_generated_client_plays_a_game_to_the_end_and_verifies_its_record(
    generated: Generated, api_url: str, bot_worker: Any, setup: Setup
) -> None:
    models = generated.models
    created = create_game(generated, api_url, setup)
    assert created.game == setup.game and len(created.seats) == setup.bots + 1
    token = created.seats[0].token
    assert isinstance(token, str), "the human seat's token is shown once, at creation"
    seat = client_for(generated, api_url, token)

    view, moves = play_to_the_end(generated, seat, created.id, random.Random(f"human-{setup.game}"))
    assert moves > 0, "seat 0 never acted"
    assert view.result is not None and view.version > created.version

    answer = generated.api("history", "get_record").sync_detailed(created.id, client=seat)
    record = answer.parsed
    assert isinstance(record, models.Record), answer
    assert record.status == models.RecordStatus.FINISHED and record.game == setup.game
    assert record.events[-1].seq == view.version, "the record holds every event up to the game's end"
    verdict = verify(record.to_dict())
    assert verdict.ok, verdict
    audit = generated.api("history", "get_audit").sync(created.id, client=seat)
    assert isinstance(audit, models.Verdict), audit
    assert audit.chain_ok and audit.replay_ok and audit.complete and audit.first_bad_seq is None, audit
