"""CgroupV2Runtime on a fake cgroup tree under tmp_path, and on the real one when allowed."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from cpumanager.adapters.runtimes.cgroupv2 import CgroupV2Runtime, cgroup_container_id
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import RuntimeApplyError


def fake_tree(root: Path, *groups: str, cpuset: bool = True, initial: str = "") -> Path:
    """A cgroup2-like tree: ``cgroup.subtree_control`` and, per group, ``cpuset.cpus``."""
    (root / "cgroup.subtree_control").write_text("cpuset cpu memory\n" if cpuset else "cpu\n")
    for group in groups:
        directory = root / group
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cgroup.procs").write_text("")
        if cpuset:
            (directory / "cpuset.cpus").write_text(f"{initial}\n" if initial else "\n")
    return root


def cpus_file(root: Path, group: str) -> str:
    return (root / group / "cpuset.cpus").read_text()


def test_apply_writes_cpuset_and_restore_puts_back_the_original(tmp_path: Path) -> None:
    fake_tree(tmp_path, "jobs/a", "jobs/b", initial="0-7")
    runtime = CgroupV2Runtime(tmp_path)
    runtime.apply(cgroup_container_id("jobs/a"), CPUSet.parse("2-3"))
    runtime.apply(cgroup_container_id("/jobs/b/"), CPUSet.parse("4,6"))
    runtime.apply(cgroup_container_id("jobs/a"), CPUSet.parse("1"))
    assert cpus_file(tmp_path, "jobs/a") == "1\n"
    assert cpus_file(tmp_path, "jobs/b") == "4,6\n"
    assert runtime.verify(ContainerID("cgroup://jobs/a")) == CPUSet.parse("1")
    assert runtime.saved() == {"cgroup://jobs/a": "0-7", "cgroup://jobs/b": "0-7"}
    runtime.restore(ContainerID("cgroup://jobs/a"))
    assert cpus_file(tmp_path, "jobs/a") == "0-7\n"
    assert cpus_file(tmp_path, "jobs/b") == "4,6\n"
    runtime.restore()
    assert cpus_file(tmp_path, "jobs/b") == "0-7\n"
    assert runtime.saved() == {}


def test_empty_original_means_inherit_and_is_restored_as_empty(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a")
    runtime = CgroupV2Runtime(tmp_path)
    runtime.apply(cgroup_container_id("a"), CPUSet.parse("0"))
    runtime.restore()
    assert cpus_file(tmp_path, "a") == "\n"


def test_verify_prefers_the_effective_set(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a", initial="0-3")
    (tmp_path / "a" / "cpuset.cpus.effective").write_text("0-1\n")
    assert CgroupV2Runtime(tmp_path).verify(cgroup_container_id("a")) == CPUSet.parse("0-1")


def test_alive_follows_the_directory(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a")
    runtime = CgroupV2Runtime(tmp_path)
    cid = cgroup_container_id("a")
    runtime.apply(cid, CPUSet.parse("0"))
    assert runtime.alive(cid)
    for child in (tmp_path / "a").iterdir():
        child.unlink()
    (tmp_path / "a").rmdir()
    assert not runtime.alive(cid)
    runtime.restore()  # a removed cgroup is skipped
    with pytest.raises(RuntimeApplyError, match="does not exist"):
        runtime.apply(cid, CPUSet.parse("0"))


def test_cpuset_controller_must_be_enabled(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a", cpuset=False)
    with pytest.raises(RuntimeApplyError, match=r"cpuset controller is not enabled.*\+cpuset"):
        CgroupV2Runtime(tmp_path).apply(cgroup_container_id("a"), CPUSet.parse("0"))


@pytest.mark.parametrize(
    "text", ["cgroup://", "cgroup://../etc", "cgroup://a/../../b", "pid://12", "a/b"]
)
def test_ids_outside_the_root_are_refused(tmp_path: Path, text: str) -> None:
    runtime = CgroupV2Runtime(tmp_path)
    with pytest.raises(RuntimeApplyError, match="not a cgroup below the root"):
        runtime.apply(ContainerID(text), CPUSet.parse("0"))
    assert not runtime.alive(ContainerID(text))


def test_write_failures_are_one_line_runtime_errors(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a", initial="0")
    target = tmp_path / "a" / "cpuset.cpus"
    target.unlink()
    target.mkdir()  # writing to a directory fails with an OSError
    (tmp_path / "a" / "x").write_text("")
    runtime = CgroupV2Runtime(tmp_path)
    with pytest.raises(RuntimeApplyError) as caught:
        runtime.apply(cgroup_container_id("a"), CPUSet.parse("0"))
    assert "\n" not in caught.value.message


def test_empty_set_is_refused(tmp_path: Path) -> None:
    fake_tree(tmp_path, "a")
    with pytest.raises(RuntimeApplyError, match="empty"):
        CgroupV2Runtime(tmp_path).apply(cgroup_container_id("a"), CPUSet())


# --- the real cgroup2 tree ------------------------------------------------------------------

REAL_ROOT = Path("/sys/fs/cgroup")


def _real_cgroup2_with_cpuset() -> str | None:
    """Why the real test cannot run here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root"
    controllers = REAL_ROOT / "cgroup.controllers"
    if not controllers.is_file():
        return f"{REAL_ROOT} is not a cgroup2 mount"
    if "cpuset" not in controllers.read_text().split():
        return "the cpuset controller is not available in the cgroup2 root"
    if not os.access(REAL_ROOT, os.W_OK):
        return f"{REAL_ROOT} is not writable"
    return None


@pytest.mark.root
def test_real_cgroup_gets_and_loses_a_cpuset() -> None:
    why = _real_cgroup2_with_cpuset()
    if why is not None:
        pytest.skip(why)
    subtree = REAL_ROOT / "cgroup.subtree_control"
    if "cpuset" not in subtree.read_text().split():
        subtree.write_text("+cpuset\n")
    group = REAL_ROOT / f"cpumanager-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        runtime = CgroupV2Runtime(REAL_ROOT)
        cid = cgroup_container_id(group.name)
        first = CPUSet([min(os.sched_getaffinity(0))])
        runtime.apply(cid, first)
        assert runtime.verify(cid) == first
        runtime.restore()
        assert (group / "cpuset.cpus").read_text().strip() == ""
    finally:
        group.rmdir()
