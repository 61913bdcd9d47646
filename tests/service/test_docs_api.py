"""docs/api.md shows what the service does: its stream messages, its ticket answer, its endpoints."""

from __future__ import annotations

import json
import re
from pathlib import Path

from flask.testing import FlaskClient

from service.api import stream_routes as live
from service.play.stream_tickets import TICKET_SECONDS
from tests.conftest import auth
from tests.service.sse import SseReader, events_of

DOC = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
TWO_HUMANS = [{"kind": "human"}, {"kind": "human"}]


def test_the_documented_messages_are_what_the_stream_sends(client: FlaskClient) -> None:
    shown = DOC.split("```\n", 2)[1]  # the first plain block: an event, then a heartbeat
    lines = shown.splitlines()
    assert [line.split(":", 1)[0] for line in lines[:3]] == ["id", "event", "data"]
    assert lines[4] == ": heartbeat" and live.HEARTBEAT_SECONDS == 15 and "every 15 s" in DOC
    created = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "seed": "doc"}).get_json()
    action = {"type": "reveal", "positions": [0, 1]}
    client.post(f"/v1/games/{created['id']}/actions", json=action, headers=auth(created["seats"][0]["token"]))
    reader = SseReader(client.get(f"/v1/games/{created['id']}/stream?after=2", buffered=False))
    message = reader.next()
    reader.close()
    assert message is not None and list(message) == ["id", "event", "data"]
    record = events_of([message])[0]
    assert message["id"] == "3" and message["event"] == "CardsRevealed" == record["type"]
    assert record["actor"] == 0 and record["data"]["positions"] == [0, 1]
    shown = json.loads(lines[2].split(": ", 1)[1])  # seed `doc` deals these cards (C-4): the doc shows them
    assert {k: v for k, v in record.items() if k not in ("at", "prev_hash", "hash")} == {
        k: v for k, v in shown.items() if k not in ("at", "prev_hash", "hash")
    }


def test_the_documented_ticket_answer_and_endpoints_exist(client: FlaskClient) -> None:
    assert f'{{"ticket": "…", "expires_in": {TICKET_SECONDS}}}' in DOC
    created = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS}).get_json()
    game = f"/v1/games/{created['id']}"
    answer = client.post(f"{game}/stream-tickets", headers=auth(created["seats"][0]["token"]))
    assert answer.status_code == 201 and set(answer.get_json()) == {"ticket", "expires_in"}
    for path in re.findall(r'"\$GAME/([a-z-]+)[?"]', DOC):
        method = "POST" if path == "stream-tickets" else "GET"
        response = client.open(f"{game}/{path}", method=method, headers=auth(created["seats"][1]["token"]))
        assert response.status_code in (200, 201), (path, response.status_code)
        response.close()


def test_the_browser_example_names_only_real_event_types() -> None:
    names = re.findall(r"'([A-Z][A-Za-z0-9]+)'", DOC.split("```js", 1)[1].split("```", 1)[0])
    js = (Path(__file__).resolve().parents[2] / "service" / "api" / "web_page" / "static" / "live.js").read_text()
    assert names and all(f"'{name}'" in js for name in names)


def test_the_documented_events_page_is_what_the_service_answers(client: FlaskClient) -> None:
    shown = json.loads(DOC.split("## Events long-poll", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    asked = re.search(r"\(`\?(after=\d+&limit=\d+)` of a Golf game", DOC)
    assert asked is not None
    created = client.post("/v1/games", json={"game": "golf", "seats": TWO_HUMANS, "seed": "doc"}).get_json()
    action = {"type": "reveal", "positions": [0, 1]}
    client.post(f"/v1/games/{created['id']}/actions", json=action, headers=auth(created["seats"][0]["token"]))
    client.post(f"/v1/games/{created['id']}/actions", json=action, headers=auth(created["seats"][1]["token"]))
    page = client.get(f"/v1/games/{created['id']}/events?{asked[1]}").get_json()
    assert [event["seq"] for event in page["events"]] == [event["seq"] for event in shown["events"]]
    assert page["events"][0]["type"] == shown["events"][0]["type"]
    assert page["next"] == shown["next"].replace("{id}", created["id"])
    assert "1 to 1000, default 1000" in DOC and '`{"events": [], "next": null}`' in DOC
    assert client.get(f"/v1/games/{created['id']}/events?after=99").get_json() == {"events": [], "next": None}
