"""The service serves its own OpenAPI document and a reference page that needs nothing from elsewhere."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from flask.testing import FlaskClient

from service.api import spec_routes

COMMITTED = Path(__file__).resolve().parents[2] / "openapi.yaml"


class _References(HTMLParser):
    """Every src and href of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]


def test_served_json_is_the_generated_document(client: FlaskClient) -> None:
    answer = client.get("/openapi.json")
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    assert answer.get_json() == yaml.safe_load(COMMITTED.read_text(encoding="utf-8"))


def test_served_yaml_is_the_committed_file(client: FlaskClient) -> None:
    answer = client.get("/openapi.yaml")
    assert answer.status_code == 200 and answer.mimetype == "application/yaml"
    assert answer.get_data(as_text=True) == COMMITTED.read_text(encoding="utf-8")


def test_reference_page_loads_every_asset_from_this_app(client: FlaskClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    parser = _References()
    parser.feed(html)
    assert len(parser.urls) >= 4, parser.urls
    for url in parser.urls:
        assert url.startswith("/") and not url.startswith("//"), f"{url} is not served by this app"
        asset = client.get(url)
        assert asset.status_code == 200 and asset.content_length, url
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, re.IGNORECASE)
    initializer = client.get("/web/docs.js").get_data(as_text=True)
    assert 'url: "/openapi.json"' in initializer and "validatorUrl: null" in initializer
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self';" in policy


def test_swagger_ui_is_vendored_with_its_license(client: FlaskClient) -> None:
    notice = client.get("/web/vendor/swagger-ui/LICENSE")
    assert notice.status_code == 200 and "Apache License" in notice.get_data(as_text=True)
    bundle = client.get("/web/vendor/swagger-ui/swagger-ui-bundle.js").get_data(as_text=True)
    assert "SwaggerUIBundle" in bundle


def test_the_document_is_built_once_per_process_and_revalidates_with_an_etag(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the document costs about 300 ms of CPU with no token and no limit (issue 35, item 4): each
    process builds it once, and a client that has it gets a 304 for If-None-Match."""
    built: list[str] = []
    build = spec_routes.spec_of
    monkeypatch.setattr(spec_routes, "spec_of", lambda app: built.append("spec") or build(app))
    answers = [client.get(path) for path in ("/openapi.yaml", "/openapi.json") * 3]
    assert [answer.status_code for answer in answers] == [200] * 6
    assert len(built) == 2, "once for YAML, once for JSON"
    assert answers[0].get_data() == answers[2].get_data() == COMMITTED.read_bytes()
    again = client.get("/openapi.yaml", headers={"If-None-Match": answers[0].headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    assert answers[0].headers["ETag"] != answers[1].headers["ETag"]
