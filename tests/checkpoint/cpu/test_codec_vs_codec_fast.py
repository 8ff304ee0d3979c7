"""The fast checkpoint paths agree with the exact writer and reader on every input."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu import codec_fast as fast
from cpumanager.checkpoint.cpu.checksum import checksum_of, render
from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.checkpoint.go.fnv import fnv1a_32, fnv1a_32_reference
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointError

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

NAMES = st.one_of(
    st.text(alphabet="abcdef0123456789-", min_size=0, max_size=10),
    st.text(alphabet=st.sampled_from('"\\<>&/\n\t :,[]{}é\u2028ab01'), min_size=0, max_size=6),
)
CPUS = st.frozensets(st.integers(0, 300), max_size=12).map(CPUSet)
STATES = st.builds(
    StateSnapshot,
    st.one_of(st.sampled_from(["none", "static", "st<a>tic", "{"]), NAMES),
    CPUS,
    st.dictionaries(NAMES, st.dictionaries(NAMES, CPUS, max_size=4), max_size=5),
)


def _exact_bytes(state: StateSnapshot) -> bytes:
    return codec.encode_checkpoint(codec.checkpoint_v2_from_snapshot(state))


@given(STATES)
@settings(max_examples=120)
def test_encode_matches_the_exact_writer(state: StateSnapshot) -> None:
    assert codec.encode_v2(state) == _exact_bytes(state)


@given(STATES)
@settings(max_examples=120)
def test_spew_rendering_matches_the_exact_renderer(state: StateSnapshot) -> None:
    checkpoint = codec.checkpoint_v2_from_snapshot(state).with_checksum(0)
    entries = checkpoint.plain_entries()
    assert entries is not None
    if not entries:
        return
    body = fast._ENCODER.encode(entries)
    spewed = fast.spew_entries(body) if fast._plain(body) else None
    if spewed is not None:
        assert f"Entries:(map[string]map[string]string){spewed} " in render(checkpoint)


# CPU lists as stored, hand-edited ones too (a comma first, a brace, a quote-free oddity)
LIST_TEXTS = st.one_of(CPUS.map(str), st.text(alphabet=",-0189{}<", max_size=5))


@given(st.dictionaries(NAMES, st.dictionaries(NAMES, LIST_TEXTS, max_size=4), max_size=5))
@settings(max_examples=300)
def test_spew_checked_is_the_whole_check_and_rendering(
    entries: dict[str, dict[str, str]],
) -> None:
    """Where the whole check holds, the cheaper proof renders the same; wherever the cheaper
    proof renders at all, the rendering is go-spew's (the exact renderer's). The cheaper
    proof may accept what the whole check declines: a CPU list ending in a comma before
    the next entry (``"0,","0"``) is rendered right, the whole check is only cautious."""
    dumps = fast.c_json()[1]
    body = dumps(entries, option=fast.SORTED)
    pods, containers = len(entries), sum(map(len, entries.values()))
    got = fast.spew_checked(body, pods, containers)
    if fast.spew_applies(body, pods):
        assert got == fast.spew_written(body)
    if got is not None:
        exact = render(CheckpointV2("static", "0", entries))
        assert f"Entries:(map[string]map[string]string){got.decode()} " in exact


def test_spew_checked_renders_a_list_ending_in_a_comma() -> None:
    entries = {"": {"": "0,", "0": ""}}
    body = fast.c_json()[1](entries, option=fast.SORTED)
    got = fast.spew_checked(body, 1, 2)
    assert got == b"map[:map[:0, 0:]]"
    assert f"(map[string]map[string]string){got.decode()} " in render(
        CheckpointV2("static", "0", entries)
    )


@pytest.mark.parametrize(
    "entries", [{"": {"": ","}}, {"p": {"c": ",1", "d": "2"}}, {"p": {}, "q": {"c": ",0"}}]
)
def test_a_cpu_list_led_by_a_comma_is_never_rendered_as_a_separator(
    entries: dict[str, dict[str, str]],
) -> None:
    """``":","`` holds the ``",`` the whole-text passes take for a separator (a seed of the
    property test above found it): such a body goes to the exact renderer."""
    body = fast.c_json()[1](entries, option=fast.SORTED)
    pods, containers = len(entries), sum(map(len, entries.values()))
    assert not fast.spew_applies(body, pods)
    got = fast.spew_checked(body, pods, containers)
    if got is not None:
        exact = render(CheckpointV2("static", "0", entries))
        assert f"Entries:(map[string]map[string]string){got.decode()} " in exact


def test_spew_checked_declines_what_spew_applies_declines() -> None:
    cases = [
        {"p": {",c": "1"}},  # a key led by a comma
        {",p": {"c": "1"}},
        {"p": {"c{": "1"}},  # braces in keys
        {"p}": {"c": "1"}},
        {"p": {"c\\": "1"}},  # escaped on writing
        {"p": {"c": "<"}},
        {"p": {"c": "1"}, "q": {}},  # an empty pod: the whole check, which renders it
    ]
    dumps = fast.c_json()[1]
    for entries in cases:
        body = dumps(entries, option=fast.SORTED)
        pods, containers = len(entries), sum(map(len, entries.values()))
        expected = fast.spew_written(body) if fast.spew_applies(body, pods) else None
        assert fast.spew_checked(body, pods, containers) == expected, entries
    assert fast.spew_checked(b'{"p":{"c":"1"},"q":{}}', 2, 1) == b"map[p:map[c:1] q:map[]]"


@given(STATES)
@settings(max_examples=100)
def test_decode_matches_the_exact_reader(state: StateSnapshot) -> None:
    data = _exact_bytes(state)
    found = fast.decode_v2(data)
    exact = codec.decode(data, source="t")
    if found is not None:
        assert found == exact
        assert isinstance(exact, CheckpointV2)


def _mutations(seed: bytes, rng: random.Random) -> bytes:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        at = rng.randrange(len(data) + 1)
        if choice < 0.3 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif choice < 0.6:
            token = rng.choice(
                [b'"', b",", b"{", b"}", b"null", b"-0", b"1e3", b"\\u0041", b'"Entries"', b" "]
            )
            data[at:at] = token
        elif data:
            del data[at : at + rng.randint(1, 4)]
    return bytes(data)


_VALID = [
    *(path.read_bytes() for path in sorted(GOLDEN.glob("*.json"))),
    codec.encode_v2(
        StateSnapshot(
            "static",
            CPUSet.parse("0,9-11"),
            {"pod-a": {"app": CPUSet.parse("1-4"), "side": CPUSet.parse("5,7")}, "pod-b": {}},
        )
    ),
]
# An unchecked copy of each (checksum 0), so that mutated content can still verify.
SEEDS = _VALID + [re.sub(rb'"checksum": *[0-9]+', b'"checksum":0', data) for data in _VALID]


def test_fast_reader_never_disagrees_on_mutated_files() -> None:
    rng = random.Random(12)
    compared = 0
    for _ in range(1500):
        data = _mutations(rng.choice(SEEDS), rng)
        found = fast.decode_v2(data)
        if found is None:
            continue  # the exact reader decides: nothing to compare
        compared += 1
        assert codec.decode(data, source="t") == found
        assert codec.decode(data, source="t", order="v2-first") == found
    assert compared > 0


@pytest.mark.parametrize(
    "data",
    [
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":-0}',
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"},"p":{"d":"2"}},'
        b'"checksum":0}',
        b'{"PolicyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":0}',
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":null},"checksum":0}',
        b'{"policyName":"st\\u0061tic","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":0}',
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":1}',
        b'{"policyName":"static","defaultCpuSet":"0","entries":{},"checksum":0}',
        b'{"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"1"}},"checksum":NaN}',
    ],
)
def test_unusual_files_go_to_the_exact_reader(data: bytes) -> None:
    assert fast.decode_v2(data) is None


def test_restore_uses_either_path_with_the_same_result() -> None:
    state = StateSnapshot("static", CPUSet.parse("0-3"), {"pod": {"app": CPUSet.parse("4-5")}})
    data = codec.encode_v2(state)
    assert fast.decode_v2(data) is not None
    got = restore_state(data, source="t", configured_policy="static", container_map=ContainerMap())
    assert got == state


def test_bad_cpu_lists_name_the_first_in_pod_container_order() -> None:
    bad = CheckpointV2("static", "0", {"z": {"a": "x"}, "b": {"y": "1-", "c": "2"}})
    data = codec.encode_checkpoint(bad.with_checksum(checksum_of(bad)))
    with pytest.raises(CheckpointError, match='cpuset "1-" for container "y" in pod "b"'):
        restore_state(data, source="t", configured_policy="static", container_map=ContainerMap())


@given(st.binary(max_size=300))
def test_c_fnv_matches_the_python_loop(data: bytes) -> None:
    assert fnv1a_32(data) == fnv1a_32_reference(data)


# CPU list texts near every edge of the bulk reader: singles, ranges, several ranges, signs,
# leading zeros, spaces, underscores, non-ASCII digits, reversed and out-of-bound ranges.
LIST_TEXTS = st.one_of(
    CPUS.map(str),
    st.text(alphabet=st.sampled_from("0123456789-,+ _\u0663"), max_size=8),
    st.sampled_from(["65535", "65536", "0-65535", "7-3", "00", "08-9", "1-1", ""]),
)


def _exact_or_none(text: str) -> CPUSet | None:
    try:
        return codec.parse_cpu_list(text)
    except codec.CPUListError:
        return None


@given(LIST_TEXTS)
@settings(max_examples=300)
def test_one_range_reader_matches_the_exact_parser(text: str) -> None:
    found = fast.parse_plain_range(text)
    if found is not None:
        assert found == _exact_or_none(text)
        assert type(found) is CPUSet


@given(st.dictionaries(NAMES, st.dictionaries(NAMES, LIST_TEXTS, max_size=4), max_size=5))
@settings(max_examples=300)
def test_bulk_reader_matches_the_exact_parser(entries: dict[str, dict[str, str]]) -> None:
    found = fast.plain_assignments(entries)
    exact = {
        pod: {name: _exact_or_none(text) for name, text in containers.items()}
        for pod, containers in entries.items()
    }
    if found is not None:
        assert found == exact
        assert [list(sets) for sets in found.values()] == [list(c) for c in entries.values()]


def test_bulk_reader_takes_the_usual_file_and_refuses_the_rest() -> None:
    usual = {"pod": {"a": "2-3", "b": "4", "c": "10-11"}, "other": {}, "p2": {"x": "0-1"}}
    found = fast.plain_assignments(usual)
    assert found == {
        "pod": {"a": CPUSet([2, 3]), "b": CPUSet([4]), "c": CPUSet([10, 11])},
        "other": {},
        "p2": {"x": CPUSet([0, 1])},
    }
    for text in ("1-2,5", "3-2", "08", "+1", " 1", "1_0", "65536", "", "\u0663"):
        assert fast.plain_assignments({"pod": {"a": "1", "b": text}}) is None, text


def test_cold_restore_equals_the_exact_parse_on_golden_files() -> None:
    checked = 0
    for path in sorted(GOLDEN.glob("*.json")):
        plain = fast.decode_v2_plain(path.read_bytes())
        if plain is None:
            continue
        checked += 1
        fast.clear_caches()
        snapshot = codec.snapshot_from_plain(plain[0], plain[1], plain[2], source="t")
        for pod, containers in plain[2].items():
            for name, text in containers.items():
                assert snapshot.assignments[pod][name] == codec.parse_cpu_list(text)
    assert checked >= 2
