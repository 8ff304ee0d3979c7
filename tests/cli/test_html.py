"""``node show -o html`` and ``fleet capacity -o html``: self-contained pages, checked as
text and, when Debian's chromium is installed, as pixels of a headless screenshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from cpumanager.cli.html.common import PALETTE, RESERVED, SHARED
from cpumanager.cli.html.fleet_page import copies_colour, free_colour
from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.png import colours
from tests.cli.runner import run_main
from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots
from tests.nodeanswers.snapshots import fixture_snapshot

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)"
)


def _snap(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot(name)))
    return path


def _self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    lowered = page.lower()
    for outside in ("http://", "https://", "<script", "<link", "src=", "@import", "url("):
        assert outside not in lowered, outside


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _has(found: Counter[tuple[int, int, int]], hex_colour: str, *, pixels: int = 50) -> bool:
    """At least ``pixels`` pixels within 2 of the colour in each channel."""
    want = _rgb(hex_colour)
    near = sum(
        n for c, n in found.items() if all(abs(a - b) <= 2 for a, b in zip(c, want, strict=True))
    )
    return near >= pixels


def _screenshot(page: str, tmp_path: Path) -> Counter[tuple[int, int, int]]:
    html = tmp_path / "page.html"
    html.write_text(page, encoding="utf-8")
    png = tmp_path / "page.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--no-first-run",
                "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", f"--screenshot={png}",
                "--window-size=1200,900", html.as_uri(),
            ],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    return colours(png)


def test_node_page_is_self_contained_and_names_every_holder(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "gpu"), "-o", "html"])
    assert result.exit_code == 0, result.stderr
    page = result.output
    _self_contained(page)
    assert 'title="CPU 1: ml/trainer-a train (exclusive)"' in page
    assert 'title="CPU 0: reserved for the system"' in page
    assert page.count('class="socket"') == 2


def test_degraded_node_page_carries_the_refusal(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "corrupt-checkpoint"), "-o", "html"])
    assert result.exit_code == 4
    assert "DEGRADED" in result.output
    assert "checksum mismatch" in result.output
    assert "degraded" in result.stderr


def test_hostile_names_are_inert() -> None:
    from cpumanager.cli.html.node_page import node_page
    from cpumanager.presets import get_preset

    topology = get_preset("dual-socket-ht")
    picture = {
        "node": "<script>alert(1)</script>", "cpuManagerPolicy": "static",
        "topologyManagerPolicy": "none", "topologyManagerScope": "container",
        "memoryManagerPolicy": "None", "reserved": "0", "shared": "0,2-11",
        "numaNodes": [{"id": 0, "exclusive": [{"cpus": "1", "holder": '"><img src=x>'}]}],
    }  # fmt: skip
    page = node_page(picture, topology)
    assert "<script>alert" not in page
    assert '"><img' not in page


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("html-fleet")
    write_snapshots(root / "snaps", 8)
    (root / "pod.yaml").write_text(guaranteed_pod_yaml("2"))
    return root / "pod.yaml", root / "snaps"


def test_fleet_page_is_self_contained(fleet: tuple[Path, Path]) -> None:
    pod, snaps = fleet
    argv = ["fleet", "capacity", pod, "--snapshots", snaps, "--workers", "1", "-o", "html"]
    result = run_main(argv)
    assert result.exit_code == 0, result.stderr
    _self_contained(result.output)
    assert result.output.count('class="sq"') == 8
    assert "NUMA 0 free" in result.output


@needs_chromium
def test_node_page_renders_holders_reserved_and_shared(tmp_path: Path) -> None:
    page = run_main(["node", "show", _snap(tmp_path, "gpu"), "-o", "html"]).output
    found = _screenshot(page, tmp_path)
    # two exclusive holders on the gpu node, the reserved CPUs, the shared pool
    for colour in (PALETTE[0], PALETTE[1], RESERVED, SHARED):
        assert _has(found, colour), colour
    assert not _has(found, PALETTE[2])  # no third holder is painted


@needs_chromium
def test_fleet_page_renders_the_heat_map(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    pod, snaps = fleet
    argv = ["fleet", "capacity", pod, "--snapshots", snaps, "--workers", "1"]
    page = run_main([*argv, "-o", "html"]).output
    found = _screenshot(page, tmp_path)
    import json

    counts = json.loads(run_main([*argv, "-o", "json"]).output)["perNode"]
    most = max(counts.values())
    assert _has(found, copies_colour(most, most), pixels=100)  # the busiest node's square
    assert _has(found, free_colour(1, 1), pixels=100)  # NUMA nodes with every CPU free
