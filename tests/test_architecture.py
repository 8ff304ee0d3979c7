"""The pure core stays pure, and the layers point the right way."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "cpumanager"
BANNED = {
    "os", "io", "pathlib", "shutil", "subprocess", "socket", "select", "signal", "threading",
    "asyncio", "time", "random", "logging", "tempfile", "sys", "click", "rich", "yaml",
    "psutil", "prometheus_client",
}  # fmt: skip
ALLOWED_INTERNAL = {"core": ("cpumanager.core", "cpumanager.errors")}
ALLOWED_INTERNAL["checkpoint"] = (*ALLOWED_INTERNAL["core"], "cpumanager.checkpoint")
ALLOWED_INTERNAL["formats"] = (*ALLOWED_INTERNAL["core"], "cpumanager.formats")
ALLOWED_INTERNAL["presets"] = (*ALLOWED_INTERNAL["formats"], "cpumanager.presets")
ALLOWED_INTERNAL["nodeview"] = (
    *ALLOWED_INTERNAL["formats"],
    "cpumanager.checkpoint",
    "cpumanager.nodeview",
)
# The node answers drive the managers (above sim in the layers) but do no I/O either.
ALLOWED_INTERNAL["nodeanswers"] = ("cpumanager",)


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize(
    "package", ["core", "checkpoint", "formats", "presets", "nodeview", "nodeanswers"]
)
def test_pure_packages_import_no_effects(package: str) -> None:
    offences = []
    for path in sorted((SRC / package).rglob("*.py")):
        for lineno, module in _imports(path):
            top = module.split(".")[0]
            internal_ok = module.startswith(ALLOWED_INTERNAL[package])
            if top in BANNED or (top == "cpumanager" and not internal_ok):
                offences.append(f"{path.relative_to(SRC)}:{lineno} imports {module}")
    assert offences == []


def test_layer_contract_holds() -> None:
    tool = shutil.which("lint-imports")
    if tool is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run([tool], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


MAX_MODULE_LINES = 450


def test_no_module_is_over_the_size_limit() -> None:
    """Issue 10: a module past 450 lines holds more than one concept; split it by concept."""
    modules = sorted(SRC.rglob("*.py"))
    assert len(modules) > 50  # the walk found the package, not an empty folder
    too_long = []
    for path in modules:
        with path.open("rb") as handle:
            count = sum(1 for _ in handle)
        if count > MAX_MODULE_LINES:
            too_long.append(f"{path.relative_to(SRC)}: {count} lines")
    assert too_long == [], f"split by concept (limit {MAX_MODULE_LINES}): {too_long}"
