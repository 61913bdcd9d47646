"""The committed openapi.yaml is what the code describes, and it is valid OpenAPI 3."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from service.openapi import spec_yaml

COMMITTED = Path(__file__).resolve().parents[2] / "openapi.yaml"


@pytest.fixture(scope="module")
def committed_text() -> str:
    assert COMMITTED.is_file(), f"{COMMITTED} is missing: run `make openapi`"
    return COMMITTED.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def spec(committed_text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(committed_text)
    return loaded


def test_committed_openapi_matches_the_code(committed_text: str) -> None:
    generated = spec_yaml()
    if committed_text != generated:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed_text.splitlines(keepends=True),
                    generated.splitlines(keepends=True),
                    "openapi.yaml (committed)",
                    "service.openapi.spec_yaml() (from the code)",
                )
            )[:80]
        )
        pytest.fail(f"openapi.yaml is out of date with the code: run `make openapi` and commit it.\n{diff}")


def test_openapi_is_valid_openapi_3(spec: dict[str, Any]) -> None:
    validate(spec)
    assert spec["openapi"].startswith("3.")


def test_openapi_describes_every_endpoint(spec: dict[str, Any]) -> None:
    paths = spec["paths"]
    expected = {
        "/v1/catalog": {"get"},
        "/v1/games": {"post"},
        "/v1/games/{game_id}": {"get"},
        "/v1/games/{game_id}/actions": {"post"},
        "/v1/games/{game_id}/events": {"get"},
        "/healthz": {"get"},
        "/readyz": {"get"},
        "/metrics": {"get"},
    }
    for path, methods in expected.items():
        assert path in paths, f"{path} is not in openapi.yaml"
        assert methods <= set(paths[path]), (path, set(paths[path]))
    assert "201" in paths["/v1/games"]["post"]["responses"]
    action = paths["/v1/games/{game_id}/actions"]["post"]
    for status in ("400", "401", "404", "409", "422", "503"):
        content = action["responses"][status]["content"]
        assert "application/problem+json" in content, (status, content)
    headers = {p["name"] for p in action.get("parameters", []) if p.get("in") == "header"}
    assert {"Idempotency-Key", "If-Match"} <= headers
    assert spec["components"]["securitySchemes"]["seatToken"] == {"type": "http", "scheme": "bearer"}
