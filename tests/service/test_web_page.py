"""The page's routes beside the API: `/` and its files, outside the OpenAPI document; `you.legal` in views."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from domain import engine
from service.openapi import spec_dict
from tests.conftest import RecordingDispatcher, auth, create_golf

PAGE_FILES = (
    "app.js",
    "api.js",
    "cards.js",
    "dom.js",
    "events.js",
    "games.js",
    "ladder.js",
    "matches.js",
    "options.js",
    "play.js",
    "replay.js",
    "table.js",
)


def test_the_page_is_served_at_the_root_with_a_self_only_policy(client: FlaskClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert '<script type="module" src="/web/app.js">' in text
    assert "http://" not in text and "https://" not in text  # nothing from elsewhere
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("name", [*PAGE_FILES, "style.css", "index.html"])
def test_every_file_of_the_page_is_served_with_its_type(client: FlaskClient, name: str) -> None:
    response = client.get(f"/web/{name}")
    assert response.status_code == 200
    expected = {"js": "javascript", "css": "text/css", "html": "text/html"}[name.rsplit(".", 1)[1]]
    assert expected in str(response.mimetype)
    text = response.get_data(as_text=True)
    assert "http://" not in text and "https://" not in text, f"{name} names another site"


@pytest.mark.parametrize("path", ["/web/nope.js", "/web/../app.py", "/web/%2e%2e/__init__.py"])
def test_a_missing_file_is_a_404_problem(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_the_page_is_not_part_of_the_api_document() -> None:
    paths = set(spec_dict()["paths"])
    assert paths and all(p.startswith(("/v1/", "/healthz", "/readyz", "/metrics")) for p in paths), sorted(paths)


def test_a_seats_view_lists_its_concrete_legal_actions(client: FlaskClient, dispatcher: RecordingDispatcher) -> None:
    created = create_golf(client)
    dispatcher.drain()
    token = created["seats"][0]["token"]
    view: dict[str, Any] = client.get(f"/v1/games/{created['id']}", headers=auth(token)).get_json()
    assert dispatcher.service is not None
    loaded = dispatcher.service.repository.load(created["id"])
    legal = engine.legal_actions(loaded.snap, 0)
    assert legal and view["you"]["legal"] == legal
    assert view["actions"] == sorted({a["type"] for a in legal})
    spectator = client.get(f"/v1/games/{created['id']}").get_json()
    assert "you" not in spectator and spectator["actions"] == []
