"""Make finished game records for the corpus, through the real service path (the Flask app on fakeredis).

    .venv/bin/python -m tests.records.build DIR

writes one record per game and kind into DIR: seeded, unseeded (a server seed), stacked (C-5),
with turn timeouts (moves the system played for a person) and with disputes filed; and a
crafted Switch hand that ends with one player left holding cards under a pending draw (S-9), and
a crafted Go5 game where a joker joins a first set on the table (V-9, rules version 2 only). Bots play
through the same command path as in production (their jobs run in-process); the person's
moves are drawn from the seat's own legal actions.

The corpus in tests/records/ only grows: records made by an older version of the code stay,
and tests/unit/test_record_corpus.py verifies every one of them with the offline verifier.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
from flask.testing import FlaskClient

from domain import engine
from domain.shuffle import shuffle
from service.app import create_app
from tests.conftest import RecordingDispatcher, auth
from tests.unit import go5_helpers
from tests.unit.switch_helpers import build_deck

KINDS = ("seeded", "unseeded", "stacked", "timeouts", "dispute")

# Short games: few seats and low targets keep each record to a few hundred events.
SETUPS: dict[str, dict[str, Any]] = {
    "golf": {"players": 3, "options": {"rounds": 2}},
    "romme": {"players": 3, "options": {"target": 150}},
    "switch": {"players": 4, "options": {"target": 60}},
    "go5": {"players": 3, "options": {"target": 40}},
}
BOT_LEVELS = ("greedy", "random")


class Table:
    """One app on its own fakeredis, with bot turns and turn timeouts run in-process."""

    def __init__(self) -> None:
        self.dispatcher = RecordingDispatcher()
        settings = {"TESTING": True, "GAMES_PER_MINUTE": 0}
        app = create_app(settings, redis_client=fakeredis.FakeRedis(decode_responses=True), dispatcher=self.dispatcher)
        self.dispatcher.service = app.extensions["games"]
        self.client: FlaskClient = app.test_client()

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.post("/v1/games", json=body)
        assert response.status_code == 201, response.get_json()
        created: dict[str, Any] = response.get_json()
        return created

    def view(self, game_id: str, token: str) -> dict[str, Any]:
        found: dict[str, Any] = self.client.get(f"/v1/games/{game_id}", headers=auth(token)).get_json()
        return found

    def act(self, game_id: str, token: str, action: dict[str, Any], version: int) -> None:
        body = {**action, "expected_version": version}
        response = self.client.post(f"/v1/games/{game_id}/actions", headers=auth(token), json=body)
        assert response.status_code == 200, response.get_json()

    def record(self, game_id: str) -> dict[str, Any]:
        record: dict[str, Any] = self.client.get(f"/v1/games/{game_id}/record").get_json()
        return record


def seats(game: str, humans: int) -> list[dict[str, Any]]:
    """`humans` people first, then bots of alternating levels."""
    count = SETUPS[game]["players"]
    people = [{"kind": "human", "name": f"Person {i}"} for i in range(humans)]
    bots = [{"kind": "bot", "level": BOT_LEVELS[i % 2]} for i in range(count - humans)]
    return people + bots


def stacked_deck(game: str) -> list[str]:
    """A fixed permutation of the game's canonical deck for round 1 (C-5)."""
    setup = SETUPS[game]
    config = engine.make_config(game, setup["players"], setup["options"], "corpus")
    return list(shuffle(engine.get_game(game).canonical_deck(config.players, config.options), "stacked", game))


def play(table: Table, created: dict[str, Any], rng: random.Random, timeout_share: float = 0.0) -> None:
    """Play the game to its end: bots by their jobs, the person by a legal action of their own view,
    or (with `timeout_share`, that often) by letting the turn time out."""
    game_id = created["id"]
    people = [seat for seat in created["seats"] if "token" in seat]
    for _ in range(20_000):
        table.dispatcher.drain()
        moved = False
        for person in people:
            view = table.view(game_id, person["token"])
            if view["status"] == "finished":
                return
            if person["seat"] not in view["to_act"]:
                continue
            if rng.random() < timeout_share:
                assert table.dispatcher.fire_timeouts(), "a turn timeout was due"
            else:
                table.act(game_id, person["token"], rng.choice(view["you"]["legal"]), view["version"])
            moved = True
            break
        if not moved:
            status = table.client.get(f"/v1/games/{game_id}").get_json()["status"]
            assert status == "finished", f"game {game_id} is stuck"
            return
    raise AssertionError(f"game {game_id} did not end")


