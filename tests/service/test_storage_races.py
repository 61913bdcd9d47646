"""Races of packing, export and import (issue 28, items 2, 3, 4, 5 and 10), on fakeredis.

Each race is forced: a client hook runs the other side at the exact point between two Redis commands
where it once did harm, so the interleaving happens on every run."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.archive import Archive
from service.game_index import FINISHED_KEY
from service.store import CompactionError, EventStore, RestoreRefused
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.lifecycle_helpers import create, play_to_end
from tests.service.sse import SseReader, events_of

TWO_BOTS = [{"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]
ZLIB_BEST = b"\x78\xda"  # how a packed value (zlib, level 9) begins


class HookedRedis(fakeredis.FakeRedis):
    """fakeredis that runs a one-shot hook before the first command its condition picks."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.hooks: list[tuple[Callable[[tuple[Any, ...]], bool], Callable[[], None]]] = []

    def before(self, condition: Callable[[tuple[Any, ...]], bool], action: Callable[[], None]) -> None:
        """Run `action` once, just before the first command for which `condition(command)` holds."""
        self.hooks.append((condition, action))

    def execute_command(self, *args: Any, **options: Any) -> Any:
        for hook in self.hooks:
            if hook[0](args):
                self.hooks.remove(hook)
                hook[1]()
                break
        return super().execute_command(*args, **options)


@pytest.fixture
def fake_redis() -> HookedRedis:
    return HookedRedis(decode_responses=True)


