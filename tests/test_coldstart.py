"""What short commands import: keep ``cpumanager`` and ``cpumanager.cli.main`` light.

Scripts run ``cpumanager --version`` and other short commands in loops (issue 12: at most 5x
a bare interpreter). ``cpumanager/__init__.py`` loads its public names on first use and
``cli/main.py`` answers ``--version`` before importing click; whoever adds a front door to
either must keep these lists true (import heavy things inside the function that needs them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
# Never loaded by `import cpumanager` / `import cpumanager.cli.main` / `cpumanager --version`.
HEAVY = (
    "click",
    "rich",
    "yaml",
    "grpc",
    "google.protobuf",
    "prometheus_client",
    "psutil",
    "fnv_hash_fast",
    "cpumanager.core.allocation",
    "cpumanager.core.merge",
    "cpumanager.core.topology",
    "cpumanager.checkpoint",
    "cpumanager.presets",
    "cpumanager.formats",
)


def _modules_after(code: str, *args: str) -> set[str]:
    probe = (
        "import sys\n"
        f"sys.argv = ['cpumanager', *{list(args)!r}]\n"
        f"{code}\n"
        "import json; sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    return set(json.loads(done.stderr))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("code", ["import cpumanager", "import cpumanager.cli.main"])
def test_importing_the_front_doors_loads_nothing_heavy(code: str) -> None:
    assert _heavy(_modules_after(code)) == []


def test_version_is_answered_without_click() -> None:
    modules = _modules_after("from cpumanager.cli.main import main\nmain(['--version'])")
    assert _heavy(modules) == []


def test_public_names_still_load_on_use() -> None:
    import cpumanager

    assert cpumanager.CPUSet.parse("0-2") == cpumanager.CPUSet([0, 1, 2])
    assert "CPUTopology" in dir(cpumanager)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cpumanager.nope  # noqa: B018


def test_version_text_is_clicks() -> None:
    from click.testing import CliRunner

    from cpumanager.cli.main import cli

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    fast = subprocess.run(
        [sys.executable, "-m", "cpumanager", "--version"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert fast.stdout == CliRunner().invoke(cli, ["--version"]).output


def test_empty_batch_does_not_load_the_compute_code() -> None:
    modules = _modules_after(
        "import io\nsys.stdin = io.TextIOWrapper(io.BytesIO(b''))\n"
        "from cpumanager.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass",
        "compute",
        "take",
        "--batch",
    )
    assert "cpumanager.cli.compute" in modules
    assert "cpumanager.cli.compute_protocol" not in modules
    assert "cpumanager.core.allocation" not in modules
