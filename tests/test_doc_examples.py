"""Every python block of README.md and docs/*.md runs, and imports only from ``cpumanager``.

README blocks run from the repository root (they read ``examples/``). docs blocks run in a
scratch directory holding a copy of the kubeadm fixture node as ``node/`` and its snapshot
as ``snapshot.json``, the files those examples name.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.runner import run_main
from tests.nodeview.fixture_nodes import NODES_DIR

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[tuple[str, Path, str]]:
    found = []
    for doc in DOCS:
        for index, match in enumerate(_BLOCK.finditer(doc.read_text(encoding="utf-8"))):
            found.append((f"{doc.name}-{index}", doc, match.group(1)))
    return found


BLOCKS = blocks()


def test_there_are_examples_to_run() -> None:
    assert any(doc.name == "README.md" for _, doc, _ in BLOCKS)
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize(("doc", "code"), [b[1:] for b in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_example_imports_only_the_front_door(doc: Path, code: str) -> None:
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cpumanager"):
            assert node.module == "cpumanager", f"{doc.name}: from {node.module} import ..."
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert not alias.name.startswith("cpumanager."), f"{doc.name}: {alias.name}"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("docs")
    node = where / "node"
    shutil.copytree(NODES_DIR / "kubeadm", node)
    result = run_main(
        [
            "node", "snapshot", "--root", node, "--kubelet-root", node / "var/lib/kubelet",
            "--pods", node / "pods.json", "--socket", node / "no.sock",
            "--output-file", where / "snapshot.json",
        ]
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return where


@pytest.mark.parametrize(("doc", "code"), [b[1:] for b in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_example_runs(doc: Path, code: str, scratch: Path) -> None:
    cwd = ROOT if doc.name == "README.md" else scratch
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{doc.name}:\n{code}\n{done.stderr}"
