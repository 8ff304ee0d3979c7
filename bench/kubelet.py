"""Shared by the bench scripts: the kubelet's measured figures and a load-proof timer.

The figures (``kubelet_figures.json``) are the kubelet's, measured as issue 12 describes;
they are data, printed beside ours, never targets baked into code.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIGURES_PATH = Path(__file__).resolve().parent / "kubelet_figures.json"


def figures() -> dict[str, Any]:
    """The kubelet's figures with their source."""
    loaded: dict[str, Any] = json.loads(FIGURES_PATH.read_text())
    return loaded


def best_call_us(func: Callable[[], object], *, budget_s: float = 0.3, calls: int = 5) -> float:
    """The fastest single call in microseconds (at least ``calls`` calls, about ``budget_s``).

    Timed with the thread's CPU clock and the minimum kept: on a shared machine (load above
    the core count) wall time mostly measures waiting for a core; CPU time does not.
    """
    return call_us(func, budget_s=budget_s, calls=calls)[0]


def call_us(
    func: Callable[[], object], *, budget_s: float = 0.3, calls: int = 5
) -> tuple[float, float]:
    """The fastest and the median single call in microseconds, timed as :func:`best_call_us`.

    The median shows what the fastest call hides: on a loaded machine the minimum of a few
    microseconds can be a clock artefact (the thread's CPU clock now and then reports a
    call as nearly free), and the median moves with the load.
    """
    times: list[float] = []
    spent = 0.0
    clock = time.thread_time
    while len(times) < calls or spent < budget_s:
        start = clock()
        func()
        elapsed = clock() - start
        times.append(elapsed)
        spent += elapsed
    times.sort()
    return times[0] * 1e6, times[len(times) // 2] * 1e6


def load_note() -> str:
    """The machine's load, printed with every table (figures from a busy machine vary)."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"
