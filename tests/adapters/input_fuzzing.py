"""A fuzzer over the agent's text inputs: workload manifests, machine files, kubelet configs.

Cases are built from a seed: valid documents of each kind, then mutated (byte flips,
truncation, duplication, hostile fragments: deep nesting, huge integers, digits from other
scripts, control characters, aliases, non-UTF-8 bytes). Every case is written to a file and
read by the real adapter; the only allowed failure is a CpuManagerError whose message is one
line. ``run_one`` returns "ok" or "refused"; anything else propagates (a finding).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from cpumanager.adapters.kubelet_config_file import read_kubelet_config
from cpumanager.adapters.machine_file import dump_machine, read_machine_file
from cpumanager.adapters.workloads import read_workloads
from cpumanager.errors import CpuManagerError
from cpumanager.presets import get_preset

__all__ = ["KINDS", "cases", "run_one"]

KINDS = ("workload", "machine", "kubelet")

WORKLOAD = """\
kind: Pod
metadata:
  name: job
  uid: 9c6a3f0e-1111-4222-8333-944455556666
  annotations: {cpumanager.io/pid: "1234"}
spec:
  containers:
  - name: main
    resources: {limits: {cpu: "2", memory: 1Gi}, requests: {cpu: "2"}}
"""
KUBELET = """\
kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
cpuManagerPolicy: static
cpuManagerPolicyOptions: {full-pcpus-only: "true"}
kubeReserved: {cpu: "1", memory: 1Gi}
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
cpuManagerReconcilePeriod: 10s
"""
FRAGMENTS = [
    "[" * 5_000,
    "{a: " * 3_000,
    "- " * 3_000,
    "9" * 5_000,
    "\u00b2",
    "\u2460",
    "\u0663",
    "&a [*a]",
    "*undefined",
    "\x00",
    "\x1b[2J",
    "\n\t\r",
    "!!python/object:os.system",
    "? [a, b]\n: c",
    "<<: {a: 1}",
    "2001-13-45",
    "0x" + "f" * 100,
    "1e400",
    ".nan",
    "~",
    "'",
    '"',
    "---\n---\n",
    "cpumanager-run.1.1",
    "../../etc",
    "job/./",
]


def _base(kind: str) -> str:
    if kind == "workload":
        return WORKLOAD
    if kind == "machine":
        return dump_machine(get_preset("dual-socket-ht"), yaml_format=True)
    return KUBELET


def _mutate(rng: random.Random, text: str) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        spot = rng.randrange(len(data) + 1)
        if choice < 0.35:
            fragment = rng.choice(FRAGMENTS).encode("utf-8")
            data[spot:spot] = fragment
        elif choice < 0.55 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif choice < 0.7:
            del data[spot : spot + rng.randint(1, 40)]
        elif choice < 0.8:
            data[spot:spot] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif choice < 0.9 and data:
            start = rng.randrange(len(data))
            data[spot:spot] = data[start : start + rng.randint(1, 60)]
        else:
            line = text.splitlines()[rng.randrange(len(text.splitlines()))]
            key = line.split(":")[0]
            value = rng.choice(FRAGMENTS)
            data += f"\n{key}: {value}\n".encode("utf-8", "surrogatepass")
    return bytes(data)


def cases(seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """``count`` (kind, file bytes) pairs, the same for the same seed."""
    rng = random.Random(seed)
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        yield kind, _mutate(rng, _base(kind))


def run_one(kind: str, data: bytes, directory: Path) -> str:
    """Read one case through the real adapter; "ok" or "refused" (a one-line typed error)."""
    directory.mkdir(mode=0o755, exist_ok=True)
    path = directory / ("job.yaml" if kind != "machine" else "machine.yaml")
    path.write_bytes(data)
    try:
        if kind == "workload":
            scan = read_workloads(directory)
            for message in scan.errors:
                _one_line(message)
            return "ok" if scan.workloads else "refused"
        if kind == "machine":
            read_machine_file(path)
        else:
            read_kubelet_config(path)
    except CpuManagerError as err:
        _one_line(err.message)
        return "refused"
    finally:
        path.unlink()
    return "ok"


def _one_line(message: str) -> None:
    if "\n" in message or "\r" in message:
        msg = f"error message spans lines: {message[:300]!r}"
        raise AssertionError(msg)
