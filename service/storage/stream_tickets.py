"""Live-stream tickets (`game:{<id>}:ticket:<sha256>`): a seat's, kept by the ticket's digest, single use,
with an expiry."""

from __future__ import annotations

from service.storage import keys
from service.storage.redis_clients import StoreClient, sent_once
from service.storage.scripts import store_call


class StreamTickets:
    """Stream tickets, each taken at most once."""

    def __init__(self, client: StoreClient) -> None:
        self._redis = client

    def put_ticket(self, game_id: str, digest: str, seat: int, seconds: int) -> None:
        """Keep a stream ticket (by its digest) for `seconds`."""
        store_call(self._redis.set, keys.ticket(game_id, digest), str(seat), ex=seconds)

    def take_ticket(self, game_id: str, digest: str) -> int | None:
        """The seat of a stream ticket, which is gone from then on; None when unknown, used or expired.

        Sent once: a resend after a lost reply would find the ticket gone and refuse a valid one. A lost
        reply is StoreUnavailable (503), and the client takes a new ticket."""
        with sent_once():
            seat = store_call(self._redis.getdel, keys.ticket(game_id, digest))
        return None if seat is None else int(seat)
