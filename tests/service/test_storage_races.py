"""Races of packing, export and import (issue 28, items 2, 3, 4, 5 and 10), on fakeredis.

Each race is forced by a client hook (tests/service/storage_races.py), never left to chance;
tests/integration/test_storage_races_redis.py runs the races of items 2, 3 and 4 on a real redis-server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.storage.game_index import FINISHED_KEY
from service.upkeep.archive import Archive
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.lifecycle_helpers import create, play_to_end
from tests.service.sse import SseReader, events_of
from tests.service.storage_races import (
    TWO_BOTS,
    Condition,
    HookedFakeRedis,
    events,
    exported_while_it_is_packed,
    finished_game,
    game_keys,
    packing_right_after_the_exports_first_read,
    read_file,
    restore_with_disputes_out_of_order,
    store_of,
    write_file,
)


@pytest.fixture
def fake_redis() -> HookedFakeRedis:
    return HookedFakeRedis(decode_responses=True)


@pytest.fixture
def app(fake_redis: HookedFakeRedis, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    """The app with short heartbeats (a stream that does not end shows as heartbeats, not as a hang)."""
    settings = {"TESTING": True, "STREAM_HEARTBEAT_SECONDS": 0.02}
    application = create_app(settings, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


def test_packing_right_after_the_exports_first_read_loses_no_event(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedFakeRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    packing_right_after_the_exports_first_read(client, app, fake_redis, dispatcher, tmp_path)


def test_a_game_exported_while_it_is_packed_stays_deleted(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedFakeRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    exported_while_it_is_packed(client, app, fake_redis, dispatcher, tmp_path)


# ---------------------------------------------------------------- item 5: the live stream of a packed game


def test_the_live_stream_of_a_packed_game_ends_after_its_last_event(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    game_id = finished_game(client, app, dispatcher)
    before = events(client, game_id)
    assert store_of(app).packing.compact(game_id) == "packed"

    reader = SseReader(client.get(f"/v1/games/{game_id}/stream?after=0", buffered=False))
    messages = []
    for _ in range(len(before) + 3):  # every event, then the end; heartbeats instead would be a stream that never ends
        message = reader.next()
        if message is None:
            break
        messages.append(message)
    assert events_of(messages) == before
    assert reader.next() is None, "the stream did not end after the game's last event"


def test_a_packed_game_gives_its_last_seq_and_its_last_record(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    game_id = finished_game(client, app, dispatcher)
    store = store_of(app)
    last = store.events.read(game_id)[-1]
    assert last["type"] == "SeedRevealed"
    assert store.events.last_seq(game_id) == last["seq"] and store.events.last_record(game_id) == last
    assert store.packing.compact(game_id) == "packed"
    assert store.events.last_seq(game_id) == last["seq"] and store.events.last_record(game_id) == last
    assert store.events.last_seq("no-such-game") == 0 and store.events.last_record("no-such-game") is None


# ---------------------------------------------------------------- item 10: export paging


def test_export_pages_past_games_that_were_missing(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: HookedFakeRedis,
    dispatcher: RecordingDispatcher,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two finished games the index lists but the store no longer holds come first, in a page of two:
    removing them must not push the next page past the stored games."""
    monkeypatch.setattr("service.upkeep.archive.BATCH", 2)
    games = [finished_game(client, app, dispatcher) for _ in range(3)]
    fake_redis.zadd(FINISHED_KEY, {"gone-1": 1, "gone-2": 2})  # the oldest
    archive = Archive(app.extensions["history"], app.extensions["storage"])

    outcomes = archive.export(datetime.now(UTC) + timedelta(days=1), tmp_path)

    assert outcomes == {"gone-1": "missing", "gone-2": "missing", **{game_id: "exported" for game_id in games}}
    assert fake_redis.zcard(FINISHED_KEY) == 0


# ---------------------------------------------------------------- item 4: import checks what it stores


