"""The HTTP contract (API.md) on fakeredis: every endpoint, a whole game, idempotency, concurrency."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from domain.cards import canonical_deck
from domain.shuffle import shuffle
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import (
    HEX64,
    Transcript,
    assert_problem,
    assert_unchanged,
    check_chain,
    check_no_face_down_cards,
    check_record_shape,
    check_view_hides,
    deal_index,
    play_to_end,
    sha256_hex,
    stream_entries,
    strings_in,
)

TWO_HUMANS = [{"kind": "human", "name": "Ana"}, {"kind": "human", "name": "Ben"}]
VIEW_FIELDS = {"id", "game", "status", "version", "round", "phase", "to_act", "seats", "table", "actions", "result"}


def tokens_of(created: dict[str, Any]) -> dict[int, str]:
    return {seat["seat"]: seat["token"] for seat in created["seats"] if "token" in seat}


def post_action(client: FlaskClient, game_id: str, token: str, body: dict[str, Any], **headers: str) -> Any:
    return client.post(f"/v1/games/{game_id}/actions", json=body, headers={**auth(token), **headers})


def all_events(client: FlaskClient, game_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/games/{game_id}/events")
    assert response.status_code == 200
    events: list[dict[str, Any]] = response.get_json()["events"]
    return events


def reveal_all(client: FlaskClient, created: dict[str, Any]) -> None:
    """Every human turns up positions 0 and 1 (G-4)."""
    for seat, token in tokens_of(created).items():
        response = post_action(client, created["id"], token, {"type": "reveal", "positions": [0, 1]})
        assert response.status_code == 200, (seat, response.get_json())


# ---------------------------------------------------------------- catalog and health


def test_catalog_lists_golf_with_options_actions_and_bot_levels(client: FlaskClient) -> None:
    response = client.get("/v1/catalog")
    assert response.status_code == 200 and response.mimetype == "application/json"
    games = {game["id"]: game for game in response.get_json()["games"]}
    golf = games["golf"]
    assert golf["name"] == "Golf"
    assert golf["players"] == {"min": 2, "max": 12}
    options = {option["name"]: option for option in golf["options"]}
    assert options["layout"]["default"] == "2x3" and set(options["layout"]["choices"]) == {"2x3", "3x3"}
    assert (options["initial_flips"]["default"], options["initial_flips"]["minimum"]) == (2, 0)
    assert options["penalty"]["default"] == 10
    assert (options["rounds"]["default"], options["rounds"]["minimum"], options["rounds"]["maximum"]) == (9, 1, 18)
    assert (options["decks"]["minimum"], options["decks"]["maximum"]) == (1, 3)
    for option in options.values():
        assert option["description"]
    assert set(golf["actions"]) == {"reveal", "draw", "swap", "discard", "take_discard", "flip"}
    assert {"random", "greedy"} <= set(golf["bot_levels"])


def test_healthz_and_readyz(client: FlaskClient) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.get_json() == {"status": "ready"}


# ---------------------------------------------------------------- create


def test_create_returns_201_location_and_tokens_for_humans_only(client: FlaskClient) -> None:
    seats = [
        {"kind": "human", "name": "Ana"},
        {"kind": "bot", "level": "random"},
        {"kind": "human"},
        {"kind": "bot"},
    ]
    response = client.post("/v1/games", json={"game": "golf", "seats": seats})
    assert response.status_code == 201 and response.mimetype == "application/json"
    created = response.get_json()
    assert response.headers["Location"].endswith(f"/v1/games/{created['id']}")
    assert created["game"] == "golf" and created["stacked"] is False
    assert created["seed_source"] == "server" and HEX64.match(created["seed_commitment"])
    assert created["version"] >= 2  # GameCreated and the first RoundStarted at least
    assert [s["seat"] for s in created["seats"]] == [0, 1, 2, 3]
    assert [s["kind"] for s in created["seats"]] == ["human", "bot", "human", "bot"]
    assert created["seats"][0]["name"] == "Ana" and all(s["name"] for s in created["seats"])
    assert created["seats"][1]["level"] == "random" and created["seats"][3]["level"] == "greedy"
    assert "level" not in created["seats"][0]
    assert "token" not in created["seats"][1] and "token" not in created["seats"][3]
    tokens = tokens_of(created)
    assert set(tokens) == {0, 2} and tokens[0] != tokens[2]
    for token in tokens.values():
        assert len(token) >= 22  # at least 128 bits in URL-safe base64

    view = client.get(response.headers["Location"])
    assert view.status_code == 200 and view.get_json()["version"] == created["version"]


def test_create_with_a_seed_commits_to_it_salted_and_never_echoes_it(client: FlaskClient) -> None:
    """C-4: a person's short seed such as 4711 is salted by a secret nonce drawn for every game, so
    its public commitment is not sha256("4711") and differs between two games with that seed."""
    seed = "4711"
    commitments = []
    for _ in range(2):
        response = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "seed": seed})
        created = response.get_json()
        assert response.status_code == 201
        assert created["seed_source"] == "creator" and HEX64.match(created["seed_commitment"])
        assert created["seed_commitment"] != sha256_hex(seed)
        random = {created["id"], *(seat["token"] for seat in created["seats"])}
        assert not echoes(seed, created, random)
        events = all_events(client, created["id"])
        assert events[0]["type"] == "GameCreated"
        assert events[0]["data"]["seed_commitment"] == created["seed_commitment"]
        assert not echoes(seed, events, random)
        commitments.append(created["seed_commitment"])
    assert commitments[0] != commitments[1]


DIGEST_OR_TIME = re.compile(r"[0-9a-f]{64}|\d{4}-\d\d-\d\dT[\d:.]+Z")


def echoes(seed: str, value: Any, random: set[str]) -> set[str]:
    """The strings in `value` that hold the seed, leaving out random ones (ids, tokens, digests, times)
    that may hold its digits by chance."""
    found = {text for text in strings_in(value) if seed in text}
    return {text for text in found - random if not DIGEST_OR_TIME.fullmatch(text)}


@pytest.mark.parametrize(
    ("game", "players", "version"), [("golf", 2, 2), ("romme", 2, 2), ("switch", 4, 3), ("go5", 2, 3)]
)
def test_every_game_states_the_rules_version_it_is_played_under(
    client: FlaskClient, game: str, players: int, version: int
) -> None:
    """Versioned rules: the creation answer, every view, the record and the first event state the
    game's rules version (every game went up one with C-9's max_events; Switch and Go5 had gone to 2
    with S-9 and V-9)."""
    seats = [{"kind": "human"} for _ in range(players)]
    created = client.post("/v1/games", json={"game": game, "seats": seats}).get_json()
    game_url = f"/v1/games/{created['id']}"
    token = created["seats"][0]["token"]
    assert created["rules_version"] == version
    assert client.get(game_url).get_json()["rules_version"] == version
    assert client.get(game_url, headers=auth(token)).get_json()["rules_version"] == version
    record = client.get(f"{game_url}/record").get_json()
    assert record["rules_version"] == version and record["events"][0]["data"]["rules_version"] == version


def test_server_seeds_differ_between_games(client: FlaskClient) -> None:
    first = create_golf(client)
    second = create_golf(client)
    assert first["id"] != second["id"]
    assert first["seed_commitment"] != second["seed_commitment"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seeded_deal_follows_c4_and_g3(client: FlaskClient, players: int) -> None:
    seed = f"deal-check-{players}"
    seats = [{"kind": "human"} for _ in range(players)]
    created = create_golf(client, seats=seats, seed=seed)
    deck = shuffle(canonical_deck(), seed, "round/1")
    view = client.get(f"/v1/games/{created['id']}").get_json()
    dealer = view["table"]["dealer"]
    assert dealer == 0  # C-2: round 1 is dealt by seat 0
    assert view["table"]["discard"] == [deck[players * 6]]
    assert view["table"]["discard_top"] == deck[players * 6]
    assert view["table"]["stock_size"] == 52 - players * 6 - 1
    for seat, token in tokens_of(created).items():
        positions = [seat % 6, (seat + 3) % 6]
        response = post_action(client, created["id"], token, {"type": "reveal", "positions": positions})
        assert response.status_code == 200, response.get_json()
        (event,) = [e for e in response.get_json()["events"] if e["type"] == "CardsRevealed"]
        expected = [deck[deal_index(players, dealer, seat, p)] for p in positions]
        assert event["actor"] == seat and event["data"]["cards"] == expected
        hand = response.get_json()["state"]["you"]["hand"]
        assert [hand[p]["card"] for p in positions] == expected


def test_stacked_deck_is_dealt_and_marked(client: FlaskClient) -> None:
    deck = list(reversed(canonical_deck()))  # KC on top
    created = create_golf(client, seats=TWO_HUMANS, decks=[deck])
    assert created["stacked"] is True
    view = client.get(f"/v1/games/{created['id']}").get_json()
    assert view["stacked"] is True
    assert view["table"]["discard_top"] == deck[12]
    assert all_events(client, created["id"])[0]["data"]["stacked"] is True
    token = tokens_of(created)[1]
    response = post_action(client, created["id"], token, {"type": "reveal", "positions": [0, 5]})
    (event,) = [e for e in response.get_json()["events"] if e["type"] == "CardsRevealed"]
    assert event["data"]["cards"] == [deck[deal_index(2, 0, 1, 0)], deck[deal_index(2, 0, 1, 5)]]


# ---------------------------------------------------------------- views


def test_seat_view_and_spectator_view(client: FlaskClient) -> None:
    created = create_golf(client, seats=[{"kind": "human", "name": "Ana"}, {"kind": "bot", "level": "random"}])
    game_id = created["id"]
    seat_view = client.get(f"/v1/games/{game_id}", headers=auth(tokens_of(created)[0]))
    assert seat_view.status_code == 200
    assert seat_view.headers["ETag"] == f'"{created["version"]}"'
    body = seat_view.get_json()
    assert set(body) >= VIEW_FIELDS
    assert body["id"] == game_id and body["game"] == "golf" and body["status"] == "active"
    assert body["version"] == created["version"] and body["round"] == 1 and body["phase"] == "setup"
    assert body["to_act"] == [0, 1]
    assert body["you"]["seat"] == 0 and len(body["you"]["hand"]) == 6
    assert body["actions"] == ["reveal"]
    assert body["result"] is None
    assert [(s["seat"], s["kind"], s["name"], s["score"]) for s in body["seats"]] == [
        (0, "human", "Ana", 0),
        (1, "bot", created["seats"][1]["name"], 0),
    ]
    assert all("token" not in s for s in body["seats"])
    check_no_face_down_cards(body)

    spectator = client.get(f"/v1/games/{game_id}").get_json()
    assert "you" not in spectator and spectator["actions"] == []
    assert {k: v for k, v in body.items() if k not in ("you", "actions")} == {
        k: v for k, v in spectator.items() if k != "actions"
    }
    check_no_face_down_cards(spectator)


def test_views_hide_face_down_and_drawn_cards(client: FlaskClient, app: flask.Flask) -> None:
    created = create_golf(client, seats=TWO_HUMANS, seed="hidden")
    game_id, tokens = created["id"], tokens_of(created)
    reveal_all(client, created)
    service = app.extensions["games"]
    # seat 1 is left of the dealer and starts (G-3); it draws from the stock (G-6)
    drawn = post_action(client, game_id, tokens[1], {"type": "draw", "from": "stock"}).get_json()
    deck = shuffle(canonical_deck(), "hidden", "round/1")
    assert drawn["state"]["you"]["drawn"] == deck[13]  # the top of the stock after the deal
    (event,) = drawn["events"]
    assert event["type"] == "CardDrawn" and event["actor"] == 1
    assert deck[13] not in json.dumps(event), "the drawn card is not in the public event"
    assert deck[13] not in json.dumps(all_events(client, game_id))
    snap = service.repository.load(game_id).snap
    views = {
        1: client.get(f"/v1/games/{game_id}", headers=auth(tokens[1])).get_json(),
        0: client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).get_json(),
        None: client.get(f"/v1/games/{game_id}").get_json(),
    }
    assert views[1]["you"]["drawn"] == deck[13]
    assert views[0]["you"]["drawn"] is None
    for viewer, view in views.items():
        assert view["table"]["drawn_by"] == 1
        check_view_hides(view, snap, viewer)
    for viewer in (0, None):
        assert deck[13] not in json.dumps(views[viewer])
    # the face-down cards of seat 0 are hidden from seat 0 itself (G-5)
    own_hidden = [deck[deal_index(2, 0, 0, p)] for p in range(2, 6)]
    assert not set(own_hidden) & strings_in(views[0])


# ---------------------------------------------------------------- actions


def test_action_returns_version_events_and_the_callers_view(client: FlaskClient, fake_redis: Any) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    before = all_events(client, game_id)
    response = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [1, 4], "expected_version": 2})
    assert response.status_code == 200 and response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"version", "events", "state"}
    assert body["version"] == created["version"] + len(body["events"])
    check_chain(body["events"], before[-1]["hash"], first_seq=created["version"] + 1)
    (event,) = body["events"]
    assert (event["type"], event["actor"], event["data"]["positions"]) == ("CardsRevealed", 0, [1, 4])
    assert body["state"] == client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).get_json()
    assert body["state"]["you"]["seat"] == 0 and body["state"]["actions"] == []
    assert [s["state"] for s in body["state"]["you"]["hand"]] == ["down", "up", "down", "down", "up", "down"]
    assert all_events(client, game_id) == before + body["events"]
    assert len(stream_entries(fake_redis, game_id)) == body["version"]


def test_if_match_header_works_like_expected_version(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    ok = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}, **{"If-Match": '"2"'})
    assert ok.status_code == 200 and ok.get_json()["version"] == 3
    weak = post_action(client, game_id, tokens[1], {"type": "reveal", "positions": [0, 1]}, **{"If-Match": 'W/"3"'})
    assert weak.status_code == 200 and weak.get_json()["version"] == 4


def test_stale_expected_version_is_409_and_without_it_the_current_state_decides(
    client: FlaskClient, fake_redis: Any
) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    seen = client.get(f"/v1/games/{game_id}", headers=auth(tokens[1])).get_json()["version"]
    assert post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}).status_code == 200
    before = stream_entries(fake_redis, game_id)

    stale = post_action(client, game_id, tokens[1], {"type": "reveal", "positions": [2, 3], "expected_version": seen})
    problem = assert_problem(stale, 409, "version_conflict")
    assert str(seen + 1) in problem["detail"]
    assert stale.headers.get("ETag") == f'"{seen + 1}"'
    assert_unchanged(client, fake_redis, game_id, before)

    stale_header = post_action(
        client, game_id, tokens[1], {"type": "reveal", "positions": [2, 3]}, **{"If-Match": f'"{seen}"'}
    )
    assert_problem(stale_header, 409, "version_conflict")
    assert_unchanged(client, fake_redis, game_id, before)

    fresh = post_action(client, game_id, tokens[1], {"type": "reveal", "positions": [2, 3]})
    assert fresh.status_code == 200
    state = fresh.get_json()["state"]
    assert fresh.get_json()["version"] == seen + 2
    assert state["phase"] == "play"  # both seats have revealed: the other's move was taken into account
    assert [s["state"] for s in state["table"]["grids"][0]["slots"]][:2] == ["up", "up"]


def test_a_concurrent_append_is_retried_without_expected_version(
    client: FlaskClient, app: flask.Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    service = app.extensions["games"]
    store = service.store
    real_append = store.append
    raced: list[int] = []

    def racing_append(game: str, expected_version: int, records: Any, idempotency: Any = None) -> Any:
        if not raced:  # seat 1 gets in between seat 0's decision and its append
            raced.append(expected_version)
            service.submit(game, 1, {"type": "reveal", "positions": [4, 5]})
        return real_append(game, expected_version, records, idempotency)

    monkeypatch.setattr(store, "append", racing_append)
    response = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]})
    assert response.status_code == 200, response.get_json()
    assert raced == [2]
    body = response.get_json()
    assert body["version"] == 4 and body["events"][0]["seq"] == 4
    events = all_events(client, game_id)
    assert [(e["type"], e["actor"]) for e in events[2:4]] == [("CardsRevealed", 1), ("CardsRevealed", 0)]
    check_chain(events, created["seed_commitment"])


def test_a_concurrent_append_with_expected_version_is_409(
    client: FlaskClient, app: flask.Flask, fake_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    service = app.extensions["games"]
    store = service.store
    real_append = store.append
    raced: list[int] = []

    def racing_append(game: str, expected_version: int, records: Any, idempotency: Any = None) -> Any:
        if not raced:
            raced.append(expected_version)
            service.submit(game, 1, {"type": "reveal", "positions": [4, 5]})
        return real_append(game, expected_version, records, idempotency)

    monkeypatch.setattr(store, "append", racing_append)
    response = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1], "expected_version": 2})
    assert_problem(response, 409, "version_conflict")
    assert [e["actor"] for e in all_events(client, game_id)[2:]] == [1]


# ---------------------------------------------------------------- idempotency


def test_idempotent_retry_returns_the_first_answer_and_appends_once(client: FlaskClient, fake_redis: Any) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    key = {"Idempotency-Key": "retry-1"}
    first = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}, **key)
    assert first.status_code == 200
    after_first = stream_entries(fake_redis, game_id)
    second = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}, **key)
    assert second.status_code == 200
    assert second.get_data() == first.get_data()
    assert stream_entries(fake_redis, game_id) == after_first

    # the game moves on; the retry still gets the first answer and appends nothing
    assert post_action(client, game_id, tokens[1], {"type": "reveal", "positions": [0, 1]}).status_code == 200
    moved = stream_entries(fake_redis, game_id)
    third = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}, **key)
    assert third.status_code == 200 and third.get_json() == first.get_json()
    assert stream_entries(fake_redis, game_id) == moved


def test_idempotency_key_reused_with_another_body_is_422(client: FlaskClient, fake_redis: Any) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    key = {"Idempotency-Key": "k-1"}
    assert post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [0, 1]}, **key).status_code == 200
    before = stream_entries(fake_redis, game_id)
    other = post_action(client, game_id, tokens[0], {"type": "reveal", "positions": [2, 3]}, **key)
    assert_problem(other, 422, "idempotency_key_reused")
    assert_unchanged(client, fake_redis, game_id, before)


def test_idempotency_keys_are_per_seat(client: FlaskClient, fake_redis: Any) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id, tokens = created["id"], tokens_of(created)
    key = {"Idempotency-Key": "same-key"}
    body = {"type": "reveal", "positions": [0, 1]}
    first = post_action(client, game_id, tokens[0], body, **key)
    second = post_action(client, game_id, tokens[1], body, **key)
    assert first.status_code == second.status_code == 200
    assert [e["actor"] for e in first.get_json()["events"]] == [0]
    assert [e["actor"] for e in second.get_json()["events"]] == [1]
    assert second.get_json()["version"] == first.get_json()["version"] + 1
    assert len(stream_entries(fake_redis, game_id)) == second.get_json()["version"]


def test_idempotency_key_is_per_game(client: FlaskClient) -> None:
    one = create_golf(client, seats=TWO_HUMANS)
    two = create_golf(client, seats=TWO_HUMANS)
    key = {"Idempotency-Key": "shared"}
    body = {"type": "reveal", "positions": [0, 1]}
    a = post_action(client, one["id"], tokens_of(one)[0], body, **key)
    b = post_action(client, two["id"], tokens_of(two)[0], body, **key)
    assert a.status_code == b.status_code == 200
    assert a.get_json()["events"][0]["hash"] != b.get_json()["events"][0]["hash"]
    assert len(all_events(client, two["id"])) == 3


# ---------------------------------------------------------------- events


def test_events_after_and_chain(client: FlaskClient) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    game_id = created["id"]
    reveal_all(client, created)
    events = all_events(client, game_id)
    assert [e["type"] for e in events[:2]] == ["GameCreated", "RoundStarted"]
    assert events[0]["actor"] == "system" and events[0]["prev_hash"] == created["seed_commitment"]
    check_chain(events, created["seed_commitment"])
    later = client.get(f"/v1/games/{game_id}/events?after=2").get_json()["events"]
    assert later == events[2:]
    assert client.get(f"/v1/games/{game_id}/events?after={len(events)}").get_json() == {"events": [], "next": None}
    assert client.get(f"/v1/games/{game_id}/events?after=999").get_json() == {"events": [], "next": None}


def test_events_wait_returns_empty_after_the_wait_when_nothing_is_new(client: FlaskClient) -> None:
    created = create_golf(client)
    started = time.monotonic()
    response = client.get(f"/v1/games/{created['id']}/events?after={created['version']}&wait=0.3")
    elapsed = time.monotonic() - started
    assert response.status_code == 200 and response.get_json() == {"events": [], "next": None}
    assert 0.25 <= elapsed < 3


def test_events_wait_returns_at_once_when_events_exist(client: FlaskClient) -> None:
    created = create_golf(client)
    started = time.monotonic()
    response = client.get(f"/v1/games/{created['id']}/events?after=0&wait=10")
    assert time.monotonic() - started < 2
    assert len(response.get_json()["events"]) == created["version"]


def test_events_wait_wakes_up_on_an_append(client: FlaskClient, app: flask.Flask) -> None:
    created = create_golf(client, seats=TWO_HUMANS)
    service = app.extensions["games"]

    def later() -> None:
        time.sleep(0.3)
        service.submit(created["id"], 0, {"type": "reveal", "positions": [0, 1]})

    mover = threading.Thread(target=later)
    mover.start()
    started = time.monotonic()
    response = client.get(f"/v1/games/{created['id']}/events?after={created['version']}&wait=10")
    elapsed = time.monotonic() - started
    mover.join()
    events = response.get_json()["events"]
    assert [(e["seq"], e["type"], e["actor"]) for e in events] == [(created["version"] + 1, "CardsRevealed", 0)]
    assert 0.2 <= elapsed < 5


# ---------------------------------------------------------------- whole games


@pytest.mark.parametrize(
    ("seats", "extra"),
    [
        pytest.param([{"kind": "human", "name": "Ana"}, {"kind": "bot"}], {"seed": "whole-game-seed"}, id="greedy-9"),
        pytest.param(
            [{"kind": "bot", "level": "random"}, {"kind": "human"}],
            {"options": {"layout": "3x3", "rounds": 3}},
            id="random-3x3-server-seed",
        ),
        pytest.param(
            [{"kind": "human"}, {"kind": "bot", "level": "random"}, {"kind": "human"}, {"kind": "bot"}],
            {"options": {"rounds": 2, "penalty": 7}, "seed": "four at the table"},
            id="four-seats",
        ),
    ],
)
def test_whole_game_through_the_api(
    client: FlaskClient,
    app: flask.Flask,
    dispatcher: RecordingDispatcher,
    fake_redis: Any,
    seats: list[dict[str, Any]],
    extra: dict[str, Any],
) -> None:
    transcript = Transcript()
    response = client.post("/v1/games", json={"game": "golf", "seats": seats, **extra})
    assert response.status_code == 201
    created = transcript.add(response)
    game_id = created["id"]
    sent = play_to_end(client, app, dispatcher, created, transcript)
    assert sent.get("reveal", 0) >= 1 and {"flip", "draw", "take_discard"} <= set(sent), sent
    assert {"swap", "discard"} & set(sent), sent

    view = transcript.add(client.get(f"/v1/games/{game_id}"))
    rounds = view["table"]["rounds"]
    assert rounds == extra.get("options", {}).get("rounds", 9)
    assert view["status"] == "finished" and view["to_act"] == [] and view["actions"] == []
    result = view["result"]
    assert set(result) >= {"totals", "winners"}
    totals = result["totals"]
    assert len(totals) == len(seats)
    assert result["winners"] == [seat for seat, total in enumerate(totals) if total == min(totals)]
    assert [seat["score"] for seat in view["seats"]] == totals
    assert len(view["table"]["round_scores"]) == rounds
    assert [sum(column) for column in zip(*view["table"]["round_scores"], strict=True)] == totals
    for grid in view["table"]["grids"]:
        assert all(slot["state"] != "down" for slot in grid["slots"])
    for seat, token in tokens_of(created).items():
        own = transcript.add(client.get(f"/v1/games/{game_id}", headers=auth(token)))
        assert own["status"] == "finished" and own["actions"] == [] and own["you"]["seat"] == seat

    events = transcript.add(client.get(f"/v1/games/{game_id}/events"))["events"]
    check_chain(events, created["seed_commitment"])
    types = [e["type"] for e in events]
    assert types[0] == "GameCreated" and types[-2:] == ["GameEnded", "SeedRevealed"]
    assert types.count("SeedRevealed") == 1 and types.count("RoundStarted") == rounds
    assert types.count("RoundScored") == rounds
    assert events[-2]["data"]["totals"] == totals and events[-2]["data"]["winners"] == result["winners"]
    revealed = events[-1]
    assert revealed["actor"] == "system"
    seed, nonce = revealed["data"]["seed"], revealed["data"]["nonce"]
    assert sha256_hex(f"{seed}\x00{nonce}") == created["seed_commitment"]  # C-4
    assert HEX64.match(nonce) and all(nonce not in json.dumps(e) for e in events[:-1])
    if "seed" in extra:
        assert seed == extra["seed"] and created["seed_source"] == "creator"
    else:
        assert created["seed_source"] == "server" and len(seed) == 64
    assert all(seed not in json.dumps(e) for e in events[:-1])
    # the seed was in no response before the one that carried SeedRevealed
    for text in transcript.texts:
        if seed in text:
            body = json.loads(text)
            shown = body.get("events", [])
            assert any(e["type"] == "SeedRevealed" for e in shown), f"seed leaked before the end: {text[:300]}"
    # the end is final
    before = stream_entries(fake_redis, game_id)
    for token in tokens_of(created).values():
        refused = post_action(client, game_id, token, {"type": "flip", "position": 0})
        assert_problem(refused, 422, "game_finished")
    assert_unchanged(client, fake_redis, game_id, before)
    assert dispatcher.drain() == []


def test_bots_only_game_runs_by_itself(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create_golf(client, seats=[{"kind": "bot", "level": "random"}, {"kind": "bot"}], options={"rounds": 1})
    assert all("token" not in seat for seat in created["seats"])
    outcomes = dispatcher.drain()
    assert "played" in outcomes
    view = client.get(f"/v1/games/{created['id']}").get_json()
    assert view["status"] == "finished"
    events = all_events(client, created["id"])
    check_chain(events, created["seed_commitment"])
    assert events[-1]["type"] == "SeedRevealed"


def test_every_event_record_has_the_public_shape(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create_golf(client, seats=[{"kind": "bot"}, {"kind": "bot", "level": "random"}], options={"rounds": 1})
    dispatcher.drain()
    events = all_events(client, created["id"])
    for record in events:
        check_record_shape(record)
        if record["type"] not in ("GameCreated", "RoundStarted", "RoundScored", "GameEnded", "SeedRevealed"):
            assert isinstance(record["actor"], int), record
    assert {e["actor"] for e in events} >= {"system", 0, 1}
