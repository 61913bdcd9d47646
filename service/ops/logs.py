"""Structured logs: one JSON object a line, with the request id of the request being served.

Every request gets an id: the client's `X-Request-Id` when it is sane (1 to 128 letters, digits and
`._:-`), else a new one. It is echoed in the answer's `X-Request-Id`, carried by every log line
written while the request is served, and by the request's own line on the logger `cardtable.access`
(method, path without the query, route, status, duration). The HTTP edge keeps the id and writes that
line (service/api/request_log.py); a process that serves no request (a worker) loads no web framework.
"""

from __future__ import annotations

import logging
import logging.config
import re
import uuid
from collections.abc import Callable
from typing import Any

from pythonjsonlogger.json import JsonFormatter

REQUEST_ID_HEADER = "X-Request-Id"
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
ACCESS = logging.getLogger("cardtable.access")


def _no_request() -> str | None:
    return None


_current_request_id: Callable[[], str | None] = _no_request


def read_request_ids_from(current: Callable[[], str | None]) -> None:
    """Where the log finds the id of the request being served (None outside a request): the HTTP edge's."""
    global _current_request_id
    _current_request_id = current


class RequestIdFilter(logging.Filter):
    """Adds `request_id` (null outside a request) and the process kind to every record."""

    def __init__(self, process: str = "api") -> None:
        super().__init__()
        self.process = process

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current_request_id()
        record.process_kind = self.process
        return True


def json_formatter() -> logging.Formatter:
    """One JSON object a line: time, level, logger, process kind and pid, request id, message, extras."""
    return JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(process_kind)s %(process)d %(request_id)s %(message)s",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger", "process": "pid"},
    )


def logging_config(process: str, level: str = "INFO") -> dict[str, Any]:
    """A dictConfig: JSON lines on stderr for the root logger, gunicorn's and RQ's."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "filters": ["request_id"]}
    loggers: dict[str, Any] = {
        name: {"level": level, "handlers": ["console"], "propagate": False} for name in ("gunicorn.error", "rq")
    }
    # One access line a request: the app's (`cardtable.access`, with its request id); gunicorn's is dropped.
    loggers["gunicorn.access"] = {"level": "WARNING", "handlers": [], "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": RequestIdFilter, "process": process}},
        "formatters": {"json": {"()": json_formatter}},
        "handlers": {"console": handler},
        "root": {"level": level, "handlers": ["console"]},
        "loggers": loggers,
    }


def configure(process: str) -> None:
    """Send this process's logs out as JSON lines (`process`: api, worker)."""
    logging.config.dictConfig(logging_config(process))


def request_id_from(header: str | None) -> str:
    """The client's request id when it is sane, else a new one."""
    if header is not None and SANE_REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex
