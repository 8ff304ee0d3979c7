"""Random KubeletConfiguration files, read by the kubelet's own code and by ours: every
disagreement printed.

    python bench/diff_kubelet_config.py --kubelet-helper PATH [--cases N] [--seed S]
        [--keep DIR] [--show N]

``--kubelet-helper`` is a program built outside the repository from the kubelet's own
configuration code (see bench/README.md): given file paths, it prints one JSON line per
file, ``{"file", "stage", "error", "config"}``, the stage being ``loads`` (the kubelet's
decoder refuses; ``error`` is its text), ``panic`` (defaulting panicked, a bad feature gate),
``gates`` (``SetFromMap`` refused), ``validates`` (``ValidateKubeletConfiguration``'s
aggregate) or ``ok``, and ``config`` the decoded, defaulted configuration (Go field names).

Ours reads the same file through ``load_effective_config(config=..., release=(1, 32))``.
Compared: the stage (ours ``starts`` is the kubelet's ``ok``: its managers refuse later,
which the helper does not run), the kubelet's exact text, and for files both accept, the
values the project reads (policies and their options, reserved CPUs and memory, the
reservations, eviction thresholds, gates, topology manager fields, ...). Exits 1 on any
disagreement, printing each with its file.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cpumanager.adapters.kubelet_config_file import load_effective_config, read_config_source
from cpumanager.core.quantity import parse_quantity
from cpumanager.errors import CpuManagerError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config.gates import gate_error, known_gates
from cpumanager.formats.kubelet_config.model import KubeletConfig
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_KINDS
from cpumanager.formats.kubelet_config.whole import aggregate

RELEASE = (1, 32)
# the module (the package exports its function of the same name)
assemble_module = importlib.import_module("cpumanager.formats.kubelet_config.assemble")
HEAD_API = "kubelet.config.k8s.io/v1beta1"
HEAD_KIND = "KubeletConfiguration"

# --- the generator -------------------------------------------------------------------

_CPU_OPTIONS = ["full-pcpus-only", "distribute-cpus-across-numa", "align-by-socket",
                "distribute-cpus-across-cores", "strict-cpu-reservation",
                "prefer-align-cpus-by-uncorecache", "no-such-option"]  # fmt: skip
_TOPOLOGY_OPTIONS = ["prefer-closest-numa-nodes", "max-allowable-numa-nodes", "nope"]
_OPTION_GATES = ["CPUManagerPolicyOptions", "CPUManagerPolicyAlphaOptions",
                 "CPUManagerPolicyBetaOptions", "TopologyManagerPolicyOptions",
                 "TopologyManagerPolicyAlphaOptions", "TopologyManagerPolicyBetaOptions",
                 "MemoryManager", "CPUManager", "TopologyManager"]  # fmt: skip
_ALL_GATES = sorted(known_gates(RELEASE) or ())
_QUANTITIES = ["1", "500m", "1Gi", "100Mi", "0", "1.5", "2e3", "1k", "1Ki", "0.5Gi", "-1",
               "1e400", "abc", "", " 1", "1 ", "+1", "1m", "100M", "3E", "1Ei", "0x10",
               ".5", "5.", "1i", "12345678901234567890", "1.000000001"]  # fmt: skip
_DURATIONS = ["10s", "0s", "1m30s", "500ms", "1h", "-5s", "5", "0", "", "1.5s", ".5s",
              "5.s", "1e3s", "1us", "1\u00b5s", "9999999999h", "2562047h47m16.854775807s",
              "2562047h47m16.854775808s", "-0", "+3ms", "1h-1m", "ms", "1d", "1.s",
              "0.0000000001s", "100ns", "3s", "2s", "1s", "300s", "301s"]  # fmt: skip
_CPU_LISTS = ["0", "0-1", "0,16", "0-3,8-11", "", "1-0", "a", "0-", "-1", "0,,1", " 0",
              "0-1-2", "99999999999999999999", "0x1", "+1", "0 - 1", "3-3", "0,0"]  # fmt: skip
_INTS = [0, 1, -1, 5, 100, 110, 1000, 65535, 65536, 2**31 - 1, 2**31, -(2**31),
         -(2**31) - 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, 1.0, 1.5, 2.5e9, -0.0,
         1e300]  # fmt: skip
_STRINGS = ["", "x", "none", "static", "Static", "None", "true", "1", "\u00e9", "a b",
            "/", "/var/log/pods", "/var/log/../pods", "relative", "json", "text"]  # fmt: skip


def _pick(rng: random.Random, pool: list[object]) -> object:
    return rng.choice(pool)


def _hostile(rng: random.Random) -> object:
    return _pick(rng, [None, True, False, 0, -1, 1.5, 2**40, "", "x", [], {}, [1, "a"],
                       {"a": None}, {"a": 1}, {"a": [1]}, "1e999", "-", {"": ""}])  # fmt: skip


def _string_map(rng: random.Random, keys: list[str], values: Callable[[], object]) -> object:
    out: dict[object, object] = {}
    for _ in range(rng.randint(0, 3)):
        out[rng.choice(keys)] = values()
    if rng.random() < 0.08:
        out[rng.choice([1, True, "", "UPPER"])] = values()
    return out


def _quantity(rng: random.Random) -> object:
    if rng.random() < 0.1:
        return rng.choice([1, 0, -1, 1.5, True, None, [1]])
    return rng.choice(_QUANTITIES) if rng.random() < 0.4 else rng.choice(["1", "500m", "1Gi"])


def _reserved_memory(rng: random.Random) -> object:
    if rng.random() < 0.1:
        return _hostile(rng)
    out: list[object] = []
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.05:
            out.append(_hostile(rng))
            continue
        entry: dict[str, object] = {}
        if rng.random() < 0.95:
            entry["numaNode"] = rng.choice([0, 0, 1, 1, 3, -1, 2**31, "0", 1.5])
        if rng.random() < 0.95:
            limits: dict[str, object] = {}
            for _ in range(rng.randint(0, 2)):
                name = rng.choice(["memory", "memory", "hugepages-2Mi", "hugepages-1Gi", "cpu"])
                limits[name] = rng.choice(["1Gi", "1100Mi", "0", "0Mi", "512Mi", "-1Gi", "x", 0,
                                           1073741824, "1.5Gi", "100m"])  # fmt: skip
            entry["limits"] = limits
        if rng.random() < 0.05:
            entry["extra"] = 1
        out.append(entry)
    return out


def _gates(rng: random.Random) -> object:
    out: dict[str, object] = {}
    for _ in range(rng.randint(0, 3)):
        roll = rng.random()
        if roll < 0.5:
            name = rng.choice(_OPTION_GATES)
        elif roll < 0.85:
            name = rng.choice(_ALL_GATES)
        else:
            name = rng.choice(["NoSuchGate", "cpumanager", "AllAlpha", "AllBeta", ""])
        value: object = rng.random() < 0.5
        if rng.random() < 0.05:
            value = rng.choice(["true", 1, None, "yes"])
        out[name] = value
    return out


def _options(rng: random.Random, names: list[str]) -> object:
    return _string_map(
        rng, names, lambda: rng.choice(["true", "false", "True", "", "2", "16", "x", True, 8])
    )


# the fields around the managers, with values that are mostly valid
_MANAGER: dict[str, Callable[[random.Random], object]] = {
    "cpuManagerPolicy": lambda r: r.choice(["none", "static", "", "Static", "dynamic"]),
    "cpuManagerPolicyOptions": lambda r: _options(r, _CPU_OPTIONS),
    "cpuManagerReconcilePeriod": lambda r: r.choice(_DURATIONS),
    "reservedSystemCPUs": lambda r: (
        r.choice(_CPU_LISTS[:5]) if r.random() < 0.7 else r.choice(_CPU_LISTS)
    ),
    "kubeReserved": lambda r: _string_map(
        r, ["cpu", "memory", "ephemeral-storage", "pid", "foo"], lambda: _quantity(r)
    ),
    "systemReserved": lambda r: _string_map(r, ["cpu", "memory", "pid"], lambda: _quantity(r)),
    "evictionHard": lambda r: _string_map(
        r,
        ["memory.available", "nodefs.available", "imagefs.available", "pid.available", "x"],
        lambda: r.choice(["100Mi", "10%", "5%", "0", "abc", "", 5, "101%"]),
    ),
    "reservedMemory": _reserved_memory,
    "memoryManagerPolicy": lambda r: r.choice(["None", "Static", "", "static", "none"]),
    "topologyManagerPolicy": lambda r: r.choice(
        ["none", "best-effort", "restricted", "single-numa-node", "", "Restricted", "bogus"]
    ),
    "topologyManagerScope": lambda r: r.choice(["container", "pod", "", "Pod", "node"]),
    "topologyManagerPolicyOptions": lambda r: _options(r, _TOPOLOGY_OPTIONS),
    "featureGates": _gates,
    "kubeReservedCgroup": lambda r: r.choice(["", "/kube", "kube"]),
    "systemReservedCgroup": lambda r: r.choice(["", "/system"]),
    "enforceNodeAllocatable": lambda r: r.sample(
        [
            "pods",
            "system-reserved",
            "kube-reserved",
            "none",
            "kube-reserved-compressible",
            "system-reserved-compressible",
            "bogus",
            "pods",
        ],
        r.randint(0, 3),
    ),
    "cgroupsPerQOS": lambda r: r.random() < 0.8,
    "cgroupDriver": lambda r: r.choice(["cgroupfs", "systemd", "", "x"]),
    "cgroupRoot": lambda r: r.choice(["", "/"]),
    "maxPods": lambda r: r.choice([110, 0, 250, -1, 5]),
    "podsPerCore": lambda r: r.choice([0, 10, -1]),
    "mergeDefaultEvictionSettings": lambda r: r.choice([True, False, "yes", 1]),
}


def _value_of_kind(rng: random.Random, kind: str) -> object:
    """A value for a field of Go type ``kind``: often right, often wrong."""
    if rng.random() < 0.12:
        return _hostile(rng)
    if kind in ("int32", "int64"):
        return rng.choice(_INTS)
    if kind == "float64":
        return rng.choice([0.9, 0.0, 1.0, 1.5, -0.1, 1, 0, 1e-9, "0.5", 1e308])
    if kind == "bool":
        return rng.choice([True, False, "true", 1, 0])
    if kind == "duration":
        return rng.choice(_DURATIONS) if rng.random() < 0.9 else rng.choice([5, True, 1.5])
    if kind == "string":
        return rng.choice(_STRINGS)
    if kind == "[]string":
        return [rng.choice(_STRINGS) for _ in range(rng.randint(0, 3))]
    if kind.startswith("map[string]"):
        return _string_map(rng, ["a", "b", "memory.available"], lambda: _hostile(rng))
    return _hostile(rng)


# nested structs with a few known inner fields (a wrong inner type is a decode error)
_NESTED: dict[str, Callable[[random.Random], object]] = {
    "memorySwap": lambda r: {"swapBehavior": r.choice(["", "NoSwap", "LimitedSwap", "x", 1])},
    "crashLoopBackOff": lambda r: {
        "maxContainerRestartPeriod": r.choice(["300s", "1s", "0.5s", "301s", "x", 5, None])
    },
    "logging": lambda r: r.choice(
        [
            {"format": r.choice(["text", "json", "xml", "", 1])},
            {"verbosity": r.choice([1, -1, "x"])},
            {"flushFrequency": r.choice(["5s", 5, "x"])},
            {"bogus": 1},
        ]
    ),
    "registerWithTaints": lambda r: [
        {
            "key": r.choice(["a", "a/b", "", "-a", "x" * 70, "a.b/c"]),
            "value": r.choice(["", "v", "bad value"]),
            "effect": r.choice(["NoSchedule", "", "Bogus", "NoExecute"]),
        }
        for _ in range(r.randint(0, 2))
    ],
    "shutdownGracePeriodByPodPriority": lambda r: [
        {"priority": r.choice([0, 100, "x"]), "shutdownGracePeriodSeconds": r.choice([0, 30])}
        for _ in range(r.randint(0, 2))
    ],
    "authentication": lambda r: r.choice(
        [
            {"anonymous": {"enabled": r.choice([True, "x"])}},
            {"webhook": {"cacheTTL": r.choice(["2m", "x"])}},
            {},
            {"x509": {"clientCAFile": 1}},
        ]
    ),
    "tracing": lambda r: r.choice(
        [
            {"samplingRatePerMillion": r.choice([1, -1, "x", 1000001])},
            {},
            {"endpoint": r.choice(["localhost:4317", "unix:///t.sock", "http://x:1", "", "a:b"])},
        ]
    ),
}

_MUTATED_TYPES: tuple[str, ...] = tuple(n for n in FIELD_KINDS if n not in ("apiVersion", "kind"))


@dataclass
class Document:
    """A file to write: top-level pairs (a key may repeat) and how to render them."""

    pairs: list[tuple[str, object]]
    style: str = "block"  # block | json | flow
    prefix: str = ""
    suffix: str = ""


# the manager fields with values the kubelet accepts (a clean file: values to compare)
_CLEAN: dict[str, Callable[[random.Random], object]] = {
    "cpuManagerPolicy": lambda r: r.choice(["none", "static"]),
    "cpuManagerPolicyOptions": lambda r: {
        k: r.choice(["true", "false"]) for k in r.sample(_CPU_OPTIONS[:-1], r.randint(0, 2))
    },
    "cpuManagerReconcilePeriod": lambda r: r.choice(["10s", "1m30s", "500ms", "0s", "5s"]),
    "reservedSystemCPUs": lambda r: r.choice(["0", "0-1", "0,16", "2-3,10-11", ""]),
    "kubeReserved": lambda r: {"cpu": r.choice(["1", "500m", "250m"]), "memory": "1Gi"},
    "systemReserved": lambda r: {"cpu": r.choice(["1", "500m"]), "memory": "500Mi"},
    "evictionHard": lambda r: {"memory.available": r.choice(["100Mi", "5%", "1Gi"])},
    "memoryManagerPolicy": lambda r: r.choice(["None", "Static"]),
    "reservedMemory": lambda r: [
        {"numaNode": n, "limits": {"memory": r.choice(["1Gi", "1100Mi", "600Mi"])}}
        for n in range(r.randint(0, 2))
    ],
    "topologyManagerPolicy": lambda r: r.choice(
        ["none", "best-effort", "restricted", "single-numa-node"]
    ),
    "topologyManagerScope": lambda r: r.choice(["container", "pod"]),
    "topologyManagerPolicyOptions": lambda r: r.choice(
        [{}, {"prefer-closest-numa-nodes": "true"}, {"max-allowable-numa-nodes": "16"}]
    ),
    "featureGates": lambda r: {
        name: r.random() < 0.5
        for name in r.sample(
            [
                "CPUManagerPolicyAlphaOptions",
                "CPUManagerPolicyBetaOptions",
                "TopologyManagerPolicyAlphaOptions",
                "TopologyManagerPolicyBetaOptions",
                "AllAlpha",
                "AllBeta",
                "NodeSwap",
            ],
            r.randint(0, 3),
        )
    },
    "maxPods": lambda r: r.choice([110, 250, 0]),
    "podsPerCore": lambda r: r.choice([0, 10]),
    "cgroupDriver": lambda r: r.choice(["cgroupfs", "systemd"]),
}


def generate(rng: random.Random) -> str:
    """One random file's text: a clean one (one in five), else one with mistakes."""
    if rng.random() < 0.2:
        chosen = rng.sample(sorted(_CLEAN), rng.randint(1, 8))
        clean = [("apiVersion", HEAD_API), ("kind", HEAD_KIND)]
        clean += [(name, _CLEAN[name](rng)) for name in chosen]
        return render(Document(clean, style="json" if rng.random() < 0.1 else "block"), rng)
    pairs: list[tuple[str, object]] = []
    api: object = HEAD_API
    kind: object = HEAD_KIND
    roll = rng.random()
    if roll < 0.03:
        api = rng.choice(
            [
                None,
                "kubelet.config.k8s.io/v1",
                "v1beta1",
                "kubelet.config.k8s.io/",
                "KUBELET.config.k8s.io/v1beta1",
                1,
                "",
                "kubelet.config.k8s.io/v1alpha1",
            ]
        )
    elif roll < 0.06:
        kind = rng.choice([None, "kubeletconfiguration", "Pod", "", 3, "KubeletConfig"])
    if api is not None:
        pairs.append(("apiVersion", api))
    if kind is not None:
        pairs.append(("kind", kind))
    pairs += [
        (name, _MANAGER[name](rng)) for name in rng.sample(sorted(_MANAGER), rng.randint(0, 7))
    ]
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        name = rng.choice(_MUTATED_TYPES)
        nested = _NESTED.get(name)
        value = (
            nested(rng) if nested and rng.random() < 0.7 else _value_of_kind(rng, FIELD_KINDS[name])
        )
        pairs.append((name, value))
    if rng.random() < 0.08:
        pairs.append((rng.choice(["noSuchField", "x", "cpuManagerPolicy2"]), rng.choice([1, "a"])))
    if rng.random() < 0.06 and len(pairs) > 2:
        name, _ = rng.choice(pairs[2:])
        pairs.append((name, _MANAGER.get(name, _hostile)(rng)))  # a repeated key
    if rng.random() < 0.05 and len(pairs) > 2:
        index = rng.randrange(2, len(pairs))
        name, value = pairs[index]
        pairs[index] = (rng.choice([name.lower(), name.upper(), name[:1].upper() + name[1:]]),
                        value)  # fmt: skip
    rng.shuffle(pairs) if rng.random() < 0.1 else None
    doc = Document(pairs)
    roll = rng.random()
    if roll < 0.07:
        doc.style = "json"
    elif roll < 0.1:
        doc.style = "flow"
    text = render(doc, rng)
    if rng.random() < 0.1:
        text = _text_oddity(rng, text)
    return text