def make_record(table: Table, game: str, kind: str) -> dict[str, Any]:
    """One finished game of `game` of this kind, and its record."""
    setup = SETUPS[game]
    rng = random.Random(f"{game}/{kind}")
    body: dict[str, Any] = {"game": game, "options": setup["options"], "seed": f"corpus-{game}-{kind}"}
    humans = 1 if kind in ("timeouts", "dispute") else 0
    body["seats"] = seats(game, humans)
    if kind == "unseeded":
        del body["seed"]
    if kind == "stacked":
        del body["seed"]
        body["decks"] = [stacked_deck(game)]
    if kind == "timeouts":
        body["turn_seconds"] = 30
    created = table.create(body)
    play(table, created, rng, timeout_share=0.5 if kind == "timeouts" else 0.0)
    if kind == "dispute":
        token = created["seats"][0]["token"]
        version = table.record(created["id"])["version"]
        for seq, reason in ((2, "I was dealt other cards"), (version - 1, "the last scores are wrong")):
            answer = table.client.post(
                f"/v1/games/{created['id']}/disputes", headers=auth(token), json={"seq": seq, "reason": reason}
            )
            assert answer.status_code == 201, answer.get_json()
    record = table.record(created["id"])
    assert record["status"] == "finished", record["status"]
    return record


HEARTS = ["3H", "4H", "5H", "6H", "7H", "9H", "10H", "QH", "AH"]


def make_switch_one_left(table: Table) -> dict[str, Any]:
    """Switch, S-9: seats 1, 2 and 3 go out on 2H, 2D and a joker; seat 0 alone holds cards while a
    draw of 9 is pending (the case whose reading rules version 2 of Switch changed)."""
    hands = {
        1: [*HEARTS[:6], "2H"],
        2: [*HEARTS[3:9], "2D"],
        3: [*HEARTS[:3], *HEARTS[6:9], "JK"],
        0: ["3S", "4S", "5S", "6S", "7S", "9S", "10S"],
    }
    stock = ["3C", "4C", "5C", "6C", "7C", "9C"]
    body = {
        "game": "switch",
        "options": {"target": 1},
        "seats": [{"kind": "human", "name": f"Person {i}"} for i in range(4)],
        "decks": [build_deck(4, hands, start="QH", stock=stock)],
    }
    created = table.create(body)
    game_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    moves: list[tuple[int, dict[str, Any]]] = []
    for turn in range(7):  # seats 1 to 3 each play a heart, seat 0 draws; then 2H, 2D and the joker
        moves += [(seat, {"type": "play", "cards": [hands[seat][turn]]}) for seat in (1, 2, 3)]
        moves += [(0, {"type": "draw"})] if turn < 6 else []
    for seat, action in moves:
        table.act(game_id, tokens[seat], action, table.view(game_id, tokens[seat])["version"])
    record = table.record(game_id)
    assert record["status"] == "finished", record["status"]
    return record


def make_go5_joker_in_first_set(table: Table) -> dict[str, Any]:
    """Go5, V-9: seat 1 lays its first set (three 3s) without a joker, then lays a joker off onto it,
    which rules version 2 allows (version 1 refused it); the rest is played from the legal actions."""
    j, junk, n3 = go5_helpers.JOKER, go5_helpers.JUNK, go5_helpers.N3
    hands = {
        1: [n3[0], n3[1], n3[2], j, "5-dots-blue", "6-dots-violet", junk[0]],
        0: [n3[5], "1-zigzag-blue", "2-checks-blue", "7-dots-black", j, junk[1], junk[2]],
    }
    deck = go5_helpers.build_deck(2, hands, junk[10], [j, *junk[3:10]])
    seats = [{"kind": "human", "name": f"Person {i}"} for i in range(2)]
    created = table.create({"game": "go5", "options": {"target": 1}, "seats": seats, "decks": [deck]})
    game_id, tokens = created["id"], [seat["token"] for seat in created["seats"]]
    stock = {"type": "draw", "from": "stock"}
    moves: list[tuple[int, dict[str, Any]]] = [
        (1, stock),
        (1, {"type": "meld", "cards": n3[:3]}),
        (1, {"type": "discard", "card": junk[0]}),
        (0, stock),
        (0, {"type": "discard", "card": junk[1]}),
        (1, stock),
        (1, {"type": "meld", "cards": [j, "5-dots-blue", "6-dots-violet"], "by": "pattern"}),
        (1, {"type": "discard", "card": junk[4]}),
        (0, stock),
        (0, {"type": "discard", "card": junk[2]}),
        (1, stock),
        (1, {"type": "lay_off", "set": 1, "card": j}),
    ]
    for seat, action in moves:
        table.act(game_id, tokens[seat], action, table.view(game_id, tokens[seat])["version"])
    play(table, created, random.Random("go5/joker"))
    record = table.record(game_id)
    assert record["status"] == "finished", record["status"]
    return record


def records(table: Table) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, record) of every game and kind, and of the crafted games."""
    for game in SETUPS:
        for kind in KINDS:
            yield f"{game}-{kind}", make_record(table, game, kind)
    yield "switch-one-left", make_switch_one_left(table)
    yield "go5-joker-in-first-set", make_go5_joker_in_first_set(table)


def main(argv: list[str]) -> int:
    """Write every record into the directory given, one JSON file each."""
    if len(argv) != 1:
        print("usage: python -m tests.records.build DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, record in records(Table()):
        path = out / f"{name}.json"
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{path}: {len(record['events'])} events")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
