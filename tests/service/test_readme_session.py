"""The README's curl session shows what the service answers: the same game, seed `demo`, replayed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from flask.testing import FlaskClient

from tests.conftest import RecordingDispatcher, auth

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _shown_create_body() -> dict[str, object]:
    shown = re.search(r"curl -s -X POST localhost:8000/v1/games .*?-d '(\{.*?\})'", README, re.DOTALL)
    assert shown is not None, "the README's game creation is missing"
    body: dict[str, object] = json.loads(shown.group(1))
    return body


def test_readme_reveal_shows_the_cards_seed_demo_deals(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    body = _shown_create_body()
    assert body["seed"] == "demo"
    created = client.post("/v1/games", json=body).get_json()
    dispatcher.drain()  # "The bots reveal their cards at once."
    token = created["seats"][0]["token"]
    view = client.get(f"/v1/games/{created['id']}", headers=auth(token)).get_json()
    assert view["phase"] == "setup" and view["actions"] == ["reveal"]
    sent = re.search(r"-d '(\{\"type\":\"reveal\".*?\})'", README)
    shown = re.search(r'\{"seq":(\d+),"type":"CardsRevealed","actor":0,\s*"data":(\{.*?\]\})', README)
    assert sent is not None and shown is not None
    answer = client.post(f"/v1/games/{created['id']}/actions", json=json.loads(sent.group(1)), headers=auth(token))
    event = answer.get_json()["events"][0]
    assert event["seq"] == int(shown.group(1)) and event["data"] == json.loads(shown.group(2))
