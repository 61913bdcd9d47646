"""Property: no view, action answer, error body or event shows a card its reader may not see (C-6).

Random games of every game type, with human and bot seats, are played through the API; each human
seat also follows the game on its live stream, whose `view` messages are checked like views. Views are
checked by LOCATION against the domain's full view, not by counting card codes over a document:
every card code in a viewer's document must sit at a path where the full view has exactly that
card and the location is public or the viewer's own, and every such card must be shown. Events
(which are public) may only name cards that, per code, have at least as many copies in public
locations just before or just after the event.
"""

from __future__ import annotations

import copy
import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import engine
from domain.switch import card_order as switch_card_order
from service.api import stream_routes as live
from tests.conftest import RecordingDispatcher, auth
from tests.service.helpers import all_events
from tests.service.sse import SseReader

# game -> (min players, max players, options). Golf with 5 or 6 players and Rommé and Switch
# always are multi-deck games: one code may stand for several physical cards.
GAMES: dict[str, tuple[int, int, dict[str, Any]]] = {
    "golf": (2, 6, {"rounds": 1}),
    "switch": (4, 6, {"target": 30}),
    "go5": (2, 4, {"target": 20}),
    "romme": (2, 4, {"target": 100}),
}
MAX_HUMAN_MOVES = 25

# Keys of the public table that hold cards (a subtree: every card inside is public).
PUBLIC_TABLE = {
    "golf": ("grids", "discard", "discard_top"),  # grids: face-up slots only, see _public_table
    "switch": ("discard", "top_card"),
    "romme": ("discard", "discard_top", "melds", "out_of_game", "cut"),
    "go5": ("discard_top", "players"),
}
# Paths (in the table) of physical public cards, for counting copies; derived fields such as
# `discard_top` or a joker's `stands_for` repeat or name cards and are left out.
PHYSICAL = {
    "golf": ("grids.*.slots.*.card", "discard.*"),
    "switch": ("discard.*",),
    "romme": ("discard.*", "melds.*.cards.*", "out_of_game.*", "cut.grabbed.*"),
    "go5": ("discard_top", "players.*.sets.*.cards.*"),
}
# Keys that must never be in a viewer's table (hidden locations), whatever they hold.
FORBIDDEN_TABLE_KEYS = {
    "golf": {"stock", "hands", "drawn"},
    "switch": {"stock", "hands", "drawn"},
    "romme": {"stock", "hands", "deck", "lifted", "lower"},
    "go5": {"stock", "hands", "discard"},
}
STANDARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9AJQK])[SHDC](?![A-Za-z0-9])|(?<![A-Za-z0-9])JK(?![A-Za-z0-9])")
GO5_TOKEN = re.compile(r"(?<![A-Za-z0-9-])[1-7]-[a-z]+-[a-z]+(?![A-Za-z0-9-])")


# ---------------------------------------------------------------- walking documents


def card_paths(value: Any, is_card: Callable[[object], bool], path: str = "") -> Iterator[tuple[str, str]]:
    """(path, code) of every card code inside a JSON-like value; list indices are path parts."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from card_paths(item, is_card, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from card_paths(item, is_card, f"{path}.{index}" if path else str(index))
    elif is_card(value):
        yield path, value


def _generic(path: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in path.split("."))


def _masked_slots(slots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Golf: a slot's card is seen only when it is face up (G-5)."""
    return [{**slot, "card": slot["card"] if slot["state"] == "up" else None} for slot in slots]


def _public_table(game: str, full_table: dict[str, Any]) -> dict[str, Any]:
    """The part of the full table that everybody may see, with its card locations."""
    table = {key: copy.deepcopy(full_table[key]) for key in PUBLIC_TABLE[game] if key in full_table}
    if game == "golf":
        table["grids"] = [{**grid, "slots": _masked_slots(grid["slots"])} for grid in table["grids"]]
    if game == "go5":
        discard = full_table["discard"]
        assert full_table["discard_top"] == (discard[-1] if discard else None)
    return table


def _own(game: str, snap: engine.Snapshot[Any], full_table: dict[str, Any], seat: int) -> dict[str, Any]:
    """The cards of `you` that only `seat` may see, at their paths."""
    if game == "golf":
        grids = full_table["grids"]
        own = _masked_slots(grids[seat]["slots"]) if grids else []
        return {"hand": own, "drawn": full_table["drawn"] if full_table["drawn_by"] == seat else None}
    hands = full_table["hands"]
    hand = hands[seat] if hands else []
    if game == "switch":
        legal = engine.legal_actions(snap, seat)
        playable = sorted({c for a in legal if a["type"] == "play" for c in a["cards"]}, key=switch_card_order)
        drawn = full_table["drawn"] if full_table["drawn_by"] == seat else None
        return {"hand": hand, "drawn": drawn, "playable": playable, "legal": legal}
    return {"hand": hand, "legal": engine.legal_actions(snap, seat)}


