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
import json.scanner
import operator
import re
from collections import deque
from collections.abc import Mapping
from functools import reduce
from itertools import accumulate, chain, compress, islice, repeat
from types import MappingProxyType

from cpumanager.checkpoint.checksum import fnv1a_32
from cpumanager.checkpoint.model import CheckpointV2
from cpumanager.core.bitset import IntBitSet
from cpumanager.core.cpuset import MAX_CHECKPOINT_CPU_ID, CPUSet

__all__ = [
    "PlainV2",
    "cached_cpu_set",
    "clear_caches",
    "decode_v2",
    "decode_v2_plain",
    "encode_v2",
    "parse_plain_range",
    "plain_assignments",
    "read_v2",
    "remember_cpu_set",
    "spew_entries",
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
# The C scanner behind json.loads, called directly: json.loads spends longer in its Python
# wrapper (encoding detection, whitespace checks) than in the scan on a small file.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


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
    body = _ENCODER.encode(entries)
    if not _plain(body):
        return None
    spewed = spew_entries(body)
    if spewed is None:
        return None
    checksum = _checksum(policy, default, spewed)
    return (
        f'{{"policyName":"{policy}","defaultCpuSet":"{default}","entries":{body},'
        f'"checksum":{checksum}}}'
    ).encode()


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


# --- restore: the kubelet's own file to the state, in a fixed number of C-level passes ------

# What :func:`read_v2` hands over: policy name, default set, assignments (read-only, sorted).
ReadV2 = tuple[str, CPUSet, Mapping[str, Mapping[str, CPUSet]]]

# The file as json.Marshal writes it; the entries object is checked once scanned: its
# length proves it compact, unescaped and free of duplicate keys (see _read_entries).
_WRITTEN = re.compile(
    rb'\{"policyName":"([^"\\]*)","defaultCpuSet":"([^"\\]*)","entries":(\{.*\}),'
    rb'"checksum":(0|[1-9][0-9]{0,19})\}',
    re.DOTALL,
)
# The same file with no entries (a node without exclusive CPUs): no JSON parser needed, the
# two strings are printable ASCII without '"' or '\\'.
_WRITTEN_EMPTY = re.compile(
    rb'\{"policyName":"([ !#-\[\]-~]*)","defaultCpuSet":"([ !#-\[\]-~]*)",'
    rb'"checksum":(0|[1-9][0-9]{0,19})\}'
)
_PREFIX_BYTES = _PREFIX.encode()
_DEFAULT_BYTES = b" DefaultCPUSet:(string)"
_ENTRIES_BYTES = _ENTRY_TYPE.encode()
_SUFFIX_BYTES = _SUFFIX.encode()
_DIGITS = b"0123456789"
# A separator between two ids: ',' starts a new element (1), '-' continues a range (0).
_ELEMENT_STARTS = bytes.maketrans(b",-", b"\x01\x00")
# go-spew's spelling of the JSON structure left once quotes go: '}' is ']', '"' is nothing
_SPEW_TABLE = bytes.maketrans(b"}", b"]")
_SPEW_ALL = bytes.maketrans(b"},", b"] ")  # when every comma is between entries
# The bits of a run of d + 1 CPUs, for the usual short runs.
_RUNS = [(2 << width) - 1 for width in range(256)]
_EMPTY = CPUSet()


def read_v2(data: bytes) -> ReadV2 | None:
    """The state a kubelet restores from ``data`` when it is a V2 file in the kubelet's layout.

    None means "ask the other readers": anything else (whitespace, unsorted or duplicate
    keys, escapes, non-ASCII, nulls, a checksum that does not verify, a CPU list outside
    the usual digits, a default set that does not parse) is decided there, and errors are
    worded there. A file read here is one every kubelet reads as V2 with the same content:
    V1 fails on its entries (objects where V1 wants strings); with no entries V1 may
    succeed, and then migrates to this same empty state.

    The work is a fixed number of passes in C (json.loads, count, replace, FNV-1a, map over
    C functions) whatever the number of containers: no Python code runs per container.
    """
    if not data.isascii():
        return None
    found = _WRITTEN.fullmatch(data)
    if found is not None:
        return _read_entries(data, found)
    empty = _WRITTEN_EMPTY.fullmatch(data)
    if empty is None:
        return None
    policy, default_text, stored = empty.groups()
    checksum = int(stored)
    if checksum != 0 and checksum != _checksum_of(policy, default_text, b"map[]"):
        return None
    if not default_text:
        return policy.decode(), _EMPTY, MappingProxyType({})
    masks = _cpu_masks(default_text.decode(), [default_text.decode()])
    if masks is None:
        return None
    return policy.decode(), CPUSet.from_bits(masks[0]), MappingProxyType({})


def _read_entries(data: bytes, found: re.Match[bytes]) -> ReadV2 | None:
    text = data.decode("ascii")
    try:
        tree, end = _SCAN(text, 0)
    except (ValueError, RecursionError, StopIteration):
        return None
    if end != len(text):
        return None
    entries = tree["entries"]
    if type(entries) is not dict or not entries:
        return None
    pods = list(entries)
    inners = list(entries.values())
    if set(map(type, inners)) != {dict}:
        return None
    counts = list(map(len, inners))
    names = list(chain.from_iterable(inners))
    values = list(chain.from_iterable(map(dict.values, inners)))
    try:
        lists_text = ",".join(values)
    except TypeError:
        return None  # a null, number or object where Go wants a string: the exact reader
    pods_text = "".join(pods)
    names_text = "".join(names)
    # The compact text of what was scanned, {"P":{"N":"V",...},...}, has exactly this
    # length. Whitespace, an escape or a key given twice (Go merges or overrides; the
    # scanner keeps the last) would make the text longer.
    filled = sum(map(bool, counts))
    parts = len(pods_text) + len(names_text) + len(lists_text) + 6 * len(pods) - filled
    if len(found[3]) != parts + (5 * len(values) + 2 if values else 1):
        return None
    checksum = tree["checksum"]
    if checksum > _UINT64_MAX or not _sorted(pods, names, counts):
        return None
    if checksum != 0:
        for mark in "{},":  # keys holding none of these keep the structure apart (spew)
            if mark in pods_text or mark in names_text:
                return None
        spewed = _spew_written(found[3], "," in lists_text)
        if checksum != _checksum_of(found[1], found[2], spewed):
            return None
    default_text = tree["defaultCpuSet"]
    if default_text:
        joined = f"{lists_text},{default_text}" if values else default_text
        masks = _cpu_masks(joined, [*values, default_text])
    else:
        masks = _cpu_masks(lists_text, values) if values else []
    if masks is None:
        return None
    sets = list(map(_new_set, repeat(CPUSet, len(masks))))
    deque(map(_set_bits, sets, masks), maxlen=0)
    default = sets[-1] if default_text else _EMPTY
    # the scanner built fresh dicts that nothing else holds: put the sets in place
    remaining = iter(sets)
    deque(map(dict.update, inners, map(zip, inners, map(islice, repeat(remaining), counts))), 0)
    entries.update(zip(pods, map(MappingProxyType, inners), strict=True))
    return tree["policyName"], default, MappingProxyType(entries)


def _checksum_of(policy: bytes, default: bytes, spewed: bytes) -> int:
    parts = (_PREFIX_BYTES, policy, _DEFAULT_BYTES, default, _ENTRIES_BYTES, spewed, _SUFFIX_BYTES)
    return fnv1a_32(b"".join(parts))


def _sorted(pods: list[str], names: list[str], counts: list[int]) -> bool:
    """Pods strictly ascending, and each pod's container names (Go's json.Marshal order)."""
    if not all(map(operator.lt, pods, islice(pods, 1, None))):
        return False
    order = list(map(operator.lt, names, islice(names, 1, None)))
    last = len(names)
    for end in accumulate(counts):  # the pair across two pods is not compared
        if 0 < end < last:
            order[end - 1] = True
    return all(order)


def _spew_written(body: bytes, commas_in_lists: bool) -> bytes:
    """go-spew's rendering of the entries written as ``body``: sorted, compact, no escapes.

    With every quote a delimiter and no key holding ``{``, ``}`` or ``,``, the structure
    turns into go-spew's by whole-text passes: ``{`` is ``map[``, ``}`` is ``]``, quotes
    go, and a comma between entries is a space (one that follows a ``"`` or a ``}``; a
    comma inside a CPU list follows a digit).
    """
    if not commas_in_lists:
        return body.translate(_SPEW_ALL, b'"').replace(b"{", b"map[")
    spaced = body.replace(b'",', b'" ').replace(b"},", b"} ")
    return spaced.translate(_SPEW_TABLE, b'"').replace(b"{", b"map[")


def _cpu_masks(joined: str, lists: list[str]) -> list[int] | None:
    """The bitmask of every CPU list (``joined`` is ``",".join(lists)``), in bulk.

    None when any list is outside the usual form: ``a`` or ``a-b`` elements joined by
    ``,``, ids in plain decimal (no sign, no leading zero) up to the checkpoint bound,
    ``a <= b`` (the exact parser decides the rest and words the errors). One scan reads
    every id as JSON; the separators between ids (digits deleted) say which start an
    element and which end one, and an element with two dashes shows as ``--`` among them.
    Overlapping or unsorted elements are fine, as in Go's cpuset.
    """
    separators = joined.encode().translate(None, _DIGITS)
    if separators.translate(None, b",-") or b"--" in separators:
        return None
    listed = f"[{joined.replace('-', ',')}]"
    try:
        ids, end = _SCAN(listed, 0)
    except (ValueError, StopIteration):
        return None  # an empty element or id, a leading zero
    if end != len(listed) or not ids:
        return None
    if b"-" not in separators:  # single ids only
        if max(ids) > MAX_CHECKPOINT_CPU_ID:
            return None
        masks = list(map(operator.lshift, repeat(1), ids))
    else:
        if separators[:1] == b"-" and separators[-1:] == b"-" and b",," not in separators:
            starts, ends = ids[0::2], ids[1::2]  # ranges only: "-" and "," alternate
        else:
            flags = separators.translate(_ELEMENT_STARTS)
            starts = list(compress(ids, b"\x01" + flags))
            ends = list(compress(ids, flags + b"\x01"))
        widths = list(map(operator.sub, ends, starts))
        if min(widths) < 0 or max(ends) > MAX_CHECKPOINT_CPU_ID:
            return None
        try:
            runs = list(map(_RUNS.__getitem__, widths))
        except IndexError:
            runs = list(map(operator.sub, map(operator.lshift, repeat(2), widths), repeat(1)))
        masks = list(map(operator.lshift, runs, starts))
    if len(masks) == len(lists):
        return masks
    if len(masks) - len(lists) == lists[-1].count(","):  # only the last list (the default)
        return [*masks[: len(lists) - 1], reduce(operator.or_, masks[len(lists) - 1 :])]
    sizes = map(operator.add, map(str.count, lists, repeat(",")), repeat(1))
    return list(map(reduce, repeat(operator.or_), map(islice, repeat(iter(masks)), sizes)))
