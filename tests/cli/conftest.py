"""Commands under test configure the ``cpumanager`` loggers (``cli/logs.py``); each test
gets them back as they were, so one test's log format never leaks into another's stderr."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _loggers_restored() -> Iterator[None]:
    names = ("cpumanager", "uvicorn.error")
    saved = {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).level,
                 logging.getLogger(n).propagate) for n in names}  # fmt: skip
    yield
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers = handlers
        logger.setLevel(level)
        logger.propagate = propagate
