"""Random kubelet configurations, drop-ins and flag lists: a result or one clean error.

Shared by the bounded test (``test_fuzz.py``) and the full run (``bench/fuzz_kubelet_config.py``).
Every case assembles random sources; the outcome must be an effective configuration whose
v1beta1 rendering decodes back to the same configuration, or a :class:`CpuManagerError` with a
one-line message. Anything else (another exception, a multi-line message) is a finding.
"""

from __future__ import annotations

import random
import traceback
from dataclasses import dataclass, field

from cpumanager.errors import CpuManagerError
from cpumanager.formats.kubelet_config import (
    MANAGER_FIELDS,
    ConfigSource,
    KubeletConfig,
    assemble,
    parse_kubelet_flags,
)
from cpumanager.formats.kubelet_config.decode import build_config
from cpumanager.formats.kubelet_config.flags import FLAG_FIELDS
from cpumanager.formats.kubelet_config.launch import (
    argv_from_env,
    expand_exec_start,
    parse_env_file,
    parse_systemd_unit,
    split_command_line,
)

_GOOD: dict[str, list[object]] = {
    "cpuManagerPolicy": ["none", "static", ""],
    "cpuManagerPolicyOptions": [{"full-pcpus-only": "true"}, {}, {"x": True}],
    "cpuManagerReconcilePeriod": ["10s", "0s", "1m30s", "500ms"],
    "memoryManagerPolicy": ["None", "Static", ""],
    "reservedMemory": [[{"numaNode": 0, "limits": {"memory": "1100Mi"}}], []],
    "topologyManagerPolicy": ["none", "best-effort", "restricted", "single-numa-node"],
    "topologyManagerScope": ["container", "pod", ""],
    "topologyManagerPolicyOptions": [{"max-allowable-numa-nodes": 16}, {}],
    "reservedSystemCPUs": ["0-1", "0,16", ""],
    "kubeReserved": [{"cpu": "1", "memory": "1Gi"}, {}, {"cpu": "500m"}],
    "systemReserved": [{"cpu": "500m", "memory": "500Mi"}, {}],
    "kubeReservedCgroup": ["", "/runtime"],
    "systemReservedCgroup": ["", "/system"],
    "enforceNodeAllocatable": [["pods"], [], ["pods", "kube-reserved"], ["none"]],
    "evictionHard": [{"memory.available": "100Mi"}, {}, {"memory.available": "10%"}],
    "mergeDefaultEvictionSettings": [True, False],
    "cgroupsPerQOS": [True, False],
    "cgroupDriver": ["systemd", "cgroupfs"],
    "cgroupRoot": ["/", ""],
    "maxPods": [110, 0, 250],
    "podsPerCore": [0, 10],
    "featureGates": [{"CPUManagerPolicyAlphaOptions": True}, {}],
}
_HOSTILE: list[object] = [
    None, -1, 2**40, 1.5, True, "", "x" * 300, "\x1b[31m", "0-", "-1s", "1e999",
    [], {}, [1, "a"], {"": None}, {"cpu": "-1"}, {"cpu": [1]}, "9999999999999999999h",
    {"memory": "1e10000"}, [{"numaNode": -1}], [{"numaNode": 0, "limits": {"cpu": "1"}}],
]  # fmt: skip
_FLAG_VALUES = [
    "static", "", "=", "a=b", "a<b", "a=b,c=d", "0:memory=1Gi", "0:memory=1Gi;1:x=2",
    "10s", "-5", "true", "maybe", "0-3", "cpu=1,memory=1Gi", "A=true,B=false", "\0",
]  # fmt: skip


@dataclass
class Tally:
    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    findings: list[tuple[str, str]] = field(default_factory=list)


def _body(rng: random.Random) -> dict[str, object]:
    body: dict[str, object] = {}
    for name in rng.sample(MANAGER_FIELDS, rng.randint(0, 8)):
        pool = _GOOD[name] if rng.random() < 0.9 else _HOSTILE
        body[name] = rng.choice(pool)
    if rng.random() < 0.05:
        body["kind"] = rng.choice(["KubeletConfiguration", "Pod", 3])
    return body


def _words(rng: random.Random) -> list[str]:
    words: list[str] = []
    names = [*FLAG_FIELDS, "config", "root-dir", "unknown-flag"]
    for _ in range(rng.choice((0, 0, 1, 2, 4))):
        name = rng.choice(names)
        value = rng.choice(_FLAG_VALUES)
        if rng.random() < 0.5:
            words.append(f"--{name}={value}")
        else:
            words += [f"--{name}", value][: rng.randint(1, 2)]
    return words


_TEXT_PIECES = [
    "[Service]", "[Unit]", "\n", "Environment=", "EnvironmentFile=-", "ExecStart=", "$A",
    "${A}", "A=", '"', "'", "\\", "\\\n", " ", "--x=1", "#", ";", "=", "\0", "export ",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_TEXT_PIECES) for _ in range(rng.randint(0, 30)))


def launch_case(rng: random.Random) -> tuple[str, str] | None:
    """Random unit, env file and command line text through the launch parsers."""
    text = _text(rng)
    try:
        service = parse_systemd_unit([("u", text), ("d", _text(rng))])
        env = {**service.environment, **parse_env_file(_text(rng))}
        if service.exec_start is not None:
            expand_exec_start(service.exec_start, env, source="u")
        parse_kubelet_flags([*argv_from_env(env), *split_command_line(_text(rng))])
    except CpuManagerError as err:
        if "\n" in err.message:
            return text, f"multi-line message: {err.message!r}"
    except Exception:  # a finding, reported with its input
        return text, traceback.format_exc()
    return None


def one_case(rng: random.Random) -> tuple[str, str] | None:
    """Run one random case; a finding (input, traceback) or None."""
    if rng.random() < 0.2:
        return launch_case(rng)
    file = ConfigSource("file", _body(rng)) if rng.random() < 0.8 else None
    drop_ins = [ConfigSource(f"{i}.conf", _body(rng)) for i in range(rng.randint(0, 2))]
    words = _words(rng)
    what = f"file={file} drop_ins={drop_ins} flags={words}"
    try:
        effective = assemble(file=file, drop_ins=drop_ins, flags=parse_kubelet_flags(words))
        # no defaulting: zeros stay
        again = build_config(effective.config.to_v1beta1(), KubeletConfig)
        if again != effective.config:
            return what, f"to_v1beta1 does not round-trip: {effective.config} != {again}"
        effective.fields()
    except CpuManagerError as err:
        if "\n" in err.message:
            return what, f"multi-line message: {err.message!r}"
        raise
    except Exception:  # a finding, reported with its input
        return what, traceback.format_exc()
    return None


def run(cases: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for _ in range(cases):
        tally.cases += 1
        try:
            finding = one_case(rng)
        except CpuManagerError:
            tally.rejected += 1
            continue
        if finding is None:
            tally.accepted += 1
        else:
            tally.findings.append(finding)
    return tally
