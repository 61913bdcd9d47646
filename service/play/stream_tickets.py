"""Stream tickets: a seat trades its token for a ticket that opens its live stream once.

A browser's EventSource cannot send an Authorization header, so a seat asks for a ticket (random,
single use, short-lived) and passes it in the stream's URL; the token itself never goes into a URL.
A ticket is kept in the store as its digest, with the game's hash tag, so that any API process can
redeem it (service/api/stream_routes.py).
"""

from __future__ import annotations

import hashlib
import secrets

from service.play.bots import Bots
from service.play.game_repository import GameRepository
from service.play.ports import TicketBook

TICKET_SECONDS = 60


class StreamTickets:
    """Issues and redeems the seats' stream tickets."""

    def __init__(
        self, repository: GameRepository, store: TicketBook, seconds: int = TICKET_SECONDS, bots: Bots | None = None
    ) -> None:
        """`bots`: the registered bots, whose tokens get tickets for the seats their bots hold."""
        self.repository = repository
        self.store = store
        self.seconds = seconds
        self.bots = bots

    def issue(self, game_id: str, token: str) -> str:
        """A new ticket for the token's seat (a seat's own token, or a registered bot's that holds the seat;
        GameNotFound, Unauthorized), valid for `seconds`."""
        loaded = self.repository.load(game_id)
        if self.bots is None:
            seat = loaded.seat_for_token(token)
        else:
            seat = self.bots.seat_for_token(loaded.seats, loaded.token_digests, token)
        ticket = secrets.token_urlsafe(32)
        self.store.put_ticket(loaded.id, _digest(ticket), seat, self.seconds)
        return ticket

    def redeem(self, game_id: str, ticket: str) -> int | None:
        """The seat of the ticket, which is spent by this call; None when it is unknown, used, expired
        or of another game."""
        return self.store.take_ticket(game_id, _digest(ticket))


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()
