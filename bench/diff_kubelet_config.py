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
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.formats.kubelet_config.kubelet_files import generate

from cpumanager.adapters.go_yaml import parse_yaml_keeping_duplicates
from cpumanager.adapters.kubelet_config_file import load_effective_config, read_config_source
from cpumanager.core.quantity import parse_quantity
from cpumanager.errors import CpuManagerError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config.document import decode_drop_in
from cpumanager.formats.kubelet_config.gates import gate_error, known_gates
from cpumanager.formats.kubelet_config.go_decode import go_json_number
from cpumanager.formats.kubelet_config.model import KubeletConfig
from cpumanager.formats.kubelet_config.whole import aggregate

RELEASE = (1, 32)
# the module (the package exports its function of the same name)
assemble_module = importlib.import_module("cpumanager.formats.kubelet_config.assemble")

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
    warnings: tuple[str, ...] = ()  # the lenient decoding's warning


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
    verdict = _ours(path)
    try:
        warnings = read_config_source(path, as_kubelet=True, release=RELEASE).warnings
    except CpuManagerError:
        warnings = ()
    return replace(verdict, warnings=warnings)


def _ours(path: Path) -> Verdict:
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
    block: Go walks each entry's limits in random order, we sort them) in another order.
    The aggregate prints a message once, so the messages are taken once each."""
    mine = tuple(dict.fromkeys(mine))
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


_LENIENT = '"Using lenient decoding as strict decoding failed" err='


def _klog_warnings(lines: list[str]) -> tuple[str, ...]:
    """The lenient-decoding warnings among the helper's log lines, as the kubelet's text:
    ``err="..."`` (Go-quoted) or ``err=<`` followed by tab-indented lines and `` >``."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if _LENIENT not in line:
            continue
        rest = line.split(_LENIENT, 1)[1]
        if rest == "<":
            block: list[str] = []
            while index < len(lines) and lines[index] != " >":
                block.append(lines[index].removeprefix("\t"))
                index += 1
            index += 1
            text = "\n".join(block)
        else:
            text = json.loads(rest)
        out.append(f"Using lenient decoding as strict decoding failed: {text}")
    return tuple(out)


