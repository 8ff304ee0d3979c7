"""The fast memory_manager_state reader gives the exact reader's verdict on every input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.checkpoint import kinds
from cpumanager.checkpoint.go import gojson, plainjson
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory import codec_fast_read as memory_read
from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryAttempt,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
)
from cpumanager.checkpoint.memory.v2_v3 import (
    MemoryPodEntry,
)
from cpumanager.checkpoint.memory.v2_v3 import encode_memory_v2 as v2
from cpumanager.checkpoint.memory.v2_v3 import encode_memory_v3 as v3
from tests.checkpoint.memory.test_codec_vs_codec_fast_write import CHECKPOINTS
from tests.checkpoint.mutations import merged, mutated, outcome, with_python_checksum

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "memory"
NEWER = GOLDEN.parent / "newer"
GIB = 1 << 30


def exact_attempt(data: bytes) -> MemoryAttempt:
    """The kubelet's read through the faithful parser and the type walk only."""
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return MemoryAttempt("syntax", None, err.message)
    return memory.attempt_tree(tree)


def exact_any(data: bytes) -> object:
    kind, tree = kinds._detect(data, "<bytes>")
    if kind == "memory":
        return kind, memory.decode_memory(data, source="<bytes>", tree=tree)
    return kinds.decode_any(data)


def python_checksum(canonical: bytes) -> int | None:
    """The checksum of what the exact reader reads from a canonical file, if it reads it."""
    attempt = exact_attempt(canonical)
    return attempt.computed_checksum if attempt.kind in ("ok", "corrupt") else None


def usual(containers: int, nodes: int = 8, huge: str = "hugepages-2Mi") -> MemoryManagerCheckpoint:
    """A kubelet-like checkpoint: one memory and one hugepages block per container."""
    machine: dict[int, NUMANodeState | None] = {
        node: NUMANodeState(
            containers // nodes,
            {
                "memory": MemoryTable(64 * GIB, GIB, 63 * GIB, node, 63 * GIB - node),
                huge: MemoryTable(4 * GIB, 0, 4 * GIB, 0, 4 * GIB),
            },
            (node,) if node % 3 else (node, (node + 1) % nodes),
        )
        for node in range(nodes)
    }
    entries: dict[str, dict[str, tuple[Block, ...] | None] | None] = {}
    for index in range(containers):
        pod = f"0f1e2d3c-4b5a-6978-8796-{index // 3:012d}".replace("-", huge[-4:-3])
        entries.setdefault(pod, {})[f"c{huge[-4:-3]}{index % 3}"] = (  # type: ignore[index]
            Block((index % nodes,), "memory", GIB * (1 + index % 4)),
            Block((index % nodes, (index + 1) % nodes), huge, 2 << 20),
        )
    return memory.with_fresh_checksum(MemoryManagerCheckpoint("Static", machine, entries))


@pytest.mark.parametrize(("containers", "nodes"), [(0, 1), (1, 1), (10, 8), (40, 12)])
def test_the_usual_file_takes_the_fast_path(containers: int, nodes: int) -> None:
    checkpoint = usual(containers, nodes)
    data = memory.encode_memory(checkpoint)
    assert memory_read.decode_memory_plain(data) == checkpoint
    assert kinds.decode_any(data) == ("memory", checkpoint)
    assert exact_attempt(data) == memory.attempt_memory(data)


def test_a_corrupt_file_goes_to_the_exact_reader() -> None:
    data = memory.encode_memory(usual(5).with_checksum(7))
    assert memory_read.decode_memory_plain(data) is None
    assert memory.attempt_memory(data).kind == "corrupt"


@given(CHECKPOINTS)
@settings(max_examples=300)
def test_random_checkpoints_read_the_same(checkpoint: MemoryManagerCheckpoint) -> None:
    data = memory.encode_memory_exact(memory.with_fresh_checksum(checkpoint))
    fast = memory_read.decode_memory_plain(data)
    expected = exact_attempt(data)
    if fast is not None:
        assert expected.kind == "ok"
        assert expected.checkpoint == fast
    assert memory.attempt_memory(data) == expected
    assert outcome(lambda: kinds.decode_any(data)) == outcome(lambda: exact_any(data))


@given(st.data())
@settings(max_examples=400)
def test_mutated_files_read_the_same(data: st.DataObject) -> None:
    base = memory.encode_memory(usual(data.draw(st.sampled_from([1, 4]))))
    text = data.draw(mutated(base))
    if data.draw(st.booleans()):
        text = with_python_checksum(text, b"checksum", python_checksum)
    assert memory.attempt_memory(text) == exact_attempt(text)
    assert outcome(lambda: kinds.decode_any(text)) == outcome(lambda: exact_any(text))


@given(st.data())
@settings(max_examples=200)
def test_either_json_scanner_reads_the_same(data: st.DataObject) -> None:
    """orjson (pinned) and the standard library's scanner: the same verdicts after checks."""
    text = data.draw(mutated(memory.encode_memory(usual(2))))
    text = with_python_checksum(text, b"checksum", python_checksum)
    fast = memory_read.decode_memory_plain(text)
    saved = plainjson._loads
    plainjson._loads = json.loads
    try:
        assert memory_read.decode_memory_plain(text) == fast
    finally:
        plainjson._loads = saved


@given(st.data())
@settings(max_examples=100)
def test_merged_duplicates_read_the_same(data: st.DataObject) -> None:
    """A repeated struct field merges in Go: the fast reader must not take Python's last.

    No ``-`` in the file: the dash count must not be what catches the collapsed key.
    """
    base = memory.encode_memory(usual(4, huge="hugepages2Mi"))
    assert b"-" not in base
    text = with_python_checksum(data.draw(merged(base)), b"checksum", python_checksum)
    assert memory.attempt_memory(text) == exact_attempt(text)


