"""The floor of the actions figure: a trivial Flask app, one XRANGE of 200 entries and one conditional append.

Served by gunicorn with the API's settings (`gunicorn 'bench.floor_app:create_app()'`). Each client
has its own stream (`floor:<key>`), filled by `fill` with 200 event-sized entries; a POST reads the
200 entries before the version it names and appends one entry if the stream is still at it.
"""

from __future__ import annotations

import os

import flask
import redis

ENTRIES = 200
RECORD = (
    '{"seq":0,"type":"DrawnCardDiscarded","actor":1,"data":{"card":"7H","flipped":3,"revealed":"QS"},'
    '"prev_hash":"' + "a" * 64 + '","hash":"' + "b" * 64 + '","at":"2026-01-01T00:00:00.000Z"}'
)

# KEYS: stream. ARGV: expected version, record. Appends `<version + 1>-0` if the last entry is `<version>-0`.
APPEND = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local version = 0
if #last > 0 then version = tonumber(string.match(last[1][1], '^(%d+)')) end
if version ~= tonumber(ARGV[1]) then return {'conflict', tostring(version)} end
redis.call('XADD', KEYS[1], tostring(version + 1) .. '-0', 'e', ARGV[2])
return {'ok', tostring(version + 1)}
"""


def stream_key(key: str) -> str:
    return f"floor:{{{key}}}"


def fill(client: redis.Redis, key: str) -> int:
    """A fresh stream of ENTRIES entries for `key`; returns its version."""
    with client.pipeline(transaction=False) as pipe:
        pipe.delete(stream_key(key))
        for seq in range(1, ENTRIES + 1):
            pipe.xadd(stream_key(key), {"e": RECORD}, id=f"{seq}-0")
        pipe.execute()
    return ENTRIES


def create_app() -> flask.Flask:
    """The floor app, on REDIS_URL."""
    app = flask.Flask(__name__)
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), decode_responses=True)
    append = client.register_script(APPEND)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/floor/<key>/<int:version>")
    def floor(key: str, version: int) -> tuple[dict[str, object], int]:
        stream = stream_key(key)
        entries = client.xrange(stream, f"{max(1, version - ENTRIES + 1)}-0", f"{version}-0", count=ENTRIES)
        outcome, now = append(keys=[stream], args=[version, RECORD])
        return {"read": len(entries or []), "version": int(now)}, 200 if outcome == "ok" else 409

    return app
