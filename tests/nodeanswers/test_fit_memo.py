"""pod_requests is computed once per pod object: the memo changes no answer."""

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
