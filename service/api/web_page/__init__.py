"""The web page: `/` serves a plain HTML/JS client of the HTTP API, its files under `/web/`.

No build step and no network: the page is the committed files in `static/` (ES modules, no
framework), and it talks only to this app's `/v1` API. These routes are not part of the API and
stay out of its OpenAPI document (flask-smorest documents only its own blueprints).
"""

from __future__ import annotations

import flask

blp = flask.Blueprint("web", __name__, static_folder="static", static_url_path="/web")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@blp.route("/")
def index() -> flask.Response:
    """The page: create a game, play a seat, replay any game."""
    response = blp.send_static_file("index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.after_request
def _page_headers(response: flask.Response) -> flask.Response:
    """Everything the page needs comes from this app; nothing sniffs or frames it."""
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response
