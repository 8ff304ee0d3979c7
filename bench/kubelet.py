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
    best = float("inf")
    spent = 0.0
    count = 0
    clock = time.thread_time
    while count < calls or spent < budget_s:
        start = clock()
        func()
        elapsed = clock() - start
        best = min(best, elapsed)
        spent += elapsed
        count += 1
    return best * 1e6


def load_note() -> str:
    """The machine's load, printed with every table (figures from a busy machine vary)."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"
