"""scripts/run.sh (`make run`) refuses a setting it cannot use before it starts anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("priority", ["fast", "20", "-1", "5x"])
def test_a_stream_priority_that_is_neither_idle_nor_a_nice_value_is_refused(priority: str, tmp_path: Path) -> None:
    env = {**os.environ, "STREAM_PRIORITY": priority, "VAR_DIR": str(tmp_path / "var"), "PORT": "18000"}
    env.pop("REDIS_URL", None)
    run = subprocess.run(["bash", "scripts/run.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 2, run.stderr
    assert f"STREAM_PRIORITY must be idle or a nice value from 0 to 19 (got '{priority}')" in run.stderr
    assert not (tmp_path / "var" / "run").exists(), "nothing was started"
