"""The page's live-stream module (service/api/web_page/static/live.js): served, and it listens to every event type."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from domain import engine

GAMES = ("golf", "romme", "switch", "go5")


def event_types_of_the_games() -> set[str]:
    """Every record `type` the four games' event catalogs know."""
    return {name for game in GAMES for name in engine.get_game(game).catalog._by_name}


def test_live_js_listens_to_every_event_type_of_every_game(client: FlaskClient) -> None:
    response = client.get("/web/live.js")
    assert response.status_code == 200 and "javascript" in str(response.mimetype)
    text = response.get_data(as_text=True)
    listed = re.search(r"export const EVENT_TYPES = \[(.*?)\];", text, re.S)
    assert listed, "live.js has no EVENT_TYPES list"
    names = re.findall(r"'([A-Za-z0-9]+)'", listed.group(1))
    assert len(names) == len(set(names))
    # EventSource hands a named event only to a listener of that name: a missing type is a lost event
    assert set(names) == event_types_of_the_games()


def test_the_play_page_follows_the_stream_and_falls_back_to_the_long_poll(client: FlaskClient) -> None:
    play = client.get("/web/play.js").get_data(as_text=True)
    assert "import { followLive } from './live.js';" in play
    assert "if (outcome !== 'failed') return;" in play and "/events?after=" in play
    live = client.get("/web/live.js").get_data(as_text=True)
    assert "/stream-tickets" in live and "ticket=${encodeURIComponent(ticket)}" in live
    assert "Authorization" not in live and "token=" not in live  # the token never goes into the stream's URL
