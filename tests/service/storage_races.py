"""Forced races of packing, export and import (issue 28), shared by the fakeredis tests
(tests/service/test_storage_races.py) and the real-Redis ones (tests/integration/test_storage_races_redis.py).

A Redis client with command hooks runs the other side of a race at the exact point between two
commands where it once did harm, so the interleaving happens on every run."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest
import redis
from flask.testing import FlaskClient

from service.storage.archive_store import StoredGame
from service.storage.outcomes import CompactionError, RestoreRefused
from service.storage.redis_store import RedisStore
from service.upkeep.archive import Archive
from tests.conftest import RecordingDispatcher, auth, create_golf
from tests.service.helpers import all_events
from tests.service.lifecycle_helpers import create, play_to_end

TWO_BOTS = [{"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]
ZLIB_BEST = b"\x78\xda"  # how a packed value (zlib, level 9) begins
Condition = Callable[[tuple[Any, ...]], bool]


class CommandHooks:
    """A Redis client mixin: one-shot hooks, each run just before the first command its condition picks."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.hooks: list[tuple[Condition, Callable[[], None]]] = []

    def before(self, condition: Condition, action: Callable[[], None]) -> None:
        """Run `action` once, just before the first command (its arguments) for which `condition` holds."""
        self.hooks.append((condition, action))

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """The command, after the first hook whose condition it meets (the hook is gone before it runs)."""
        for hook in self.hooks:
            if hook[0](args):
                self.hooks.remove(hook)
                hook[1]()
                break
        return super().execute_command(*args, **options)  # type: ignore[misc]


class HookedFakeRedis(CommandHooks, fakeredis.FakeRedis):
    """fakeredis with command hooks."""


class HookedRedis(CommandHooks, redis.Redis):
    """redis-py's client with command hooks."""


Hooked = HookedFakeRedis | HookedRedis


def counting_to(number: int) -> Condition:
    """A hook condition that holds for the `number`-th command from now on."""
    seen = [0]

    def condition(command: tuple[Any, ...]) -> bool:
        seen[0] += 1
        return seen[0] == number

    return condition


def carries_a_packed_value(command: tuple[Any, ...]) -> bool:
    """A hook condition: the command sends a packed value to Redis."""
    return any(isinstance(arg, bytes) and arg.startswith(ZLIB_BEST) for arg in command)


def store_of(app: flask.Flask) -> RedisStore:
    store: RedisStore = app.extensions["storage"]
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
    listed: list[dict[str, Any]] = all_events(client, game_id)
    return listed


def game_keys(redis_client: Any, game_id: str) -> list[str]:
    return sorted(str(key) for key in redis_client.keys(f"game:{{{game_id}}}:*"))


def read_file(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return document


def write_file(path: Path, document: dict[str, Any]) -> None:
    path.write_bytes(gzip.compress(json.dumps(document).encode("utf-8")))


def events_in_file(path: Path) -> list[dict[str, Any]]:
    """The events a file would restore: its private entries if it has them, else its record's."""
    document = read_file(path)
    private = document["private"]
    if "entries" in private:
        return [json.loads(text) for _, text in private["entries"]]
    listed: list[dict[str, Any]] = document["events"]
    return listed


def packing_right_after_the_exports_first_read(
    client: FlaskClient, app: flask.Flask, hooked: Hooked, dispatcher: RecordingDispatcher, folder: Path
) -> None:
    """Item 2: the game is packed (stream and meta dropped) just after export's first read of it; the
    export must not write a file without the events and then delete the game."""
    game_id = finished_game(client, app, dispatcher)
    before = events(client, game_id)
    store, archive = store_of(app), Archive(app.extensions["history"], app.extensions["storage"])
    reads = store.archive.stored_game
    reads(game_id)  # Redis knows the store's scripts from here on
    packed: list[str] = []

    def read_then_packed(wanted: str) -> StoredGame | None:
        hooked.before(
            counting_to(2), lambda: packed.append(store.packing.compact(wanted))
        )  # right after the first read
        return reads(wanted)

    store.archive.stored_game = read_then_packed  # type: ignore[method-assign,assignment]
    try:
        first = archive.export_game(game_id, folder)
    finally:
        store.archive.stored_game = reads  # type: ignore[method-assign]
    assert packed == ["packed"], "the game was not packed during the export"

    path = folder / f"{game_id}.json.gz"
    if first == "exported":  # then the file must hold every event, in the stored entries too
        assert events_in_file(path) == before
    else:
        assert first == "kept: it changed while it was exported (export again)"
        assert events(client, game_id) == before
        assert archive.export_game(game_id, folder) == "exported"
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(path) == (game_id, "imported")
    assert events(client, game_id) == before


def exported_while_it_is_packed(
    client: FlaskClient, app: flask.Flask, hooked: Hooked, dispatcher: RecordingDispatcher, folder: Path
) -> None:
    """Item 3: the export (file written, game deleted) lands between packing's read and its write of
    the packed value; the write must not bring the deleted game back."""
    game_id = finished_game(client, app, dispatcher, with_a_person=True)
    archive = Archive(app.extensions["history"], app.extensions["storage"])
    exported: list[str] = []
    hooked.before(carries_a_packed_value, lambda: exported.append(archive.export_game(game_id, folder)))

    with pytest.raises(CompactionError):
        store_of(app).packing.compact(game_id)

    assert exported == ["exported"]
    assert game_keys(hooked, game_id) == []
    assert client.get(f"/v1/games/{game_id}").status_code == 404
    assert archive.import_file(folder / f"{game_id}.json.gz") == (game_id, "imported")  # the file is whole


def restore_with_disputes_out_of_order(app: flask.Flask, hooked: Hooked, game_id: str) -> None:
    """Item 4: the restore script checks every dispute before its first write: all or nothing."""
    meta = {"game": "golf"}
    entries = (("1-0", json.dumps({"seq": 1})),)
    disputes = [("2-0", {"s": "0", "d": "{}"}), ("1-0", {"s": "0", "d": "{}"})]
    with pytest.raises(RestoreRefused):
        store_of(app).archive.restore(game_id, meta, entries, disputes)
    assert game_keys(hooked, game_id) == []
    assert store_of(app).archive.restore(game_id, meta, entries, disputes[1:]) is True
    assert game_keys(hooked, game_id) == [f"game:{{{game_id}}}:disputes", f"game:{{{game_id}}}:packed"]