def render(doc: Document, rng: random.Random) -> str:
    if doc.style == "json":
        body = ",".join(f"{json.dumps(k)}:{_json(v)}" for k, v in doc.pairs)
        return "{" + body + "}" + rng.choice(["", "\n", " \n"])
    if doc.style == "flow":
        inner = ", ".join(f"{k}: {_flow(v)}" for k, v in doc.pairs)
        return "{" + inner + "}\n" if rng.random() < 0.5 else "---\n{" + inner + "}\n"
    return "".join(
        f"{_flow(k)}: {_flow(v)}\n"
        if rng.random() < 0.1
        else yaml.safe_dump({k: v}, allow_unicode=True, width=1000)
        for k, v in doc.pairs
    )


def _json(value: object) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "1e999"
    return json.dumps(value, ensure_ascii=False)


def _flow(value: object) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10000).removesuffix("\n...\n").strip()
    )


_ODD_LINES = [
    "# a comment\n", "---\n", "\n", "maxPods: 10 # trailing\n", "anchor: &a 1\n",
    "maxPods: !!str 5\n", "maxPods: 0x10\n", "maxPods: 0o17\n", "maxPods: 017\n",
    "maxPods: 1_000\n", "maxPods: +5\n", "maxPods: .inf\n", "maxPods: ~\n",
    "failSwapOn: yes\n", "failSwapOn: on\n", "failSwapOn: y\n", "failSwapOn: Off\n",
    "failSwapOn: TRUE\n", "failSwapOn: True\n", "cgroupDriver: null\n",
    "cpuManagerPolicy: static\t\n", "cpuManagerPolicy:\tstatic\n", "\tmaxPods: 1\n",
    "cpuManagerPolicy: 'static'\n", "cpuManagerPolicy: \"st\\u0061tic\"\n",
    "maxPods: 1e2\n", "maxPods: 1.0\n", "maxPods: 12345678901234567890\n",
    "maxPods: -0\n", "podPidsLimit: 9223372036854775808\n", "kubeReserved: {cpu: 1}\n",
    "evictionHard: {memory.available: 10%}\n", "? complex\n: 1\n", "[1, 2]: x\n",
    "...\n", "%YAML 1.1\n---\n", "1: one\n", "null: x\n", "true: x\n",
    "cpuManagerPolicyOptions:\n  full-pcpus-only: true\n", "reservedSystemCPUs: 0-1\n",
    "reservedSystemCPUs: 0,1\n", "reservedSystemCPUs: 01\n", "reservedSystemCPUs: 1\n",
    "syncFrequency: 1m\n", "cpuManagerReconcilePeriod: 10\n", "featureGates:\n",
    "x: [a, b\n", "y: 'unterminated\n", "z: \"\\q\"\n", "a: b: c\n", "  - item\n",
    "merge: &m {a: 1}\nother:\n  <<: *m\n", "maxPods: *nope\n", "key with space: 1\n",
    "Kind: Pod\n", "KIND: Pod\n", "ApiVersion: v1\n",
]  # fmt: skip


