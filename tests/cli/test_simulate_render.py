"""`simulate` output for people: fits 80 columns, sentences and NUMA sets, no Python reprs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from cpumanager.cli.simulate_render import numa_set, render_report
from cpumanager.sim.scenario import load_scenario, parse_scenario
from cpumanager.sim.simulate import simulate

DEMO = Path(__file__).parents[2] / "src/cpumanager/data/demo.yaml"
EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


def rendered(report: dict[str, Any], *, explain: bool, width: int = 80) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    render_report(report, explain=explain, console=console)
    return out.getvalue()


def demo_report() -> dict[str, Any]:
    raw = yaml.safe_load(DEMO.read_text())
    return simulate(parse_scenario(raw, source="demo", base=DEMO.parent)).to_json(explain=True)


@pytest.mark.parametrize("explain", [False, True])
def test_demo_reads_at_80_columns_without_python_reprs(explain: bool) -> None:
    text = rendered(demo_report(), explain=explain)
    assert max(len(line) for line in text.splitlines()) <= 80
    for repr_marker in ("{'", "True}", "False}", "None}", "': ", "[{"):
        assert repr_marker not in text
    assert "provider 0" not in text
    assert "provider 1" not in text


def test_explain_shows_hints_as_numa_sets_and_the_full_error() -> None:
    text = rendered(demo_report(), explain=True)
    assert "cpu             {0}* {1}* {0,1}" in text
    assert "merged hint {0}, preferred: admitted" in text
    assert "TopologyAffinityError: Resources cannot be allocated with Topology locality" in text
    assert "devices: no preference (any NUMA node)" in text
    joined = " ".join(text.split())
    assert "12 CPUs needed, free per node 0:8, 1:6 - no single node has enough" in joined


def test_cells_are_whole_in_the_table_and_the_story_under_explain() -> None:
    plain = rendered(demo_report(), explain=False)
    assert "TopologyAffinityError" in plain
    assert "\u2026" not in plain
    assert "Resources cannot be allocated" not in plain
    assert "--explain shows" in plain


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_fits_80_columns(path: Path) -> None:
    report = simulate(load_scenario(path)).to_json(explain=True)
    text = rendered(report, explain=True)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "{'" not in text
    assert "True}" not in text


@pytest.mark.parametrize(
    ("affinity", "text"), [(None, "any"), ([0], "{0}"), ([0, 1, 3], "{0,1,3}"), ([], "{}")]
)
def test_numa_set(affinity: list[int] | None, text: str) -> None:
    assert numa_set(affinity) == text
