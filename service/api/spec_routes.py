"""The API's own description, served: `/openapi.json`, `/openapi.yaml` and the reference page `/docs`.

The document is the one `make openapi` writes to openapi.yaml, built from this app's blueprints.
The page is Swagger UI from the npm package swagger-ui-dist, vendored under
`service/api/web_page/static/vendor/swagger-ui/` with its license: nothing is fetched from elsewhere.
These routes describe the API and stay out of its document, like the web page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import flask
import yaml

blp = flask.Blueprint("apidocs", __name__)
WEB_STATIC = Path(__file__).resolve().parent / "web_page" / "static"  # served under /web/ by the web page's blueprint

YAML_TYPE = "application/yaml"
CONTENT_SECURITY_POLICY = (  # Swagger UI styles its elements inline; its scripts are files of this app
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def spec_of(app: flask.Flask) -> dict[str, Any]:
    """The OpenAPI document that the app's API blueprints describe."""
    spec: dict[str, Any] = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    return spec


def as_yaml(spec: dict[str, Any]) -> str:
    """The document as YAML with a stable key order, as committed in openapi.yaml."""
    return yaml.safe_dump(spec, sort_keys=True, allow_unicode=True)


def _described(body: str, content_type: str) -> flask.Response:
    response = flask.Response(body, content_type=content_type)
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.route("/openapi.json")
def openapi_json() -> flask.Response:
    """The OpenAPI document as JSON."""
    body = json.dumps(spec_of(flask.current_app), sort_keys=True, ensure_ascii=False)
    return _described(body, "application/json")


@blp.route("/openapi.yaml")
def openapi_yaml() -> flask.Response:
    """The OpenAPI document as YAML, byte for byte the committed openapi.yaml."""
    return _described(as_yaml(spec_of(flask.current_app)), f"{YAML_TYPE}; charset=utf-8")


@blp.route("/docs")
def reference() -> flask.Response:
    """The API reference page: Swagger UI over `/openapi.json`."""
    page = (WEB_STATIC / "docs.html").read_text(encoding="utf-8")
    return _described(page, "text/html; charset=utf-8")


@blp.after_request
def _page_headers(response: flask.Response) -> flask.Response:
    """The page and its files come from this app only; nothing sniffs or frames them."""
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
