"""What a long-running process built to start is frozen out of the collector's full walks (service/ops/heap.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def frozen_after(code: str) -> int:
    """The objects frozen in a fresh interpreter after running `code`."""
    script = textwrap.dedent(code) + "\nimport gc; print(gc.get_freeze_count())\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_a_gunicorn_worker_freezes_the_app_it_loaded() -> None:
    assert frozen_after("from service.ops import gunicorn_conf") == 0
    frozen = frozen_after(
        """
        from service.app import create_app
        from service.ops import gunicorn_conf
        app = create_app()
        gunicorn_conf.post_worker_init(None)
        """
    )
    assert frozen > 50_000, f"the app's objects are frozen (got {frozen})"


def test_freezing_collects_the_garbage_first_and_keeps_what_is_in_use() -> None:
    frozen = frozen_after(
        """
        import gc, weakref
        from service.ops import heap
        class Node: pass
        kept = Node(); kept.me = kept
        lost = Node(); lost.me = lost; gone = weakref.ref(lost); del lost
        gc.disable()  # no collection but the one the freeze starts with
        heap.freeze_what_startup_built()
        assert gone() is None, "a cycle nobody holds is collected, not frozen"
        assert kept.me is kept
        assert not any(type(o) is Node for o in gc.get_objects()), "what is frozen is out of the collector's walks"
        """
    )
    assert frozen > 0
