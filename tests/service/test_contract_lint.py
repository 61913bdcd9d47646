"""Lint of the API contract: every operation named, no unused component, every header, action type
and problem code documented."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from domain import engine
from domain.bots import LEVELS
from service.api.action_event_schemas import camel
from service.api.problems import STATUS_OF, status_of
from service.app import HTTP_CODES
from service.play.errors import PlayError, Refusal
from tests.generated_client import generate_client

ROOT = Path(__file__).resolve().parents[2]
METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
ERROR_CALL = re.compile(r'\b(ApiError|InvalidInput|RuleViolation|_refuse)\(\s*(?:(\d{3}),\s*)?"([a-z0-9_]+)"')
PLAY_ERRORS = sorted(STATUS_OF, key=lambda kind: kind.__name__)  # service/play/errors.py, mapped at the edge
PLAY_CALL = re.compile(
    rf'\b({"|".join(k.__name__ for k in PLAY_ERRORS if issubclass(k, Refusal))})\(\s*"([a-z0-9_]+)"'
)  # a refusal that brings its code: InvalidRequest("invalid_seed", ...)
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


def component(spec: dict[str, Any], reference: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The name and schema a `$ref` points to."""
    name = reference["$ref"].removeprefix("#/components/schemas/")
    found: dict[str, Any] = spec["components"]["schemas"][name]
    return name, found


def test_every_catalog_action_type_has_its_variant(client: FlaskClient, spec: dict[str, Any]) -> None:
    """The request body is anyOf the games' actions; each game's is a oneOf told apart by `type`,
    one variant an action type with exactly its ActionSpec's fields, required as the spec says."""
    body = spec["paths"]["/v1/games/{game_id}/actions"]["post"]["requestBody"]["content"]["application/json"]
    _, action = component(spec, body["schema"])
    per_game = dict(component(spec, ref) for ref in action["anyOf"])
    catalog = client.get("/v1/catalog").get_json()["games"]
    assert sorted(per_game) == sorted(f"{camel(game['id'])}Action" for game in catalog)
    for entry in catalog:
        game = engine.get_game(entry["id"])
        union = per_game[f"{camel(game.id)}Action"]
        mapping = union["discriminator"]["mapping"]
        # the document's keys are sorted: compare as sets
        assert union["discriminator"]["propertyName"] == "type" and set(mapping) == set(entry["actions"])
        assert len(union["oneOf"]) == len(mapping) and {r["$ref"] for r in union["oneOf"]} == set(mapping.values())
        for spec_of_type in game.actions:
            name, variant = component(spec, {"$ref": mapping[spec_of_type.type]})
            assert name == f"{camel(game.id)}{camel(spec_of_type.type)}Action"
            fields = [field.name for field in spec_of_type.fields]
            assert set(variant["properties"]) == {"type", *fields, "expected_version"}, name
            assert variant["properties"]["type"] == {"type": "string", "const": spec_of_type.type}
            assert variant["required"] == ["type", *(f.name for f in spec_of_type.fields if f.required)], name
            assert variant["additionalProperties"] is False
            for field in spec_of_type.fields:
                nulls = "null" in json.dumps(variant["properties"][field.name])
                assert nulls == field.nullable, (name, field.name)


def test_every_event_class_of_each_game_has_its_variant(spec: dict[str, Any]) -> None:
    """`<Game>EventRecord` is a oneOf told apart by `type`: one record per event class of the game
    (the engine's included), its `data` with exactly the class's fields but `actor`."""
    schemas = spec["components"]["schemas"]
    assert [ref["$ref"] for ref in schemas["EventRecord"]["anyOf"]] == [
        f"#/components/schemas/{camel(game.id)}EventRecord" for game in engine.all_games()
    ]
    for game in engine.all_games():
        union = schemas[f"{camel(game.id)}EventRecord"]
        mapping = union["discriminator"]["mapping"]
        classes = (*engine.ENGINE_EVENTS, *game.events)
        assert union["discriminator"]["propertyName"] == "type"
        assert set(mapping) == {cls.type_name() for cls in classes}
        for cls in classes:
            name, record = component(spec, {"$ref": mapping[cls.type_name()]})
            assert record["properties"]["type"]["const"] == cls.type_name(), name
            _, data = component(spec, record["properties"]["data"])
            fields = [f.name for f in dataclasses.fields(cls) if f.name != "actor"]
            assert set(data["properties"]) == set(fields), name
            assert set(data.get("required", ())) <= set(fields) and data["additionalProperties"] is False


