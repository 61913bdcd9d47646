"""gunicorn's settings for the API: `gunicorn -c service/ops/gunicorn_conf.py 'service.app:create_app()'`.

Environment: HOST and PORT (where to listen, default 127.0.0.1:8000), WEB_WORKERS (processes,
default 2), PROMETHEUS_MULTIPROC_DIR (a folder the processes share their metrics in; see
service/ops/metrics.py), SERVER_TIER (`api`, or `stream` for `make run`'s stream tier: the name its
log lines carry).
"""

from __future__ import annotations

import os
from typing import Any

from service.ops import heap, logs, metrics

# gevent: each request is a greenlet, so open live streams and long-polls hold no OS thread (they wait
# on one reader per followed game, service/api/followers.py); up to WORKER_CONNECTIONS open connections a process.
WORKER_CLASS = "gevent"
WORKER_CONNECTIONS = 10000

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_WORKERS", "2"))
worker_class = WORKER_CLASS
worker_connections = WORKER_CONNECTIONS
graceful_timeout = 5
control_socket_disable = True  # one per host by default; the supervisor (or signals) manage the processes
# The access log: the app writes one JSON line per request on the logger `cardtable.access` (with
# its request id, route, status and duration; service/ops/logs.py), so gunicorn's own is off: no file
# here, and the logging config drops the lines of its logger (a logging config turns them on).
accesslog = None
logconfig_dict = logs.logging_config(os.environ.get("SERVER_TIER", "api"))


def child_exit(server: Any, worker: Any) -> None:
    """A gunicorn worker process ended: drop its live gauges from the shared metrics."""
    metrics.process_exited(worker.pid)


def on_starting(server: Any) -> None:
    """Before the first worker: forget the live gauges of an earlier API's processes that were killed."""
    metrics.forget_dead_processes()


def post_worker_init(worker: Any) -> None:
    """A worker process has loaded the app: freeze what that built, out of the collector's full walks."""
    heap.freeze_what_startup_built()
