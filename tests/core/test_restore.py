"""Start-up validation of a restored state (kubelet's validateState), every reason reported."""

from __future__ import annotations

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.restore import check_policy_name, validate_restored, validation_problems
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import StateValidationError

ALL = CPUSet.parse("0-7")


def snap(default: str, **pods: dict[str, str]) -> StateSnapshot:
    return StateSnapshot(
        "static",
        CPUSet.parse(default),
        {
            PodUID(p): {ContainerName(n): CPUSet.parse(c) for n, c in cs.items()}
            for p, cs in pods.items()
        },
    )


CASES = [
    # (id, snapshot, reserved, strict, expected problem substrings)
    ("fresh", snap(""), "0", False, []),
    ("steady", snap("0,5-7", p={"a": "1-4"}), "0", False, []),
    ("overlap-within-pod-ok", snap("0,5-7", p={"app": "1-2", "init": "1-4"}), "", False, []),
    ("strict-ok", snap("1-7"), "0", True, []),
    ("empty-default-with-pods", snap("", p={"a": "0-7"}), "", False,
     ["default cpuset cannot be empty"]),
    ("empty-pod-entry-counts", snap("", p={}), "", False, ["default cpuset cannot be empty"]),
    ("reserved-missing", snap("2-7", p={"a": "0-1"}), "0", False,
     ['not all reserved cpus: "0" are present in defaultCpuSet: "2-7"']),
    ("strict-leak", snap("0-7"), "0", True,
     ['some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-7"']),
    ("assignment-in-default", snap("0-7", p={"a": "3"}), "", False,
     ['pod: p, container: a cpuset: "3" overlaps with default cpuset "0-7"']),
    ("cpu-offlined", snap("0-9"), "", False,
     ['current set of available CPUs "0-7" doesn\'t match with CPUs in state "0-9"',
      "in the state but not available: 8-9"]),
    ("cpu-added", snap("0-5"), "", False, ["online but in no set: 6-7"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "reserved", "strict", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_validation_problems(
    state: StateSnapshot, reserved: str, strict: bool, expected: list[str]
) -> None:
    problems = validation_problems(
        state, all_cpus=ALL, reserved=CPUSet.parse(reserved), strict_reservation=strict
    )
    for text in expected:
        assert any(text in p for p in problems), problems
    if not expected:
        assert problems == ()


def test_every_reason_is_reported_at_once() -> None:
    state = snap("0-3,9", p={"a": "3-4"})
    with pytest.raises(StateValidationError) as caught:
        validate_restored(state, all_cpus=ALL, reserved=CPUSet([5]), source="f")
    assert len(caught.value.reasons) == 3
    assert "\n" not in caught.value.message
    assert "drain the node" in caught.value.message


def test_fresh_state_gets_every_cpu_minus_strict_reservation() -> None:
    assert validate_restored(snap(""), all_cpus=ALL).default_cpuset == ALL
    strict = validate_restored(
        snap(""), all_cpus=ALL, reserved=CPUSet([0, 1]), strict_reservation=True
    )
    assert strict.default_cpuset == CPUSet.parse("2-7")
    steady = snap("0,5-7", p={"a": "1-4"})
    assert validate_restored(steady, all_cpus=ALL) is steady


def test_policy_name_is_compared_byte_for_byte() -> None:
    check_policy_name(StateSnapshot("static"), "static", source="f")
    with pytest.raises(StateValidationError) as caught:
        check_policy_name(StateSnapshot(""), "static", source="f")
    assert caught.value.reasons == (
        'configured policy "static" differs from state checkpoint policy ""',
    )
