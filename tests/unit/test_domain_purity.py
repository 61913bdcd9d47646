"""domain/ imports only the standard library and itself; no clock or unseeded randomness (docs/design.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import domain

DOMAIN = Path(domain.__file__).resolve().parent
FORBIDDEN = frozenset({"random", "time", "datetime"})
SECRETS_ALLOWED_IN = frozenset({"shuffle.py"})  # new_server_seed (C-4) is the one use of the OS random source


def imported_modules(source: str, package: str) -> list[str]:
    """Every module a source file imports, absolute; relative imports resolve inside `package`."""
    modules: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                modules.append(f"{base}.{node.module}" if node.module else base)
            else:
                assert node.module is not None
                modules.append(node.module)
    return modules


def problems(source: str, relative: str) -> list[str]:
    """What is wrong with one domain file's imports."""
    package = ".".join(["domain", *Path(relative).parent.parts])
    found = []
    for module in imported_modules(source, package):
        top = module.split(".")[0]
        if top == "domain":
            continue
        if top not in sys.stdlib_module_names:
            found.append(f"{relative}: imports {module}, not from the standard library")
        if top in FORBIDDEN:
            found.append(f"{relative}: imports {module} (no clock or unseeded randomness in domain/)")
        if top == "secrets" and relative not in SECRETS_ALLOWED_IN:
            found.append(f"{relative}: imports secrets (only shuffle.py may, for new_server_seed)")
    return found


def domain_files() -> list[Path]:
    return sorted(DOMAIN.rglob("*.py"))


def test_the_check_sees_the_domain_modules() -> None:
    """The scan covers the domain package, so an empty pass cannot hide a wrong path."""
    names = {path.relative_to(DOMAIN).as_posix() for path in domain_files()}
    assert {"__init__.py", "cards.py", "shuffle.py", "options.py", "events.py", "errors.py", "engine.py"} <= names
    assert "golf.py" in names


@pytest.mark.parametrize("path", domain_files(), ids=lambda p: p.relative_to(DOMAIN).as_posix())
def test_domain_imports_only_stdlib_and_domain(path: Path) -> None:
    """Every import under domain/ is the standard library or domain; no random, time or datetime."""
    assert problems(path.read_text(encoding="utf-8"), path.relative_to(DOMAIN).as_posix()) == []


@pytest.mark.parametrize(
    ("source", "relative"),
    [
        ("import random", "golf.py"),
        ("from random import shuffle", "golf.py"),
        ("import time", "engine.py"),
        ("from datetime import datetime", "events.py"),
        ("import secrets", "golf.py"),
        ("import flask", "cards.py"),
        ("from redis.client import Redis", "bots/golf.py"),
        ("def f():\n    import numpy\n", "engine.py"),
        ("from service import app", "golf.py"),
    ],
)
def test_the_check_catches_forbidden_imports(source: str, relative: str) -> None:
    """The checker itself flags what it must (so the test above can fail)."""
    assert problems(source, relative)


@pytest.mark.parametrize(
    ("source", "relative"),
    [
        ("import secrets", "shuffle.py"),
        ("from __future__ import annotations\nimport hashlib, hmac", "shuffle.py"),
        ("from . import golf", "bots/__init__.py"),
        ("from .cards import rank_of", "golf.py"),
        ("from domain.engine import Game", "bots/golf.py"),
    ],
)
def test_the_check_allows_stdlib_and_domain(source: str, relative: str) -> None:
    """Standard-library and domain imports (absolute or relative) pass."""
    assert problems(source, relative) == []


def test_importing_the_domain_loads_only_stdlib_modules() -> None:
    """At run time too: every domain module imports without site-packages and loads only the standard library."""
    modules = sorted(
        ".".join(["domain", *path.relative_to(DOMAIN).with_suffix("").parts]).removesuffix(".__init__")
        for path in domain_files()
    )
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    # -S: no site-packages at all, so a third-party import fails outright; -E: no PYTHONPATH.
    run = subprocess.run([sys.executable, "-S", "-E", "-c", code], capture_output=True, text=True, cwd=DOMAIN.parent)
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert "domain" in loaded
    assert loaded - {"domain", "__main__"} <= sys.stdlib_module_names
