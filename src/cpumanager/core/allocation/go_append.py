"""What Go's ``append`` leaves behind in the kubelet's combination walk (k/k#141237).

Released kubelets enumerate NUMA-node combinations with a recursive helper that builds each
k-subset by ``append(accum, n[i])`` onto the prefix it was given, starting from ``[]int{}``
(length 0, capacity 0). ``append`` writes in place while the prefix has spare capacity and
copies into a new, larger backing array when it has none. The callback keeps the subset it
was handed (``bestCombo = combo``, ``bestLocalRemainder = subset``), so the kept slice shares
its backing array with every later subset of the same prefix, and what the kubelet finally
reads is whatever was written there last.

Where the backing arrays start is fixed by Go's growth rule (``runtime.growslice``): for a
slice of ``int`` (8 bytes) the new capacity doubles below 256 elements, grows by
``(cap + 768) / 4`` above, and is rounded up to the allocator's size class. From capacity 0
the arrays are allocated at lengths 1, 2, 3, 5, 9, 17, 33, ... (capacities 1, 2, 4, 8, 16,
32, ...). A k-subset therefore lives in the array allocated at the largest such length
``j <= k``: its first ``j`` entries belong to it alone, its last ``k - j`` are overwritten by
every later subset with the same first ``j`` entries.

The kubelet's fix (k/k#141238) copies the subset; no released kubelet carries it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

__all__ = ["aliased_combination", "go_grow_capacity", "shared_array_start"]

# runtime/sizeclasses.go: the small-object size classes in bytes (Go 1.21 and later).
_SIZE_CLASSES = (
    0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
    288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
    1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528,
    6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
    20480, 21760, 24576, 27264, 28672, 32768,
)  # fmt: skip
_PAGE = 8192
_INT_SIZE = 8


def _round_up_size(size: int) -> int:
    """``runtime.roundupsize``: the bytes the allocator really hands out for ``size``."""
    if size <= _SIZE_CLASSES[-1]:
        for klass in _SIZE_CLASSES:
            if klass >= size:
                return klass
    return -(-size // _PAGE) * _PAGE


def go_grow_capacity(old_cap: int, new_len: int, elem_size: int = _INT_SIZE) -> int:
    """The capacity ``growslice`` gives a slice of capacity ``old_cap`` that needs ``new_len``."""
    double = old_cap + old_cap
    if new_len > double:
        new_cap = new_len
    elif old_cap < 256:
        new_cap = double
    else:
        new_cap = old_cap
        while new_cap < new_len:
            new_cap += (new_cap + 3 * 256) >> 2
    return _round_up_size(new_cap * elem_size) // elem_size


@cache
def shared_array_start(k: int) -> int:
    """Length at which the backing array of a k-subset was allocated (``1 <= j <= k``).

    Entries ``j .. k-1`` of that array are shared with every subset of the same prefix.
    """
    capacity = 0
    start = 0
    for length in range(k):
        if length == capacity:  # no room: append copies into a new array
            capacity = go_grow_capacity(capacity, length + 1)
            start = length + 1
    return start


def aliased_combination(
    best: Sequence[int], n: int, stop: Sequence[int] | None = None
) -> tuple[int, ...]:
    """What a kept k-subset of ``range(n)`` reads once the walk is over.

    ``best`` is the subset the callback kept (positions, ascending); ``stop`` the subset
    whose callback ended the walk early (``Break``), None when the walk ran to the end.
    The walk is lexicographic, so ``stop`` (if any) comes after ``best``.
    """
    k = len(best)
    start = shared_array_start(k)
    prefix = tuple(best[:start])
    if stop is not None and tuple(stop[:start]) == prefix:
        return prefix + tuple(stop[start:])
    # the walk went through every subset with this prefix: the last one wrote last
    return prefix + tuple(range(n - (k - start), n))