def tamper_meta(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(private: dict[str, Any]) -> None:
        private["meta"][field] = value

    return change


def seed_of_another_game(private: dict[str, Any]) -> None:
    private["meta"]["seed"] = private["meta"]["seed"] + "x"


def options_changed(private: dict[str, Any]) -> None:
    options = json.loads(private["meta"]["options"])
    private["meta"]["options"] = json.dumps({**options, "rounds": options["rounds"] + 1})


def entries_of_other_events(document: dict[str, Any]) -> None:
    events = [dict(event) for event in document["events"]]
    events[-1] = {**events[-1], "at": "2000-01-01T00:00:00Z"}
    document["private"]["entries"] = [[f"{seq}-0", json.dumps(event)] for seq, event in enumerate(events, start=1)]


def entries_one_short(document: dict[str, Any]) -> None:
    events = document["events"][:-1]
    document["private"]["entries"] = [[f"{seq}-0", json.dumps(event)] for seq, event in enumerate(events, start=1)]


def disputes_reversed(private: dict[str, Any]) -> None:
    private["disputes"].reverse()


def dispute_of_no_seat(private: dict[str, Any]) -> None:
    private["disputes"][0][1]["s"] = "7"


def dispute_id_of_another_form(private: dict[str, Any]) -> None:
    private["disputes"][0][0] = "1-5"


PRIVATE_TAMPERINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "seed": seed_of_another_game,
    "nonce": tamper_meta("nonce", "0" * 32),
    "options": options_changed,
    "game": tamper_meta("game", "switch"),
    "created_at": tamper_meta("created_at", "2000-01-01T00:00:00Z"),
    "seats": tamper_meta("seats", json.dumps([{"seat": 0, "kind": "bot", "name": "X"}])),
    "seats not a text": tamper_meta("seats", [{"seat": 0, "kind": "human", "name": "Ana"}]),
    "tokens": tamper_meta("tokens", json.dumps(["not a digest", None])),
    "an unknown field": tamper_meta("admin", "yes"),
    "disputes out of order": disputes_reversed,
    "a dispute of no seat": dispute_of_no_seat,
    "a dispute id of another form": dispute_id_of_another_form,
}
DOCUMENT_TAMPERINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "entries of other events": entries_of_other_events,
    "entries one short": entries_one_short,
}


@pytest.fixture
def exported_file(client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, tmp_path: Path) -> Path:
    """The archive file of a finished game of a person (two disputes) and a bot; the game is gone from Redis."""
    game_id = finished_game(client, app, dispatcher, with_a_person=True)
    assert Archive(app.extensions["history"], app.extensions["storage"]).export_game(game_id, tmp_path) == "exported"
    assert len(read_file(tmp_path / f"{game_id}.json.gz")["private"]["disputes"]) == 2
    return tmp_path / f"{game_id}.json.gz"


@pytest.mark.parametrize("tampering", [*PRIVATE_TAMPERINGS, *DOCUMENT_TAMPERINGS])
def test_import_refuses_a_private_part_that_does_not_fit_the_record_and_writes_nothing(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedFakeRedis, exported_file: Path, tampering: str
) -> None:
    document = read_file(exported_file)
    game_id = document["id"]
    if tampering in PRIVATE_TAMPERINGS:
        PRIVATE_TAMPERINGS[tampering](document["private"])
    else:
        DOCUMENT_TAMPERINGS[tampering](document)
    tampered = exported_file.with_name("tampered.json.gz")
    write_file(tampered, document)
    archive = Archive(app.extensions["history"], app.extensions["storage"])

    _, outcome = archive.import_file(tampered)

    assert outcome.startswith("refused: "), outcome
    assert game_keys(fake_redis, game_id) == []
    assert fake_redis.zscore(FINISHED_KEY, game_id) is None
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(exported_file) == (game_id, "imported")  # the file as exported still imports


def test_restore_writes_nothing_when_the_disputes_are_out_of_order(
    app: flask.Flask, fake_redis: HookedFakeRedis
) -> None:
    restore_with_disputes_out_of_order(app, fake_redis, "g1")


