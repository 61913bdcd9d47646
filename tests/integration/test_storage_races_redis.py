"""The forced races of packing, export and import (tests/service/storage_races.py) on a real
redis-server: its Lua, its script cache and its replies, not fakeredis's."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import flask
import pytest
from flask.testing import FlaskClient

from service.app import create_app
from tests.conftest import RecordingDispatcher
from tests.integration.conftest import start_redis, stop
from tests.service.storage_races import (
    HookedRedis,
    exported_while_it_is_packed,
    packing_right_after_the_exports_first_read,
    restore_with_disputes_out_of_order,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def races_redis_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A redis-server of this module's own: its port."""
    process, port = start_redis(tmp_path_factory.mktemp("races-redis"))
    yield port
    stop(process)


@pytest.fixture
def hooked(races_redis_port: int) -> Iterator[HookedRedis]:
    client = HookedRedis(host="127.0.0.1", port=races_redis_port, decode_responses=True)
    client.script_flush()  # every test starts with Redis knowing none of the store's scripts
    yield client
    client.close()


@pytest.fixture
def app(hooked: HookedRedis, dispatcher: RecordingDispatcher) -> flask.Flask:
    application = create_app({"TESTING": True}, redis_client=hooked, dispatcher=dispatcher)
    dispatcher.service = application.extensions["games"]
    return application


def test_packing_right_after_the_exports_first_read_loses_no_event(
    client: FlaskClient, app: flask.Flask, hooked: HookedRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    packing_right_after_the_exports_first_read(client, app, hooked, dispatcher, tmp_path)


def test_a_game_exported_while_it_is_packed_stays_deleted(
    client: FlaskClient, app: flask.Flask, hooked: HookedRedis, dispatcher: RecordingDispatcher, tmp_path: Path
) -> None:
    exported_while_it_is_packed(client, app, hooked, dispatcher, tmp_path)


def test_restore_writes_nothing_when_the_disputes_are_out_of_order(app: flask.Flask, hooked: HookedRedis) -> None:
    restore_with_disputes_out_of_order(app, hooked, secrets.token_urlsafe(9))
