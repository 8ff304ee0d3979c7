"""`cpumanager state` on memory_manager_state and kubelet_internal_checkpoint (by content)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryManagerCheckpoint,
    encode_memory,
    with_fresh_checksum,
)
from cpumanager.checkpoint.memory.restore import default_machine_state, expected_machine_state
from tests.cli.runner import Run, run_main

GOLDEN = Path(__file__).resolve().parent.parent / "checkpoint" / "golden"
MEMORY = GOLDEN / "memory" / "kubelet-test-restore-valid.json"
MEMORY_CANONICAL = GOLDEN / "memory" / "kubelet-test-restore-valid.canonical.json"
MEMORY_BAD = GOLDEN / "memory" / "kubelet-test-invalid-checksum.json"
DEVICE = GOLDEN / "device" / "two-pods-two-numa.json"
DEVICE_V1 = GOLDEN / "device" / "generated-v1-pre120.json"


def run(*args: str | Path) -> Run:
    return run_main(["state", *args])


def test_inspect_json_names_the_kind() -> None:
    result = run("inspect", MEMORY, "-o", "json")
    assert result.exit_code == 0
    found = json.loads(result.output)
    assert (found["kind"], found["checksum"]["status"]) == ("memory", "ok")
    assert found["entries"][0]["blocks"] == [{"numa": [0], "type": "memory", "size": 512}]
    devices = json.loads(run("inspect", DEVICE, "-o", "json").output)
    assert devices["entries"][1]["devices"] == {"1": ["GPU-9b341c59-f96b-ba85-c137-78c3652fea65"]}


def test_inspect_shows_a_bad_checksum() -> None:
    result = run("inspect", MEMORY_BAD)
    assert result.exit_code == 0
    assert "101010 mismatch" in result.output


VERIFY = [
    ([MEMORY, "--policy", "static"], 0, ""),
    ([MEMORY, "--policy", "Static"], 1, 'configured policy "Static" differs'),
    ([MEMORY_BAD], 1, "checkpoint is corrupted"),
    ([DEVICE], 0, ""),
    ([DEVICE_V1], 1, "Continue after failing to read checkpoint file"),
]


@pytest.mark.parametrize(("args", "code", "text"), VERIFY, ids=lambda v: str(v)[-30:])
def test_verify_gives_the_kubelets_verdict(args: list[str | Path], code: int, text: str) -> None:
    result = run("verify", *args)
    assert result.exit_code == code
    assert text in result.output


def test_rewrite_gives_the_kubelets_bytes(tmp_path: Path) -> None:
    out = tmp_path / "memory_manager_state"
    assert run("rewrite", MEMORY, "--output-file", out).exit_code == 0
    assert out.read_bytes() == MEMORY_CANONICAL.read_bytes()


def test_rewrite_fixes_a_hand_edit(tmp_path: Path) -> None:
    edited = tmp_path / "edited"
    edited.write_bytes(DEVICE.read_bytes().replace(b'"Checksum":3082069630', b'"Checksum":1'))
    out = tmp_path / "fixed"
    assert run("rewrite", edited, "--output-file", out).exit_code == 0
    assert out.read_bytes() == DEVICE.read_bytes()


def test_migrate_device_v1_to_v2(tmp_path: Path) -> None:
    out = tmp_path / "kubelet_internal_checkpoint"
    assert run("migrate", DEVICE_V1, "--output-file", out).exit_code == 0
    assert b'"DeviceIDs":{"0":["nic0","nic1"]}' in out.read_bytes()
    assert run("verify", out).exit_code == 0


def test_migrate_refuses_a_corrupt_file_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("migrate", MEMORY_BAD, "--output-file", out)
    assert result.exit_code == 1
    assert not out.exists()
    assert len(result.stderr.strip().splitlines()) == 1


def test_rewrite_refuses_unknown_keys(tmp_path: Path) -> None:
    newer = tmp_path / "newer"
    newer.write_bytes(DEVICE.read_bytes()[:-1] + b',"BootID":"x"}')
    out = tmp_path / "out"
    result = run("rewrite", newer, "--output-file", out)
    assert result.exit_code == 1
    assert "BootID" in result.stderr
    assert not out.exists()


GB = 1 << 30
MACHINE = (
    '{"name": "two-node", "cpus": ['
    '{"cpu": 0, "socket": 0, "numa": 0, "core": 0, "l3": 0},'
    '{"cpu": 1, "socket": 0, "numa": 1, "core": 1, "l3": 0}],'
    f'"numa_nodes": [{{"id": 0, "memory_bytes": {2 * GB}}},'
    f' {{"id": 1, "memory_bytes": {2 * GB}}}]}}'
)


def _memory_file(tmp_path: Path, reserved_on_0: int) -> Path:
    default = default_machine_state(
        {0: 2 * GB, 1: 2 * GB}, system_reserved={0: {"memory": reserved_on_0}}
    )
    entries = {"pod": {"app": (Block((0,), "memory", GB),)}}
    state = expected_machine_state(MemoryManagerCheckpoint("Static", {}, entries), default)
    target = tmp_path / "memory_manager_state"
    target.write_bytes(
        encode_memory(with_fresh_checksum(MemoryManagerCheckpoint("Static", state, entries)))
    )
    return target


def test_verify_checks_the_machine_state_against_the_machine(tmp_path: Path) -> None:
    machine = tmp_path / "machine.json"
    machine.write_text(MACHINE)
    state = _memory_file(tmp_path, GB // 2)
    same = run("verify", state, "--machine", machine, "--reserved-memory", "0:memory=512Mi")
    assert same.exit_code == 0, same.output
    changed = run("verify", state, "--machine", machine, "--reserved-memory", "0:memory=1Gi")
    assert changed.exit_code == 1
    assert "the expected machine state is different from the real one" in changed.output
    without = run("verify", state)
    assert without.exit_code == 0
    assert "machine state was not checked" in without.output


def test_bad_reserved_memory_is_one_line(tmp_path: Path) -> None:
    machine = tmp_path / "machine.json"
    machine.write_text(MACHINE)
    state = _memory_file(tmp_path, 0)
    result = run("verify", state, "--machine", machine, "--reserved-memory", "zero")
    assert result.exit_code == 1
    assert "numaNodeID:type=quantity" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
