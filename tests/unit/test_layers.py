"""The import contracts of pyproject.toml ([tool.importlinter]) hold: import-linter checks every one of them."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from types import FunctionType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def contracts() -> list[dict[str, Any]]:
    """The contracts as pyproject.toml declares them."""
    with (ROOT / "pyproject.toml").open("rb") as config:
        found: list[dict[str, Any]] = tomllib.load(config)["tool"]["importlinter"]["contracts"]
    return found


def lint_imports() -> tuple[int, str]:
    """Run import-linter over this checkout (not an installed copy); its exit status and its report."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="1000", NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache", "--no-logo", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_every_import_contract_is_kept() -> None:
    status, report = lint_imports()
    names = [contract["name"] for contract in contracts()]
    broken = [name for name in names if f"{name} BROKEN" in report]
    assert not broken, f"broken import contracts: {broken}\n{report}"
    assert status == 0, f"import-linter did not run cleanly:\n{report}"
    assert f"Contracts: {len(names)} kept, 0 broken." in report, report


def test_every_route_module_is_in_the_independence_contract() -> None:
    """A new service/api/*_routes.py is covered too: import-linter's wildcards take whole module names only."""
    routes = {f"service.api.{path.stem}" for path in (ROOT / "service" / "api").glob("*_routes.py")}
    independent = [contract for contract in contracts() if contract["type"] == "independence"]
    covered = {module for contract in independent for module in contract["modules"]}
    assert routes, "no route module found"
    assert routes <= covered, f"route modules missing from the independence contract: {sorted(routes - covered)}"


ADAPTER_METHODS_MAX = 12  # issue 36: the store behind small interfaces


def public_methods(cls: type) -> list[str]:
    """The public methods a class defines itself (properties and data fields are not methods)."""
    return [
        name
        for name, member in vars(cls).items()
        if not name.startswith("_") and isinstance(member, (FunctionType, classmethod, staticmethod))
    ]


def test_no_storage_adapter_has_more_than_twelve_public_methods() -> None:
    """Each class of service/storage/ stays small: a concern that grows gets an adapter of its own."""
    sizes = {}
    for path in sorted((ROOT / "service" / "storage").glob("*.py")):
        module = importlib.import_module(f"service.storage.{path.stem}")
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__:
                sizes[f"{module.__name__}.{cls.__name__}"] = len(public_methods(cls))
    assert "service.storage.event_store.EventStore" in sizes, "the adapters were not found"
    large = {name: size for name, size in sizes.items() if size > ADAPTER_METHODS_MAX}
    assert not large, f"storage classes with more than {ADAPTER_METHODS_MAX} public methods: {large}"