def theirs(helper: str, paths: list[Path]) -> dict[str, Verdict]:
    """The helper's answer per file; its log (stderr, in the same stream) holds the
    warnings logged before each file's answer."""
    done = subprocess.run(
        [helper, *map(str, paths)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        timeout=600,
    )
    out: dict[str, Verdict] = {}
    logged: list[str] = []
    for line in done.stdout.splitlines():
        if not line.startswith("{"):
            logged.append(line)
            continue
        warnings, logged = _klog_warnings(logged), []
        row = json.loads(line)
        stage = row["stage"]
        if stage == "panic":
            stage = "loads"  # 1.32 panics in defaulting, while the file loads
        elif stage == "gates":
            stage = "validates"
        config = row.get("config")
        values = their_values(config) if stage == "ok" and isinstance(config, dict) else None
        out[row["file"]] = Verdict(stage, row.get("error") or "", values, warnings=warnings)
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


_V1_TO_V2 = (
    (" in string literal", " in string"),
    ("after decimal point in numeric literal", "in numeric literal"),
    ("in exponent of numeric literal", "in numeric literal"),
)


def _json_v2(text: str) -> str:
    """The type meta's JSON syntax error as the helper's build words it: its toolchain
    (go1.27) backs encoding/json with json v2, whose words differ from the v1 scanner the
    kubelet is built with (``in string literal`` is ``in string``)."""
    if "json parse error: " not in text:
        return text
    for v1, v2 in _V1_TO_V2:
        text = text.replace(v1, v2)
    return text


def compare(mine: Verdict, kubelet: Verdict) -> list[str]:
    """What differs, one line each (empty: they agree). The values are compared where both
    accept the file."""
    if (mine.stage, mine.text) != (kubelet.stage, kubelet.text):
        if (kubelet.stage, kubelet.text) in mine.others:
            return []
        if mine.stage == kubelet.stage and _json_v2(mine.text) == kubelet.text:
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
    out = []
    if kubelet.stage in ("ok", "validates") and mine.warnings != kubelet.warnings:
        # logged once the file decodes leniently (a panic in defaulting comes first)
        out.append(f"warnings: ours {mine.warnings!r} | kubelet {kubelet.warnings!r}")
    if mine.values is None or kubelet.values is None:
        return out
    for name, raw in kubelet.values.items():
        ours_value = mine.values.get(name)
        theirs_value = _normalise_cpus(raw) if name == "reservedSystemCPUs" else raw
        if ours_value != theirs_value:
            out.append(f"value {name}: ours {ours_value!r} | kubelet {theirs_value!r}")
    return out


# --- the same files as --config-dir drop-ins ---------------------------------------------

_EXPECTED_GVK = "kubelet.config.k8s.io/v1beta1, Kind=KubeletConfiguration"


def drop_in_answers(helper: str, paths: list[Path]) -> dict[str, tuple[str, object]]:
    """Each file as the kubelet's drop-in loader reads it (``HELPER dropin``: the loader's
    ``LoadIntoJSON``), judged as ``mergeKubeletConfigurations`` judges the result: the
    text after ``failed to load kubelet dropin file, path: P`` when refused, else the JSON
    that is merged."""
    done = subprocess.run(
        [helper, "dropin", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    out: dict[str, tuple[str, object]] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if "error" in row:
            out[row["file"]] = ("refused", f", error: {row['error']}")
        elif row.get("empty") or not row.get("gvk"):
            out[row["file"]] = ("refused", ", no apiVersion/kind")
        elif row["gvk"] != _EXPECTED_GVK:
            out[row["file"]] = ("refused", f", unknown apiVersion/kind: {row['gvk']}")
        else:
            out[row["file"]] = ("loaded", json.loads(row["json"]))
    return out


def our_drop_in(path: Path) -> tuple[str, object]:
    text = path.read_bytes().decode("utf-8")  # as written: CRLF kept
    where = f"failed to load kubelet dropin file, path: {path}"
    try:
        loaded = decode_drop_in(
            text,
            path=str(path),
            directory=str(path.parent),
            parse_yaml=parse_yaml_keeping_duplicates,
        )
    except KubeletConfigInvalidError as err:
        message = err.errors[0]
        return "refused", message.split(where, 1)[1] if where in message else message
    return "loaded", _unstructured(loaded.body)


def _unstructured(value: object) -> object:
    """A drop-in as the loader's unstructured object holds it: a number is an int64 or a
    float64 (Go's JSON of it read back), everything else as decoded."""
    if isinstance(value, dict):
        return {str(k): _unstructured(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unstructured(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return int(value)
    return json.loads(go_json_number(float(value)))


def compare_drop_in(mine: tuple[str, object], theirs: tuple[str, object]) -> list[str]:
    if mine == theirs:
        return []
    if mine[0] == theirs[0] == "refused" and _json_v2(str(mine[1])) == theirs[1]:
        return []  # the helper's json v2 words (see _json_v2)
    return [f"drop-in: ours {mine!r:.300} | kubelet {theirs!r:.300}"]


# --- the campaign ------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubelet-helper", required=True, help="the Go program (see README)")
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=250, help="files per helper process")
    parser.add_argument("--keep", type=Path, help="write the files here (default: a temp dir)")
    parser.add_argument(
        "--drop-ins", action="store_true", help="also read each file as a --config-dir drop-in"
    )
    parser.add_argument(
        "--show", type=int, default=None, help="disagreements printed in full (default: all)"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    missing = _gates_the_helper_lacks(args.kubelet_helper)
    skipped = 0  # files naming such a gate: the helper's build, not the kubelet, differs
    stages: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    found: list[tuple[Path, list[str]]] = []
    unordered = 0  # agreed on another Go map order, the host's check, the helper's build
    drop_ins: Counter[str] = Counter()  # the kubelet's drop-in loader: refused / loaded
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
            dropped = drop_in_answers(args.kubelet_helper, paths) if args.drop_ins else {}
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
                if args.drop_ins:
                    drop_in = dropped.get(path.name, ("no answer", None))
                    drop_ins[drop_in[0]] += 1
                    problems += compare_drop_in(our_drop_in(path), drop_in)
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
        print(f"  (agreeing in another Go map order, the host's check or the build's: {unordered})")
        print(
            f"  (not compared: naming a gate the helper's build lacks {sorted(missing)}: {skipped})"
        )
        if args.drop_ins:
            print(f"  as drop-ins, the kubelet's loader: {dict(drop_ins)}")
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
