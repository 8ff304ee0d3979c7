"""Fast paths for the common V2 checkpoint: the same bytes and verdicts, at C speed.

Where the time went: Go's JSON rules and go-spew's rendering written character by character
in Python, FNV-1a one byte at a time, and CPU lists formatted and parsed afresh on every
call. Here the standard library's C JSON encoder and decoder do the work for the inputs on
which they provably agree with Go, and everything else goes to the exact code in
:mod:`codec` / :mod:`gojson` (which stays the reference; tests compare the two):

* **Writing**: ``json.dumps`` (compact, sorted keys, ``ensure_ascii=False``) equals Go's
  ``json.Marshal`` of a ``map[string]map[string]string`` when the output is ASCII and has no
  backslash (nothing was escaped) and no ``<``, ``>``, ``&`` (Go escapes those). Sorted by
  code point is sorted bytewise for ASCII.
* **go-spew**: with no backslash in that JSON, every ``"`` is a string delimiter, so the text
  splits into structure (even pieces) and strings (odd pieces); a table maps each structural
  piece of this shape (``{``, ``:{``, ``","``...) to go-spew's (``map[``, ``:map[``, `` ``...).
  A piece outside the table sends the input to the exact path.
* **Reading**: ``json.loads`` on ASCII input without backslashes, with every object's keys
  distinct, the four field names spelled exactly, a non-negative integer checksum and the
  plain V2 shape (every pod an object of strings, at least one pod). Go reads such a file
  exactly as Python does; V1 fails on it (an object where V1 wants a string), so released
  and newest kubelets both end with V2. Any other input (duplicates, case-folded keys,
  ``null``, escapes, non-ASCII, numbers elsewhere, a checksum mismatch) takes the exact
  path, which also words every error.
* CPU lists: written with ``str`` (a cache keyed by wide bitmasks cost more to fill than it
  saved), read in bulk when every entry holds one range (:func:`plain_assignments`), and
  parsed lists are remembered (bounded) for the rest.
"""

from __future__ import annotations

import json
import operator
import re
from collections import deque
from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Any

from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.core.bitset import IntBitSet
from cpumanager.core.cpuset import MAX_CHECKPOINT_CPU_ID, CPUSet

__all__ = [
    "SORTED",
    "PlainV2",
    "c_json",
    "cached_cpu_set",
    "clear_caches",
    "decode_v2",
    "decode_v2_plain",
    "encode_v2",
    "parse_plain_range",
    "plain_assignments",
    "remember_cpu_set",
    "spew_entries",
    "spew_applies",
    "spew_checked",
    "spew_written",
]

# (policy name, default CPU list, entries, checksum) of a verified plain V2 file.
PlainV2 = tuple[str, str, dict[str, dict[str, str]], int]

_CACHE_LIMIT = 4096
_UINT64_MAX = (1 << 64) - 1
_FIELDS = frozenset({"policyName", "defaultCpuSet", "entries", "checksum"})
_PREFIX = "(*state.CPUManagerCheckpoint){PolicyName:(string)"
_ENTRY_TYPE = " Entries:(map[string]map[string]string)"
_SUFFIX = " Checksum:(checksum.Checksum)0}"
# Printable ASCII that Go's json.Marshal writes as is: no '"', '\\', '<', '>', '&'.
_RAW = re.compile(r"[ !#-%'-;=?-\[\]-~]*")
# A compact, canonical file as the kubelet writes it, entries kept as text.
_CANONICAL = re.compile(
    rb'\{"policyName":"([^"]*)","defaultCpuSet":"([^"]*)","entries":(\{.*\}),'
    rb'"checksum":([0-9]+)\}',
    re.DOTALL,
)

# JSON structure between two strings of a sorted map[string]map[string]string, and its
# go-spew spelling. "{" opens the outer map (first piece), "}}" closes it (last piece).
_STRUCTURE = {
    "{": "map[",
    ":{": ":map[",
    ":": ":",
    ",": " ",
    "},": "] ",
    ":{},": ":map[] ",
    "}}": "]]",
    ":{}}": ":map[]]",
}

# CPU lists of one range each ("a" or "a-b"), joined by ","; ids of at most five digits.
_RANGES = re.compile(r"[0-9]{1,5}(?:-[0-9]{1,5})?(?:,[0-9]{1,5}(?:-[0-9]{1,5})?)*")

