"""The fit predicate's fast forms: pod_requests computed once per pod object, and
fit_failures, give the plain answers."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.workload import Pod
from cpumanager.nodeanswers import fit
from tests.core.test_workload_memo import pods

OVERHEADS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "example.com/gpu"]),
    st.sampled_from([Fraction(1, 10), Fraction(1), Fraction(3, 2)]),
    max_size=2,
)


@settings(max_examples=300, deadline=None)
@given(pods(), OVERHEADS)
def test_memoised_requests_equal_fresh_ones(pod: Pod, overhead: dict[str, Fraction]) -> None:
    pod = dataclasses.replace(pod, overhead=overhead)
    fresh = fit._pod_requests(pod)
    for _ in range(2):  # the second round reads the memo
        got = fit.pod_requests(pod)
        assert got == fresh
        got["cpu"] = 99  # callers own the dict they get
    assert fit.pods_usage([pod, pod]) == {name: 2 * value for name, value in fresh.items()}


def _reference_failures(
    wanted: dict[str, int], used: dict[str, int], count: int, node: fit.Allocatable
) -> list[fit.FitFailure]:
    """The predicate written plainly: pods, then cpu, memory, then extended by name."""
    failures = []
    if count + 1 > node.allocatable.get("pods", 0):
        failures.append(fit.FitFailure("pods", 1, count, node.allocatable.get("pods", 0)))
    if all(v == 0 for v in wanted.values()):
        return failures
    native = ("cpu", "memory", "ephemeral-storage", "pods")
    for name in ["cpu", "memory", *sorted(n for n in wanted if n not in native)]:
        request = wanted.get(name, 0)
        have = node.allocatable.get(name, 0) - used.get(name, 0)
        if request and request > have:
            failures.append(
                fit.FitFailure(name, request, used.get(name, 0), node.allocatable.get(name, 0))
            )
    return failures


NAMES = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "b.io/x", "a.io/y"])
AMOUNTS_BY_NAME = st.dictionaries(NAMES, st.integers(0, 8), max_size=5)


@settings(max_examples=300, deadline=None)
@given(AMOUNTS_BY_NAME, AMOUNTS_BY_NAME, st.integers(0, 6), AMOUNTS_BY_NAME)
def test_fit_failures_equal_the_plain_predicate(
    wanted: dict[str, int], used: dict[str, int], count: int, allocatable: dict[str, int]
) -> None:
    node = fit.Allocatable(allocatable, allocatable)
    assert fit.fit_failures(wanted, used, count, node) == _reference_failures(
        wanted, used, count, node
    )
