"""The API's own description, served: `/openapi.json`, `/openapi.yaml` and the reference page `/docs`.

The document is the one `make openapi` writes to openapi.yaml, built from this app's blueprints.
The page is Swagger UI from the npm package swagger-ui-dist, vendored under
`service/api/web_page/static/vendor/swagger-ui/` with its license: nothing is fetched from elsewhere.
These routes describe the API and stay out of its document, like the web page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
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


ENCODINGS: dict[str, Callable[[dict[str, Any]], str]] = {
    "json": lambda spec: json.dumps(spec, sort_keys=True, ensure_ascii=False),
    "yaml": as_yaml,
}


def _encoded(form: str) -> bytes:
    """The app's document in `form` (json, yaml), built and encoded once per process: the document is fixed
    once the app is made, and building it costs about 300 ms of CPU, which no request may cost each time."""
    cache: dict[str, bytes] = flask.current_app.extensions.setdefault("apidocs", {})
    if form not in cache:
        cache[form] = ENCODINGS[form](spec_of(flask.current_app)).encode("utf-8")
    return cache[form]


def _described(body: bytes, content_type: str) -> flask.Response:
    """The body with a strong ETag: a client that has it asks again with If-None-Match and gets a 304."""
    response = flask.Response(body, content_type=content_type)
    response.headers["Cache-Control"] = "no-cache"
    response.set_etag(hashlib.sha256(body).hexdigest()[:32])
    response.make_conditional(flask.request)
    return response


@blp.route("/openapi.json")
def openapi_json() -> flask.Response:
    """The OpenAPI document as JSON."""
    return _described(_encoded("json"), "application/json")


@blp.route("/openapi.yaml")
def openapi_yaml() -> flask.Response:
    """The OpenAPI document as YAML, byte for byte the committed openapi.yaml."""
    return _described(_encoded("yaml"), f"{YAML_TYPE}; charset=utf-8")


@blp.route("/docs")
def reference() -> flask.Response:
    """The API reference page: Swagger UI over `/openapi.json`."""
    page = (WEB_STATIC / "docs.html").read_bytes()
    return _described(page, "text/html; charset=utf-8")


@blp.after_request
def _page_headers(response: flask.Response) -> flask.Response:
    """The page and its files come from this app only; nothing sniffs or frames them."""
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