def test_enums_are_the_same_in_every_schema(spec: dict[str, Any]) -> None:
    """Each enum is one component that every schema holding it refers to."""
    schemas = spec["components"]["schemas"]
    kinds = ("GameView", "Replay", "StepView", "Record")
    views = [f"{camel(game.id)}{kind}" for game in engine.all_games() for kind in kinds]
    records = [f"{camel(game.id)}Record" for game in engine.all_games()]
    for field, (enum, holders) in {
        "seed_source": ("SeedSource", ("GameCreated", *records)),
        "status": ("GameStatus", views),
        "kind": ("SeatKind", ("SeatRequest", "SeatCreated", "SeatView")),
        "level": ("BotLevel", ("SeatRequest", "SeatCreated", "SeatView")),
    }.items():
        assert schemas[enum]["type"] == "string" and (schemas[enum].get("enum") or schemas[enum].get("pattern")), enum
        for name in holders:
            assert schemas[name]["properties"][field]["$ref"] == f"#/components/schemas/{enum}", (name, field)


def test_a_bot_level_is_a_pattern_that_every_level_fits_not_an_enum(spec: dict[str, Any]) -> None:
    """A plug-in adds levels where it is installed (docs/bots.md): the document, the same for every service,
    says what a level looks like and names the built-in ones, and the catalog lists each game's."""
    level = spec["components"]["schemas"]["BotLevel"]
    assert "enum" not in level
    assert all(re.fullmatch(level["pattern"], name) for name in (*LEVELS, "first-legal", "x2"))
    assert not any(re.search(level["pattern"], name) for name in ("", "Greedy", "-x", "a" * 33, "x y"))
    assert all(f"`{name}`" in level["description"] for name in LEVELS)


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


def play_errors() -> list[type[PlayError]]:
    """Every class of service/play/errors.py (the base aside): each must be mapped at the edge."""
    found, todo = [], list(PlayError.__subclasses__())
    while todo:
        kind = todo.pop()
        found.append(kind)
        todo.extend(kind.__subclasses__())
    return found


def codes_in_the_code() -> dict[str, str]:
    """Every problem code the source raises, with its status (InvalidInput: 400, the rules: 422; the play
    layer's exceptions: their status in service/api/problems.py, their own code or the one they are given)."""
    found: dict[str, str] = {code: str(status) for status, code in HTTP_CODES.items()}
    found.update({kind.code: str(status_of(kind)) for kind in play_errors() if "code" in vars(kind)})
    for source in [*(ROOT / "domain").rglob("*.py"), *(ROOT / "service").rglob("*.py")]:
        text = source.read_text(encoding="utf-8")
        for kind, status, code in ERROR_CALL.findall(text):
            found[code] = status or ("400" if kind == "InvalidInput" else "422")
        for name, code in PLAY_CALL.findall(text):
            found[code] = str(status_of(next(k for k in PLAY_ERRORS if k.__name__ == name)))
        found.update(dict.fromkeys(REFUSAL_TUPLE.findall(text), "422"))
    return found


def test_every_play_error_has_its_status_at_the_edge() -> None:
    """A new exception of the play layer gets its status in service/api/problems.py, not the default 500."""
    unmapped = [kind.__name__ for kind in play_errors() if kind not in STATUS_OF and kind is not Refusal]
    assert not unmapped, f"service/api/problems.py STATUS_OF lacks {unmapped}"
    assert {"invalid_seed", "game_not_found", "version_conflict", "stream_damaged"} <= set(codes_in_the_code())


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


def test_a_generated_client_types_the_unions(tmp_path: Path) -> None:
    """openapi-python-client parses every schema without a warning, and the unions come out typed:
    a seat's legal actions are the game's action models, a view is one of the games' views."""
    out = generate_client(tmp_path, "client")
    models = out / "models"
    legal = (models / "golf_you.py").read_text(encoding="utf-8").split("    legal: list[", 1)[1].split("]", 1)[0]
    assert {"GolfDrawAction", "GolfRevealAction", "GolfTakeDiscardAction"} <= set(re.findall(r"\w+", legal))
    result = (models / "action_result.py").read_text(encoding="utf-8")
    assert re.search(r"state: Go5GameView \| GolfGameView \| RommeGameView \| SwitchGameView\n", result), result[:2000]
    then = (models / "go_5_swap_then.py").read_text(encoding="utf-8")
    assert "meld: Go5SwapThenMeld | Unset" in then and "lay_off: Go5SwapThenLayOff | Unset" in then


def test_every_schema_docs_api_names_is_in_the_document(spec: dict[str, Any]) -> None:
    """docs/api.md's schema table names components that exist."""
    doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = doc.split("## Schemas", 1)[1].split("\n## ", 1)[0]
    names = set(re.findall(r"`([A-Z][A-Za-z0-9]+)`", section))
    named = names - {
        "Golf",
        "Romme",
        "Switch",
        "Go5",
        *(cls.type_name() for game in engine.all_games() for cls in game.events),
    }
    assert len(named) > 20, named
    missing = sorted(named - set(spec["components"]["schemas"]))
    assert not missing, f"docs/api.md names schemas the document lacks: {missing}"
