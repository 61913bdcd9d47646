"""The floor of `watcher_cpu_us_per_event`: raw socket writes of the same SSE bytes from one gevent loop.

`python -m bench.floor_stream PORT` (REDIS_URL names the store): one process, gevent's event loop as
the API's gunicorn worker runs it. It accepts `GET /v1/games/<id>/stream?after=<seq>`, answers the
response head at once, and runs one reader per followed game that blocks on XREAD (the store's own
`read_blocking`, as service/api/followers.py does), encodes each batch of events once as the
stream's messages (`id`, `event`, `data` lines, the same bytes the API sends) and `sendall`s those
bytes to every socket following the game. No HTTP framework, no chunked encoding, no per-watcher
Python above the write: what is left is the cost of the write itself.
"""

from __future__ import annotations

from gevent import monkey  # type: ignore[import-untyped]

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402
from gevent.server import StreamServer  # type: ignore[import-untyped]  # noqa: E402

from service.storage.event_store import EventStore  # noqa: E402
from service.storage.redis_store import RedisStore  # noqa: E402

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\r\n"
REQUEST = re.compile(rb"^GET /v1/games/([A-Za-z0-9_-]+)/stream\?after=(\d+) ")


def frames(records: list[dict[str, Any]]) -> bytes:
    """The stream's messages for a batch of events, as the API encodes them."""
    return "".join(
        f"id: {r['seq']}\nevent: {r['type']}\ndata: {json.dumps(r, separators=(',', ':'), ensure_ascii=False)}\n\n"
        for r in records
    ).encode()


class Floor:
    """Sockets by game, and one reader greenlet per game."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.sockets: dict[str, list[socket.socket]] = {}

    def handle(self, sock: socket.socket, _address: Any) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = sock.recv(4096)
            if not chunk:
                return
            request += chunk
        match = REQUEST.match(request)
        if match is None:
            sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            return
        game_id, after = match.group(1).decode(), int(match.group(2))
        sock.sendall(HEAD)
        if game_id not in self.sockets:
            self.sockets[game_id] = []
            gevent.spawn(self.read, game_id, after)
        self.sockets[game_id].append(sock)
        sock.recv(1)  # hold the connection (and the socket) until the client closes it
        self.sockets[game_id].remove(sock)

    def read(self, game_id: str, last: int) -> None:
        while self.sockets.get(game_id):
            records = self.store.read_blocking(game_id, last, 5000)
            if not records:
                continue
            last = records[-1]["seq"]
            data = frames(records)
            for sock in list(self.sockets[game_id]):
                sock.sendall(data)


def main() -> None:
    port = int(sys.argv[1])
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), decode_responses=True)
    floor = Floor(RedisStore.connect(client).events)
    StreamServer(("127.0.0.1", port), floor.handle, backlog=2048).serve_forever()


if __name__ == "__main__":
    main()