def expected_cards(snap: engine.Snapshot[Any], seat: int | None) -> dict[str, str]:
    """path -> card code of every card a viewer's document must show, and of nothing else."""
    game = snap.config.game
    full_table = engine.full_view(snap)["table"]
    expected: dict[str, Any] = {"table": _public_table(game, full_table)}
    if seat is not None:
        expected["you"] = _own(game, snap, full_table, seat)
    return dict(card_paths(expected, snap.game.is_card))


def check_view(doc: dict[str, Any], snap: engine.Snapshot[Any], seat: int | None, what: str) -> None:
    """The document shows exactly the public cards and the viewer's own, each at its location."""
    game = snap.config.game
    assert doc["version"] == snap.version, f"{what}: compared with the wrong version"
    table = doc["table"]
    forbidden = FORBIDDEN_TABLE_KEYS[game] & set(table)
    assert not forbidden, f"{what}: the table has hidden location(s) {sorted(forbidden)}"
    if game == "romme":
        assert isinstance(table["face_down"], int), f"{what}: Rommé's face-down card is shown"
    if game == "golf":
        for grid in table["grids"]:
            assert all(s["card"] is None for s in grid["slots"] if s["state"] != "up"), f"{what}: golf slot {grid}"
    if seat is None:
        assert "you" not in doc, f"{what}: a spectator got a `you`"
    else:
        assert doc["you"]["seat"] == seat
        if game == "golf":
            assert all(s["card"] is None for s in doc["you"]["hand"] if s["state"] != "up"), f"{what}: own slot"
    # every card code in the document (but the action types, Go5 has an action `stop`)
    shown = dict(card_paths({k: v for k, v in doc.items() if k != "actions"}, snap.game.is_card))
    expected = expected_cards(snap, seat)
    extra = {p: c for p, c in shown.items() if expected.get(p) != c}
    missing = {p: c for p, c in expected.items() if shown.get(p) != c}
    assert not extra and not missing, f"{what}: cards shown where they may not be {extra}; not shown {missing}"


def visible_codes(snap: engine.Snapshot[Any], seat: int | None) -> set[str]:
    return set(expected_cards(snap, seat).values())


def public_copies(snap: engine.Snapshot[Any]) -> Counter[str]:
    """Per code, how many physical copies lie in public locations."""
    game = snap.config.game
    table = _public_table(game, engine.full_view(snap)["table"])
    return Counter(
        code
        for path, code in card_paths(table, snap.game.is_card)
        if any(fnmatchcase(_generic(path), pattern) for pattern in PHYSICAL[game])
    )


def check_events(records: list[dict[str, Any]], config: engine.GameConfig) -> None:
    """Each event names only cards with enough public copies just before or just after it."""
    game = engine.get_game(config.game)
    snap: engine.Snapshot[Any] = engine.Snapshot(game, config, game.initial_state(config))
    before = public_copies(snap)
    for record in records:
        assert record["seq"] == snap.version + 1
        event = game.catalog.build(record["type"], record["actor"], record["data"])
        snap = engine.advance(snap, event)
        after = public_copies(snap)
        # one field may repeat another's card (Rommé's DiscardTaken.card is in .cards): union per field
        named: Counter[str] = Counter()
        for value in record["data"].values():
            named |= Counter(code for _, code in card_paths(value, game.is_card))
        for code, count in named.items():
            assert count <= max(before[code], after[code]), (
                f"event {record['seq']} {record['type']} shows {code} x{count}, but only "
                f"{before[code]} copies were public before and {after[code]} after: {record['data']}"
            )
        before = after


def check_problem(body: dict[str, Any], request: dict[str, Any], snap: engine.Snapshot[Any], seat: int | None) -> None:
    """An error names only cards the request named or the viewer may see."""
    game = snap.game
    token = GO5_TOKEN if snap.config.game == "go5" else STANDARD_TOKEN
    named = {code for _, code in card_paths(request, game.is_card)}
    strings = [s for _, s in card_paths(body, lambda v: isinstance(v, str))]
    mentioned = {code for s in strings for code in token.findall(s) if game.is_card(code)}
    leaked = mentioned - named - visible_codes(snap, seat)
    assert not leaked, f"error body shows {sorted(leaked)} to seat {seat}: {body}"


