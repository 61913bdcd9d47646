"""The live stream: GET /v1/games/{id}/stream (Server-Sent Events) and the seats' stream tickets.

Each public event goes out as `id: <seq>`, `event: <type>`, `data: <the record JSON>`, the same
record as GET /events. A seat's stream also sends `event: view` (no id) with that seat's view at
once and after each batch of events. A browser's EventSource cannot send an Authorization header,
so a seat trades its token for a ticket (POST /stream-tickets): random, single use, short-lived,
kept in Redis (as its digest, with the game's hash tag) so that any API process can redeem it.
The token itself never goes into a URL. Waiting is done by service/api/followers.py.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import flask
import marshmallow as ma
from marshmallow import validate

from service.api.action_event_schemas import EVENT_RECORD, ref
from service.api.blueprint import (
    Blueprint,
    QueryInteger,
    checked_id,
    matches,
    repository,
    required_bearer_token,
    tickets,
    watchers,
)
from service.api.followers import FOLLOWERS_FULL, LAST_EVENT, Watchers
from service.api.problems import ApiError
from service.api.rate_limits import READS_LIMITED, client_address_of
from service.api.shared_schemas import DEAL_IN_PLAY, MAX_SEQ
from service.ops import metrics
from service.play.game_repository import GameRepository
from service.play.game_view import render
from service.storage.outcomes import StoreUnavailable

blp = Blueprint("live", __name__, url_prefix="/v1/games", description="Live stream of a game (Server-Sent Events)")
log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0  # app config STREAM_HEARTBEAT_SECONDS overrides it
EVENT_STREAM = "text/event-stream"
FRAME_CACHE = 4096  # encoded event messages kept (oldest out first): a game's watchers share them
HEARTBEAT = b": heartbeat\n\n"
_FRAMES: dict[tuple[int, str, str, str], str] = {}
_FRAMES_LOCK = threading.Lock()


class StreamQuerySchema(ma.Schema):
    after = QueryInteger(
        validate=validate.Range(min=0, max=MAX_SEQ),
        metadata={"description": "send the events with seq > after (default 0); `Last-Event-ID` wins over it"},
    )
    ticket = ma.fields.String(
        validate=validate.Length(1, 200),
        metadata={"description": "a seat's stream ticket (POST .../stream-tickets): adds `view` messages"},
    )


class ResumeHeaderSchema(ma.Schema):
    last_event_id = QueryInteger(
        data_key="Last-Event-ID",
        validate=validate.Range(min=0, max=MAX_SEQ),
        metadata={"description": "resume after this seq (EventSource sends it when it reconnects)"},
    )


class TicketSchema(ma.Schema):
    ticket = ma.fields.String(required=True, metadata={"description": "pass it as ?ticket= in the stream URL, once"})
    expires_in = ma.fields.Integer(required=True, metadata={"description": "seconds it stays valid"})


SSE_MESSAGE = {
    "type": "object",
    "description": "one message: an event (id, event = its type, data = its record), a view, or a comment",
    "properties": {
        "id": {"type": "string"},
        "event": {"type": "string"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"anyOf": [ref(EVENT_RECORD), ref("GameView")]},
            "description": "an event's record, or with `event: view` the seat's view, as JSON",
        },
    },
}
STREAM_DESCRIPTION = (
    "Server-Sent Events: each public event as `id: <seq>`, `event: <type>`, `data: <event record JSON>`; "
    "with a ticket also `event: view`, `data: <the seat's view>` at once and after each change; a comment "
    "(`: heartbeat`) every 15 s; the stream ends after the game's last event."
)


@blp.route("/<game_id>/stream-tickets", methods=["POST"])
@blp.doc(operationId="createStreamTicket", security=[{"seatToken": []}])
@blp.response(201, TicketSchema)
@blp.problems(
    s401="no valid token for this game",
    s404="no such game",
)
def post_ticket(game_id: str) -> tuple[dict[str, Any], int]:
    """A single-use ticket, valid for 60 s, that opens this seat's live stream (for EventSource)."""
    found = tickets()
    ticket = found.issue(checked_id(game_id), required_bearer_token("a stream ticket"))
    return {"ticket": ticket, "expires_in": found.seconds}, 201


