"""Replay, record, audit and disputes over HTTP (fakeredis), for every registered game.

- Commit and reveal: the first event commits to the seed, the last reveals it, and before that
  the seed is in no response, event, log line or error (a Hypothesis property over random games).
- Replay at every event: a seat's view, the spectator's while the game runs, everything once it
  has ended (every card of the deck, C-4 deals checked against an implementation written here).
- The record passes the offline verifier, in-process and through its CLI.
- Tampering with the stored stream is caught by GET /audit, in this process and in a fresh one,
  at the first bad seq; tampering with a downloaded record is caught by the verifier.
- Disputes live in a stream of their own and show the game before and after their event.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import logging
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from domain import engine
from domain.verify import RECORD_FORMAT, verify
from service.app import create_app
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import HEX64, all_events, assert_problem, check_chain, deal_index, sha256_hex
from tests.unit.test_verify import (
    STREAM_TAMPERS,
    TAMPERS,
    Tamper,
    bot_level,
    run_cli,
    small_options,
    write,
)

GAME_IDS = [game.id for game in engine.all_games()]
BOT_TURN_CAP = 20_000  # bot turns in one game before we call it stuck
HUMAN_ACTION_CAP = 3_000
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


# ---------------------------------------------------------------- C-4 and C-3, written from the rule text


def c4_shuffle(cards: list[str], seed: str, label: str) -> list[str]:
    """rules/README.md C-4: HMAC-SHA256(seed, label || 0x00 || k) stream, below(n) without bias, Fisher-Yates."""
    buffer = b""
    block = 0

    def u32() -> int:
        nonlocal buffer, block
        if len(buffer) < 4:
            message = label.encode("utf-8") + b"\x00" + block.to_bytes(8, "big")
            buffer += hmac.new(seed.encode("utf-8"), message, hashlib.sha256).digest()
            block += 1
        value, buffer = int.from_bytes(buffer[:4], "big"), buffer[4:]
        return value

    def below(n: int) -> int:
        limit = 2**32 - (2**32 % n)
        while (u := u32()) >= limit:
            pass
        return u % n

    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        j = below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def french_deck(copies: int = 1) -> list[str]:
    """C-3 for a game without jokers: each copy S H D C, ranks A ... K."""
    return [rank + suit for _ in range(copies) for suit in "SHDC" for rank in RANKS]


def test_the_c4_written_here_matches_the_rules_test_vector() -> None:
    assert c4_shuffle(french_deck(), "demo", "round/1")[:8] == ["9S", "6C", "10S", "8C", "10D", "5D", "4C", "2D"]
    assert c4_shuffle(romme_canonical(), "demo", "round/1")[:8] == ["4S", "JK", "8C", "3D", "9S", "3C", "3D", "AC"]


# ---------------------------------------------------------------- games to play


@dataclasses.dataclass(frozen=True)
class Scenario:
    """An all-bot game: options None = the catalog's, kept short (a `target` or `rounds` at its minimum)."""

    name: str
    game: str
    players: int
    options: dict[str, Any] | None = None
    seed: str | None = None
    decks: tuple[tuple[str, ...], ...] = ()

    def __repr__(self) -> str:
        return self.name


def golf_columns_deck() -> tuple[str, ...]:
    """2 players, 3x3, dealer 0: every column of both grids holds three cards of one rank (G-9)."""
    grids = {0: ["AS", "2S", "3S", "AH", "2H", "3H", "AD", "2D", "3D"], 1: ["4S", "5S", "6S", "4H", "5H", "6H"]}
    grids[1] += ["4D", "5D", "6D"]
    wanted: dict[int, str] = {}
    for seat, cards in grids.items():
        for position, card in enumerate(cards):
            wanted[deal_index(2, 0, seat, position)] = card
    rest = [card for card in french_deck() if card not in wanted.values()]
    return tuple(wanted[i] if i in wanted else rest.pop(0) for i in range(52))


def scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for game in engine.all_games():
        if game.id == "golf":
            out += [
                Scenario("golf-2p-2rounds", "golf", 2, {"rounds": 2}),
                Scenario("golf-5p-2decks", "golf", 5, {"rounds": 1}),
                Scenario(
                    "golf-3x3-stacked-columns",
                    "golf",
                    2,
                    {"rounds": 2, "layout": "3x3", "initial_flips": 8},
                    seed="columns",
                    decks=(golf_columns_deck(),),
                ),
            ]
        else:
            out.append(Scenario(f"{game.id}-{game.min_players}p", game.id, game.min_players))
    return out


SCENARIOS = scenarios()
ONE_PER_GAME = [next(s for s in SCENARIOS if s.game == game_id) for game_id in GAME_IDS]


def options_of(client: FlaskClient, scenario: Scenario) -> dict[str, Any]:
    if scenario.options is not None:
        return dict(scenario.options)
    catalog = client.get("/v1/catalog").get_json()["games"]
    return small_options(next(entry for entry in catalog if entry["id"] == scenario.game))


def create(client: FlaskClient, scenario: Scenario, humans: int = 0, **extra: Any) -> dict[str, Any]:
    seats: list[dict[str, Any]] = [{"kind": "human", "name": f"Human {i}"} for i in range(humans)]
    seats += [{"kind": "bot", "level": bot_level(scenario.game, i)} for i in range(humans, scenario.players)]
    body: dict[str, Any] = {"game": scenario.game, "seats": seats, "options": options_of(client, scenario), **extra}
    if scenario.seed is not None:
        body["seed"] = scenario.seed
    if scenario.decks:
        body["decks"] = [list(deck) for deck in scenario.decks]
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    created: dict[str, Any] = response.get_json()
    return created


def meta_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:meta"


def events_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:events"


def disputes_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:disputes"


@dataclasses.dataclass
class Stored:
    """A finished game as it lies in Redis, to put back into each test's own fakeredis."""

    created: dict[str, Any]
    meta: dict[str, str]
    entries: list[tuple[str, dict[str, str]]]


_PLAYED: dict[str, Stored] = {}


