"""``fast_read.read_v2`` (the restore fast path) gives the generic reader's state, or declines.

The reference is the exact decoder (V1 then V2, as released kubelets) with every CPU list
parsed by ``parse_cpu_list`` and the snapshot built by the sorting constructor. On every
generated file the fast path must either return None or the same state, in the same order,
made of the same types; and ``restore_state`` must give the same state or the same error.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu import restore_fast as fast_read
from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.cpu.migrate import v1_to_v2
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import MAX_CHECKPOINT_CPU_ID, CPUSet
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointError

UID = st.uuids().map(str)
PLAIN_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._", min_size=1, max_size=12)
ODD_KEYS = st.text(
    alphabet=st.sampled_from('{},:[]" \\\t\n<>&é\u2028\x7f\x00ab01-'), min_size=0, max_size=5
)
KEYS = st.one_of(UID, PLAIN_KEYS, ODD_KEYS)
IDS = st.one_of(st.integers(0, 300), st.integers(0, MAX_CHECKPOINT_CPU_ID))
CPU_SETS = st.frozensets(IDS, min_size=1, max_size=10).map(CPUSet)
# Hand-edited lists: Go reads some (overlaps, "+1", leading zeros), refuses others.
ODD_LISTS = st.one_of(
    st.text(alphabet="0123456789-,+ _", max_size=8),
    st.sampled_from(
        ["1-1", "3,1", "0-3,2-5", "08", "1--2", "1-2-3", "65535", "65536", "0-65536", "", ","]
    ),
)
LISTS = st.one_of(CPU_SETS.map(str), CPU_SETS.map(str), ODD_LISTS)
POLICIES = st.one_of(st.just("static"), st.just("none"), KEYS)


def _reference(data: bytes, policy: str) -> StateSnapshot | str:
    """The generic reader: the state, or the kind of failure."""
    try:
        checkpoint = codec.decode(data, source="t")
        if isinstance(checkpoint, CheckpointV1):
            checkpoint = v1_to_v2(checkpoint, ContainerMap(), source="t")
    except CheckpointError:
        return "refused"
    if checkpoint.policy_name != policy:
        return "other policy"
    try:
        default = parse_cpu_list(checkpoint.default_cpu_set)
        assignments = {
            pod: {name: parse_cpu_list(text) for name, text in (containers or {}).items()}
            for pod, containers in (checkpoint.entries or {}).items()
        }
    except CPUListError:
        return "bad list"
    return StateSnapshot(checkpoint.policy_name, default, assignments)  # type: ignore[arg-type]


def _restored(data: bytes, policy: str) -> StateSnapshot | str:
    try:
        found = restore_state(
            data, source="t", configured_policy=policy, container_map=ContainerMap()
        )
    except CheckpointError as err:
        return f"error: {err}"
    assert found is not None
    return found


def _same_state(found: StateSnapshot, expected: StateSnapshot) -> None:
    assert found == expected
    assert type(found.default_cpuset) is CPUSet
    assert list(found.assignments) == list(expected.assignments)
    for pod, containers in expected.assignments.items():
        assert list(found.assignments[pod]) == list(containers)
        for name, cpus in containers.items():
            assert type(found.assignments[pod][name]) is CPUSet
            assert found.assignments[pod][name] == cpus


def check(data: bytes, policy: str = "static") -> bool:
    """Both paths agree on ``data``; True when the fast path answered."""
    found = fast_read.read_v2(data)
    expected = _reference(data, policy)
    if found is not None and found[0] == policy:
        assert isinstance(expected, StateSnapshot), (data, expected)
        _same_state(StateSnapshot.from_sorted(*found), expected)  # type: ignore[arg-type]
    elif found is not None:
        assert expected == "other policy" or isinstance(expected, StateSnapshot)
    # restore_state (whichever path it takes) ends where the generic reader ends
    restored = _restored(data, policy)
    if isinstance(expected, StateSnapshot):
        assert isinstance(restored, StateSnapshot), restored
        _same_state(restored, expected)
    else:
        assert isinstance(restored, str)
    return found is not None


def _file(policy: str, default: str, entries: dict[str, dict[str, str]] | None) -> bytes:
    bare = CheckpointV2(policy, default, entries, 0)
    return codec.encode_checkpoint(bare.with_checksum(checksum_of(bare)))


ENTRIES = st.dictionaries(KEYS, st.dictionaries(KEYS, LISTS, max_size=4), max_size=5)


@given(POLICIES, st.one_of(CPU_SETS.map(str), st.just(""), ODD_LISTS), ENTRIES)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_the_kubelets_bytes_read_alike(
    policy: str, default: str, entries: dict[str, dict[str, str]]
) -> None:
    check(_file(policy, default, entries), "static")
    check(_file(policy, default, entries), policy)


@given(
    st.one_of(CPU_SETS.map(str), st.just("")),
    st.dictionaries(UID, st.dictionaries(PLAIN_KEYS, CPU_SETS.map(str), max_size=6), max_size=8),
)
@settings(max_examples=200)
def test_usual_files_take_the_fast_path(default: str, entries: dict[str, dict[str, str]]) -> None:
    """Not a vacuous comparison: what kubelets write is read here (wide and odd ids too)."""
    assert check(_file("static", default, entries))


def _layouts(checkpoint: dict[str, object], rng: random.Random) -> list[bytes]:
    """The same content as Go accepts it: other key orders, whitespace, escapes, key case."""
    keys = list(checkpoint)
    rng.shuffle(keys)
    shuffled = {key: checkpoint[key] for key in keys}
    entries = checkpoint.get("entries")
    if isinstance(entries, dict):
        reordered = dict(reversed(list(entries.items())))
        reordered = {k: dict(reversed(list(v.items()))) for k, v in reordered.items()}
        unsorted = {**checkpoint, "entries": reordered}
    else:
        unsorted = checkpoint
    compact = json.dumps(checkpoint, separators=(",", ":"), ensure_ascii=False)
    return [
        json.dumps(shuffled, separators=(",", ":")).encode(),
        json.dumps(checkpoint, indent=1).encode(),
        json.dumps(checkpoint).encode(),
        json.dumps(unsorted, separators=(",", ":")).encode(),
        f" {compact}\n".encode(),
        compact.replace('"policyName"', '"PolicyName"').encode(),
        compact.replace('"0', '"\\u0030', 1).encode(),
        compact.encode("utf-8"),
    ]


@given(st.dictionaries(UID, st.dictionaries(PLAIN_KEYS, CPU_SETS.map(str), max_size=4), max_size=4))
@settings(max_examples=60)
def test_other_layouts_of_the_same_content(entries: dict[str, dict[str, str]]) -> None:
    written = json.loads(_file("static", "0-1", entries))
    for data in _layouts(written, random.Random(len(entries))):
        check(data)


def _corrupt(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    choice = rng.randrange(6)
    if choice == 0:  # a checksum that does not match
        return text.replace('"checksum":', '"checksum":1', 1).encode()
    if choice == 1:  # unchecked
        head, _, _ = text.rpartition('"checksum":')
        return f'{head}"checksum":0}}'.encode()
    if choice == 2:  # a pod given twice
        return text.replace('"entries":{', '"entries":{"p":{"c":"1"},"p":{"d":"2"},', 1).encode()
    if choice == 3:  # null entries / a null pod
        return text.replace('"entries":{', '"entries":{"p":null,', 1).encode()
    if choice == 4:  # a number where a list belongs
        return text.replace(':"', ':7,"x":"', 1).encode()
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b" ", b",", b"}", b'"', b"-", b"0", b"{}"]) + data[at:]


def test_corrupted_files_read_alike() -> None:
    rng = random.Random(12)
    seeds = [
        _file("static", "0-3", {"pod-a": {"app": "4-5", "side": "6,9"}, "pod-b": {}}),
        _file("static", "", {"0f1e": {"c": "8-9"}}),
        _file("static", "0-7,12", {}),
        _file("none", "", {}),
    ]
    answered = 0
    for _ in range(1500):
        data = _corrupt(rng.choice(seeds), rng)
        answered += check(data)
    assert answered > 0


@pytest.mark.parametrize(
    "data",
    [
        # no entries: V1 may verify (a stored 0) and migrates to the same empty state
        b'{"policyName":"static","defaultCpuSet":"0-3","checksum":0}',
        _file("static", "0-3", {}),
        _file("static", "", {}),
        # empty pods, a pod with an empty container map, a single id, the largest id
        _file("static", "0", {"a": {}, "b": {"c": "65535"}}),
        _file("static", "1,3,5-7", {"a": {"c": "2,4", "d": "8-9,11"}}),
        # keys with spaces, colons, brackets: go-spew prints them raw
        _file("static", "0", {"p q": {"c:d": "1"}, "[x]": {"a=b": "2"}}),
        # commas inside keys stay (a comma after a quote or a brace separates entries)
        _file("static", "0", {"p,q": {"c,": "1", "d,e": "2"}, "x,": {"y,,": "3,5"}}),
    ],
)
def test_edge_files(data: bytes) -> None:
    assert check(data)


@pytest.mark.parametrize(
    "data",
    [
        _file("static", "0", {"p": {"c": "65536"}}),  # above the checkpoint bound
        _file("static", "0", {"p": {"c": "3-1"}}),  # Go: invalid range
        _file("static", "0", {"p": {"c": "01"}}),  # Go reads it; the exact parser does
        _file("static", "0", {"p": {"c": ""}}),  # an empty set: the exact parser
        _file("static", "x", {"p": {"c": "1"}}),  # a bad default set
        _file("static", "0-3", None),  # hashed with nil entries: every kubelet refuses it
        _file("static", "0", {"p}": {"c": "1"}}),  # a brace in a key: the exact path
        _file("static", "0", {"p": {"{c": "1"}}),
        _file("static", "0", {",p": {"c": "1"}}),  # a key led by a comma: the exact path
        # escapes (the scanner writes them back alike): the exact path, checked or not
        _file("static", "0", {'p"q': {"c": "1"}}),
        _file("static", "0", {"p": {"c\\d\n": "1"}}),
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p\\"":{"c":"1"}},"checksum":0}',
        _file("static", "0", {"p": {"c": "1", ",d": "2"}}),
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":1}',
    ],
)
def test_unusual_files_are_left_to_the_exact_readers(data: bytes) -> None:
    assert fast_read.read_v2(data) is None
    check(data)


@given(st.lists(LISTS, min_size=1, max_size=8))
@settings(max_examples=300)
def test_bulk_masks_match_the_exact_parser(lists: list[str]) -> None:
    found = fast_read._cpu_masks(",".join(lists), lists)
    if found is None:
        return
    assert len(found) == len(lists)
    for text, mask in zip(lists, found, strict=True):
        assert CPUSet.from_bits(mask) == parse_cpu_list(text)


def test_bulk_masks_cover_every_list_shape() -> None:
    shapes = [["8-9", "10-11"], ["1", "2"], ["1,3", "5"], ["4", "1,3"], ["0-2,4", "6-7,9-10"]]
    for lists in shapes:
        found = fast_read._cpu_masks(",".join(lists), lists)
        assert found == [parse_cpu_list(text).bits for text in lists], lists


@given(st.lists(LISTS, min_size=1, max_size=8), st.one_of(CPU_SETS.map(str), ODD_LISTS))
@settings(max_examples=300)
def test_usual_masks_match_the_exact_parser(lists: list[str], default: str) -> None:
    """One range per list and ranges in the default set, or None (the general reader)."""
    found = fast_read._usual_masks(",".join(lists), len(lists), default, json.loads)
    if found is None:
        return
    assert len(found) == len(lists) + 1
    for text, mask in zip([*lists, default], found, strict=True):
        assert CPUSet.from_bits(mask) == parse_cpu_list(text)


def test_usual_masks_take_the_usual_lists() -> None:
    found = fast_read._usual_masks("8-9,10-13", 2, "0-7,14-15", json.loads)
    assert found == [0b11 << 8, 0b1111 << 10, 0xFF | 0b11 << 14]
    assert fast_read._usual_masks("8-9,10", 2, "0-7", json.loads) is None  # a single id
    assert fast_read._usual_masks("8-9,10-11,12-13", 2, "0-7", json.loads) is None  # 2 in one