_sets: dict[str, CPUSet] = {}
_SPEW_TABLE = bytes.maketrans(b"}", b"]")
_PREFIX_BYTES = _PREFIX.encode()
_DEFAULT_BYTES = b" DefaultCPUSet:(string)"
_ENTRIES_BYTES = _ENTRY_TYPE.encode()
_SUFFIX_BYTES = _SUFFIX.encode()

SORTED = 0x20  # orjson.OPT_SORT_KEYS
JSONLoads = Callable[[bytes | str], Any]
JSONDumps = Callable[..., bytes]
_loads: JSONLoads | None = None
_dumps: JSONDumps | None = None


def c_json() -> tuple[JSONLoads, JSONDumps]:
    """orjson's scanner and writer (pinned; C, several times the standard library's speed).

    Resolved on first use (importing orjson costs a short command's start). Without it the
    standard library does the same: both read ASCII without a backslash alike, and
    ``dumps(value, option=SORTED)`` is compact JSON with every map's keys sorted.
    """
    global _loads, _dumps
    if _loads is None or _dumps is None:
        try:
            import orjson
        except ImportError:  # pragma: no cover - a broken install still gives the same bytes
            _loads, _dumps = json.loads, _json_dumps
        else:
            _loads, _dumps = orjson.loads, orjson.dumps
    return _loads, _dumps


def _json_dumps(value: object, option: int) -> bytes:
    """orjson's sorted, compact writing with the standard library (no orjson installed)."""
    assert option == SORTED
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.encode("utf-8", "surrogatepass")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class _NotPlainError(Exception):
    """The input is not of the shape this module reads; the exact reader decides."""


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotPlainError
    return found


def _refuse(text: str) -> object:
    raise _NotPlainError(text)


def _uint(text: str) -> int:
    """Integers without a sign only: Go refuses ``-0`` for the unsigned checksum."""
    if text.startswith("-"):
        raise _NotPlainError(text)
    return int(text)


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique, parse_float=_refuse, parse_int=_uint, parse_constant=_refuse
)


_new_set = object.__new__
_set_bits = IntBitSet.__dict__["_bits"].__set__  # the slot itself: no immutability guard


def parse_plain_range(text: str) -> CPUSet | None:
    """``parse_cpu_list(text)`` for ``a`` or ``a-b`` in ASCII digits (the usual container).

    A cold restore parses every list once; this skips the regex, the general loop and
    ``from_bits``'s checks. None for anything else (the exact parser decides): signs,
    several ranges, ids above the checkpoint bound, the empty list.
    """
    start_text, dash, end_text = text.partition("-")
    if len(start_text) > 5 or not start_text.isdigit() or not start_text.isascii():
        return None
    start = int(start_text)
    if dash:
        if len(end_text) > 5 or not end_text.isdigit() or not end_text.isascii():
            return None
        end = int(end_text)
        if end < start:
            return None
    else:
        end = start
    if end > MAX_CHECKPOINT_CPU_ID:
        return None
    found = _new_set(CPUSet)
    _set_bits(found, ((2 << (end - start)) - 1) << start)
    return found


def plain_assignments(
    entries: Mapping[str, Mapping[str, str] | None],
) -> dict[str, dict[str, CPUSet]] | None:
    """Every entry's CPU list parsed, when each is one range in ASCII digits; else None.

    A cold restore parses every list once, so nothing here runs Python code per list: one
    regex checks the joined lists (the comma count proves no list holds two ranges), and
    ``map`` over C functions converts the ids, builds the bitmasks and fills the sets.
    """
    texts: list[str] = []
    for containers in entries.values():
        if containers is None:
            return None
        texts.extend(containers.values())
    joined = ",".join(texts)
    if joined.count(",") != len(texts) - 1 or _RANGES.fullmatch(joined) is None:
        return None
    if joined.count("-") != len(texts):  # some single ids: "a" is the range "a-a"
        joined = ",".join([text if "-" in text else f"{text}-{text}" for text in texts])
    try:  # digits and commas only: the C scanner reads them as ints (leading 0s: exact path)
        ids = json.loads(f"[{joined.replace('-', ',')}]")
    except ValueError:
        return None
    starts = ids[0::2]
    ends = ids[1::2]
    if not all(map(operator.le, starts, ends)) or max(ends) > MAX_CHECKPOINT_CPU_ID:
        return None  # the exact parser words the error
    # CPUs start..end are the bits of 2^(end+1) - 2^start
    masks = map(
        operator.sub, map(operator.lshift, repeat(2), ends), map(operator.lshift, repeat(1), starts)
    )
    sets = list(map(_new_set, repeat(CPUSet, len(texts))))
    deque(map(_set_bits, sets, masks), maxlen=0)
    remaining = iter(sets)  # zip stops at the end of each pod's names, taking no extra set
    return {
        pod: dict(zip(containers, remaining, strict=False))  # type: ignore[arg-type]
        for pod, containers in entries.items()
    }