def finished_bot_game(client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario) -> str:
    """An all-bot game of the scenario, played to its end once per process; returns its id."""
    stored = _PLAYED.get(scenario.name)
    if stored is None:
        created = create(client, scenario)
        outcomes = dispatcher.drain(limit=BOT_TURN_CAP)
        view = client.get(f"/v1/games/{created['id']}").get_json()
        if view["status"] != "finished":
            pytest.fail(
                f"{scenario.name}: the all-bot game did not finish within {BOT_TURN_CAP} bot turns "
                f"(version {view['version']}, last outcomes {outcomes[-3:]}); lower its options in SCENARIOS"
            )
        game_id = created["id"]
        stored = Stored(created, fake_redis.hgetall(meta_key(game_id)), fake_redis.xrange(events_key(game_id)))
        _PLAYED[scenario.name] = stored
        return str(game_id)
    game_id = stored.created["id"]
    if not fake_redis.exists(meta_key(game_id)):
        fake_redis.hset(meta_key(game_id), mapping=stored.meta)
        for entry_id, fields in stored.entries:
            fake_redis.xadd(events_key(game_id), fields, id=entry_id)
    return str(game_id)


def play_with_humans(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    created: dict[str, Any],
    *,
    seed: int = 0,
    on_step: Callable[[int, dict[tuple[int | None, int], dict[str, Any]]], None] | None = None,
    stop_after: int | None = None,
) -> dict[tuple[int | None, int], dict[str, Any]]:
    """Humans play uniformly random legal actions, bots their own; returns every view seen, by (seat, version).

    `on_step(version, views)` runs at each version the humans see while the game is running.
    With `stop_after`, the humans stop after that many actions (the game may still be running).
    """
    service = app.extensions["games"]
    game_id = created["id"]
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}
    rng = random.Random(seed)
    views: dict[tuple[int | None, int], dict[str, Any]] = {}
    for step in range(HUMAN_ACTION_CAP):
        dispatcher.drain(limit=BOT_TURN_CAP)
        spectator = client.get(f"/v1/games/{game_id}").get_json()
        version = spectator["version"]
        views[(None, version)] = spectator
        for seat, token in tokens.items():
            views[(seat, version)] = client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
        if spectator["status"] == "finished" or step == stop_after:
            return views
        if on_step is not None:
            on_step(version, views)
        acting = [seat for seat in spectator["to_act"] if seat in tokens]
        assert acting, f"no human may act at version {version} and the bots are done, but the game runs on"
        seat = acting[0]
        action = rng.choice(engine.legal_actions(service.repository.load(game_id).snap, seat))
        response = client.post(
            f"/v1/games/{game_id}/actions", json={**action, "expected_version": version}, headers=auth(tokens[seat])
        )
        assert response.status_code == 200, (action, response.get_data(as_text=True))
    pytest.fail(f"the game did not end within {HUMAN_ACTION_CAP} human actions")


def get_json(client: FlaskClient, url: str, token: str | None = None, status: int = 200) -> Any:
    response = client.get(url, headers=auth(token) if token else {})
    assert response.status_code == status, (url, response.get_data(as_text=True))
    return response.get_json()


def replay(client: FlaskClient, game_id: str, at: int, token: str | None = None) -> dict[str, Any]:
    view: dict[str, Any] = get_json(client, f"/v1/games/{game_id}/replay?at={at}", token)
    assert view["at"] == at and view["version"] == at, (at, view["version"])
    return view


def without_at(view: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in view.items() if key != "at"}


def rewrite_stream(fake_redis: Any, game_id: str, events: list[Any]) -> None:
    """Put a game's stream back with these records, entry ids `<n>-0` in order (what a tamperer can do)."""
    fake_redis.delete(events_key(game_id))
    for n, record in enumerate(events, start=1):
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        fake_redis.xadd(events_key(game_id), {"e": text}, id=f"{n}-0")


def fresh_client(fake_redis: Any) -> FlaskClient:
    """Another API process on the same Redis: nothing cached."""
    other = create_app({"TESTING": True}, redis_client=fake_redis, dispatcher=RecordingDispatcher())
    return other.test_client()


# ---------------------------------------------------------------- the cards of a full view


def json_strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys excluded, as often as it occurs."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in json_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in json_strings(item)]
    return []


def golf_cards(view: dict[str, Any]) -> list[str]:
    """Golf: the grids (face down ones too), the discard pile (cleared columns included), the stock, a drawn card."""
    table = view["table"]
    cards: list[str] = []
    for grid in table["grids"]:
        for slot in grid["slots"]:
            assert (slot["card"] is None) == (slot["state"] == "empty"), f"the full view hides a card: {slot}"
            if slot["card"] is not None:
                cards.append(slot["card"])
    cards += table["discard"] + table["stock"]
    if table["drawn"] is not None:
        cards.append(table["drawn"])
    return cards


def romme_cards(view: dict[str, Any]) -> list[str]:
    """Rommé: hands, stock, discard pile, melds, a face-down last card, jokers swapped out of the game (R-16),
    and before the deal the undealt cards: the deck until the cut, the lifted and the lower packet until the deal."""
    table = view["table"]
    cards: list[str] = [card for hand in table["hands"] for card in hand] + table["stock"] + table["discard"]
    cards += list(table["face_down"]) + list(table["out_of_game"])
    cards += table["deck"] + table["lifted"] + table["lower"]
    for meld in table["melds"]:
        cards += [card if isinstance(card, str) else card["card"] for card in meld["cards"]]
    return cards


def switch_cards(view: dict[str, Any]) -> list[str]:
    """Switch: the hands (a drawn card is in its hand), the stock, the discard pile."""
    table = view["table"]
    cards: list[str] = [card for hand in table["hands"] for card in hand] + table["stock"] + table["discard"]
    return cards


def go5_cards(view: dict[str, Any]) -> list[str]:
    """Go5: hands, stock, discard pile, the sets on the table; stop cards lie in front of players (V-6) or out."""
    table = view["table"]
    cards: list[str] = [card for hand in table["hands"] for card in hand] + table["stock"] + table["discard"]
    cards += [card for player in table["players"] for meld in player["sets"] for card in meld["cards"]]
    cards += ["stop"] * (sum(player["stops"] for player in table["players"]) + table["stops_out"])
    return cards


COLLECTORS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "golf": golf_cards,
    "romme": romme_cards,
    "switch": switch_cards,
    "go5": go5_cards,
}
"""Per game: every card of a full view, each once. A game without one gets the weaker check below."""


def canonical_of(record: dict[str, Any]) -> Counter[str]:
    if record["game"] == "golf":
        return Counter(french_deck(record["options"]["decks"]))
    game = engine.get_game(record["game"])
    return Counter(game.canonical_deck(len(record["seats"]), record["options"]))


