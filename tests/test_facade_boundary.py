"""Drivers use Node and nothing behind it; managers call declared hooks, never probe.

The simulator, the agent and the composition root reach the resource managers only through
``cpumanager.manager.node`` (and the admission result types); the topology manager and the
CPU manager call only what ``HintProvider`` and ``Policy`` declare, so no ``getattr`` /
``hasattr`` with a literal hook name on another object appears in ``manager/`` or
``core/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "cpumanager"
DRIVERS = [*sorted((SRC / "sim").rglob("*.py")), *sorted((SRC / "agent").rglob("*.py"))]
DRIVERS.append(SRC / "app.py")
FACADE_MODULES = {"cpumanager.manager.node", "cpumanager.manager.admission"}
BEHIND_THE_FACADE = {
    "cpu_manager",
    "topology_manager",
    "cpu_provider",
    "memory_provider",
    "device_provider",
}


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_drivers_import_only_the_facade_from_manager() -> None:
    offences = []
    for path in DRIVERS:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
                if module.startswith("cpumanager.manager") and module not in FACADE_MODULES:
                    offences.append(f"{path.relative_to(SRC)}:{node.lineno} imports {module}")
    assert offences == []


def test_drivers_do_not_reach_through_the_node() -> None:
    offences = [
        f"{path.relative_to(SRC)}:{node.lineno} uses .{node.attr}"
        for path in DRIVERS
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Attribute) and node.attr.lstrip("_") in BEHIND_THE_FACADE
    ]
    assert offences == []


def test_managers_and_core_do_not_probe_for_hooks() -> None:
    offences = []
    for path in [*sorted((SRC / "manager").rglob("*.py")), *sorted((SRC / "core").rglob("*.py"))]:
        for node in ast.walk(_tree(path)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in {"getattr", "hasattr"} or len(node.args) < 2:
                continue
            target, name = node.args[0], node.args[1]
            if isinstance(target, ast.Name) and target.id == "self":
                continue  # an object looking at itself probes no collaborator
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                offences.append(f"{path.relative_to(SRC)}:{node.lineno} probes {name.value!r}")
    assert offences == []