def cached_cpu_set(text: str) -> CPUSet | None:
    """A CPU list parsed before (by the exact parser), or None."""
    return _sets.get(text)


def remember_cpu_set(text: str, cpus: CPUSet) -> None:
    if len(_sets) >= _CACHE_LIMIT:
        _sets.clear()
    _sets[text] = cpus


def clear_caches() -> None:
    """Forget every cached CPU list (benchmarks measure the cold case with it)."""
    _sets.clear()


def _plain(text: str) -> bool:
    """JSON text Go would write the same: ASCII, nothing escaped, no HTML characters."""
    return (
        text.isascii()
        and "\\" not in text
        and "<" not in text
        and ">" not in text
        and "&" not in text
    )


def spew_entries(body: str) -> str | None:
    """go-spew's rendering of the non-empty map whose sorted compact JSON is ``body``.

    None when ``body`` is not of the plain shape (the exact renderer then decides).
    """
    pieces = body.split('"')
    try:
        pieces[0::2] = map(_STRUCTURE.__getitem__, pieces[0::2])
    except KeyError:
        return None
    if pieces[0] != "map[" or not pieces[-1].endswith("]]"):
        return None
    return "".join(pieces)


def _checksum(policy: str, default: str, spewed: str) -> int:
    rendered = f"{_PREFIX}{policy} DefaultCPUSet:(string){default}{_ENTRY_TYPE}{spewed}{_SUFFIX}"
    return fnv1a_32(rendered.encode("ascii"))


def encode_v2(policy: str, default: str, entries: Mapping[str, Mapping[str, str]]) -> bytes | None:
    """The kubelet's bytes for this V2 content, or None when the exact writer must decide."""
    if _RAW.fullmatch(policy) is None or _RAW.fullmatch(default) is None:
        return None
    if not entries:
        checksum = _checksum(policy, default, "map[]")
        head = f'{{"policyName":"{policy}","defaultCpuSet":"{default}"'
        return f'{head},"checksum":{checksum}}}'.encode()
    dumps = _dumps or c_json()[1]
    try:
        body = dumps(entries, option=SORTED)
    except TypeError:  # orjson's error for what it cannot write (a key not a str, ...)
        return None
    if not body.isascii():
        return None
    if spew_applies(body, len(entries)):
        spewed = spew_written(body)
    elif b"\\" in body or b"<" in body or b">" in body or b"&" in body:
        return None  # json.Marshal would escape (orjson writes control characters escaped)
    else:  # a key holding a brace or led by a comma: piece by piece
        pieces = spew_entries(body.decode("ascii"))
        if pieces is None:
            return None
        spewed = pieces.encode("ascii")
    policy_bytes = policy.encode()
    default_bytes = default.encode()
    checksum = fnv1a_32(
        b"".join((_PREFIX_BYTES, policy_bytes, _DEFAULT_BYTES, default_bytes, _ENTRIES_BYTES))
        + spewed
        + _SUFFIX_BYTES
    )
    return b'{"policyName":"%b","defaultCpuSet":"%b","entries":%b,"checksum":%d}' % (
        policy_bytes,
        default_bytes,
        body,
        checksum,
    )


def spew_applies(body: bytes, pods: int) -> bool:
    """Whether :func:`spew_written` renders ``body``, compact JSON of ``pods`` pods.

    Deleting braces and what json.Marshal escapes (a backslash stands for the control
    characters orjson writes escaped) removes exactly the 2 braces per pod and the 2 around
    when no string holds any of them; and no string may be led by a comma (a key after
    ``{`` or ``,``, a value after ``:``). (``find``, not ``in``: ``in`` tries the needle as an
    integer first and raises, which costs more here.)
    """
    structure = len(body) - len(body.translate(None, b"{}\\<>&"))
    return (
        structure == 2 * pods + 2
        and body.find(b'{",') < 0
        and body.find(b',",') < 0
        and body.find(b':",') < 0
    )


