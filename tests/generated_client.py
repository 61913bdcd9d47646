"""A Python client generated from the committed openapi.yaml by openapi-python-client, for the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = Path(sys.executable).parent / "openapi-python-client"
# no post hooks: the generator would run ruff on its output, which the tests do not need
GENERATOR_CONFIG = "post_hooks: []\n"


def generate_client(folder: Path, package: str) -> Path:
    """Generate the client into `folder / package`, returning that path. Any generator warning fails."""
    config = folder / "generator.yaml"
    config.write_text(GENERATOR_CONFIG)
    command = [str(GENERATOR), "generate", "--path", str(ROOT / "openapi.yaml")]
    command += ["--output-path", str(folder / package), "--meta", "none", "--config", str(config)]
    command += ["--fail-on-warning"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    printed = done.stdout + done.stderr
    assert done.returncode == 0, f"the generator failed on openapi.yaml:\n{printed}"
    unread = "warning" in printed.lower() or "Unable" in printed
    assert not unread, f"the generator could not read all of openapi.yaml:\n{printed}"
    return folder / package
