"""The commands in README.md and docs/*.md run verbatim from a fresh clone.

Every ```sh block is marked on the line before it:

* ``<!-- runnable -->``: run it; ``exit=N`` says the exit code it ends with (default 0),
  ``needs=TOOL`` skips it when TOOL is not installed;
* ``<!-- not runnable: WHY -->``: shown only (it needs root, a real node, a cluster, the
  network, or installs the package); WHY is said.

The runnable blocks of one file run in order in one scratch directory holding what a clone
has (``examples/``, ``tests/data/nodes/``), so a later block may use a file an earlier one
wrote; ``cpumanager`` on PATH runs this source tree. Each block is one ``sh -e`` script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(?:^|\n)(?P<marker>[^\n]*)\n```sh\n(?P<body>.*?)```", re.S)
_MARKER = re.compile(
    r"<!-- (?:runnable(?P<opts>(?: [a-z]+=[^ ]+)*)|not runnable: (?P<why>[^>]+)) -->"
)


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    body: str
    runnable: bool
    exit_code: int = 0
    needs: str = ""
    why: str = ""


def _blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("body"))
        marker = _MARKER.fullmatch(match.group("marker").strip())
        if marker is None:
            found.append(Block(doc, line, match.group("body"), False, why=""))
            continue
        opts = dict(o.split("=", 1) for o in (marker.group("opts") or "").split())
        found.append(
            Block(
                doc,
                line,
                match.group("body"),
                runnable=marker.group("why") is None,
                exit_code=int(opts.get("exit", "0")),
                needs=opts.get("needs", ""),
                why=(marker.group("why") or "").strip(),
            )
        )
    return found


ALL = [b for doc in DOCS for b in _blocks(doc)]


@pytest.mark.parametrize("block", ALL, ids=lambda b: f"{b.doc.name}:{b.line}")
def test_every_sh_block_is_marked(block: Block) -> None:
    assert block.runnable or block.why, (
        f"{block.doc.name}:{block.line}: mark the block '<!-- runnable -->' or "
        "'<!-- not runnable: why -->' on the line before it"
    )


def _workspace(tmp: Path) -> dict[str, str]:
    shutil.copytree(ROOT / "examples", tmp / "examples")
    shutil.copytree(ROOT / "tests/data/nodes", tmp / "tests/data/nodes")
    bin_dir = tmp / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "cpumanager"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cpumanager "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    env["COLUMNS"] = "80"
    return env


RUNNABLE_DOCS = sorted({b.doc for b in ALL if b.runnable})


@pytest.mark.parametrize("doc", RUNNABLE_DOCS, ids=lambda d: d.name)
def test_runnable_blocks_run_verbatim(doc: Path, tmp_path: Path) -> None:
    env = _workspace(tmp_path)
    for block in (b for b in _blocks(doc) if b.runnable):
        if block.needs and shutil.which(block.needs) is None:
            continue  # said in the marker; the rest of the file still runs
        done = subprocess.run(
            ["sh", "-e", "-c", block.body],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == block.exit_code, (
            f"{doc.name}:{block.line} exited {done.returncode}, not {block.exit_code}\n"
            f"{block.body}\nstdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-2000:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr
