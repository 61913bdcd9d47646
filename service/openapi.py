"""`python -m service.openapi`: print the OpenAPI document the code describes, as YAML."""

from __future__ import annotations

from typing import Any

import yaml

from service.app import create_app
from service.dispatch import NoDispatcher


def spec_dict() -> dict[str, Any]:
    """The OpenAPI document of the app (clients connect lazily: no Redis is needed)."""
    app = create_app({"REDIS_URL": "redis://localhost:1/0"}, dispatcher=NoDispatcher())
    spec: dict[str, Any] = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    return spec


def spec_yaml() -> str:
    """The document as YAML with a stable key order."""
    return yaml.safe_dump(spec_dict(), sort_keys=True, allow_unicode=True)


if __name__ == "__main__":
    print(spec_yaml(), end="")
