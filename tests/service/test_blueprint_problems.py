"""The Blueprint documents the problems every route shares (503, 413, 415); a route names only its own."""

from __future__ import annotations

from typing import Any

import flask
import marshmallow as ma
from flask_smorest import Api

from service.api.blueprint import Blueprint


class NoteSchema(ma.Schema):
    text = ma.fields.String(required=True)


def spec_of(blueprint: Blueprint) -> dict[str, Any]:
    """The OpenAPI document of an app that holds only `blueprint`."""
    app = flask.Flask(__name__)
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = Api(app)
    api.register_blueprint(blueprint)
    spec: dict[str, Any] = api.spec.to_dict()
    return spec


def problems(spec: dict[str, Any], path: str, method: str) -> dict[str, str]:
    """The problem responses of one operation: status -> description."""
    responses = spec["paths"][path][method]["responses"]
    return {
        str(status): response["description"]
        for status, response in responses.items()
        if "application/problem+json" in response.get("content", {})
    }


def test_every_route_gets_the_shared_problems_and_names_only_its_own() -> None:
    blp = Blueprint("notes", __name__, url_prefix="/notes")

    @blp.route("", methods=["POST"])
    @blp.arguments(NoteSchema)
    @blp.response(201, NoteSchema)
    @blp.problems(s404="no such notebook")
    def post_note(body: dict[str, Any]) -> dict[str, Any]:
        return body

    @blp.route("/<note_id>/pin", methods=["POST"])
    @blp.response(204)
    @blp.problems(s503="the event store cannot be reached; nothing was written")
    def pin_note(note_id: str) -> None:
        """A POST without a body."""

    @blp.route("/<note_id>")
    @blp.response(200, NoteSchema)
    def get_note(note_id: str) -> dict[str, Any]:
        return {"text": note_id}

    spec = spec_of(blp)
    assert problems(spec, "/notes", "post") == {
        "404": "no such notebook",
        "413": "request body over 64 KiB",
        "415": "the body is not application/json",
        "503": "the event store cannot be reached",
    }
    assert problems(spec, "/notes/{note_id}/pin", "post") == {
        "415": "a body that is not application/json",
        "503": "the event store cannot be reached; nothing was written",  # the route's own wins
    }
    assert problems(spec, "/notes/{note_id}", "get") == {"503": "the event store cannot be reached"}


def test_a_blueprint_that_needs_no_store_has_no_503() -> None:
    blp = Blueprint("plain", __name__, needs_store=False)

    @blp.route("/plain")
    @blp.response(200, NoteSchema)
    def get_plain() -> dict[str, Any]:
        return {"text": "plain"}

    assert problems(spec_of(blp), "/plain", "get") == {}