# ---------------------------------------------------------------- playing


def _mutate(action: Any, codes: list[str], rng: random.Random) -> Any:
    """The action with every card code replaced by a random code of the game."""
    if isinstance(action, dict):
        return {k: _mutate(v, codes, rng) for k, v in action.items()}
    if isinstance(action, list):
        return [_mutate(v, codes, rng) for v in action]
    return rng.choice(codes) if action in codes else action


def play_and_check(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    game: str,
    kinds: list[str],
    seed: int,
) -> int:
    """Play one game (at most MAX_HUMAN_MOVES human moves) checking every document; returns the moves."""
    rng = random.Random(seed)
    service = app.extensions["games"]
    options = GAMES[game][2]
    seats = [{"kind": kind, "name": f"P{i}"} if kind == "human" else {"kind": "bot"} for i, kind in enumerate(kinds)]
    response = client.post("/v1/games", json={"game": game, "seats": seats, "options": options, "seed": f"s{seed}"})
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    game_id = created["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"] if "token" in s}
    streams = {seat: open_seat_stream(client, game_id, token) for seat, token in tokens.items()}
    answered: dict[int, dict[str, Any]] = {}
    moves = 0
    while True:
        dispatcher.drain()
        loaded = service.repository.load(game_id)
        snap = loaded.snap
        for seat, token in [*tokens.items(), (None, None)]:
            headers = auth(token) if token else {}
            view = client.get(f"/v1/games/{game_id}", headers=headers)
            assert view.status_code == 200
            check_view(view.get_json(), snap, seat, f"{game} view of seat {seat} at v{snap.version}")
        for seat, reader in streams.items():  # each seat's live stream: its `view` message at this version
            if reader.seen < snap.version:
                streamed = reader.view_at(snap.version)
                check_view(streamed, snap, seat, f"{game} streamed view of seat {seat} at v{snap.version}")
        humans = [seat for seat in snap.to_act() if seat in tokens]
        if snap.finished or not humans or moves >= MAX_HUMAN_MOVES:
            break
        seat = rng.choice(humans)
        legal = engine.legal_actions(snap, seat)
        assert legal
        action = rng.choice(legal)
        if rng.random() < 0.3:  # an error probe first: a wrong seat, a stale version or other cards
            codes = sorted(set(snap.game.canonical_deck(snap.config.players, snap.config.options)))
            idle = [s for s in tokens if s not in snap.to_act()]
            probe_seat = rng.choice(idle) if idle and rng.random() < 0.4 else seat
            probe = _mutate(action, codes, rng) if rng.random() < 0.7 else {**action, "expected_version": 0}
            answer = client.post(f"/v1/games/{game_id}/actions", json=probe, headers=auth(tokens[probe_seat]))
            body = answer.get_json()
            if answer.status_code == 200:  # the mutation happened to be legal: it was a move
                moves += 1
                after = service.repository.load(game_id).snap
                check_view(body["state"], after, probe_seat, f"{game} answer state of seat {probe_seat}")
                answered.update({r["seq"]: r for r in body["events"]})
                continue
            assert 400 <= answer.status_code < 500, body
            check_problem(body, probe, snap, probe_seat)
        response = client.post(
            f"/v1/games/{game_id}/actions",
            json={**action, "expected_version": snap.version},
            headers=auth(tokens[seat]),
        )
        assert response.status_code == 200, (action, response.get_data(as_text=True))
        body = response.get_json()
        moves += 1
        after = service.repository.load(game_id).snap
        assert after.version == body["version"]
        check_view(body["state"], after, seat, f"{game} answer state of seat {seat}")
        answered.update({r["seq"]: r for r in body["events"]})
    for reader in streams.values():
        reader.close()
    records = all_events(client, game_id)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    for seq, record in answered.items():
        assert records[seq - 1] == record, f"the answer's event {seq} is not the stored one"
    check_events(records, service.repository.load(game_id).config)
    record = client.get(f"/v1/games/{game_id}/record").get_json()
    assert record["events"] == records, "the record holds exactly the public events"
    if not service.repository.load(game_id).snap.finished:
        assert "seed" not in record and "decks" not in record
    return moves


class SeatStream:
    """A seat's live stream (opened with a stream ticket), read up to the `view` message of a version."""

    def __init__(self, reader: SseReader) -> None:
        self.reader = reader
        self.seen = -1  # the version of the newest view message read

    def view_at(self, version: int) -> dict[str, Any]:
        """Read messages until the view of `version`; every event message on the way is public too."""
        messages = self.reader.until(lambda m: m.get("event") == "view" and m["data"]["version"] >= version)
        view: dict[str, Any] = messages[-1]["data"]
        self.seen = view["version"]
        assert self.seen == version, f"a streamed view of version {self.seen}, the game is at {version}"
        return view

    def close(self) -> None:
        self.reader.close()


