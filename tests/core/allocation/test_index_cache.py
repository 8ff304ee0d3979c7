"""The allocation index is found by value once per topology object, then kept with it."""

from __future__ import annotations

from cpumanager.core.allocation.index import topology_index
from cpumanager.presets import get_preset
from tests.extender.nodes import make_snapshot


def test_equal_machines_share_one_index_kept_with_each_object() -> None:
    first, second = (make_snapshot(name).topology() for name in ("a", "b"))
    assert first is not second
    assert first == second
    index = topology_index(first)
    assert topology_index(second) is index  # found by value
    assert topology_index(second) is index  # now read from the object itself
    other = get_preset("dual-socket-ht")
    assert topology_index(other) is not index
    assert topology_index(other).topology == other  # maybe an equal machine seen earlier
