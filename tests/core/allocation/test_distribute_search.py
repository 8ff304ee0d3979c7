"""The bounded representative search keeps the literal walk's combo and break.

``search`` is driven directly with made-up free counts (any vector, not only the ones a
take would produce for its smallest acceptable k), so combos that leave a perfectly balanced
machine (score 0, which breaks the kubelet's walk early and changes what its kept slice
reads back) come up often.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.allocation.balance import ComboScorer
from cpumanager.core.allocation.index import topology_index
from cpumanager.core.allocation.search import literal_search, search
from cpumanager.presets import synthetic


@st.composite
def searches(draw: st.DrawFn) -> tuple[int, list[int], list[int], int, int, int, bool]:
    per_socket = draw(st.integers(1, 5))
    numas = draw(st.permutations(range(2 * per_socket)))
    values = draw(
        st.lists(
            st.sampled_from([0, 1, 2, 3, 4, 6]), min_size=2 * per_socket, max_size=2 * per_socket
        )
    )
    group = draw(st.sampled_from([1, 2]))
    count = draw(st.integers(1, 12)) * group
    k = draw(st.integers(1, len(numas)))
    return per_socket, list(numas), values, count, group, k, draw(st.booleans())


@settings(max_examples=400, deadline=None)
@given(searches())
def test_representatives_keep_the_literal_walks_combo_and_break(
    case: tuple[int, list[int], list[int], int, int, int, bool],
) -> None:
    per_socket, numas, values, count, group, k, align = case
    ix = topology_index(synthetic(sockets=2, numa_per_socket=per_socket, cores_per_numa=1))
    free_counts = dict(zip(numas, values, strict=True))
    sockets = None
    if align:
        sockets = [tuple(socket for socket, _ in ix.numa_sockets[numa]) for numa in numas]

    def run(walk: object) -> object:
        scorer = ComboScorer(numas, free_counts, count, group, sockets=sockets)
        return walk(ix, scorer, k)  # type: ignore[operator]

    assert run(search) == run(literal_search)


def test_a_balanced_combo_breaks_the_walk() -> None:
    """Nodes 0-3 end level with the others: the walk stops on the combination after them."""
    ix = topology_index(synthetic(sockets=2, numa_per_socket=5, cores_per_numa=1))
    numas = list(range(10))
    free_counts = dict.fromkeys(numas, 2) | dict.fromkeys(range(4), 3)
    scorer = ComboScorer(numas, free_counts, 4, 1, sockets=None)
    positions, evaluation, stop = search(ix, scorer, 4)
    assert (positions, stop) == ((0, 1, 2, 3), (0, 1, 2, 4))
    assert evaluation is not None
    assert evaluation[0] == 0
