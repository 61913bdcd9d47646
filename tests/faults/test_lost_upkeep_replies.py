"""Issue 28: the last step of packing, export and import is sent once; when its reply is lost (it ran in
Redis, the connection was cut before the answer came) or it was cut before Redis (it did not run), the
store reads back what happened, so the step's outcome, and the index update after it, are right.

The fault proxy (tests/faults/redis_proxy.py) forces the interleaving. Before the fix, redis-py resent
each script on its own: the drop of a packed game's stream met `changed` (compaction failed, the game
stayed in the packing queue), the delete of an exported game met `changed` (reported kept, left in the
index though gone), the restore of an imported game met `exists` (reported kept, left out of the index).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis

from service.storage.archive_store import _DELETE, _RESTORE
from service.storage.game_index import FINISHED_KEY, UNPACKED_KEY
from service.storage.packing import _DROP_UNPACKED
from service.storage.scripts import _READ_GAME
from service.upkeep.archive import Archive
from service.upkeep.lifecycle import Lifecycle, LifecycleSettings
from tests.faults.conftest import Proxied
from tests.faults.redis_proxy import Fault, FaultPlan, RedisProxy, Rule
from tests.service.storage_races import finished_game, read_file

pytestmark = pytest.mark.integration

FAULTS = [Fault.REPLY_LOST, Fault.NOT_SENT]


def archive_of(proxied: Proxied) -> Archive:
    return Archive(proxied.app.extensions["history"], proxied.app.extensions["storage"])


def lifecycle_of(proxied: Proxied) -> Lifecycle:
    return Lifecycle(
        proxied.app.extensions["games"], proxied.app.extensions["storage"], LifecycleSettings(compact_after_seconds=0)
    )


def keys_of(upstream: redis.Redis, game_id: str) -> set[str]:
    return {str(key).rsplit(":", 1)[1] for key in upstream.scan_iter(match=f"game:{{{game_id}}}:*")}


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.value)
def test_packing_whose_drop_lost_its_reply_is_reported_packed(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, fault: Fault
) -> None:
    game_id = finished_game(proxied.client, proxied.app, proxied.dispatcher)
    record = proxied.client.get(f"/v1/games/{game_id}/record").get_json()
    proxy.plan = FaultPlan(7, [Rule("EVALSHA", fault, script=_DROP_UNPACKED, limit=1)])
    outcome = lifecycle_of(proxied).run_once()
    assert proxy.plan.count(fault) == 1, "the proxy faulted no drop"
    assert outcome.packed == [game_id], "the game was packed, but the sweep did not say so"
    assert upstream.zscore(UNPACKED_KEY, game_id) is None, "a packed game stayed in the packing queue"
    assert keys_of(upstream, game_id) == {"packed", "answers"}
    assert proxied.client.get(f"/v1/games/{game_id}/record").get_json() == record


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.value)
def test_an_export_whose_delete_lost_its_reply_is_reported_exported(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, tmp_path: Path, fault: Fault
) -> None:
    game_id = finished_game(proxied.client, proxied.app, proxied.dispatcher, with_a_person=True)
    proxy.plan = FaultPlan(8, [Rule("EVALSHA", fault, script=_DELETE, limit=1)])
    outcome = archive_of(proxied).export_game(game_id, tmp_path)
    assert proxy.plan.count(fault) == 1, "the proxy faulted no delete"
    assert outcome == "exported"
    assert not keys_of(upstream, game_id), "an exported game is still in Redis"
    assert upstream.zscore(FINISHED_KEY, game_id) is None, "an exported game stayed in the index"
    assert (tmp_path / f"{game_id}.json.gz").exists()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.value)
def test_an_import_whose_restore_lost_its_reply_is_reported_imported(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, tmp_path: Path, fault: Fault
) -> None:
    game_id = finished_game(proxied.client, proxied.app, proxied.dispatcher, with_a_person=True)
    assert archive_of(proxied).export_game(game_id, tmp_path) == "exported"
    path = tmp_path / f"{game_id}.json.gz"
    proxy.plan = FaultPlan(9, [Rule("EVALSHA", fault, script=_RESTORE, limit=1)])
    outcome = archive_of(proxied).import_file(path)
    assert proxy.plan.count(fault) == 1, "the proxy faulted no restore"
    assert outcome == (game_id, "imported")
    assert upstream.zscore(FINISHED_KEY, game_id) is not None, "an imported game is not in the index"
    document = read_file(path)
    document.pop("private")
    assert proxied.client.get(f"/v1/games/{game_id}/record").get_json() == document
    again = archive_of(proxied).import_file(path)
    assert again == (game_id, "kept: a game with this id exists already (this file's game, imported before)")


def test_an_export_that_cannot_delete_says_so_and_keeps_the_game_indexed(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, tmp_path: Path
) -> None:
    """Every send of the delete is cut before Redis: the export answers for the game (it raised before,
    and the command line stopped with a traceback); the game stays, in the index, for the next export."""
    game_id = finished_game(proxied.client, proxied.app, proxied.dispatcher)
    proxy.plan = FaultPlan(10, [Rule("EVALSHA", Fault.NOT_SENT, script=_DELETE, resends=True)])
    outcome = archive_of(proxied).export(datetime.now(UTC) + timedelta(days=1), tmp_path)
    assert proxy.plan.count(Fault.NOT_SENT) > 1
    assert outcome == {game_id: "kept: Redis could not be reached to delete it; its file is written (export again)"}
    assert upstream.zscore(FINISHED_KEY, game_id) is not None
    proxy.plan = FaultPlan(10)
    assert archive_of(proxied).export(datetime.now(UTC) + timedelta(days=1), tmp_path) == {game_id: "exported"}


def test_an_import_of_unknown_outcome_is_indexed_when_imported_again(
    proxied: Proxied, proxy: RedisProxy, upstream: redis.Redis, tmp_path: Path
) -> None:
    """The restore ran but its reply was lost, and no read-back could reach Redis: the import says it
    does not know. Importing the file again finds its own game stored and puts it in the index
    (before, the driver's resend met `exists`, said `kept`, and the game stayed out of every index:
    never to be exported)."""
    game_id = finished_game(proxied.client, proxied.app, proxied.dispatcher, with_a_person=True)
    assert archive_of(proxied).export_game(game_id, tmp_path) == "exported"
    path = tmp_path / f"{game_id}.json.gz"
    proxy.plan = FaultPlan(
        11,
        [
            Rule("EVALSHA", Fault.REPLY_LOST, script=_RESTORE, limit=1),
            Rule("EVALSHA", Fault.NOT_SENT, script=_READ_GAME, resends=True),
        ],
    )
    imported, outcome = archive_of(proxied).import_file(path)
    assert proxy.plan.count(Fault.REPLY_LOST) == 1, "the proxy cut no reply"
    assert imported == game_id and outcome.startswith("not known: "), outcome
    proxy.plan = FaultPlan(11)
    again = archive_of(proxied).import_file(path)
    assert again == (game_id, "kept: a game with this id exists already (this file's game, imported before)")
    assert upstream.zscore(FINISHED_KEY, game_id) is not None, "an imported game is in no index"
    document = read_file(path)
    document.pop("private")
    assert proxied.client.get(f"/v1/games/{game_id}/record").get_json() == document