def newer_layouts() -> list[bytes]:
    """The development line's V2 (podEntries) and V3 (data, dataChecksum) memory files."""
    found = [path.read_bytes() for path in sorted(NEWER.glob("memory-*.json"))]
    base = usual(4)
    pods = {"0f1e2d3c-4b5a-6978-8796-000000000000": MemoryPodEntry(())}
    machine, entries = base.machine_state or {}, base.entries or {}
    return [
        *found,
        *(encode(base.policy_name, machine, entries, pods) for encode in (v2, v3)),
    ]


@pytest.mark.parametrize("data", newer_layouts(), ids=["golden-v2", "golden-v3", "v2", "v3"])
def test_newer_layouts_read_as_a_released_kubelet_reads_them(data: bytes) -> None:
    """Extra keys: the fast reader steps aside and the exact one gives the verdict."""
    assert memory_read.decode_memory_plain(data) is None
    assert memory.attempt_memory(data) == exact_attempt(data)
    assert outcome(lambda: kinds.decode_any(data)) == outcome(lambda: exact_any(data))


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_golden_files_read_the_same(path: Path) -> None:
    data = path.read_bytes()
    for variant in (data, data.replace(b":", b": "), data.replace(b'"Static"', b'"St-atic"')):
        assert memory.attempt_memory(variant) == exact_attempt(variant)
        assert outcome(lambda v=variant: kinds.decode_any(v)) == outcome(
            lambda v=variant: exact_any(v)
        )


@pytest.mark.parametrize("name", ["free", "memoryMap", "cells", "a,b", 'x:{y}],"z', "total"])
def test_table_names_like_structure_read_the_same(name: str) -> None:
    """go-spew's machine text is made by replaces; names they could misread are kept apart."""
    checkpoint = usual(4, 3, huge=name) if '"' not in name else usual(4, 3)
    data = memory.encode_memory(checkpoint)
    found = memory_read.decode_memory_plain(data)
    assert found is None or found == checkpoint
    assert outcome(lambda: kinds.decode_any(data)) == outcome(lambda: exact_any(data))


def test_fields_in_another_order_read_the_same() -> None:
    """Go reads struct fields in any order; the text is then made field by field."""
    checkpoint = usual(4, 3)
    data = memory.encode_memory(checkpoint)
    swapped = data.replace(
        b'"total":68719476736,"systemReserved":1073741824,',
        b'"systemReserved":1073741824,"total":68719476736,',
    )
    swapped = swapped.replace(b'"numberOfAssignments":1,"memoryMap":', b'"memoryMap":', 1)
    assert swapped != data
    for variant in (
        swapped,
        swapped.replace(b'"cells":[1]}', b'"cells":[1],"numberOfAssignments":1}', 1),
    ):
        assert outcome(lambda v=variant: kinds.decode_any(v)) == outcome(
            lambda v=variant: exact_any(v)
        )
    assert (
        memory_read.decode_memory_plain(
            swapped.replace(b'"memoryMap":', b'"numberOfAssignments":1,"memoryMap":', 1)
        )
        == checkpoint
    )


_SCALARS = st.one_of(
    st.integers(min_value=-(1 << 65), max_value=1 << 65),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text("ab-", max_size=3),
    st.none(),
)
_VALID_BLOCK = st.fixed_dictionaries(
    {
        "numaAffinity": st.lists(st.integers(min_value=0, max_value=7), max_size=3),
        "type": st.sampled_from(["memory", "hugepages-2Mi", "hugepages-1Gi"]),
        "size": st.integers(min_value=0, max_value=1 << 40),
    }
)
_ODD_BLOCK = st.one_of(
    st.fixed_dictionaries(
        {
            "numaAffinity": st.one_of(st.lists(_SCALARS, max_size=3), _SCALARS),
            "type": st.one_of(st.sampled_from(["memory", "hugepages-2Mi"]), _SCALARS),
            "size": st.one_of(st.integers(min_value=0, max_value=1 << 40), _SCALARS),
        }
    ),
    st.dictionaries(st.sampled_from(["numaAffinity", "type", "size", "x"]), _SCALARS),
    _SCALARS,
)
# Mostly valid trees (so that answers, not only refusals, are compared), some odd values.
_BLOCK = st.one_of(_VALID_BLOCK, _VALID_BLOCK, _VALID_BLOCK, _VALID_BLOCK, _ODD_BLOCK)
_ANY_ORDER = st.dictionaries(
    st.text("cd-", min_size=1, max_size=2), st.lists(_BLOCK, max_size=3), max_size=3
)
_CONTAINERS = _ANY_ORDER.map(lambda d: dict(sorted(d.items())))  # json.Marshal's order
_ENTRIES = st.one_of(
    st.dictionaries(
        st.text("pqr-", min_size=1, max_size=3),
        st.one_of(_CONTAINERS, _CONTAINERS, _CONTAINERS, _ANY_ORDER, _SCALARS),
        max_size=4,
    ).map(lambda d: dict(sorted(d.items()))),
    st.dictionaries(st.text("pqr-", min_size=1, max_size=3), _ANY_ORDER, max_size=3),
)


@given(_ENTRIES)
@settings(max_examples=300, deadline=None)
def test_the_small_loop_answers_as_the_columns(raw: dict) -> None:
    """The entries of a few pods go through one loop (``_entries_small``): it must give the
    column passes' answer on any tree the scanner can make, refusals included."""
    assert memory_read._entries_small(raw) == memory_read._entries_columns(raw)