def check_whole_deck(view: dict[str, Any], record: dict[str, Any], at: int) -> None:
    """The full view holds the whole deck at every event from the first round on (Rommé's cut and deal too);
    before the first round none of it (round 0)."""
    deck = canonical_of(record)
    collector = COLLECTORS.get(record["game"])
    if collector is not None:
        found = Counter(collector(view))
        if view["round"] == 0:
            assert not found, f"at {at}: cards before the first deal"
        else:  # the cut and the deal too: Rommé shows its undealt deck and packets (R-3, R-4)
            assert found == deck, f"at {at}: extra {found - deck}, missing {deck - found}"
        return
    # No collector yet: every card of the deck must show at least as often as the deck holds it.
    shown = Counter(s for s in json_strings(view["table"]) if s in deck)
    if view["round"] == 0:
        return
    missing = {card: n - shown[card] for card, n in deck.items() if shown[card] < n}
    assert not missing, f"at {at}: the full view lacks {missing}"


# ---------------------------------------------------------------- a finished game: record, verifier, commit and reveal


@pytest.mark.parametrize("scenario", SCENARIOS, ids=repr)
def test_a_finished_games_record_passes_the_verifier_and_its_cli(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario, tmp_path: Path
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    record = get_json(client, f"/v1/games/{game_id}/record")
    assert record["format"] == RECORD_FORMAT == "cardtable-record/2"
    assert record["rules_version"] == engine.get_game(scenario.game).rules_version
    assert record["status"] == "finished" and record["version"] == len(record["events"])
    assert record["game"] == scenario.game and record["id"] == game_id
    assert all("token" not in seat for seat in record["seats"])
    assert record["stacked"] is bool(scenario.decks)
    assert record["decks"] == [list(deck) for deck in scenario.decks]
    verdict = verify(record)
    assert verdict.ok, verdict
    assert verdict.result == get_json(client, f"/v1/games/{game_id}")["result"]
    code, printed, last, stderr = run_cli(write(tmp_path, record), cwd=tmp_path)
    assert code == 0 and last == "PASS", (printed, last, stderr)
    audit = get_json(client, f"/v1/games/{game_id}/audit")
    assert audit == {
        "chain_ok": True,
        "replay_ok": True,
        "first_bad_seq": None,
        "complete": True,
        "detail": audit["detail"],
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=repr)
def test_the_first_event_commits_to_the_seed_and_the_last_reveals_it(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    seed, nonce = fake_redis.hmget(meta_key(game_id), "seed", "nonce")
    assert HEX64.match(nonce)
    commitment = sha256_hex(f"{seed}\x00{nonce}")  # C-4: salted by the nonce
    record = get_json(client, f"/v1/games/{game_id}/record")
    events = record["events"]
    assert record["seed_commitment"] == commitment and record["seed"] == seed and record["nonce"] == nonce
    assert events[0]["type"] == "GameCreated" and events[0]["data"]["seed_commitment"] == commitment
    assert events[0]["prev_hash"] == commitment
    check_chain(events, commitment)
    assert [e["type"] for e in events].count("SeedRevealed") == 1
    assert events[-1]["type"] == "SeedRevealed" and events[-1]["actor"] == "system"
    assert events[-1]["data"] == {"seed": seed, "nonce": nonce}
    assert not [e["seq"] for e in events[:-1] if seed in json.dumps(e)], "the seed shows before its reveal"
    assert not [e["seq"] for e in events[:-1] if nonce in json.dumps(e)], "the nonce shows before its reveal"
    assert all_events(client, game_id) == events


# ---------------------------------------------------------------- replay of a finished game


@pytest.mark.parametrize("scenario", SCENARIOS, ids=repr)
def test_replay_without_a_token_of_a_finished_game_shows_every_card_at_every_event(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    record = get_json(client, f"/v1/games/{game_id}/record")
    last = len(record["events"])
    phases: set[str] = set()
    for at in range(1, last + 1):
        view = replay(client, game_id, at)
        assert "you" not in view and view["actions"] == []
        assert view["status"] == ("finished" if at >= last - 1 else "active"), at  # GameEnded, then SeedRevealed
        check_whole_deck(view, record, at)
        phases.add(view["phase"])
    if scenario.game == "romme":
        assert {"cut", "deal"} <= phases, "the undealt deck (R-3) and packets (R-4) must be counted"
    assert without_at(replay(client, game_id, last))["result"] == get_json(client, f"/v1/games/{game_id}")["result"]
    assert replay(client, game_id, last) == get_json(client, f"/v1/games/{game_id}/replay"), "no `at`: the latest"
    if scenario.name == "golf-3x3-stacked-columns":
        assert "ColumnDiscarded" in {e["type"] for e in record["events"]}, "cleared columns must be counted"


def check_golf_deal(client: FlaskClient, game_id: str, record: dict[str, Any]) -> int:
    """G-3 after every RoundStarted: grids, discard and stock are the C-4 deck (or the stacked one) dealt."""
    players = len(record["seats"])
    size = 9 if record["options"]["layout"] == "3x3" else 6
    rounds = 0
    for event in record["events"]:
        if event["type"] != "RoundStarted":
            continue
        rounds += 1
        number, dealer = event["data"]["round"], event["data"]["dealer"]
        assert number == rounds and dealer == (number - 1) % players, "C-2: the dealer rotates"
        if number <= len(record["decks"]):
            deck = record["decks"][number - 1]
        else:
            deck = c4_shuffle(french_deck(record["options"]["decks"]), record["seed"], f"round/{number}")
        table = replay(client, game_id, event["seq"])["table"]
        for seat in range(players):
            slots = table["grids"][seat]["slots"]
            assert [slot["state"] for slot in slots] == ["down"] * size
            dealt = [deck[deal_index(players, dealer, seat, position)] for position in range(size)]
            assert [slot["card"] for slot in slots] == dealt, f"round {number}, seat {seat}"
        assert table["discard"] == [deck[players * size]], f"round {number}: the discard pile starts with the next card"
        assert table["stock"] == deck[players * size + 1 :], f"round {number}: the stock, in order, top first"
        assert table["drawn"] is None
    return rounds


def switch_canonical(options: dict[str, Any]) -> list[str]:
    """S-1: four decks, 8 jokers, then `extra_jokers` jokers, then `extra_twos` twos in suit order S H D C."""
    twos = [f"2{suit}" for suit in "SHDC" * 2][: options["extra_twos"]]
    return french_deck(4) + ["JK"] * (8 + options["extra_jokers"]) + twos


def check_switch_deal(client: FlaskClient, game_id: str, record: dict[str, Any]) -> int:
    """S-2 after every RoundStarted: hands dealt one at a time from left of the dealer, then the start card."""
    players, size = len(record["seats"]), record["options"]["hand_size"]
    rounds = 0
    for event in (e for e in record["events"] if e["type"] == "RoundStarted"):
        rounds += 1
        number, dealer = event["data"]["round"], event["data"]["dealer"]
        assert number == rounds and dealer == (number - 1) % players, "C-2: the dealer rotates"
        deck = c4_shuffle(switch_canonical(record["options"]), record["seed"], f"round/{number}")
        table = replay(client, game_id, event["seq"])["table"]
        for seat in range(players):
            dealt = [deck[i] for i in range(players * size) if (dealer + 1 + i) % players == seat]
            assert Counter(table["hands"][seat]) == Counter(dealt), f"round {number}, seat {seat}"
        assert event["data"]["start_card"] == deck[players * size]
        assert table["discard"] == [deck[players * size]], f"round {number}: the start card"
        assert table["stock"] == deck[players * size + 1 :], f"round {number}: the stock, in order, top first"
    return rounds


def check_go5_deal(client: FlaskClient, game_id: str, record: dict[str, Any]) -> int:
    """V-5, V-6 after every RoundStarted: 7 cards each from left of the dealer, a stop card laid in front and
    replaced by the next card; jokers and stop cards turned for the discard pile go under the stock."""
    players = len(record["seats"])
    canonical = list(engine.get_game("go5").canonical_deck(players, record["options"]))  # V-3: go5's own codes
    rounds = 0
    for event in (e for e in record["events"] if e["type"] == "RoundStarted"):
        rounds += 1
        number, dealer = event["data"]["round"], event["data"]["dealer"]
        assert number == rounds and dealer == (number - 1) % players, "C-2: the dealer rotates"
        stock = c4_shuffle(canonical, record["seed"], f"round/{number}")
        hands: list[list[str]] = [[] for _ in range(players)]
        stops = [0] * players
        for i in range(players * 7):
            seat = (dealer + 1 + i) % players
            while stock[0] == "stop":
                stops[seat] += 1
                stock.pop(0)
            hands[seat].append(stock.pop(0))
        while stock[0] in ("joker", "stop"):
            stock.append(stock.pop(0))
        start = stock.pop(0)
        table = replay(client, game_id, event["seq"])["table"]
        assert [Counter(hand) for hand in table["hands"]] == [Counter(hand) for hand in hands], f"round {number}"
        assert [player["stops"] for player in table["players"]] == stops, f"round {number}: stop cards (V-6)"
        assert table["discard"] == [start] and table["stock"] == stock, f"round {number}: discard and stock"
    return rounds


def romme_canonical() -> list[str]:
    """R-1 in C-3 order: both 52-card decks, then the 6 jokers."""
    return french_deck(2) + ["JK"] * 6


def check_romme_deal(client: FlaskClient, game_id: str, record: dict[str, Any]) -> int:
    """R-2 ... R-5 after every RoundStarted: the C-4 deck (or the stacked one) until the cut; the cut at the
    DeckCut's position; the lucky grab of QS and jokers at the cut; 15 cards each, one at a time from left of
    the dealer over full hands, from the lower packet with the rest of the lifted one beneath; the rest the stock."""
    players = len(record["seats"])
    events = record["events"]
    rounds = 0
    for index, event in enumerate(events):
        if event["type"] != "RoundStarted":
            continue
        rounds += 1
        number, dealer = event["data"]["round"], event["data"]["dealer"]
        assert number == rounds and dealer == (number - 1) % players, "C-2: the dealer rotates"
        cutter = (dealer - 1) % players
        assert event["data"]["cutter"] == cutter, f"round {number}: R-3, the player right of the dealer cuts"
        if number <= len(record["decks"]):
            deck = list(record["decks"][number - 1])
        else:
            deck = c4_shuffle(romme_canonical(), record["seed"], f"round/{number}")
        view = replay(client, game_id, event["seq"])
        table = view["table"]
        assert view["phase"] == "cut" and table["cut"] is None, f"round {number}: the cut comes first (R-3)"
        assert table["deck"] == deck, f"round {number}: the undealt deck, in order, top first"
        assert table["hands"] == [[]] * players and table["stock"] == [] and table["discard"] == []

        cut = events[index + 1]
        assert cut["type"] == "DeckCut" and cut["actor"] == cutter, f"round {number}: R-3, nothing before the cut"
        position = cut["data"]["position"]
        assert 1 <= position <= 109, f"round {number}: R-3, cut at {position}"
        lifted, lower = deck[:position], deck[position:]
        table = replay(client, game_id, cut["seq"])["table"]
        assert (table["deck"], table["lifted"], table["lower"]) == ([], lifted, lower), f"round {number}: the cut"

        grabbed: list[str] = []
        while lifted and lifted[-1] in ("QS", "JK"):  # R-4: the bottom card of the lifted packet
            grabbed.append(lifted.pop())
        hands: list[list[str]] = [[] for _ in range(players)]
        hands[cutter] += grabbed
        following = index + 2
        if grabbed:
            grab = events[following]
            assert grab["type"] == "LuckyGrab", f"round {number}: R-4, {grabbed} lie at the cut"
            assert grab["data"] == {"seat": cutter, "cards": grabbed}, f"round {number}: R-4"
            table = replay(client, game_id, grab["seq"])["table"]
            assert (table["lifted"], table["lower"]) == (lifted, lower), f"round {number}: the packets after R-4"
            assert Counter(table["hands"][cutter]) == Counter(grabbed), f"round {number}: the grab is in hand"
            following += 1

        stack = lower + lifted  # R-5: the rest of the lifted packet beneath the lower one
        seat = (dealer + 1) % players
        while any(len(hand) < 15 for hand in hands):
            if len(hands[seat]) < 15:
                hands[seat].append(stack.pop(0))
            seat = (seat + 1) % players
        dealt = events[following]
        assert dealt["type"] == "HandsDealt", f"round {number}: the deal follows the cut and the grab"
        assert dealt["data"] == {"stock_size": len(stack)}, f"round {number}: R-5, the rest is the stock"
        view = replay(client, game_id, dealt["seq"])
        table = view["table"]
        assert view["phase"] == "play" and table["turn"] == (dealer + 1) % players, f"round {number}: R-2"
        assert table["cut"] == {"by": cutter, "position": position, "grabbed": grabbed}, f"round {number}"
        for seat in range(players):
            assert Counter(table["hands"][seat]) == Counter(hands[seat]), f"round {number}, seat {seat}"
        assert table["stock"] == stack, f"round {number}: the stock, in order, top first"
        assert (table["deck"], table["lifted"], table["lower"]) == ([], [], []), f"round {number}: all dealt"
        assert table["discard"] == [] and table["melds"] == [], f"round {number}: R-5, the discard pile is empty"
    return rounds


DEAL_CHECKERS: dict[str, Callable[[FlaskClient, str, dict[str, Any]], int]] = {
    "golf": check_golf_deal,
    "romme": check_romme_deal,
    "switch": check_switch_deal,
    "go5": check_go5_deal,
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=repr)
def test_every_rounds_deal_is_the_c4_shuffle_of_the_revealed_seed(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario
) -> None:
    checker = DEAL_CHECKERS.get(scenario.game)
    assert checker is not None, f"no deal checker for {scenario.game}: add one to DEAL_CHECKERS"
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    record = get_json(client, f"/v1/games/{game_id}/record")
    rounds = checker(client, game_id, record)
    assert rounds == sum(e["type"] == "RoundScored" for e in record["events"]) >= 1


def test_a_romme_deal_after_a_lucky_grab_is_checked_too(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    """R-4 rarely comes up in the all-bot game: here a human cutter cuts a stacked deck at `5H QS JK |`."""
    position = 40
    rest = romme_canonical()
    for card in ("5H", "QS", "JK"):
        rest.remove(card)
    deck = [*rest[: position - 3], "5H", "QS", "JK", *rest[position - 3 :]]
    body = {
        "game": "romme",
        "seats": [{"kind": "bot", "level": "greedy"}, {"kind": "human", "name": "Cutter"}],
        "options": {"target": 1},
        "seed": "lucky",
        "decks": [deck],
    }
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    gid, token = created["id"], created["seats"][1]["token"]
    view = get_json(client, f"/v1/games/{gid}", token)
    assert view["to_act"] == [1], "R-3: seat 1, right of dealer 0, cuts"
    cut = {"type": "cut", "position": position, "expected_version": view["version"]}
    response = client.post(f"/v1/games/{gid}/actions", json=cut, headers=auth(token))
    assert response.status_code == 200, response.get_data(as_text=True)
    play_with_humans(client, app, dispatcher, created)
    record = get_json(client, f"/v1/games/{gid}/record")
    grabs = [e["data"] for e in record["events"] if e["type"] == "LuckyGrab"]
    assert grabs[:1] == [{"seat": 1, "cards": ["JK", "QS"]}]
    assert check_romme_deal(client, gid, record) == sum(e["type"] == "RoundScored" for e in record["events"]) >= 1


# ---------------------------------------------------------------- replay with a token, and while the game runs


def golf_hidden_from(full: dict[str, Any], seat: int) -> set[str]:
    """Cards `seat` may not see in this full view: every face-down card, the stock, another's drawn card."""
    table = full["table"]
    hidden = {slot["card"] for grid in table["grids"] for slot in grid["slots"] if slot["state"] == "down"}
    hidden |= set(table["stock"])
    if table["drawn"] is not None and table["drawn_by"] != seat:
        hidden.add(table["drawn"])
    return hidden


def golf_own_hand(full: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The seat's grid as it sees it: face-down cards without their card (G-5)."""
    if not full["table"]["grids"]:
        return []
    slots = full["table"]["grids"][seat]["slots"]
    return [{"state": s["state"], "card": s["card"] if s["state"] == "up" else None} for s in slots]


def check_running_replays(
    client: FlaskClient,
    game_id: str,
    tokens: dict[int, str],
    views: dict[tuple[int | None, int], dict[str, Any]],
    ats: list[int],
) -> None:
    """While the game runs: at each `at` the view each caller had then, never the full view (C-6)."""
    table_keys = {key for (seat, _), view in views.items() if seat is None for key in view["table"]}
    for at in ats:
        spectator = replay(client, game_id, at)
        assert "you" not in spectator and spectator["actions"] == [] and spectator["status"] == "active"
        assert set(spectator["table"]) <= table_keys, f"at {at}: {set(spectator['table']) - table_keys} shown"
        assert "stock" not in spectator["table"], "the stock order is never shown while the game runs (C-6)"
        if (None, at) in views:
            assert without_at(spectator) == views[(None, at)], f"spectator at {at}"
        for seat, token in tokens.items():
            view = replay(client, game_id, at, token)
            assert view["you"]["seat"] == seat and "stock" not in view["table"]
            if (seat, at) in views:
                assert without_at(view) == views[(seat, at)], f"seat {seat} at {at}: not the view it had then"


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_replay_of_a_running_game_is_the_view_each_caller_had_at_every_event(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, game_id: str
) -> None:
    game = engine.get_game(game_id)
    options = {"rounds": 1} if game_id == "golf" else None
    created = create(client, Scenario(game_id, game_id, game.min_players, options), humans=min(2, game.min_players))
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}
    gid = created["id"]
    checked: list[int] = []

    def now_and_then(version: int, views: dict[tuple[int | None, int], dict[str, Any]]) -> None:
        check_running_replays(
            client, gid, tokens, views, sorted({1, version, random.Random(version).randint(1, version)})
        )
        checked.append(version)

    views = play_with_humans(client, app, dispatcher, created, on_step=now_and_then, stop_after=12)
    version = get_json(client, f"/v1/games/{gid}")["version"]
    if get_json(client, f"/v1/games/{gid}")["status"] == "active":
        check_running_replays(client, gid, tokens, views, list(range(1, version + 1)))
    assert len(checked) >= 3, "the test looked at the running game too rarely"


def test_replay_with_a_token_shows_that_seats_hand_and_never_another_seats_cards(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    """A finished Golf game, two people and a bot, at every event: each seat's view then, hidden cards hidden."""
    created = create(client, Scenario("golf", "golf", 3, {"rounds": 1}), humans=2)
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}
    gid = created["id"]
    views = play_with_humans(client, app, dispatcher, created)
    last = get_json(client, f"/v1/games/{gid}")["version"]
    seen = 0
    for at in range(1, last + 1):
        full = replay(client, gid, at)
        for seat, token in tokens.items():
            view = replay(client, gid, at, token)
            assert view["you"]["seat"] == seat and "stock" not in view["table"]
            assert view["you"]["hand"] == golf_own_hand(full, seat), f"seat {seat} at {at}"
            leaked = set(json_strings(view)) & golf_hidden_from(full, seat)
            assert not leaked, f"seat {seat} at {at} sees hidden cards {sorted(leaked)}"
            if (seat, at) in views:
                assert without_at(view) == views[(seat, at)], f"seat {seat} at {at}: not the view it had then"
                seen += 1
    assert seen >= len(tokens) * 3


# ---------------------------------------------------------------- replay errors


def test_replay_errors(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create(client, Scenario("golf", "golf", 2, {"rounds": 1}), humans=1)
    gid = created["id"]
    version = created["version"]
    for at in (0, version + 1, 10**6):
        assert_problem(client.get(f"/v1/games/{gid}/replay?at={at}"), 422, "event_out_of_range", rule=False)
    for bad in ("abc", "1.5", "-1", ""):
        assert_problem(client.get(f"/v1/games/{gid}/replay?at={bad}"), 400, "invalid_request")
    assert_problem(client.get(f"/v1/games/{gid}/replay?at=1", headers=auth("not-a-token")), 401, "unauthorized")
    for path in ("replay?at=1", "replay", "record", "audit", "disputes"):
        assert_problem(client.get(f"/v1/games/NoSuchGame/{path}"), 404, "game_not_found")
    assert_problem(
        client.post("/v1/games/NoSuchGame/disputes", json={"seq": 1, "reason": "x"}, headers=auth("t")),
        404,
        "game_not_found",
    )


# ---------------------------------------------------------------- a running game's record


def test_a_running_games_record_has_no_seed_and_no_decks_and_verifies_as_incomplete(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    scenario = Scenario("golf", "golf", 2, {"rounds": 1}, decks=(tuple(reversed(french_deck())),))
    created = create(client, scenario, humans=1)
    dispatcher.drain()
    gid = created["id"]
    seed = fake_redis.hget(meta_key(gid), "seed")
    response = client.get(f"/v1/games/{gid}/record")
    assert response.status_code == 200 and seed not in response.get_data(as_text=True)
    record = response.get_json()
    assert record["status"] == "active" and record["stacked"] is True
    assert "seed" not in record and "decks" not in record and "nonce" not in record
    assert record["format"] == RECORD_FORMAT and record["version"] == len(record["events"]) >= 2
    assert record["seed_commitment"] == created["seed_commitment"]
    verdict = verify(record)
    assert verdict.complete is False and not verdict.ok and verdict.chain_ok and verdict.first_bad_seq is None
    code, printed, last, _ = run_cli(write(tmp_path, record))
    assert code != 0 and last == "INCOMPLETE", (printed, last)
    audit = get_json(client, f"/v1/games/{gid}/audit")
    assert audit["chain_ok"] and audit["replay_ok"] and audit["first_bad_seq"] is None
    assert audit["complete"] is False, "a running game's result is not known yet"
    assert seed not in json.dumps(audit)


# ---------------------------------------------------------------- tampering


@pytest.mark.parametrize("tamper", STREAM_TAMPERS, ids=repr)
@pytest.mark.parametrize("scenario", ONE_PER_GAME, ids=repr)
def test_tampering_with_the_stored_stream_is_caught_by_the_audit(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario, tamper: Tamper
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    record = get_json(client, f"/v1/games/{game_id}/record")
    assert get_json(client, f"/v1/games/{game_id}/audit")["first_bad_seq"] is None
    seq, chain_holds = tamper.apply(record)
    rewrite_stream(fake_redis, game_id, record["events"])
    for name, api in (("this process", client), ("a fresh process", fresh_client(fake_redis))):
        audit = get_json(api, f"/v1/games/{game_id}/audit")
        assert audit["first_bad_seq"] == seq, (name, audit)
        assert audit["chain_ok"] is chain_holds, (name, audit)
        if chain_holds:
            assert audit["replay_ok"] is False, (name, audit)
        assert f"event {seq}" in audit["detail"], (name, audit)


@pytest.mark.parametrize("tamper", TAMPERS, ids=repr)
@pytest.mark.parametrize("scenario", ONE_PER_GAME, ids=repr)
def test_tampering_with_a_downloaded_record_is_caught_by_the_verifier(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario, tamper: Tamper
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, scenario)
    record = get_json(client, f"/v1/games/{game_id}/record")
    seq, chain_holds = tamper.apply(record)
    verdict = verify(record)
    assert not verdict.ok and verdict.first_bad_seq == seq and verdict.chain_ok is chain_holds, verdict


def test_a_stream_with_junk_entries_gets_an_audit_not_an_error(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher
) -> None:
    game_id = finished_bot_game(client, fake_redis, dispatcher, ONE_PER_GAME[GAME_IDS.index("golf")])
    record = get_json(client, f"/v1/games/{game_id}/record")
    events: list[Any] = record["events"]
    events[3] = "not json {"
    events[5] = [1, 2, 3]
    fake_redis.delete(events_key(game_id))
    for n, item in enumerate(events, start=1):
        text = item if isinstance(item, str) else json.dumps(item)
        fake_redis.xadd(events_key(game_id), {"e": text}, id=f"{n}-0")
    for api in (client, fresh_client(fake_redis)):
        audit = get_json(api, f"/v1/games/{game_id}/audit")
        assert audit["chain_ok"] is False and audit["first_bad_seq"] == 4, audit


# ---------------------------------------------------------------- the seed stays secret until the end


class LogLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter().format(record))


@contextlib.contextmanager
def every_log_line() -> Iterator[LogLines]:
    handler = LogLines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


class SeedWatch:
    """Every response body in order; none may hold the seed or the nonce before the first that holds
    SeedRevealed."""

    def __init__(self) -> None:
        self.seed: str | None = None
        self.nonce: str | None = None
        self.revealed = False
        self.seen: list[tuple[str, str]] = []

    def add(self, what: str, response: TestResponse) -> Any:
        text = response.get_data(as_text=True)
        self.seen.append((what, text))
        if not self.revealed:
            if "SeedRevealed" in text:
                self.revealed = True
            for secret in (self.seed, self.nonce):
                if secret is not None and not self.revealed:
                    assert secret not in text, f"{what} (status {response.status_code}) shows a secret: {text[:300]}"
        return json.loads(text) if text else None


@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking whole games is slow and rarely simpler
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_the_seed_is_in_no_response_and_no_log_line_before_it_is_revealed(
    client: FlaskClient, app: flask.Flask, fake_redis: Any, dispatcher: RecordingDispatcher, data: st.DataObject
) -> None:
    game = engine.get_game(data.draw(st.sampled_from(GAME_IDS), label="game"))
    players = data.draw(st.integers(game.min_players, min(game.max_players, game.min_players + 1)), label="players")
    humans = data.draw(st.integers(1, min(players, 2)), label="humans")
    if game.id == "golf":
        options: dict[str, Any] = {
            "rounds": 1,
            "layout": data.draw(st.sampled_from(["2x3", "3x3"]), label="layout"),
            "initial_flips": data.draw(st.integers(0, 2), label="initial_flips"),
        }
    else:
        options = small_options(game.describe())
    rng = random.Random(data.draw(st.integers(0, 2**32), label="choices"))
    watch = SeedWatch()
    seats = [{"kind": "human"} for _ in range(humans)] + [{"kind": "bot"} for _ in range(players - humans)]
    service = app.extensions["games"]
    with every_log_line() as logs:
        created = watch.add(
            "create", client.post("/v1/games", json={"game": game.id, "seats": seats, "options": options})
        )
        gid = created["id"]
        assert created["seed_source"] == "server"
        watch.seed, watch.nonce = fake_redis.hmget(meta_key(gid), "seed", "nonce")
        assert watch.seed and len(watch.seed) == 64 and watch.nonce and len(watch.nonce) == 64
        assert not any(watch.seed in text or watch.nonce in text for _, text in watch.seen)
        tokens = {s["seat"]: s["token"] for s in created["seats"] if "token" in s}
        lines_before_end = 0
        for step in range(HUMAN_ACTION_CAP):
            dispatcher.drain(limit=BOT_TURN_CAP)
            spectator = watch.add("spectator view", client.get(f"/v1/games/{gid}"))
            version = spectator["version"]
            for seat, token in tokens.items():
                watch.add(f"seat {seat} view", client.get(f"/v1/games/{gid}", headers=auth(token)))
            watch.add("events", client.get(f"/v1/games/{gid}/events?after={max(0, version - 5)}"))
            if step < 2 or step % 10 == 0 or spectator["status"] == "finished":
                watch.add("record", client.get(f"/v1/games/{gid}/record"))
                watch.add("audit", client.get(f"/v1/games/{gid}/audit"))
                watch.add("disputes", client.get(f"/v1/games/{gid}/disputes"))
                for at in {1, version, rng.randint(1, version)}:
                    watch.add(f"replay at {at}", client.get(f"/v1/games/{gid}/replay?at={at}"))
                    for token in tokens.values():
                        watch.add(
                            f"seat replay at {at}", client.get(f"/v1/games/{gid}/replay?at={at}", headers=auth(token))
                        )
                some_token = next(iter(tokens.values()))
                errors = [
                    ("replay at 0", client.get(f"/v1/games/{gid}/replay?at=0")),
                    ("replay beyond", client.get(f"/v1/games/{gid}/replay?at={version + 1}")),
                    ("bad token", client.get(f"/v1/games/{gid}", headers=auth("x" * 43))),
                    (
                        "bad action",
                        client.post(f"/v1/games/{gid}/actions", json={"type": "nope"}, headers=auth(some_token)),
                    ),
                    (
                        "unknown card",
                        client.post(
                            f"/v1/games/{gid}/actions", json={"type": "discard", "card": "ZZ"}, headers=auth(some_token)
                        ),
                    ),
                    (
                        "stale",
                        client.post(
                            f"/v1/games/{gid}/actions",
                            json={"type": "draw", "expected_version": 0},
                            headers=auth(some_token),
                        ),
                    ),
                    (
                        "dispute beyond",
                        client.post(
                            f"/v1/games/{gid}/disputes",
                            json={"seq": version + 9, "reason": "x"},
                            headers=auth(some_token),
                        ),
                    ),
                ]
                for what, response in errors:
                    assert response.status_code >= 400, what
                    watch.add(what, response)
                if step < 2:  # two disputes: every later GET /disputes shows the game around them
                    dispute = {"seq": version, "reason": "why?"}
                    filed = client.post(f"/v1/games/{gid}/disputes", json=dispute, headers=auth(some_token))
                    assert filed.status_code == 201
                    watch.add("dispute", filed)
            if not watch.revealed:
                lines_before_end = len(logs.lines)
            if spectator["status"] == "finished":
                break
            acting = [seat for seat in spectator["to_act"] if seat in tokens]
            assert acting, "no human may act and the bots are done, but the game runs on"
            seat = acting[0]
            for other, token in tokens.items():
                if other not in spectator["to_act"]:
                    refused = client.post(f"/v1/games/{gid}/actions", json={"type": "draw"}, headers=auth(token))
                    assert refused.status_code >= 400
                    watch.add("out of turn", refused)
            action = rng.choice(engine.legal_actions(service.repository.load(gid).snap, seat))
            watch.add("action", client.post(f"/v1/games/{gid}/actions", json=action, headers=auth(tokens[seat])))
        else:
            pytest.fail(f"the game did not end within {HUMAN_ACTION_CAP} human actions")
    assert watch.revealed, "the game ended but no response showed SeedRevealed"
    assert any(watch.seed in text for _, text in watch.seen), "the seed was never shown, even after the end"
    assert any(watch.nonce in text for _, text in watch.seen), "the nonce was never shown, even after the end"
    leaked = [line for line in logs.lines[:lines_before_end] if watch.seed in line or watch.nonce in line]
    assert not leaked, leaked[:3]


# ---------------------------------------------------------------- disputes


def play_golf_with_a_human(client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher) -> dict[str, Any]:
    created = create(client, Scenario("golf", "golf", 2, {"rounds": 1}), humans=1)
    play_with_humans(client, app, dispatcher, created)
    return created


def file_dispute(client: FlaskClient, game_id: str, body: Any, token: str | None) -> TestResponse:
    return client.post(f"/v1/games/{game_id}/disputes", json=body, headers=auth(token) if token else {})


def test_only_a_seat_of_the_game_may_file_a_dispute(
    client: FlaskClient, fake_redis: Any, dispatcher: RecordingDispatcher
) -> None:
    created = create(client, Scenario("golf", "golf", 2, {"rounds": 1}), humans=1)
    other = create(client, Scenario("golf", "golf", 2, {"rounds": 1}), humans=1)
    gid = created["id"]
    body = {"seq": 1, "reason": "the deal looks wrong"}
    assert_problem(file_dispute(client, gid, body, None), 401, "unauthorized")
    assert_problem(file_dispute(client, gid, body, "not-a-token"), 401, "unauthorized")
    assert_problem(file_dispute(client, gid, body, other["seats"][0]["token"]), 401, "unauthorized")
    assert fake_redis.xlen(disputes_key(gid)) == 0
    token = created["seats"][0]["token"]
    version = get_json(client, f"/v1/games/{gid}")["version"]
    for seq in (0, version + 1, 10**9):
        assert_problem(file_dispute(client, gid, {"seq": seq, "reason": "x"}, token), 422, "event_out_of_range")
    for bad in (
        {"seq": 1},
        {"reason": "x"},
        {"seq": "1", "reason": "x"},
        {"seq": 1, "reason": ""},
        {"seq": 1, "reason": "x", "y": 1},
    ):
        assert_problem(file_dispute(client, gid, bad, token), 400, "invalid_request")
    assert fake_redis.xlen(disputes_key(gid)) == 0


@pytest.mark.parametrize("scenario", ONE_PER_GAME, ids=repr)
def test_a_dispute_is_kept_beside_the_running_game_and_listed_with_the_game_before_and_after(
    client: FlaskClient, app: flask.Flask, fake_redis: Any, dispatcher: RecordingDispatcher, scenario: Scenario
) -> None:
    created = create(client, scenario, humans=1)
    play_with_humans(client, app, dispatcher, created, stop_after=6)
    gid = created["id"]
    token = created["seats"][0]["token"]
    stream = fake_redis.xrange(events_key(gid))
    last_hash = json.loads(stream[-1][1]["e"])["hash"]
    seq = len(stream) // 2
    filed = file_dispute(client, gid, {"seq": seq, "reason": "that card was not on top"}, token)
    assert filed.status_code == 201, filed.get_data(as_text=True)
    dispute = filed.get_json()
    assert {k: dispute[k] for k in ("seat", "seq", "reason")} == {
        "seat": 0,
        "seq": seq,
        "reason": "that card was not on top",
    }
    first = file_dispute(client, gid, {"seq": 1, "reason": "the commitment"}, token).get_json()
    # Stored in a stream of its own; the game's stream is exactly as it was.
    stored = fake_redis.xrange(disputes_key(gid))
    assert [entry_id for entry_id, _ in stored] == [dispute["id"], first["id"]]
    assert json.loads(stored[0][1]["d"])["reason"] == "that card was not on top"
    assert fake_redis.xrange(events_key(gid)) == stream
    assert json.loads(fake_redis.xrange(events_key(gid))[-1][1]["e"])["hash"] == last_hash
    assert get_json(client, f"/v1/games/{gid}")["version"] == len(stream)
    assert not [e for e in all_events(client, gid) if "dispute" in e["type"].lower()]
    for who in (token, None):
        listed = get_json(client, f"/v1/games/{gid}/disputes", who)
        assert listed["next"] is None
        assert [d["id"] for d in listed["disputes"]] == [dispute["id"], first["id"]]
        entry = listed["disputes"][0]
        assert entry["verdict"]["chain_ok"] and entry["verdict"]["first_bad_seq"] is None
        assert entry["event_ok"] is True and entry["seq"] == seq and entry["seat"] == 0
        assert entry["before"] == without_at(replay(client, gid, seq - 1, who))
        assert entry["after"] == without_at(replay(client, gid, seq, who))
        assert ("you" in entry["after"]) is (who is not None)
        assert listed["disputes"][1]["before"] is None and listed["disputes"][1]["event_ok"] is True


@pytest.mark.parametrize("tamper", STREAM_TAMPERS, ids=repr)
def test_after_tampering_an_earlier_event_a_dispute_is_not_ok(
    client: FlaskClient, app: flask.Flask, fake_redis: Any, dispatcher: RecordingDispatcher, tamper: Tamper
) -> None:
    """Each dispute keeps the verdict of the audit when it was filed: one filed after the stored
    game was changed is not ok, whichever process files or lists it."""
    created = play_golf_with_a_human(client, app, dispatcher)
    gid = created["id"]
    token = created["seats"][0]["token"]
    record = get_json(client, f"/v1/games/{gid}/record")
    last = len(record["events"])
    filed = file_dispute(client, gid, {"seq": last, "reason": "the result is wrong"}, token)
    assert filed.status_code == 201
    untouched = get_json(client, f"/v1/games/{gid}/disputes")["disputes"][0]
    assert untouched["event_ok"] is True
    assert untouched["before"] == without_at(replay(client, gid, last - 1)), "finished: the full view"
    assert untouched["after"] == without_at(replay(client, gid, last)) and "stock" in untouched["after"]["table"]
    seq, _ = tamper.apply(record)
    assert seq <= last
    rewrite_stream(fake_redis, gid, record["events"])
    for api in (client, fresh_client(fake_redis)):
        again = file_dispute(api, gid, {"seq": seq, "reason": "this one"}, token)
        assert again.status_code == 201, again.get_data(as_text=True)
        assert again.get_json()["verdict"]["first_bad_seq"] == seq and again.get_json()["event_ok"] is False
        for who in (token, None):
            listed = get_json(api, f"/v1/games/{gid}/disputes", who)
            assert [d["verdict"]["first_bad_seq"] for d in listed["disputes"]] == [None, seq]
            assert [d["event_ok"] for d in listed["disputes"]] == [True, False]
        fake_redis.xdel(disputes_key(gid), again.get_json()["id"])
