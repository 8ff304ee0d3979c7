"""The committed fixture nodes are what their generator writes today."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nodeview.fixture_nodes import NODES_DIR, build_node, node_specs

REGENERATE = "regenerate them: PYTHONPATH=src python -m tests.nodeview.fixture_nodes"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("spec", node_specs(), ids=lambda spec: spec.name)
def test_committed_tree_matches_the_generator(spec, tmp_path: Path) -> None:
    build_node(spec, tmp_path / spec.name)
    fresh, committed = _files(tmp_path / spec.name), _files(NODES_DIR / spec.name)
    assert sorted(fresh) == sorted(committed), REGENERATE
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert changed == [], f"{changed} differ; if the change is intended, {REGENERATE}"