@pytest.fixture
def app(fake_redis: HookedRedis, dispatcher: RecordingDispatcher) -> Iterator[flask.Flask]:
    """The app with short heartbeats (a stream that does not end shows as heartbeats, not as a hang)."""
    settings = {"TESTING": True, "STREAM_HEARTBEAT_SECONDS": 0.02}
    application = create_app(settings, redis_client=fake_redis, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    yield application


def store_of(app: flask.Flask) -> EventStore:
    store: EventStore = app.extensions["games"].store
    return store


def finished_game(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher, with_a_person: bool = False
) -> str:
    """A finished Golf game of two bots; or of a person and a bot, with two disputes of the person's."""
    if not with_a_person:
        created = create_golf(client, seats=TWO_BOTS, options={"rounds": 1})
        dispatcher.drain()
    else:
        created = create(client, "golf")
        for seq in (1, 2):
            dispute = {"seq": seq, "reason": "odd"}
            headers = auth(created["seats"][0]["token"])
            posted = client.post(f"/v1/games/{created['id']}/disputes", json=dispute, headers=headers)
            assert posted.status_code == 201, posted.get_json()
        play_to_end(client, app, dispatcher, created)
    game_id: str = created["id"]
    assert client.get(f"/v1/games/{game_id}").get_json()["status"] == "finished"
    return game_id


def events(client: FlaskClient, game_id: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = client.get(f"/v1/games/{game_id}/events").get_json()["events"]
    return listed


def game_keys(redis_client: fakeredis.FakeRedis, game_id: str) -> list[str]:
    return sorted(str(key) for key in redis_client.keys(f"game:{{{game_id}}}:*"))


def read_file(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return document


def write_file(path: Path, document: dict[str, Any]) -> None:
    path.write_bytes(gzip.compress(json.dumps(document).encode("utf-8")))


# ---------------------------------------------------------------- item 2: export racing packing


def test_packing_right_after_the_exports_first_read_loses_no_event(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    """The game is packed (stream and meta dropped) just after export's first read of it: the export
    must not write a file without the events and then delete the game."""
    game_id = finished_game(client, app, dispatcher)
    before = events(client, game_id)
    store, archive = store_of(app), Archive(app.extensions["games"])
    reads = store.stored_game
    reads(game_id)  # Redis knows the store's scripts from here on
    packed: list[str] = []

    def read_then_packed(wanted: str) -> Any:
        fake_redis.before(counting_to(2), lambda: packed.append(store.compact(wanted)))  # right after the first read
        return reads(wanted)

    store.stored_game = read_then_packed  # type: ignore[method-assign]
    first = archive.export_game(game_id, tmp_path)
    store.stored_game = reads  # type: ignore[method-assign]
    assert packed == ["packed"], "the game was not packed during the export"

    path = tmp_path / f"{game_id}.json.gz"
    if first == "exported":  # then the file must hold every event, in the stored entries too
        assert events_in_file(path) == before
    else:
        assert first == "kept: it changed while it was exported (export again)"
        assert events(client, game_id) == before
        assert archive.export_game(game_id, tmp_path) == "exported"
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(path) == (game_id, "imported")
    assert events(client, game_id) == before


def counting_to(number: int) -> Callable[[tuple[Any, ...]], bool]:
    """A hook condition that holds for the `number`-th command from now on."""
    seen = [0]

    def condition(command: tuple[Any, ...]) -> bool:
        seen[0] += 1
        return seen[0] == number

    return condition


def events_in_file(path: Path) -> list[dict[str, Any]]:
    """The events a file would restore: its private entries if it has them, else its record's."""
    document = read_file(path)
    private = document["private"]
    if "entries" in private:
        return [json.loads(text) for _, text in private["entries"]]
    listed: list[dict[str, Any]] = document["events"]
    return listed


# ---------------------------------------------------------------- item 3: packing racing export


def carries_a_packed_value(command: tuple[Any, ...]) -> bool:
    return any(isinstance(arg, bytes) and arg.startswith(ZLIB_BEST) for arg in command)


def test_a_game_exported_while_it_is_packed_stays_deleted(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    """The export (file written, game deleted) lands between packing's read and its write of the
    packed value: the write must not bring the deleted game back."""
    game_id = finished_game(client, app, dispatcher, with_a_person=True)
    archive = Archive(app.extensions["games"])
    exported: list[str] = []
    fake_redis.before(carries_a_packed_value, lambda: exported.append(archive.export_game(game_id, tmp_path)))

    with pytest.raises(CompactionError):
        store_of(app).compact(game_id)

    assert exported == ["exported"]
    assert game_keys(fake_redis, game_id) == []
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(tmp_path / f"{game_id}.json.gz") == (game_id, "imported")  # the file is whole


# ---------------------------------------------------------------- item 5: the live stream of a packed game


def test_the_live_stream_of_a_packed_game_ends_after_its_last_event(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    game_id = finished_game(client, app, dispatcher)
    before = events(client, game_id)
    assert store_of(app).compact(game_id) == "packed"

    reader = SseReader(client.get(f"/v1/games/{game_id}/stream?after=0", buffered=False))
    messages = []
    for _ in range(len(before) + 3):  # every event, then the end; heartbeats instead would be a stream that never ends
        message = reader.next()
        if message is None:
            break
        messages.append(message)
    assert events_of(messages) == before
    assert reader.next() is None, "the stream did not end after the game's last event"


def test_a_packed_game_gives_its_last_seq(
    client: FlaskClient, app: flask.Flask, dispatcher: RecordingDispatcher
) -> None:
    game_id = finished_game(client, app, dispatcher)
    last = events(client, game_id)[-1]["seq"]
    store = store_of(app)
    assert store.last_seq(game_id) == last
    assert store.compact(game_id) == "packed"
    assert store.last_seq(game_id) == last
    assert store.last_seq("no-such-game") == 0


# ---------------------------------------------------------------- item 10: export paging


def test_export_pages_past_games_that_were_missing(
    client: FlaskClient,
    app: flask.Flask,
    fake_redis: HookedRedis,
    dispatcher: RecordingDispatcher,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two finished games the index lists but the store no longer holds come first, in a page of two:
    removing them must not push the next page past the stored games."""
    monkeypatch.setattr("service.archive.BATCH", 2)
    games = [finished_game(client, app, dispatcher) for _ in range(3)]
    fake_redis.zadd(FINISHED_KEY, {"gone-1": 1, "gone-2": 2})  # the oldest
    archive = Archive(app.extensions["games"])

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
    assert Archive(app.extensions["games"]).export_game(game_id, tmp_path) == "exported"
    assert len(read_file(tmp_path / f"{game_id}.json.gz")["private"]["disputes"]) == 2
    return tmp_path / f"{game_id}.json.gz"


@pytest.mark.parametrize("tampering", [*PRIVATE_TAMPERINGS, *DOCUMENT_TAMPERINGS])
def test_import_refuses_a_private_part_that_does_not_fit_the_record_and_writes_nothing(
    client: FlaskClient, app: flask.Flask, fake_redis: HookedRedis, exported_file: Path, tampering: str
) -> None:
    document = read_file(exported_file)
    game_id = document["id"]
    if tampering in PRIVATE_TAMPERINGS:
        PRIVATE_TAMPERINGS[tampering](document["private"])
    else:
        DOCUMENT_TAMPERINGS[tampering](document)
    tampered = exported_file.with_name("tampered.json.gz")
    write_file(tampered, document)
    archive = Archive(app.extensions["games"])

    _, outcome = archive.import_file(tampered)

    assert outcome.startswith("refused: "), outcome
    assert game_keys(fake_redis, game_id) == []
    assert fake_redis.zscore(FINISHED_KEY, game_id) is None
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(exported_file) == (game_id, "imported")  # the file as exported still imports


def test_restore_writes_nothing_when_the_disputes_are_out_of_order(app: flask.Flask, fake_redis: HookedRedis) -> None:
    """The restore script checks every dispute before its first write: all or nothing."""
    meta = {"game": "golf"}
    entries = (("1-0", json.dumps({"seq": 1})),)
    disputes = [("2-0", {"s": "0", "d": "{}"}), ("1-0", {"s": "0", "d": "{}"})]
    with pytest.raises(RestoreRefused):
        store_of(app).restore("g1", meta, entries, disputes)
    assert game_keys(fake_redis, "g1") == []
    assert store_of(app).restore("g1", meta, entries, disputes[1:]) is True
    assert game_keys(fake_redis, "g1") == ["game:{g1}:disputes", "game:{g1}:packed"]
