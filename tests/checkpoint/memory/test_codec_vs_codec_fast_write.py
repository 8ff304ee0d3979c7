"""The direct memory_manager_state writer agrees with the type walk on every checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory import codec_fast_write as memory_fast
from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    attempt_memory,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "memory"

TEXTS = st.one_of(
    st.sampled_from(["memory", "hugepages-2Mi", "Static", "pod-1", "c", ""]),
    st.text(alphabet=st.sampled_from('"\\<>&é\n :,[]{}ab01'), max_size=5),
)
INTS = st.one_of(st.integers(0, 20), st.integers(0, (1 << 64) - 1))
CELLS = st.one_of(st.none(), st.lists(st.integers(0, 12), max_size=3).map(tuple))
TABLES = st.one_of(st.none(), st.builds(MemoryTable, INTS, INTS, INTS, INTS, INTS))
NODES = st.one_of(
    st.none(),
    st.builds(
        NUMANodeState,
        st.integers(0, 40),
        st.one_of(st.none(), st.dictionaries(TEXTS, TABLES, max_size=3)),
        CELLS,
    ),
)
BLOCKS = st.builds(Block, CELLS, TEXTS, INTS)
CHECKPOINTS = st.builds(
    MemoryManagerCheckpoint,
    TEXTS,
    st.one_of(st.none(), st.dictionaries(st.integers(0, 20), NODES, max_size=4)),
    st.one_of(
        st.none(),
        st.dictionaries(
            TEXTS,
            st.one_of(
                st.none(),
                st.dictionaries(
                    TEXTS, st.one_of(st.none(), st.lists(BLOCKS, max_size=3).map(tuple)), max_size=3
                ),
            ),
            max_size=3,
        ),
    ),
    INTS,
)


@given(CHECKPOINTS)
@settings(max_examples=300)
def test_direct_writer_matches_the_type_walk(checkpoint: MemoryManagerCheckpoint) -> None:
    assert memory.render_memory(checkpoint) == memory.render_memory_exact(checkpoint)
    assert memory.encode_memory(checkpoint) == memory.encode_memory_exact(checkpoint)


def test_the_usual_shape_takes_the_direct_path() -> None:
    usual = MemoryManagerCheckpoint(
        "Static",
        {
            10: NUMANodeState(1, {"memory": MemoryTable(4, 1, 3, 1, 2)}, (10,)),
            2: NUMANodeState(0, {}, ()),
        },
        {"pod": {"c": (Block((2, 10), "memory", 1),), "sidecar": ()}, "empty": {}},
        5,
    )
    assert memory_fast.spew_memory(usual) == memory.render_memory_exact(usual)
    assert memory_fast.marshal_memory(usual) == memory.encode_memory_exact(usual)
    for unusual in (
        MemoryManagerCheckpoint("Static", None, {}),
        MemoryManagerCheckpoint("Static", {0: None}, {}),
        MemoryManagerCheckpoint("Static", {}, {"pod": {"c": None}}),
        MemoryManagerCheckpoint("Static", {}, {"pod": {"c": (Block(None, "memory", 1),)}}),
    ):
        assert memory_fast.spew_memory(unusual) is None
        assert memory_fast.marshal_memory(unusual) is None
    # go-spew prints strings raw, json.Marshal escapes '<': only the writer refuses it
    html = MemoryManagerCheckpoint("St<atic", {}, {})
    assert memory_fast.spew_memory(html) == memory.render_memory_exact(html)
    assert memory_fast.marshal_memory(html) is None


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_golden_files_and_their_mutations(path: Path) -> None:
    data = path.read_bytes()
    variants = [data, data.replace(b"memory", b"memorz"), data.replace(b"1", b"7")]
    for variant in variants:
        result = attempt_memory(variant)
        if result.checkpoint is None:
            continue
        checkpoint = result.checkpoint
        assert memory.render_memory(checkpoint) == memory.render_memory_exact(checkpoint)
        assert memory.encode_memory(checkpoint) == memory.encode_memory_exact(checkpoint)
