"""Cgroup paths stay beneath the root, one spelling per cgroup, v1 and ownership (item 6).

``--runtime cgroup`` used to follow symlinks below ``--cgroup-root`` (and overwrote a file
outside it); ``job`` and ``job/.`` passed as two cgroups; only cgroup v2 was written.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from cpumanager.adapters.runtimes import _beneath
from cpumanager.adapters.runtimes.cgroupv2 import (
    CgroupV1Runtime,
    CgroupV2Runtime,
    cgroup_container_id,
    cgroup_runtime,
)
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import RuntimeApplyError
from tests.adapters.runtimes.test_cgroupv2 import fake_tree


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each case with openat2 (when the kernel has it) and with the O_NOFOLLOW walk."""
    if request.param == "walk":
        monkeypatch.setattr(_beneath, "_openat2_works", False)
    return str(request.param)


def test_a_symlink_below_the_root_is_not_followed(tmp_path: Path, resolver: str) -> None:
    (tmp_path / "cg").mkdir()
    root = fake_tree(tmp_path / "cg", "real")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "cpuset.cpus").write_text("precious\n")
    (root / "escape").symlink_to(outside)
    runtime = CgroupV2Runtime(root)
    with pytest.raises(RuntimeApplyError, match="symbolic link"):
        runtime.apply(cgroup_container_id("escape"), CPUSet.parse("1"))
    assert (outside / "cpuset.cpus").read_text() == "precious\n"
    assert not runtime.alive(cgroup_container_id("escape"))


def test_a_symlinked_cpuset_file_is_not_followed(tmp_path: Path, resolver: str) -> None:
    (tmp_path / "cg").mkdir()
    root = fake_tree(tmp_path / "cg", "job")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (root / "job" / "cpuset.cpus").unlink()
    (root / "job" / "cpuset.cpus").symlink_to(victim)
    with pytest.raises(RuntimeApplyError):
        CgroupV2Runtime(root).apply(cgroup_container_id("job"), CPUSet.parse("1"))
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("spelling", ["job", "job/.", "./job", "job//"])
def test_every_spelling_is_one_cgroup(tmp_path: Path, spelling: str) -> None:
    root = fake_tree(tmp_path, "job", initial="0-3")
    runtime = CgroupV2Runtime(root)
    runtime.apply(ContainerID(f"cgroup://{spelling}"), CPUSet.parse("1"))
    runtime.apply(ContainerID("cgroup://job"), CPUSet.parse("2"))
    assert runtime.saved() == {"cgroup://job": "0-3"}
    runtime.restore(ContainerID(f"cgroup://{spelling}"))
    assert (root / "job" / "cpuset.cpus").read_text() == "0-3\n"


def v1_tree(root: Path, *groups: str) -> Path:
    cpuset = root / "cpuset"
    cpuset.mkdir(parents=True)
    (cpuset / "cpuset.cpus").write_text("0-7\n")
    (cpuset / "cpuset.mems").write_text("0-1\n")
    for group in groups:
        directory = cpuset / group
        directory.mkdir(parents=True)
        (directory / "cpuset.cpus").write_text("\n")
        (directory / "cpuset.mems").write_text("\n")
    return root


def test_v1_is_chosen_and_gets_mems(tmp_path: Path) -> None:
    root = v1_tree(tmp_path, "job")
    runtime = cgroup_runtime(root)
    assert isinstance(runtime, CgroupV1Runtime)
    assert runtime.root == root / "cpuset"
    runtime.apply(cgroup_container_id("job"), CPUSet.parse("2-3"))
    assert (root / "cpuset" / "job" / "cpuset.cpus").read_text() == "2-3\n"
    assert (root / "cpuset" / "job" / "cpuset.mems").read_text() == "0-1\n"
    (root / "cpuset" / "job" / "cpuset.effective_cpus").write_text("2\n")
    assert runtime.verify(cgroup_container_id("job")) == CPUSet.parse("2")


def test_v2_is_chosen_for_the_unified_hierarchy(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a")
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu\n")
    assert type(cgroup_runtime(tmp_path)) is CgroupV2Runtime


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as another user")
def test_a_manifest_may_only_pin_its_owners_cgroups(tmp_path: Path) -> None:
    root = fake_tree(tmp_path, "mine", "theirs")
    os.chown(root / "mine", 4242, 4242)
    runtime = CgroupV2Runtime(root)
    assert runtime.target_refusal(cgroup_container_id("mine"), 4242) is None
    refusal = runtime.target_refusal(cgroup_container_id("theirs"), 4242)
    assert refusal is not None
    assert "belongs to uid 0 but the manifest to uid 4242" in refusal
    assert runtime.target_refusal(cgroup_container_id("theirs"), 0) is None


REAL_V1 = Path("/sys/fs/cgroup/cpuset")


@pytest.mark.root
def test_real_v1_cpuset_cgroup_gets_and_loses_a_cpuset() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    if not (REAL_V1 / "cpuset.cpus").is_file() or (REAL_V1 / "cgroup.controllers").exists():
        pytest.skip(f"{REAL_V1} is not a cgroup v1 cpuset hierarchy")
    if not os.access(REAL_V1, os.W_OK):
        pytest.skip(f"{REAL_V1} is not writable")
    group = REAL_V1 / f"cpumanager-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        runtime = cgroup_runtime(REAL_V1.parent)
        assert isinstance(runtime, CgroupV1Runtime)
        cid = cgroup_container_id(group.name)
        first = CPUSet([min(os.sched_getaffinity(0))])
        runtime.apply(cid, first)
        assert runtime.verify(cid) == first
        assert (group / "cpuset.mems").read_text().strip() != ""
        runtime.restore()
        assert (group / "cpuset.cpus").read_text().strip() == ""
    finally:
        group.rmdir()