@blp.route("/<game_id>/stream")
@blp.doc(
    operationId="getStream",
    responses={
        200: {"description": STREAM_DESCRIPTION, "content": {EVENT_STREAM: {"schema": SSE_MESSAGE}}},
        204: {"description": "the game has ended and no event is after the one asked for: nothing to follow"},
    },
)
@blp.arguments(StreamQuerySchema(), location="query")
@blp.arguments(ResumeHeaderSchema(), location="headers")
@blp.problems(
    s400="bad query or Last-Event-ID",
    s401="a ticket that is unknown, used, expired or of another game",
    s403=DEAL_IN_PLAY,
    s404="no such game",
    s429=f"{READS_LIMITED}; or the client's most open streams and long-polls",
    s503=f"the event store cannot be reached; or {FOLLOWERS_FULL}",
)
def get_stream(query: dict[str, Any], headers: dict[str, Any], game_id: str) -> flask.Response:
    """Follow the game live (Server-Sent Events); resume with `Last-Event-ID` or `after`."""
    games = repository()
    loaded = games.load(checked_id(game_id))
    matches().check_place(loaded.place)
    after = headers.get("last_event_id", query.get("after", 0))  # a reconnect's Last-Event-ID wins
    watchers().check_room(loaded.id)  # before the ticket is spent
    seat = None
    if "ticket" in query:
        seat = tickets().redeem(loaded.id, query["ticket"])
        if seat is None:
            raise ApiError(401, "unauthorized", "the stream ticket is unknown, used or expired; POST stream-tickets")
    if loaded.snap.seed_revealed and after >= loaded.version:
        return flask.Response(status=204)
    heartbeat = float(flask.current_app.config.get("STREAM_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
    hub = watchers()
    release = hub.hold(client_address_of(flask.request))  # until the server closes the response
    frames = sse_frames(games, hub, loaded.id, after, seat, heartbeat)
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    response = flask.Response(frames, mimetype=EVENT_STREAM, headers=headers)
    response.call_on_close(release)
    return response


def sse_frames(
    games: GameRepository, hub: Watchers, game_id: str, after: int, seat: int | None, heartbeat: float
) -> Iterator[bytes]:
    """The stream's messages: events from after on, the seat's views, heartbeats; ends after the last event."""
    try:
        if seat is not None:
            yield _view_frame(games, game_id, seat)
        with metrics.watching("stream"), hub.follow(game_id) as follower:
            while True:
                records = follower.next(after, heartbeat)
                if not records:
                    yield HEARTBEAT
                    continue
                yield follower.encoded("sse", records, _event_frames)
                after = records[-1]["seq"]
                if seat is not None:
                    yield _view_frame(games, game_id, seat)
                if records[-1]["type"] == LAST_EVENT:
                    return
    except StoreUnavailable as error:  # the client reconnects with Last-Event-ID
        log.warning("stream of game %s ended: event store unavailable: %s", game_id, error)
    except ApiError as error:  # followers_full since the answer's check_room: the client reconnects
        log.warning("stream of game %s ended: %s", game_id, error)


def _event_frames(records: list[dict[str, Any]]) -> bytes:
    """A batch of events' messages, as bytes: encoded once for every stream of the game (Follower.encoded)."""
    return "".join(_event_frame(record) for record in records).encode("utf-8")


def _event_frame(record: dict[str, Any]) -> str:
    """One event's message; encoded once for all the streams of a process that send it."""
    key = (record["seq"], record["type"], record["hash"], record["at"])
    frame = _FRAMES.get(key)
    if frame is None:
        frame = f"id: {record['seq']}\nevent: {record['type']}\ndata: {_compact(record)}\n\n"
        with _FRAMES_LOCK:
            _FRAMES[key] = frame
            while len(_FRAMES) > FRAME_CACHE:
                del _FRAMES[next(iter(_FRAMES))]
    return frame


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _view_frame(games: GameRepository, game_id: str, seat: int) -> bytes:
    loaded = games.load(game_id)
    return f"event: view\ndata: {_compact(render(loaded, loaded.snap, seat))}\n\n".encode()
