"""Logs of the long-running commands (``extender``, ``node publish``, ``agent``).

``--log-format text`` (default) prints ``cpumanager: <logger>: <message> key=value ...``;
``--log-format json`` prints one JSON object a line: ``time`` (UTC, RFC 3339), ``level``,
``logger``, ``msg`` and the event's fields (camelCase), for log collectors. Both go to
stderr. Every command logs a start line with its listening address or target and the
configuration it loaded (secrets never: a token is logged as set or not); the extender logs
one access line per request.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["LOG_FORMATS", "configure", "log", "log_format_option"]

F = TypeVar("F", bound=Callable[..., Any])
LOG_FORMATS = ("text", "json")
_ROOT = "cpumanager"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    found = getattr(record, "fields", None)
    return dict(found) if isinstance(found, dict) else {}


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        body: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        body.update(_fields(record))
        if record.exc_info:
            body["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(body, default=str, separators=(",", ":"))


class _Text(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        name = record.name.removeprefix(_ROOT + ".")
        words = [f"cpumanager: {name}: {record.getMessage()}"]
        words += [f"{key}={value}" for key, value in _fields(record).items()]
        text = " ".join(words)
        # one line per event, control characters escaped (hostile paths, names)
        return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class _Stderr(logging.Handler):
    """Writes to the stderr of the moment (click's test runner swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # a log line must never stop the service
            self.handleError(record)


def configure(fmt: str, level: str = "info") -> None:
    """Send the ``cpumanager`` loggers (and uvicorn's errors) to stderr in ``fmt``."""
    handler = _Stderr()
    handler.setFormatter(_Json() if fmt == "json" else _Text())
    for name in (_ROOT, "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(getattr(logging, level.upper()))
        logger.propagate = name != _ROOT  # uvicorn's own handlers stay out


def log(name: str, msg: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """One event of logger ``cpumanager.<name>`` with structured ``fields``."""
    logging.getLogger(f"{_ROOT}.{name}").log(level, msg, extra={"fields": fields})


def log_format_option(func: F) -> F:
    """``--log-format text|json``."""
    return click.option(
        "--log-format",
        type=click.Choice(LOG_FORMATS),
        default="text",
        show_default=True,
        help="Log lines on stderr: text, or json (one object a line, for collectors).",
    )(func)
