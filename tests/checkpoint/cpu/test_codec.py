"""Checkpoint codec: golden bytes, Go's writer rules, Go's reader quirks, round trips."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.go import gojson
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
GOLDEN_FILES = sorted(GOLDEN.glob("*.json"))


def snap(policy: str, default: str, **pods: dict[str, str]) -> StateSnapshot:
    return StateSnapshot(
        policy,
        CPUSet.parse(default),
        {
            PodUID(p): {ContainerName(n): CPUSet.parse(c) for n, c in cs.items()}
            for p, cs in pods.items()
        },
    )


# --- golden files -----------------------------------------------------------------------


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden_files_round_trip_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    assert not data.endswith(b"\n")
    checkpoint = codec.decode(data, source=path.name, order="v2-first")
    assert checkpoint.format == path.name[:2]
    assert codec.encode_checkpoint(checkpoint) == data
    if isinstance(checkpoint, CheckpointV2):
        snapshot = codec.snapshot_from_v2(checkpoint, source=path.name)
        assert codec.encode_v2(snapshot) == data
    else:
        assert codec.encode_v1(checkpoint.with_checksum(0)) == data


def test_golden_set_is_there() -> None:
    assert len(GOLDEN_FILES) == 7


def test_encode_v2_of_a_snapshot_is_what_the_kubelet_writes() -> None:
    state = snap("static", "0,3-7", **{"pod-uid-1": {"sidecar": "8", "app": "1-2"}})
    assert codec.encode_v2(state) == (
        b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"pod-uid-1":'
        b'{"app":"1-2","sidecar":"8"}},"checksum":300718079}'
    )
    assert codec.encode_v2(StateSnapshot("none")) == (
        b'{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'
    )


def test_encode_checkpoint_keeps_nil_inner_maps_as_null() -> None:
    checkpoint = CheckpointV2("static", "0-1", {"p": None, "q": {}}, 7)
    assert codec.encode_checkpoint(checkpoint) == (
        b'{"policyName":"static","defaultCpuSet":"0-1","entries":{"p":null,"q":{}},"checksum":7}'
    )
    assert codec.encode_checkpoint(CheckpointV2("s", "", None, 1)) == (
        b'{"policyName":"s","defaultCpuSet":"","checksum":1}'
    )


# --- Go's string escaping -----------------------------------------------------------------

ESCAPES = [
    ("plain", '"plain"'),
    ('q"b\\', '"q\\"b\\\\"'),
    ("\n\r\t\b\f", '"\\n\\r\\t\\b\\f"'),
    ("\x00\x1f\x7f", '"\\u0000\\u001f\x7f"'),
    ("<a&b>", '"\\u003ca\\u0026b\\u003e"'),
    ("\u2028\u2029", '"\\u2028\\u2029"'),
    ("é☃😀", '"é☃😀"'),
    ("\ud800x", '"\\ufffdx"'),
    ("/'", '"/\'"'),
]


@pytest.mark.parametrize(("text", "encoded"), ESCAPES)
def test_go_string_escaping(text: str, encoded: str) -> None:
    assert gojson.encode_string(text) == encoded


# --- Go's reader -----------------------------------------------------------------------------

V2_OK = b'{"policyName":"static","defaultCpuSet":"0-1","entries":{"p":{"c":"1"}},"checksum":0}'

DECODE_CASES = [
    # (id, bytes, format or error substring, check)
    ("top-null", b"null", "v1", lambda c: c == CheckpointV1("", "", {}, 0)),
    ("whitespace", b" \t\r\n{}\n ", "v1", lambda c: c.policy_name == ""),
    (
        "unknown-keys",
        b'{"x":[1,{"y":null}],"policyName":"a"}',
        "v1",
        lambda c: c.policy_name == "a",
    ),
    (
        "key-case",
        b'{"PolicyNAME":"a","DEFAULTCPUSET":"1"}',
        "v1",
        lambda c: c.default_cpu_set == "1",
    ),
    ("kelvin", b'{"checKsum":0,"policyname":"\\u212a"}', "v1", lambda c: c.policy_name == "\u212a"),
    ("escaped-key", b'{"policy\\u004eame":"a"}', "v1", lambda c: c.policy_name == "a"),
    (
        "null-scalars",
        b'{"policyName":"a","policyName":null,"checksum":null}',
        "v1",
        lambda c: c.policy_name == "a",
    ),
    ("entries-null", b'{"entries":null}', "v1", lambda c: c.entries is None),
    (
        "entries-null-then-obj",
        b'{"entries":null,"entries":{"a":"1"}}',
        "v1",
        lambda c: c.plain_entries() == {"a": "1"},
    ),
    ("v1-null-value", b'{"entries":{"a":null}}', "v1", lambda c: c.plain_entries() == {"a": ""}),
    (
        "v2-null-inner",
        b'{"entries":{"p":{"a":null},"q":null}}',
        "v2",
        lambda c: c.plain_entries() == {"p": {"a": ""}, "q": None},
    ),
    (
        "v2-repeated-pod-replaces",
        b'{"entries":{"p":{"a":"1"},"p":{"b":"2"}}}',
        "v2",
        lambda c: c.plain_entries() == {"p": {"b": "2"}},
    ),
    (
        "invalid-utf8-per-byte",
        b'{"policyName":"\xe2\x82A\xff"}',
        "v1",
        lambda c: c.policy_name == "\ufffd\ufffdA\ufffd",
    ),
    ("surrogate-pair", b'{"policyName":"\\ud83d\\ude00"}', "v1", lambda c: c.policy_name == "😀"),
    (
        "lone-surrogate",
        b'{"policyName":"\\ud800\\u0041"}',
        "v1",
        lambda c: c.policy_name == "\ufffdA",
    ),
    ("checksum-max", b'{"checksum":18446744073709551615}', "corrupt", None),
    ("empty", b"", "unexpected end of JSON input", None),
    ("truncated", V2_OK[:-1], "unexpected end of JSON input", None),
    ("garbage-after", V2_OK + b"x", "invalid character 'x' after top-level value", None),
    ("bom", b"\xef\xbb\xbf{}", "looking for beginning of value", None),
    ("nan", b'{"checksum":NaN}', "invalid character 'N'", None),
    ("control-in-string", b'{"policyName":"a\nb"}', "in string literal", None),
    ("bad-escape", b'{"policyName":"\\x"}', "in string escape code", None),
    ("leading-zero", b'{"checksum":01}', "after object key:value pair", None),
    ("trailing-comma", b'{"a":1,}', "looking for beginning of object key string", None),
    ("single-quotes", b"{'a':1}", "looking for beginning of object key string", None),
    ("array-top", b"[]", "cannot unmarshal array into Go value of type", None),
    ("string-top", b'"x"', "cannot unmarshal string into Go value", None),
    ("checksum-negative", b'{"checksum":-1}', "cannot unmarshal number -1", None),
    ("checksum-exp", b'{"checksum":1e3}', "cannot unmarshal number 1e3", None),
    ("checksum-overflow", b'{"checksum":18446744073709551616}', "cannot unmarshal number", None),
    ("checksum-bool", b'{"checksum":true}', "cannot unmarshal bool", None),
    ("policy-number", b'{"policyName":1}', "cannot unmarshal number into Go struct field", None),
    ("entries-array", b'{"entries":[]}', "cannot unmarshal array", None),
    ("v2-inner-number", b'{"entries":{"p":{"c":1}}}', "cannot unmarshal number", None),
    ("deep-unknown-ok", b'{"x":' + b"[" * 5000 + b"]" * 5000 + b"}", "v1", lambda c: True),
    ("too-deep", b"[" * 10001 + b"]" * 10001, "exceeded max depth", None),
]


@pytest.mark.parametrize(
    ("data", "outcome", "check"), [c[1:] for c in DECODE_CASES], ids=[c[0] for c in DECODE_CASES]
)
def test_decode_quirks(data: bytes, outcome: str, check: object) -> None:
    if outcome in ("v1", "v2"):
        checkpoint = codec.decode(data, source="t")
        assert checkpoint.format == outcome
        assert callable(check)
        assert check(checkpoint)
    elif outcome == "corrupt":
        with pytest.raises(CheckpointCorruptError):
            codec.decode(data, source="t")
    else:
        with pytest.raises(CheckpointFormatError) as caught:
            codec.decode(data, source="t")
        assert outcome in caught.value.message


def test_syntax_errors_win_over_type_errors() -> None:
    with pytest.raises(CheckpointFormatError, match="unexpected end"):
        codec.decode(b'{"checksum":"x",', source="t")


def test_decode_as_names_the_format() -> None:
    with pytest.raises(CheckpointFormatError, match="as V1: json: cannot unmarshal object"):
        codec.decode_as(V2_OK, "v1", source="t")
    assert codec.decode_as(V2_OK, "v2", source="t").format == "v2"


def test_v1_first_reports_the_v2_error_and_v2_first_the_v1_error() -> None:
    v1_bad = b'{"policyName":"s","entries":{"cid":"1"},"checksum":5}'
    with pytest.raises(CheckpointFormatError, match="as V2: json: cannot unmarshal string"):
        codec.decode(v1_bad, source="t")
    with pytest.raises(CheckpointCorruptError):
        codec.decode(v1_bad, source="t", order="v2-first")


# --- CPU lists -------------------------------------------------------------------------------

CPU_LISTS = [
    ("", ""),
    ("0-3,8", "0-3,8"),
    ("+1", "1"),
    ("3,1,2", "1-3"),
    ("1.3", 'strconv.Atoi: parsing "1.3": invalid syntax'),
    ("1,", 'strconv.Atoi: parsing "": invalid syntax'),
    ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
    ("1-2-3", 'strconv.Atoi: parsing "2-3": invalid syntax'),
    ("3-1", 'invalid range "3-1" (3 > 1)'),
    ("1- 2", 'strconv.Atoi: parsing " 2": invalid syntax'),
    ("99999999999999999999", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
    ("0-4000000000", "the largest this tool accepts"),
]


@pytest.mark.parametrize(("text", "result"), CPU_LISTS)
def test_parse_cpu_list(text: str, result: str) -> None:
    if result == "" or result[0].isdigit():
        assert str(codec.parse_cpu_list(text)) == result
    else:
        with pytest.raises(codec.CPUListError, match=re.escape(result)):
            codec.parse_cpu_list(text)


def test_snapshot_from_v2_reports_like_the_kubelet() -> None:
    bad = CheckpointV2("none", "1-3", {"pod": {"container1": "4-6", "container2": "asd"}})
    with pytest.raises(CheckpointFormatError) as caught:
        codec.snapshot_from_v2(bad, source="s")
    assert (
        'could not parse cpuset "asd" for container "container2" in pod "pod": '
        'strconv.Atoi: parsing "asd": invalid syntax'
    ) in caught.value.message


def test_checkpoint_from_snapshot_has_a_fresh_checksum() -> None:
    checkpoint = codec.checkpoint_v2_from_snapshot(snap("static", "0", p={"c": "1"}))
    assert checkpoint.checksum == checksum_of(checkpoint.with_checksum(0))


# --- round trips over awkward states ---------------------------------------------------------

AWKWARD = st.text(
    alphabet=st.one_of(
        st.sampled_from('"\\<>&/\n\t\b\f\x00\x1f\x7f\u2028\u2029 :[]{}é☃😀K\u212a\u017f'),
        st.characters(codec=None, exclude_categories=("Cs",)),
    ),
    max_size=12,
)
CPUS = st.frozensets(st.integers(0, 300), max_size=12).map(CPUSet)
STATES = st.builds(
    StateSnapshot,
    st.one_of(st.sampled_from(["none", "static"]), AWKWARD),
    CPUS,
    st.dictionaries(AWKWARD, st.dictionaries(AWKWARD, CPUS, max_size=4), max_size=5),
)


@given(STATES)
def test_v2_round_trip(state: StateSnapshot) -> None:
    data = codec.encode_v2(state)
    checkpoint = codec.decode_as(data, "v2", source="t")
    assert checkpoint.checksum == checksum_of(checkpoint.with_checksum(0))
    assert isinstance(checkpoint, CheckpointV2)
    assert codec.snapshot_from_v2(checkpoint, source="t") == state
    assert codec.encode_checkpoint(checkpoint) == data
    assert data.isascii() or "\u2028" not in data.decode()


@given(st.dictionaries(AWKWARD, CPUS.map(str), max_size=6), AWKWARD, CPUS)
def test_v1_round_trip(entries: dict[str, str], policy: str, default: CPUSet) -> None:
    checkpoint = CheckpointV1(policy, str(default), entries)
    data = codec.encode_v1(checkpoint)
    back = codec.decode_as(data, "v1", source="t")
    assert back.with_checksum(0) == CheckpointV1(policy, str(default), entries)
    assert codec.encode_checkpoint(back) == data


def test_models_are_values() -> None:
    a = CheckpointV2("s", "0", {"p": {"c": "1"}}, 5)
    assert a == CheckpointV2("s", "0", {"p": {"c": "1"}}, 5)
    assert a != CheckpointV2("s", "0", {"p": None}, 5)
    assert hash(a) == hash(CheckpointV2("s", "0", {}, 5))
    assert a.__eq__(CheckpointV1()) is NotImplemented
    b = CheckpointV1("s", "0", {"c": "1"}, 5)
    assert b == CheckpointV1("s", "0", {"c": "1"}, 5)
    assert hash(b) == hash(CheckpointV1("s", "0", None, 5))
    assert b.__eq__(a) is NotImplemented
    assert CheckpointV1("s", "0", None).plain_entries() is None
