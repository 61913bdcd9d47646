"""The garbage collector in long-running processes (the API's gunicorn workers, the RQ workers).

Python's full collection walks every tracked object, the modules, the app and its schemas included: in an
API process that was 12-34 ms with the process stopped, every few seconds under load, and the requests of
those moments waited for it (docs/performance.md, "Measured a fifth time"). What a process built to start
lives as long as it does, so it is frozen once the process is ready: the collector leaves it alone and a full
collection walks only what came later (the games cached, the requests in flight).
"""

from __future__ import annotations

import gc


def freeze_what_startup_built() -> None:
    """Collect once, then move every object left into the collector's permanent generation. Call it when a
    process has built what it keeps (its app, its services), before its first request or job."""
    gc.collect()
    gc.freeze()
