"""Every read bounded by its answer, however long the game: events a page at a time, a packed game's
record and audit made once and then read, a token checked on the game's meta before any fold, and the
packed games a process keeps unpacked bounded by their bytes (fakeredis; costs are counted, never timed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fakeredis
import flask
import pytest

from service.play import game_history
from service.storage import packing
from service.storage.packed_games import pack
from service.storage.redis_store import RedisStore
from service.upkeep.archive import Archive
from tests.conftest import auth
from tests.service.helpers import assert_problem
from tests.service.test_bounded_costs import app_with, played_golf, tokens
from tests.service.test_history_api import get_json
from tests.service.test_snapshots import FoldCounter


def packed_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:packed"


def packed_golf(app: flask.Flask) -> dict[str, Any]:
    """A Golf game of two people, played to its end and packed."""
    created = played_golf(app)
    assert app.extensions["storage"].packing.compact(created["id"]) == "packed"
    return created


class XrangeCounter:
    """Counts the stream entries the store fetches from Redis (XRANGE replies)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, redis: fakeredis.FakeRedis) -> None:
        self.entries = 0
        real = redis.xrange

        def counted(*args: Any, **kwargs: Any) -> Any:
            reply = real(*args, **kwargs)
            self.entries += len(reply)
            return reply

        monkeypatch.setattr(redis, "xrange", counted)


class CallCounter:
    """Counts the calls of one function of a module."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.calls = 0
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


# ---------------------------------------------------------------- events a page at a time


def test_events_come_a_page_at_a_time_and_each_answer_says_where_the_next_page_is(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    gid = played_golf(app)["id"]
    everything = get_json(client, f"/v1/games/{gid}/events")
    assert everything["next"] is None, "a Golf game's events fit in the default page"
    events = everything["events"]
    assert len(events) > 20
    first = get_json(client, f"/v1/games/{gid}/events?limit=7")
    assert first["events"] == events[:7] and first["next"] == f"/v1/games/{gid}/events?after=7&limit=7"
    seen, path, pages = [], f"/v1/games/{gid}/events?after=3&limit=7", 0
    while path:
        page = get_json(client, path)
        assert 1 <= len(page["events"]) <= 7
        seen += page["events"]
        path, pages = page["next"], pages + 1
    assert seen == events[3:] and pages == -(-(len(events) - 3) // 7)
    assert get_json(client, f"/v1/games/{gid}/events?after={len(events)}&limit=7") == {"events": [], "next": None}
    for bad in ("0", "1001", "-1"):
        assert_problem(client.get(f"/v1/games/{gid}/events?limit={bad}"), 400, "invalid_request")
    assert len(get_json(client, f"/v1/games/{gid}/events?limit=1000")["events"]) == len(events)


def test_a_long_poll_gives_a_page_too_and_says_where_the_next_one_is(fake_redis: fakeredis.FakeRedis) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    for created in (played_golf(app, stop_after=12), packed_golf(app)):
        gid = created["id"]
        events = get_json(client, f"/v1/games/{gid}/events")["events"]
        page = get_json(client, f"/v1/games/{gid}/events?after=2&limit=5&wait=1")
        assert page == {"events": events[2:7], "next": f"/v1/games/{gid}/events?after=7&limit=5"}
        last = get_json(client, f"/v1/games/{gid}/events?after={len(events) - 2}&limit=5&wait=1")
        assert last == {"events": events[-2:], "next": None}


def test_an_events_page_reads_the_page_from_the_store_not_the_game(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in stream entries fetched from Redis, with and without `wait`."""
    app = app_with(fake_redis)
    client = app.test_client()
    gid = played_golf(app)["id"]
    total = len(get_json(client, f"/v1/games/{gid}/events")["events"])
    counter = XrangeCounter(monkeypatch, fake_redis)
    for query in ("after=10&limit=5", "after=10&limit=5&wait=1", "limit=5"):
        before = counter.entries
        assert len(get_json(client, f"/v1/games/{gid}/events?{query}")["events"]) == 5
        assert counter.entries - before <= 6, (query, counter.entries - before, total)