def _text_oddity(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.55:
        lines = text.splitlines(keepends=True)
        lines.insert(rng.randint(0, len(lines)), rng.choice(_ODD_LINES))
        return "".join(lines)
    if roll < 0.65:
        return "\ufeff" + text
    if roll < 0.75:
        return text.replace("\n", "\r\n")
    if roll < 0.8:
        return ""
    if roll < 0.85:
        return rng.choice(["# only a comment\n", "null\n", "[]\n", "5\n", "---\n", "\n", " "])
    if roll < 0.9:
        return text + "---\nmaxPods: 1\n"
    cut = rng.randint(0, len(text))
    return text[:cut]


# --- running both sides ----------------------------------------------------------------


@dataclass
class Verdict:
    stage: str  # loads | validates | ok  (ours: also starts, error)
    text: str
    values: dict[str, object] | None
    # ours: every (stage, text) the kubelet may give for the same file where it walks a Go
    # map in random order, or checks the host (see _alternatives)
    others: frozenset[tuple[str, str]] = frozenset()
    messages: tuple[str, ...] = ()  # ours: validation's messages


_LOAD_PREFIX = "failed to load kubelet config file, path: {p}, error: failed to load Kubelet config file {p}, error "  # noqa: E501


@contextmanager
def _without_start_checks() -> Iterator[None]:
    """The managers' start-up refusals switched off, to read the values of a file that
    loads and validates but that a manager would refuse when built."""
    saved = assemble_module.start_order_errors
    assemble_module.start_order_errors = lambda config: []
    try:
        yield
    finally:
        assemble_module.start_order_errors = saved


def ours(path: Path) -> Verdict:
    try:
        effective = load_effective_config(config=path, release=RELEASE)
    except KubeletConfigInvalidError as err:
        if err.stage == "starts":
            try:
                with _without_start_checks():
                    effective = load_effective_config(config=path, release=RELEASE)
            except KubeletConfigInvalidError:  # a value no manager can read: none to compare
                return Verdict("ok", "", None, _alternatives(path, "ok", (), ""))
            others = _alternatives(path, "ok", (), "")
            return Verdict("ok", "", our_values(effective.config), others)
        text = _our_text(err, str(path))
        others = _alternatives(path, err.stage, err.errors, text)
        return Verdict(err.stage, text, None, others, err.errors)
    except CpuManagerError as err:
        return Verdict("error", f"{type(err).__name__}: {err.message}", None)
    return Verdict("ok", "", our_values(effective.config), _alternatives(path, "ok", (), ""))


# --- where the kubelet's answer is not one text ---------------------------------------------

_HOST_CGROUP_V1 = {  # validateKubeletOSConfiguration on a cgroup v1 host (the measuring one)
    "failCgroupV1": (
        True,
        "kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is in "
        "maintenance mode",
    ),
    "singleProcessOOMKill": (
        False,
        "invalid configuration: singleProcessOOMKill must not be explicitly set to false when "
        "using cgroup v1",
    ),
}
_NO_JSON_LOGS = 'logging.format: Invalid value: "json": Unsupported log format'
_PANIC = "failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "


def _alternatives(
    path: Path, stage: str, messages: tuple[str, ...], text: str
) -> frozenset[tuple[str, str]]:
    """The answers the kubelet may give besides ours: its feature gates and a reservation's
    limits are Go maps walked in random order (we keep the file's and the sorted order), and
    it checks the host's cgroup version (ours does not: the measuring host is cgroup v1)."""
    try:
        body = read_config_source(path, as_kubelet=True).body
    except CpuManagerError:
        return frozenset()
    out: set[tuple[str, str]] = set()
    gates = body.get("featureGates")
    if stage == "loads" and text.startswith(_PANIC) and isinstance(gates, dict):
        items = list(gates.items())[:6]
        for order in itertools.permutations(items):
            typed = {k: v if isinstance(v, bool) else False for k, v in order}
            problem = gate_error(typed, RELEASE)
            if problem:
                out.add(("loads", _PANIC + problem))
    variants = [list(messages)] if stage == "validates" else [[]] if stage == "ok" else []
    # the measured code (KubeEdge's fork of 1.32.10) lacks upstream's port check
    port = [m for m in messages if m.startswith("invalid configuration: port (--port) ")]
    if port:
        variants.append([m for m in messages if m not in port])
    numa = [i for i, m in enumerate(messages) if "NUMA node" in m]
    if stage == "validates" and 1 < len(numa) <= 5 and numa == list(range(numa[0], numa[-1] + 1)):
        variants += [
            [*messages[: numa[0]], *order, *messages[numa[-1] + 1 :]]
            for order in itertools.permutations([messages[i] for i in numa])
        ]
    host = [m for name, (value, m) in _HOST_CGROUP_V1.items() if body.get(name) is value][:1]
    logging = body.get("logging")
    if isinstance(logging, dict) and logging.get("format") == "json":
        host.append(_NO_JSON_LOGS)  # the measuring build does not register it
    for variant in variants:
        out.add(("validates" if variant else "ok", aggregate(variant) if variant else ""))
        for message in host:
            for index in range(len(variant) + 1):
                out.add(("validates", aggregate([*variant[:index], message, *variant[index:]])))
    return frozenset(out)


def _gates_the_helper_lacks(helper: str) -> frozenset[str]:
    """Gates the real 1.32 kubelet registers that the helper's build does not (it leaves
    out the logging gates the kubelet's command adds): ``HELPER gates`` lists its own."""
    done = subprocess.run([helper, "gates"], capture_output=True, text=True, check=True)
    theirs = {row[0] for row in json.loads(done.stdout)}
    return frozenset((known_gates(RELEASE) or frozenset()) - theirs)


def _names_gate(path: Path, gates: frozenset[str]) -> bool:
    try:
        body = read_config_source(path, as_kubelet=True).body
    except CpuManagerError:
        return False
    named = body.get("featureGates")
    return isinstance(named, dict) and any(name in gates for name in named)


def _numa_order(mine: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` is the aggregate of ``mine`` with the reserved-memory messages (one
    block: Go walks each entry's limits in random order, we sort them) in another order."""
    numa = [i for i, m in enumerate(mine) if "NUMA node" in m]
    if len(mine) < 2 or len(numa) < 2 or numa != list(range(numa[0], numa[-1] + 1)):
        return False
    head = "[" + "".join(m + ", " for m in mine[: numa[0]])
    tail = "".join(", " + m for m in mine[numa[-1] + 1 :]) + "]"
    if not (text.startswith(head) and text.endswith(tail)):
        return False
    return _tiles(text[len(head) : len(text) - len(tail)], [mine[i] for i in numa])


def _tiles(middle: str, pieces: list[str]) -> bool:
    """Whether ``middle`` is every piece once, in some order, joined by ", "."""
    if not pieces:
        return middle == ""
    for index, piece in enumerate(pieces):
        rest = pieces[:index] + pieces[index + 1 :]
        if middle == piece and not rest:
            return True
        if middle.startswith(piece + ", ") and _tiles(middle[len(piece) + 2 :], rest):
            return True
    return False


def _our_text(err: KubeletConfigInvalidError, path: str) -> str:
    first = err.errors[0]
    if err.stage == "loads":
        prefix = _LOAD_PREFIX.format(p=path)
        if first == f'{prefix}kubelet config file "{path}" was empty':
            return "empty"
        return first.removeprefix(prefix).removeprefix("panic: ")
    return aggregate(err.errors)


def theirs(helper: str, paths: list[Path]) -> dict[str, Verdict]:
    done = subprocess.run(
        [helper, *map(str, paths)], capture_output=True, text=True, check=False, timeout=600
    )
    out: dict[str, Verdict] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        stage = row["stage"]
        if stage == "panic":
            stage = "loads"  # 1.32 panics in defaulting, while the file loads
        elif stage == "gates":
            stage = "validates"
        config = row.get("config")
        values = their_values(config) if stage == "ok" and isinstance(config, dict) else None
        out[row["file"]] = Verdict(stage, row.get("error") or "", values)
    return out


# --- the values compared ----------------------------------------------------------------


def _quantities(raw: object) -> dict[str, Fraction] | str:
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Fraction] = {}
    for key, text in raw.items():
        try:
            out[key] = parse_quantity(text)
        except CpuManagerError:
            return f"unparsable {key}={text!r}"
    return out


def their_values(c: dict[str, object]) -> dict[str, object]:
    memory = []
    for entry in c.get("ReservedMemory") or []:
        assert isinstance(entry, dict)
        memory.append((entry.get("NumaNode"), _quantities(entry.get("Limits"))))
    return {
        "cpuManagerPolicy": c.get("CPUManagerPolicy"),
        "cpuManagerPolicyOptions": dict(c.get("CPUManagerPolicyOptions") or {}),  # type: ignore[call-overload]
        "cpuManagerReconcilePeriod": c.get("CPUManagerReconcilePeriod"),
        "reservedSystemCPUs": c.get("ReservedSystemCPUs"),
        "kubeReserved": _quantities(c.get("KubeReserved")),
        "systemReserved": _quantities(c.get("SystemReserved")),
        "evictionHard": dict(c.get("EvictionHard") or {}),  # type: ignore[call-overload]
        "reservedMemory": memory,
        "memoryManagerPolicy": c.get("MemoryManagerPolicy"),
        "topologyManagerPolicy": c.get("TopologyManagerPolicy"),
        "topologyManagerScope": c.get("TopologyManagerScope"),
        "topologyManagerPolicyOptions": dict(c.get("TopologyManagerPolicyOptions") or {}),  # type: ignore[call-overload]
        "featureGates": dict(c.get("FeatureGates") or {}),  # type: ignore[call-overload]
        "enforceNodeAllocatable": list(c.get("EnforceNodeAllocatable") or []),  # type: ignore[call-overload]
        "kubeReservedCgroup": c.get("KubeReservedCgroup"),
        "systemReservedCgroup": c.get("SystemReservedCgroup"),
        "cgroupsPerQOS": c.get("CgroupsPerQOS"),
        "cgroupDriver": c.get("CgroupDriver"),
        "cgroupRoot": c.get("CgroupRoot"),
        "maxPods": c.get("MaxPods"),
        "podsPerCore": c.get("PodsPerCore"),
    }


def our_values(config: KubeletConfig) -> dict[str, object]:
    v = config.to_v1beta1(omit_empty=False)
    return {
        "cpuManagerPolicy": config.cpu_manager_policy,
        "cpuManagerPolicyOptions": dict(config.cpu_manager_policy_options),
        "cpuManagerReconcilePeriod": v["cpuManagerReconcilePeriod"],
        "reservedSystemCPUs": v["reservedSystemCPUs"],
        "kubeReserved": dict(config.kube_reserved),
        "systemReserved": dict(config.system_reserved),
        "evictionHard": dict(config.eviction_hard),
        "reservedMemory": [
            (entry.numa_node, {k: Fraction(b) for k, b in entry.limits.items()})
            for entry in config.reserved_memory
        ],
        "memoryManagerPolicy": config.memory_manager_policy,
        "topologyManagerPolicy": config.topology_manager_policy,
        "topologyManagerScope": config.topology_manager_scope,
        "topologyManagerPolicyOptions": dict(config.topology_manager_policy_options),
        "featureGates": dict(config.feature_gates),
        "enforceNodeAllocatable": list(config.enforce_node_allocatable),
        "kubeReservedCgroup": config.kube_reserved_cgroup,
        "systemReservedCgroup": config.system_reserved_cgroup,
        "cgroupsPerQOS": config.cgroups_per_qos,
        "cgroupDriver": config.cgroup_driver,
        "cgroupRoot": config.cgroup_root,
        "maxPods": config.max_pods,
        "podsPerCore": config.pods_per_core,
    }


def _normalise_cpus(text: object) -> object:
    """The kubelet keeps the CPU list as written; ours is the parsed set, printed."""
    from cpumanager.core.cpuset import CPUSet

    if not isinstance(text, str) or not text:
        return text
    try:
        return str(CPUSet.parse(text))
    except CpuManagerError:
        return text


_HIDDEN_METRICS = "'0.18446744073709551615'"


def _measuring_build(kubelet: Verdict) -> Verdict:
    """The measuring build carries no release number, so it asks for the version before
    0.0 in ``showHiddenMetricsForVersion``'s message; a 1.32 kubelet asks for 1.31."""
    if _HIDDEN_METRICS not in kubelet.text:
        return kubelet
    return replace(kubelet, text=kubelet.text.replace(_HIDDEN_METRICS, "'1.31'"))


def compare(mine: Verdict, kubelet: Verdict) -> list[str]:
    """What differs, one line each (empty: they agree). The values are compared where both
    accept the file."""
    if (mine.stage, mine.text) != (kubelet.stage, kubelet.text):
        if (kubelet.stage, kubelet.text) in mine.others:
            return []
        both_refuse = mine.stage == kubelet.stage == "validates"
        if both_refuse and _numa_order(mine.messages, kubelet.text):
            return []
    if mine.stage != kubelet.stage:
        ours_side = f"ours {mine.stage} {mine.text!r}"
        return [f"stage: {ours_side} | kubelet {kubelet.stage} {kubelet.text!r}"]
    if mine.text != kubelet.text:
        lines = f"\n      ours    {mine.text!r}\n      kubelet {kubelet.text!r}"
        return [f"text at {mine.stage}:{lines}"]
    if mine.values is None or kubelet.values is None:
        return []
    out = []
    for name, raw in kubelet.values.items():
        ours_value = mine.values.get(name)
        theirs_value = _normalise_cpus(raw) if name == "reservedSystemCPUs" else raw
        if ours_value != theirs_value:
            out.append(f"value {name}: ours {ours_value!r} | kubelet {theirs_value!r}")
    return out


# --- the campaign ------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubelet-helper", required=True, help="the Go program (see README)")
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=250, help="files per helper process")
    parser.add_argument("--keep", type=Path, help="write the files here (default: a temp dir)")
    parser.add_argument("--show", type=int, default=50, help="disagreements printed in full")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    missing = _gates_the_helper_lacks(args.kubelet_helper)
    skipped = 0  # files naming such a gate: the helper's build, not the kubelet, differs
    stages: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    found: list[tuple[Path, list[str]]] = []
    unordered = 0  # agreed on another order of a Go map, or with the host's cgroup check
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cfgdiff-") as temp:
        where = args.keep or Path(temp)
        where.mkdir(parents=True, exist_ok=True)
        done = 0
        while done < args.cases:
            paths = []
            for index in range(done, min(done + args.batch, args.cases)):
                path = where / f"c{index:06d}.yaml"
                path.write_text(generate(rng), encoding="utf-8")
                paths.append(path)
            kubelet = theirs(args.kubelet_helper, paths)
            for path in paths:
                mine = ours(path)
                their = kubelet.get(path.name)
                if their is None:
                    found.append((path, ["the helper gave no answer"]))
                    continue
                their = _measuring_build(their)
                if _names_gate(path, missing):
                    skipped += 1
                    continue
                stages[(mine.stage, their.stage)] += 1
                problems = compare(mine, their)
                if not problems and (mine.stage, mine.text) != (their.stage, their.text):
                    unordered += 1
                if problems:
                    kinds[problems[0].split(":")[0]] += 1
                    found.append((path, problems))
            done += len(paths)
        elapsed = time.perf_counter() - start
        print(f"seed={args.seed} files={done} ({elapsed:.1f} s)")
        for (mine_stage, their_stage), count in sorted(stages.items()):
            print(f"  ours {mine_stage:9} kubelet {their_stage:9} {count}")
        print(f"  (agreeing in a Go map's other order, or with the host's check: {unordered})")
        print(
            f"  (not compared: naming a gate the helper's build lacks {sorted(missing)}: {skipped})"
        )
        print(f"disagreements={len(found)} {dict(kinds)}")
        for path, problems in found[: args.show]:
            print(f"--- {path.name}")
            text = path.read_text(encoding="utf-8", errors="replace")
            print("    " + text.replace("\n", "\n    "))
            for problem in problems:
                print(f"  {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
