"""Lint of the API contract: every operation named, no unused component, every header, action type
and problem code documented."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from service.app import HTTP_CODES

ROOT = Path(__file__).resolve().parents[2]
METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
ERROR_CALL = re.compile(r'\b(ApiError|InvalidInput|RuleViolation|_refuse)\(\s*(?:(\d{3}),\s*)?"([a-z0-9_]+)"')
REFUSAL_TUPLE = re.compile(r'return "([a-z0-9_]+)", f?"')  # go5's set refusals: (code, detail)
TABLE_ROW = re.compile(r"^\| `([a-z0-9_]+)` \| (\d{3}|other) \|", re.MULTILINE)


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    return loaded


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(path, method, operation) of every operation in the document."""
    return [(path, m, op) for path, item in spec["paths"].items() for m, op in item.items() if m in METHODS]


def test_spec_passes_openapi_spec_validator(spec: dict[str, Any]) -> None:
    validate(spec)


def test_every_operation_has_a_unique_operation_id(spec: dict[str, Any]) -> None:
    named = [op.get("operationId") for _, _, op in operations(spec)]
    missing = [f"{m.upper()} {path}" for path, m, op in operations(spec) if not op.get("operationId")]
    assert not missing, f"operations without an operationId: {missing}"
    assert len(set(named)) == len(named) >= 15


def test_no_component_is_unused(spec: dict[str, Any]) -> None:
    text = json.dumps(spec)
    unused = [
        f"{section}/{name}"
        for section, entries in spec["components"].items()
        if section != "securitySchemes"
        for name in entries
        if f'"#/components/{section}/{name}"' not in text
    ]
    assert not unused, f"components that nothing refers to: {unused}"


def test_every_catalog_action_type_is_documented(client: FlaskClient, spec: dict[str, Any]) -> None:
    action_type = spec["components"]["schemas"]["Action"]["properties"]["type"]
    for game in client.get("/v1/catalog").get_json()["games"]:
        assert game["actions"], game["id"]
        for kind in game["actions"]:
            assert kind in action_type["enum"], (game["id"], kind)
        assert f"{game['id']}: {', '.join(game['actions'])}" in action_type["description"]


def test_enums_are_the_same_in_every_schema(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    for field, holders in {
        "seed_source": ("GameCreated", "Record"),
        "status": ("GameView", "Record", "Replay"),
        "kind": ("SeatRequest", "SeatCreated", "SeatView"),
        "level": ("SeatRequest", "SeatCreated", "SeatView"),
    }.items():
        enums = {name: schemas[name]["properties"][field].get("enum") for name in holders}
        assert len({json.dumps(e) for e in enums.values()}) == 1 and None not in enums.values(), (field, enums)


def test_headers_the_server_sends_and_takes_are_declared(spec: dict[str, Any]) -> None:
    paths = spec["paths"]
    created = paths["/v1/games"]["post"]["responses"]
    assert created["201"]["headers"]["Location"]["required"] is True
    assert "ETag" in paths["/v1/games/{game_id}"]["get"]["responses"]["200"]["headers"]
    action = paths["/v1/games/{game_id}/actions"]["post"]
    assert "ETag" in action["responses"]["409"]["headers"]
    taken = {p["name"] for p in action["parameters"] if "name" in p}
    assert {"Idempotency-Key", "If-Match"} <= taken
    request_id = {"$ref": "#/components/parameters/RequestId"}
    assert spec["components"]["parameters"]["RequestId"]["name"] == "X-Request-Id"
    for path, method, op in operations(spec):
        assert request_id in op["parameters"], (method, path)
        for status, response in op["responses"].items():
            if "$ref" in response:
                response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
            assert "X-Request-Id" in response.get("headers", {}), (method, path, status)
            assert (status == "429") == ("Retry-After" in response["headers"]), (method, path, status)


def test_a_real_answer_sends_only_declared_headers(client: FlaskClient, spec: dict[str, Any]) -> None:
    answer = client.post("/v1/games", json={"game": "golf", "seats": [{"kind": "human"}, {"kind": "bot"}]})
    declared = set(spec["paths"]["/v1/games"]["post"]["responses"]["201"]["headers"])
    standard = {"Content-Type", "Content-Length"}
    assert answer.status_code == 201
    assert set(answer.headers.keys()) - standard == declared, answer.headers
    game = client.get(answer.headers["Location"])
    assert set(game.headers.keys()) - standard == set(
        spec["paths"]["/v1/games/{game_id}"]["get"]["responses"]["200"]["headers"]
    )


def codes_in_the_code() -> dict[str, str]:
    """Every problem code the source raises, with its status (InvalidInput: 400, the rules: 422)."""
    found: dict[str, str] = {code: str(status) for status, code in HTTP_CODES.items()}
    for source in [*(ROOT / "domain").rglob("*.py"), *(ROOT / "service").rglob("*.py")]:
        text = source.read_text(encoding="utf-8")
        for kind, status, code in ERROR_CALL.findall(text):
            found[code] = status or ("400" if kind == "InvalidInput" else "422")
        found.update(dict.fromkeys(REFUSAL_TUPLE.findall(text), "422"))
    return found


def test_every_problem_code_is_documented_with_its_status() -> None:
    doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = doc.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    table = dict(TABLE_ROW.findall(section))
    rules = section.split("Every other code is a refusal by the rules", 1)[1]
    found = codes_in_the_code()
    assert len(found) > 60 and "http_error" in table
    for code, status in found.items():
        if code in table:
            assert table[code] == status, (code, table[code], status)
        else:
            assert status == "422" and f"`{code}`" in rules, f"problem code {code} ({status}) is not in docs/api.md"
