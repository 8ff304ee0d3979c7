"""Bounded reading and YAML loading shared by every text-file adapter (hostile inputs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cpumanager.adapters._text import (
    load_yaml_documents,
    manifest_files_in,
    read_bounded_bytes,
    read_utf8_text,
)
from cpumanager.adapters.kubelet_config_file import read_kubelet_config
from cpumanager.adapters.manifests import load_pods, pods_from_text
from cpumanager.errors import ConfigError, InputError, WorkloadError

DEEP = [
    ("flow [ x30000 (segfaulted libyaml's composer)", "[" * 30_000),
    ("flow { x30000", "{a: " * 30_000),
    ("flow [ x100000", "[" * 100_000 + "]" * 100_000),
    ("block x3000", "".join(" " * i + "- a:\n" for i in range(0, 6_000, 2))),
    ("compact block sequences", "- " * 5_000 + "x"),
]


@pytest.mark.parametrize("text", [c[1] for c in DEEP], ids=[c[0] for c in DEEP])
def test_deep_yaml_is_refused_before_the_composer(text: str) -> None:
    with pytest.raises(WorkloadError, match=r"^src: nested more than 100 levels deep") as info:
        load_yaml_documents(text, source="src", error=WorkloadError, remedy="fix it")
    assert "\n" not in info.value.message


def test_moderate_nesting_loads() -> None:
    text = "[" * 90 + "]" * 90
    assert load_yaml_documents(text, source="s", error=InputError, remedy="r")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: " + "1" * 4_301, "an integer has more than 4300 digits"),
        ("a: 2001-13-45", "a value cannot be read"),
        ("a: &x [1, *x]", "the alias \\*x refers to a collection that contains it"),
        ("a: &x {b: *x}", "refers to a collection that contains it"),
    ],
    ids=["huge int", "bad date", "recursive list", "recursive map"],
)
def test_unbuildable_values_are_one_line_errors(text: str, expected: str) -> None:
    with pytest.raises(WorkloadError, match=expected) as info:
        load_yaml_documents(text, source="s", error=WorkloadError, remedy="fix it")
    assert "\n" not in info.value.message


def test_pods_from_text_with_a_huge_integer_is_a_workload_error() -> None:
    with pytest.raises(WorkloadError, match="more than 4300 digits"):
        pods_from_text("kind: Pod\nspec: {x: " + "7" * 5_000 + "}", source="-")


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_utf8_text(fifo, what="manifest file", utf8_remedy="r")
    with pytest.raises(InputError, match="not a regular file"):
        read_utf8_text(Path("/dev/zero"), what="manifest file", utf8_remedy="r")
    with pytest.raises(InputError, match="is a directory"):
        read_utf8_text(tmp_path, what="manifest file", utf8_remedy="r")


def test_size_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a" * 101)
    with pytest.raises(InputError, match="has 101 bytes, more than the 100 allowed"):
        read_bounded_bytes(path, what="manifest file", max_bytes=100)
    assert read_bounded_bytes(path, what="x", max_bytes=101)[0] == b"a" * 101


def test_symlinks_refused_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text("a: 1\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    with pytest.raises(InputError, match="is a symbolic link"):
        read_bounded_bytes(link, what="workload file", max_bytes=100, follow_symlinks=False)
    assert read_bounded_bytes(link, what="x", max_bytes=100)[0] == b"a: 1\n"


def test_manifest_listing_skips_symlinks_and_fifos(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("{}")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    os.mkfifo(tmp_path / "c.yaml")
    assert [p.name for p in manifest_files_in(tmp_path)] == ["a.yaml"]


def test_kubelet_config_bounded_and_deep(tmp_path: Path) -> None:
    fifo = tmp_path / "k.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_kubelet_config(fifo)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (4 * 1024 * 1024 + 1))
    with pytest.raises(InputError, match="larger than 4194304 bytes"):
        read_kubelet_config(big)
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 50_000)
    with pytest.raises(ConfigError, match="nested more than 100 levels"):
        read_kubelet_config(deep)


def test_manifest_file_with_deep_nesting(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("[" * 30_000)
    with pytest.raises(WorkloadError, match=r"pod\.yaml: nested more than 100"):
        load_pods([path])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"\\n\\t\\r0"', "unable to parse reservedSystemCPUs"),
        ('"0' + "9" * 5_000 + '"', "unable to parse reservedSystemCPUs"),  # ids past int64
    ],
    ids=["control characters", "5000 digits"],
)
def test_kubelet_config_values_found_by_the_fuzzer(
    tmp_path: Path, value: str, expected: str
) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(
        f"kind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: {value}\n"
    )
    with pytest.raises(ConfigError, match=expected) as info:
        read_kubelet_config(path)
    assert "\n" not in info.value.message
