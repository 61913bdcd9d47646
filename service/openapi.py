"""`python -m service.openapi`: print the OpenAPI document the code describes, as YAML."""

from __future__ import annotations

from typing import Any

from service.api.spec_routes import as_yaml, spec_of
from service.app import create_app
from service.play.ports import NoDispatcher


def spec_dict() -> dict[str, Any]:
    """The OpenAPI document of the app (clients connect lazily: no Redis is needed)."""
    app = create_app({"REDIS_URL": "redis://localhost:1/0"}, dispatcher=NoDispatcher())
    return spec_of(app)


def spec_yaml() -> str:
    """The document as YAML with a stable key order."""
    return as_yaml(spec_dict())


if __name__ == "__main__":
    print(spec_yaml(), end="")