def spew_written(body: bytes) -> bytes:
    """go-spew's rendering of the entries written as ``body``: sorted, compact, no escapes.

    With every quote a delimiter, no key holding ``{`` or ``}`` and none led by a comma
    (:func:`spew_applies`), the structure turns into go-spew's by whole-text passes: ``{`` is
    ``map[``, ``}`` is ``]``, quotes go, and a comma between entries is a space: one that
    follows a ``"`` or a ``}`` (a comma inside a CPU list follows a digit; one inside a
    key follows neither).
    """
    spaced = body.replace(b'",', b'" ').replace(b"},", b"} ")
    return spaced.translate(_SPEW_TABLE, b'"').replace(b"{", b"map[")


def spew_checked(body: bytes, pods: int, containers: int) -> bytes | None:
    """:func:`spew_written` of ``body`` when :func:`spew_applies` would hold (else None), for
    ``body`` written back from ``pods`` maps of ``containers`` strings in all.

    The same conditions, proved by cheaper passes, mostly the lengths the rewrites change:
    no backslash, ``<``, ``>`` or ``&`` (found by ``memchr``), ``pods + 1`` closing braces,
    one ``",`` per entry but each pod's last (one more is an empty pod or a string led by a
    comma, its opening quote then the comma: then the whole check), and ``pods + 1``
    opening braces.
    """
    if (
        body.find(b"\\") >= 0
        or body.find(b"<") >= 0
        or body.find(b">") >= 0
        or body.find(b"&") >= 0
        or body.count(b"}") != pods + 1
    ):
        return None
    spaced = body.replace(b'",', b" ")  # the quote goes anyway
    if len(body) - len(spaced) != containers - pods:  # an empty pod, or that comma
        return spew_written(body) if spew_applies(body, pods) else None
    spaced = spaced.replace(b"},", b"] ").translate(_SPEW_TABLE, b'"')
    spewed = spaced.replace(b"{", b"map[")
    return spewed if len(spewed) - len(spaced) == 3 * (pods + 1) else None


def decode_v2_plain(data: bytes) -> PlainV2 | None:
    """The content a kubelet reads from ``data``, when it is a plain V2 file that verifies.

    None means "ask the exact reader": it may still succeed (V1, nulls, escapes, ...) or fail.
    """
    if not data.isascii() or b"\\" in data:
        return None
    text = data.decode("ascii")
    canonical = _CANONICAL.fullmatch(data)
    try:
        if canonical is not None and " " not in text and "\n" not in text and "\t" not in text:
            # the kubelet's own layout: no hooks needed (duplicates are counted below)
            tree = json.loads(text)
        else:
            canonical = None
            tree = _DECODER.decode(text)
    except (ValueError, _NotPlainError, RecursionError):
        return None
    if type(tree) is not dict or not _FIELDS.issuperset(tree):
        return None
    policy = tree.get("policyName", "")
    default = tree.get("defaultCpuSet", "")
    entries = tree.get("entries")
    checksum = tree.get("checksum", 0)
    if type(policy) is not str or type(default) is not str or type(entries) is not dict:
        return None
    if type(checksum) is not int or checksum > _UINT64_MAX or not entries:
        return None
    strings = 6 + len(entries)
    for containers in entries.values():
        if type(containers) is not dict:
            return None
        strings += 2 * len(containers)
        for cpus in containers.values():
            if type(cpus) is not str:
                return None
    if canonical is not None and text.count('"') != 2 * strings:
        return None  # a duplicate key collapsed (Go merges or overrides: exact reader)
    if checksum != 0:
        if canonical is not None and _is_sorted(entries):
            body = canonical.group(3).decode("ascii")  # exactly what json.Marshal writes
        else:
            body = _ENCODER.encode(entries)
        spewed = spew_entries(body) if _plain(body) else None
        if spewed is None or checksum != _checksum(policy, default, spewed):
            return None  # corrupt, or not plain: the exact reader words the verdict
    return policy, default, entries, checksum


def _is_sorted(entries: dict[str, dict[str, str]]) -> bool:
    keys = list(entries)
    if keys != sorted(keys):
        return False
    for containers in entries.values():
        names = list(containers)
        if len(names) > 1 and names != sorted(names):
            return False
    return True


def decode_v2(data: bytes) -> CheckpointV2 | None:
    """:func:`decode_v2_plain` as the codec's model."""
    found = decode_v2_plain(data)
    if found is None:
        return None
    policy, default, entries, checksum = found
    return CheckpointV2(policy, default, entries, checksum)