def test_export_pages_past_a_kept_game_the_sweep_takes_out_of_the_index(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: HookedFakeRedis,
    dispatcher: RecordingDispatcher,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A running game listed as finished (its final append lost) is kept by the export; the sweep
    takes it out of the index right after: the next page must not start past a stored game."""
    monkeypatch.setattr("service.upkeep.archive.BATCH", 2)
    running = create_golf(client, seats=[{"kind": "human", "name": "Ana"}, TWO_BOTS[0]])["id"]
    fake_redis.zadd(FINISHED_KEY, {running: 1})  # the oldest
    games = [finished_game(client, app, dispatcher) for _ in range(3)]
    archive = Archive(app.extensions["history"], app.extensions["storage"])
    export_game = archive.export_game

    def export_then_sweep(game_id: str, folder: Path) -> str:
        outcome = export_game(game_id, folder)
        if game_id == running:
            app.extensions["games"].index.not_finished(running)  # what the lifecycle sweep does with it
        return outcome

    archive.export_game = export_then_sweep  # type: ignore[method-assign]
    outcomes = archive.export(datetime.now(UTC) + timedelta(days=1), tmp_path)

    assert outcomes == {running: "kept: still running", **{game_id: "exported" for game_id in games}}


# ---------------------------------------------------------------- a dispute filed while the export deletes its game


def is_a_script_on(key: str) -> Condition:
    """A Lua script call whose first key is `key`."""
    return lambda command: command[0] in ("EVALSHA", "EVAL") and len(command) > 3 and command[3] == key


def test_a_dispute_filed_while_the_export_deletes_its_game_is_refused_and_leaves_no_key(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedFakeRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    """The dispute is decided on the game as read; the export writes its file and deletes the game just before
    the dispute is stored. Before, the dispute was answered 201 but lay in no file, and its key stayed behind for
    good (so the file could never be imported again: "exists"). Now it is refused as a dispute of no game."""
    created = create(client, "golf")
    play_to_end(client, app, dispatcher, created)
    game_id, token = created["id"], created["seats"][0]["token"]
    archive = Archive(app.extensions["history"], app.extensions["storage"])
    exported: list[str] = []
    disputes_key = f"game:{{{game_id}}}:disputes"
    fake_redis.before(is_a_script_on(disputes_key), lambda: exported.append(archive.export_game(game_id, tmp_path)))

    answer = client.post(f"/v1/games/{game_id}/disputes", json={"seq": 3, "reason": "late"}, headers=auth(token))

    assert exported == ["exported"]
    assert answer.status_code == 404, answer.get_json()
    assert answer.get_json()["code"] == "game_not_found"
    assert game_keys(fake_redis, game_id) == []
    assert archive.import_file(tmp_path / f"{game_id}.json.gz") == (game_id, "imported")
    assert read_file(tmp_path / f"{game_id}.json.gz")["private"]["disputes"] == []


def test_a_game_stored_with_a_name_that_is_no_text_is_kept_and_the_export_goes_on(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedFakeRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    """A seat name holding a lone surrogate was accepted at creation before requests were checked for it
    (issue 35, item 6); every export run then crashed at that game, so no later game was ever exported. Such
    a game is kept, and the games after it are exported."""
    seats = [{"kind": "bot", "level": "random", "name": "bot \ud800"}, {"kind": "bot", "level": "random"}]
    first = app.extensions["games"].create_game("golf", seats, {"rounds": 1})  # as the API took it before
    dispatcher.drain()
    games = [first["id"], finished_game(client, app, dispatcher)]

    outcomes = Archive(app.extensions["history"], app.extensions["storage"]).export(
        datetime.now(UTC) + timedelta(days=1), tmp_path
    )

    assert outcomes[games[1]] == "exported"
    assert outcomes[games[0]].startswith("kept: it could not be exported (UnicodeEncodeError")
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{games[1]}.json.gz"]