def open_seat_stream(client: FlaskClient, game_id: str, token: str) -> SeatStream:
    answer = client.post(f"/v1/games/{game_id}/stream-tickets", headers=auth(token))
    assert answer.status_code == 201, answer.get_data(as_text=True)
    url = f"/v1/games/{game_id}/stream?ticket={answer.get_json()['ticket']}"
    return SeatStream(SseReader(client.get(url, buffered=False)))


# a card code standing alone: not a piece of a game id, request id or token (URL-safe: letters, digits,
# `-` and `_`), such as the id `JK-V9Gkg8BPI`
CARD_IN_TEXT = re.compile(r"(?<![\w-])(?:(?:10|[2-9AJQK])[SHDC]|JK|[1-7]-[a-z]+-[a-z]+)(?![\w-])")


@st.composite
def game_setups(draw: st.DrawFn) -> tuple[str, list[str], int]:
    game = draw(st.sampled_from(sorted(GAMES)))
    low, high, _ = GAMES[game]
    players = draw(st.integers(low, high))
    kinds = draw(st.lists(st.sampled_from(["human", "bot"]), min_size=players, max_size=players))
    kinds[draw(st.integers(0, players - 1))] = "human"  # at least one human
    return game, kinds, draw(st.integers(0, 2**32))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(setup=game_setups())
def test_no_document_shows_a_hidden_card(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    caplog: pytest.LogCaptureFixture,
    setup: tuple[str, list[str], int],
) -> None:
    game, kinds, seed = setup
    dispatcher.jobs.clear()
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    play_and_check(client, app, dispatcher, game, kinds, seed)
    # log lines name no card at all: no logging call carries game state
    logged = [r.getMessage() for r in caplog.records]
    assert not [line for line in logged if CARD_IN_TEXT.search(line)], logged


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("where", ["new_key", "own_hand"])
def test_the_checker_catches_a_leaked_stock_card(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    monkeypatch: pytest.MonkeyPatch,
    game: str,
    where: str,
) -> None:
    real_view = engine.view

    def leaky_view(snap: engine.Snapshot[Any], seat: int | None) -> dict[str, Any]:
        out = real_view(snap, seat)
        table = engine.full_view(snap)["table"]
        hidden = table.get("stock") or table.get("deck") or []
        if hidden:
            if where == "own_hand" and seat is not None:
                hand = out["you"]["hand"]
                hand.append({"state": "up", "card": hidden[0]} if game == "golf" else hidden[0])
            else:
                out["table"]["peek"] = hidden[0]
        return out

    monkeypatch.setattr(engine, "view", leaky_view)
    kinds = ["human"] * GAMES[game][0]
    with pytest.raises(AssertionError, match="may not be"):
        play_and_check(client, app, dispatcher, game, kinds, 7)


def test_the_event_checker_catches_a_hidden_card(client: FlaskClient, app: flask.Flask) -> None:
    seats = [{"kind": "human"}, {"kind": "human"}]
    created = client.post("/v1/games", json={"game": "golf", "seats": seats, "options": {"rounds": 1}}).get_json()
    loaded = app.extensions["games"].repository.load(created["id"])
    records = all_events(client, created["id"])
    check_events(records, loaded.config)
    stock = engine.full_view(loaded.snap)["table"]["stock"]
    # seat 0 "turns up" two cards, but the event names the top of the stock instead of its own
    forged = {"seq": len(records) + 1, "type": "CardsRevealed", "actor": 0}
    forged["data"] = {"positions": [0, 1], "cards": stock[:2]}
    with pytest.raises(AssertionError, match="copies were public"):
        check_events([*records, forged], loaded.config)


def test_the_checker_catches_a_card_leaked_in_a_streamed_view(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_frame = live._view_frame

    def leaky_frame(games: Any, game_id: str, seat: int) -> bytes:
        frame = real_frame(games, game_id, seat)
        stock = engine.full_view(games.load(game_id).snap)["table"].get("stock") or []
        return frame.replace(b'"table":{', f'"table":{{"peek":"{stock[0]}",'.encode(), 1) if stock else frame

    monkeypatch.setattr(live, "_view_frame", leaky_frame)
    with pytest.raises(AssertionError, match=r"streamed view .* may not be"):
        play_and_check(client, app, dispatcher, "golf", ["human", "human"], 7)
