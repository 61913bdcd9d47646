"""A bot's random stream is keyed by the game's secrets, never by public facts (game id, version, seat):
a spectator who knows everything public cannot foresee or narrow down a bot's random choices."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import fakeredis
import pytest

from domain import engine
from domain.shuffle import SeededStream, shuffle
from service.app import create_app
from service.play import game_service as commands
from service.play import seats
from tests.conftest import RecordingDispatcher
from tests.service.helpers import all_events

GAME_ID = "sameGameId12"
RANDOM_BOTS = [{"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]
OPTIONS = {"rounds": 1}


def one_deck() -> list[str]:
    config = engine.make_config("golf", 2, OPTIONS, "deck")
    return list(shuffle(engine.get_game("golf").canonical_deck(2, config.options), "stacked", "deck"))


def bot_moves(seed: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any, Any]]:
    """The bots' moves of a game with fixed public facts (the same id, seats, options and stacked
    deck every time): only the secret seed (and the nonce drawn with it) differs."""
    real = secrets.token_urlsafe
    monkeypatch.setattr(commands.secrets, "token_urlsafe", lambda n: GAME_ID if n == 9 else real(n))
    dispatcher = RecordingDispatcher()
    settings = {"TESTING": True, "GAMES_PER_MINUTE": 0}
    app = create_app(settings, redis_client=fakeredis.FakeRedis(decode_responses=True), dispatcher=dispatcher)
    dispatcher.service = app.extensions["games"]
    client = app.test_client()
    body = {"game": "golf", "seats": RANDOM_BOTS, "options": OPTIONS, "seed": seed, "decks": [one_deck()]}
    created = client.post("/v1/games", json=body).get_json()
    assert created["id"] == GAME_ID
    dispatcher.drain()
    events = all_events(client, GAME_ID)
    return [(e["actor"], e["type"], e["data"]) for e in events if e["actor"] != "system"]


def test_same_public_facts_and_different_seeds_give_different_random_bot_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two games alike in everything public (id, versions, seats, the stacked deal) but their seeds:
    the random bots choose differently, so their choices are keyed by the secrets."""
    first, second = bot_moves("seed-a", monkeypatch), bot_moves("seed-b", monkeypatch)
    assert len(first) >= 10 and len(second) >= 10
    assert first[:10] != second[:10]


def test_the_policy_gets_derived_bytes_never_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream handed to a bot's policy is keyed by bytes derived from the seed and the nonce, not
    by the seed, nor by the game id: the policy cannot read the secret from its stream."""
    streams: list[SeededStream] = []
    real_choose = seats.choose_action

    def spy(
        game: str, level: str, view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: SeededStream, *a: Any
    ) -> dict[str, Any]:
        streams.append(rng)
        return real_choose(game, level, view, legal, rng, *a)

    monkeypatch.setattr(seats, "choose_action", spy)  # where the bot's chain calls the policy
    bot_moves("seed-a", monkeypatch)
    assert streams
    for stream in streams:
        held = [value for value in vars(stream).values() if isinstance(value, bytes)]
        assert not any(b"seed-a" in value or GAME_ID.encode() in value for value in held)
