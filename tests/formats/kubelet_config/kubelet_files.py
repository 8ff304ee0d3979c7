"""Random KubeletConfiguration files, as text: the differential run against the kubelet's
own code (``bench/diff_kubelet_config.py``) and its bounded slice here (``test_files.py``).

One file in five is a clean configuration of the manager fields (values the kubelet
accepts); the others mix mostly valid manager fields with mistakes everywhere: wrong
types, numbers out of range (huge, negative, floats), bad durations and quantities,
unknown, repeated and case-folded keys, nested structs with wrong inner fields, bad
``apiVersion``/``kind``, feature gates (unknown, locked, alpha, beta, ``AllAlpha``), JSON
and flow-style files, and YAML oddities (tabs, anchors, tags, octal and hex numbers,
booleans as ``y``/``on``, BOM, CRLF, truncation, several documents).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from cpumanager.formats.kubelet_config.gates import known_gates
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_KINDS

__all__ = ["Document", "generate", "render"]

RELEASE = (1, 32)
HEAD_API = "kubelet.config.k8s.io/v1beta1"
HEAD_KIND = "KubeletConfiguration"

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
    "description: |\n  multi\n  line\n", "podCIDR: >\n  folded\n", "'maxPods': 3\n",
    '"maxPods": 3\n', "maxPods: 3 \n", "--- maxPods: 1\n", "maxPods: 0b101\n",
    "authentication:\n  anonymous:\n    enabled: yes\n    bogus: 1\n", "maxPods: -0x10\n",
    "logging: {format: json, verbosity: 99999999999}\n", "maxPods: 1e400\n",
    "maxPods: 1.5e3\n", "maxPods: .5\n", "maxPods: 5.\n", "maxPods: !!int '5'\n",
    "cpuManagerReconcilePeriod: !!str 10s\n", "maxPods: !!float 5\n", "date: 2001-12-14\n",
    "registerNode: !!bool yes\n", "clusterDNS: [1.2.3.4, 2001:db8::1]\n",
    "tracing: {endpoint: 'dns://a b'}\n", "maxPods: 0x\n", "maxPods: 1__0\n",
    "evictionHard:\n  memory.available: 100Mi\n  memory.available: 200Mi\n",
]  # fmt: skip
_JSON_LITERALS = [
    "1E2", "1e2", "-0", "0.0", "1.0e0", "1e400", "-1e400", "01", "1.", "+1", ".5", "NaN",
    "Infinity", "-Infinity", "true", "null", '"5"', "1e-2", "2147483648", "-2147483649",
    "[1]", "{}", "1 2", '"\\u0035"', "0x10",
]  # fmt: skip


def _text_oddity(rng: random.Random, text: str) -> str:
    if text.startswith("{") and text.rstrip().endswith("}") and rng.random() < 0.5:
        name = rng.choice(["maxPods", "memoryThrottlingFactor", "podPidsLimit", "cpuManagerPolicy"])
        literal = rng.choice(_JSON_LITERALS)
        return text.rstrip()[:-1] + f',"{name}":{literal}' + "}"
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