# ---------------------------------------------------------------- a packed game's record and audit, made once


def test_a_packed_games_record_and_audit_are_made_once_and_then_read_as_a_fresh_one_makes_them(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in verifier runs and folded events, each request by a new API process (nothing cached in it)."""
    app = app_with(fake_redis)
    gid = packed_golf(app)["id"]
    verified = CallCounter(monkeypatch, game_history, "verify")
    folds = FoldCounter(monkeypatch)
    made = {
        what: get_json(app_with(fake_redis).test_client(), f"/v1/games/{gid}/{what}") for what in ("record", "audit")
    }
    assert verified.calls == 1 and folds.calls > 0, "the first request makes them"
    made_by, verified.calls, folds.calls = app_with(fake_redis), 0, 0
    for _ in range(3):
        for what in ("record", "audit"):
            assert get_json(app_with(fake_redis).test_client(), f"/v1/games/{gid}/{what}") == made[what]
    assert (verified.calls, folds.calls) == (0, 0), "then they are read"
    fresh = made_by.extensions["history"]
    assert made["record"] == fresh._fresh_record(gid) and made["audit"] == fresh._fresh_audit(gid)
    assert made["audit"]["chain_ok"] is True and made["audit"]["complete"] is True


def test_a_kept_answer_is_made_again_when_the_packed_value_or_the_code_changes(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    gid = packed_golf(app)["id"]
    store: RedisStore = app.extensions["storage"]
    good = get_json(client, f"/v1/games/{gid}/audit")
    stored = store.archive.stored_game(gid)
    assert stored is not None and good["first_bad_seq"] is None
    record = json.loads(stored.entries[4][1])
    forged = list(stored.entries)
    forged[4] = (forged[4][0], json.dumps({**record, "data": {**record["data"], "forged": True}}))
    fake_redis.set(packed_key(gid), pack(stored.meta, forged))
    assert get_json(app_with(fake_redis).test_client(), f"/v1/games/{gid}/audit")["first_bad_seq"] == 5
    fake_redis.set(packed_key(gid), pack(stored.meta, stored.entries))
    assert get_json(client, f"/v1/games/{gid}/audit") == good
    verified = CallCounter(monkeypatch, game_history, "verify")
    monkeypatch.setattr(game_history, "answers_code", lambda: "other code")
    assert get_json(client, f"/v1/games/{gid}/audit") == good and verified.calls == 1
    assert get_json(client, f"/v1/games/{gid}/audit") == good and verified.calls == 1


def test_a_running_game_is_audited_afresh_each_time(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    gid = played_golf(app, stop_after=6)["id"]
    verified = CallCounter(monkeypatch, game_history, "verify")
    for _ in range(2):
        get_json(client, f"/v1/games/{gid}/audit")
    assert verified.calls == 2
    assert fake_redis.exists(f"game:{{{gid}}}:answers") == 0


def test_kept_answers_go_with_the_game_when_it_is_exported_and_it_answers_the_same_once_imported(
    fake_redis: fakeredis.FakeRedis, tmp_path: Path
) -> None:
    app = app_with(fake_redis)
    client = app.test_client()
    gid = packed_golf(app)["id"]
    made = {what: get_json(client, f"/v1/games/{gid}/{what}") for what in ("record", "audit")}
    archive = Archive(app.extensions["history"], app.extensions["storage"])
    assert archive.export_game(gid, tmp_path) == "exported"
    assert [key for key in fake_redis.keys(f"game:{{{gid}}}:*")] == [], "the answers are deleted with the game"
    assert get_json(client, f"/v1/games/{gid}/audit", status=404)
    assert archive.import_file(tmp_path / f"{gid}.json.gz") == (gid, "imported")
    again = app_with(fake_redis).test_client()
    for what in ("record", "audit", "record", "audit"):
        assert get_json(again, f"/v1/games/{gid}/{what}") == made[what]


# ---------------------------------------------------------------- the token before the game


@pytest.mark.parametrize("packed", [False, True], ids=["running", "packed"])
def test_an_action_without_a_valid_token_costs_a_read_of_the_meta_not_a_fold(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch, packed: bool
) -> None:
    """Counted in folded events and unpacked games, by a new API process each time (nothing cached)."""
    app = app_with(fake_redis)
    created = packed_golf(app) if packed else played_golf(app, stop_after=12)
    gid = created["id"]
    foreign = tokens(played_golf(app, stop_after=1))[0]
    folds = FoldCounter(monkeypatch)
    unpacked = CallCounter(monkeypatch, packing, "unpack")
    for token in (None, "not a token", foreign):
        headers = auth(token) if token else {}
        fresh = app_with(fake_redis).test_client()
        response = fresh.post(f"/v1/games/{gid}/actions", json={"type": "draw", "from": "stock"}, headers=headers)
        assert_problem(response, 401, "unauthorized")
    assert (folds.calls, unpacked.calls) == (0, 0)
    assert_problem(app_with(fake_redis).test_client().post("/v1/games/nosuchgame1/actions", json={"type": "draw"}), 404)
    mine = (
        app_with(fake_redis)
        .test_client()
        .post(f"/v1/games/{gid}/actions", json={"type": "draw", "from": "stock"}, headers=auth(tokens(created)[0]))
    )
    assert mine.status_code in (200, 422), mine.get_data(as_text=True)
    assert folds.calls > 0 or packed, "a seat's own token loads the game"


# ---------------------------------------------------------------- the unpacked games a process keeps


def restored(store: RedisStore, game_id: str, texts: int, size: int) -> None:
    """A packed game of `texts` entries of about `size` bytes each (the store reads any stream back)."""
    meta = {"game": "golf", "tokens": "[]"}
    entries = [(f"{seq}-0", json.dumps({"seq": seq, "pad": "x" * size})) for seq in range(1, texts + 1)]
    assert store.archive.restore(game_id, meta, entries, [])


def test_the_packed_games_kept_unpacked_are_bounded_by_their_bytes_not_their_number(
    fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    unpacked = CallCounter(monkeypatch, packing, "unpack")
    roomy = RedisStore.connect(fake_redis, packed_cache_bytes=10_000_000)
    for n in range(100):
        restored(roomy, f"small{n}", 3, 10)
        roomy.events.read(f"small{n}")
    assert unpacked.calls == 100
    for n in range(100):
        roomy.events.read(f"small{n}")
    assert unpacked.calls == 100, "a hundred small games are all kept"

    tight = RedisStore.connect(fake_redis, packed_cache_bytes=50_000)
    for n in range(6):
        restored(tight, f"big{n}", 10, 1000)  # about 10 KB each
        tight.events.read(f"big{n}")
        assert tight.packing.unpacked_bytes() <= 50_000
    assert tight.packing.unpacked_bytes() > 30_000
    calls = unpacked.calls
    tight.events.read("big5")
    assert unpacked.calls == calls, "the last one read is kept"
    tight.events.read("big0")
    assert unpacked.calls == calls + 1, "the least recently read went first"
    restored(tight, "huge", 10, 10_000)  # about 100 KB: more than the whole cache
    tight.events.read("huge")
    tight.events.read("huge")
    assert unpacked.calls == calls + 3 and tight.packing.unpacked_bytes() <= 50_000


def test_packed_cache_bytes_is_a_setting(fake_redis: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> None:
    assert app_with(fake_redis, PACKED_CACHE_BYTES=1234).extensions["storage"].packing.packed_cache_bytes == 1234
    monkeypatch.setenv("PACKED_CACHE_BYTES", "4321")
    assert app_with(fake_redis).extensions["storage"].packing.packed_cache_bytes == 4321
    assert app_with(fake_redis, PACKED_CACHE_BYTES="99").extensions["storage"].packing.packed_cache_bytes == 99
    monkeypatch.setenv("PACKED_CACHE_BYTES", "lots")
    with pytest.raises(ValueError, match="PACKED_CACHE_BYTES"):
        app_with(fake_redis)
    monkeypatch.delenv("PACKED_CACHE_BYTES")
    assert app_with(fake_redis).extensions["storage"].packing.packed_cache_bytes == packing.PACKED_CACHE_BYTES
