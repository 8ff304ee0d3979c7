"""Properties of SysfsReader: a kernel-shaped tree reads back as the machine that made it,
and no garbage in any file ever produces anything but warnings or a MachineError."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError
from cpumanager.presets import get_preset, synthetic
from tests.adapters.sysfs_tree import regular, tree_from_topology


def partition(topology: CPUTopology, ids: tuple[int, ...], query: str) -> set[str]:
    return {str(getattr(topology, query)([i])) for i in ids}


def same_machine(ours: CPUTopology, theirs: CPUTopology) -> None:
    assert ours.all_cpus == theirs.all_cpus
    assert partition(ours, ours.core_ids(), "cpus_in_cores") == partition(
        theirs, theirs.core_ids(), "cpus_in_cores"
    )
    assert [ours.cpus_in_sockets([s]) for s in ours.socket_ids()] == [
        theirs.cpus_in_sockets([s]) for s in theirs.socket_ids()
    ]
    assert partition(ours, ours.l3_ids(), "cpus_in_l3") == partition(
        theirs, theirs.l3_ids(), "cpus_in_l3"
    )
    assert ours.numa_ids() == theirs.numa_ids()
    for node in ours.numa_ids():
        assert ours.cpus_in_numa_nodes([node]) == theirs.cpus_in_numa_nodes([node])
        assert ours.numa_node(node).memory_bytes == theirs.numa_node(node).memory_bytes
        assert dict(ours.numa_node(node).distances) == dict(theirs.numa_node(node).distances)


@pytest.mark.parametrize(
    "name", ["gb200-tray", "dual-socket-ht", "topoDualSocketMultiNumaPerSocketHT", "2s4n4c2t2l"]
)
def test_presets_read_back_from_their_own_sysfs(tmp_path: Path, name: str) -> None:
    machine = get_preset(name)
    read = SysfsReader(tree_from_topology(tmp_path, machine).root, view="kernel").read()
    same_machine(read, machine)
    assert read.warnings == ()
    assert read.core_ids() == machine.core_ids()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sockets=st.integers(1, 3),
    numa=st.integers(1, 3),
    cores=st.sampled_from([1, 2, 4]),
    threads=st.integers(1, 3),
    masks=st.booleans(),
)
def test_generated_machines_read_back(
    sockets: int, numa: int, cores: int, threads: int, masks: bool
) -> None:
    machine = synthetic(
        sockets=sockets,
        numa_per_socket=numa,
        cores_per_numa=cores,
        threads=threads,
        l3_per_numa=2 if cores % 2 == 0 else 1,
        cpuless_memory_bytes=[1 << 20],
    )
    with tempfile.TemporaryDirectory() as tmp:
        read = SysfsReader(
            tree_from_topology(Path(tmp), machine, masks=masks).root, view="kernel"
        ).read()
    same_machine(read, machine)
    assert read.warnings == ()


GARBAGE = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "-1", "0-", "ff,zz", "4294967296", "0-99999", "\x00", "1e3", "0x1"]),
)


_TEMPLATE: dict[str, object] = {}


def _template() -> tuple[Path, list[Path]]:
    """One 16-CPU tree for the whole session; each example edits files and restores them."""
    if not _TEMPLATE:
        root = Path(tempfile.mkdtemp(prefix="sysfs-fuzz-"))
        regular(root, sockets=2, cores=2, threads=2)
        _TEMPLATE["root"] = root
        _TEMPLATE["files"] = sorted(p for p in root.rglob("*") if p.is_file())
    return _TEMPLATE["root"], _TEMPLATE["files"]  # type: ignore[return-value]


def _fuzz_case(data: st.DataObject) -> None:
    root, files = _template()
    picked = data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=6, unique=True))
    saved = {path: path.read_bytes() for path in picked}
    try:
        for path in picked:
            path.write_text(data.draw(GARBAGE))
        try:
            topology = SysfsReader(root, view="kernel").read()
        except MachineError as err:
            message = str(err)
        else:
            assert topology.all_cpus
            assert all("\n" not in warning for warning in topology.warnings)
            return
        assert message
        assert "\n" not in message
    finally:
        for path, content in saved.items():
            path.write_bytes(content)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_garbage_files_never_crash(data: st.DataObject) -> None:
    _fuzz_case(data)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CPUMANAGER_SLOW"), reason="long fuzzer: set CPUMANAGER_SLOW=1 to run it"
)
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_garbage_files_never_crash_long(data: st.DataObject) -> None:
    _fuzz_case(data)
