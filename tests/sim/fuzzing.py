"""Random scenarios for the simulator fuzzer: plausible shapes with garbage mixed in.

Every scenario must either simulate or fail with a :class:`CpuManagerError` (one line in
the CLI); anything else is a finding. Used by ``tests/sim/test_scenario_fuzz.py`` (a
bounded slice) and ``bench/fuzz_simulate.py`` (the full run).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cpumanager.errors import CpuManagerError
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import simulate

_SCALARS: list[Any] = [
    None, 0, 1, -1, 2.5, "", "x", "0-3", "2", "1500m", "64Gi", True, [], {}, "static", "none",
    "single-numa-node", "pod", "container", "best-effort", "restricted", "-1", "1e3", "0,16",
    "9999999999",
]  # fmt: skip
_KEYS = [
    "name", "cpu", "memory", "limits", "requests", "containers", "metadata", "spec",
    "resources", "nvidia.com/gpu", "hugepages-1Gi", "uid", "running", "pod", "recover",
    "initContainers", "restartPolicy",
]  # fmt: skip


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(_SCALARS)
        if roll < 0.75:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(_KEYS): self.value(depth + 1) for _ in range(rng.randint(0, 4))}

    def pick(self, *choices: Any) -> Any:
        return self.rng.choice(choices)

    def sane(self, *choices: Any) -> Any:
        """One of ``choices``, or now and then garbage (so most scenarios get past parsing)."""
        return self.value() if self.rng.random() < 0.06 else self.rng.choice(choices)

    def pod(self, index: int) -> dict[str, Any]:
        limits: dict[str, Any] = {
            "cpu": self.sane("1", "2", "500m", "4"),
            "memory": self.sane("1Gi", "2Gi"),
        }
        if self.rng.random() < 0.3:
            limits["nvidia.com/gpu"] = self.sane(1, 2)
        spec: dict[str, Any] = {
            "containers": [{"name": f"c{index}", "resources": {"limits": limits}}]
        }
        if self.rng.random() < 0.2:
            spec["initContainers"] = [
                {
                    "name": "init",
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                    "restartPolicy": self.sane("Always", None),
                }
            ]
        if self.rng.random() < 0.1:
            spec["resources"] = {"limits": {"cpu": self.sane("2"), "memory": "2Gi"}}
        name = self.sane(f"p{index}", f"p{index % 3}")
        return {"metadata": {"name": name}, "spec": spec}

    def event(self, index: int) -> dict[str, Any]:
        kind = self.pick(
            "admit", "admit", "admit", "delete", "exit", "restart", "reconcile", "offline",
            "online", "reconfigure",
        )  # fmt: skip
        if index == 0:
            kind = "admit"
        elif self.rng.random() < 0.03:
            kind = "bogus"
        pod_name = f"p{self.rng.randint(0, max(0, index - 1))}"
        bodies: dict[str, Any] = {
            "admit": self.pod(index) if self.rng.random() < 0.97 else self.value(),
            "delete": self.sane(pod_name),
            "exit": self.sane(pod_name),
            "restart": self.sane({}, {"running": [pod_name]}, {"recover": True}),
            "reconcile": self.sane({}),
            "offline": self.sane("3", "0-1", "100"),
            "online": self.sane("3", "0-1", "100"),
            "reconfigure": self.sane({"reservedSystemCPUs": "0-1"}, {"cpuManagerPolicy": "none"}),
        }
        return {kind: bodies.get(kind, self.value())}

    def kubelet(self) -> Any:
        return self.sane(
            {
                "cpuManagerPolicy": "static",
                "reservedSystemCPUs": "0",
                "topologyManagerPolicy": self.pick(
                    "single-numa-node", "restricted", "best-effort", "none"
                ),
                "topologyManagerScope": self.pick("pod", "container"),
                "cpuManagerPolicyOptions": self.sane(
                    {}, {"full-pcpus-only": "true"}, {"distribute-cpus-across-numa": "true"}
                ),
            },
            {
                "cpuManagerPolicy": "static",
                "kubeReserved": {"cpu": "1"},
                "memoryManagerPolicy": "Static",
                "systemReserved": {"memory": "924Mi"},
                "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
            },
        )

    def scenario(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "machine": self.sane(
                {"shape": "2s1n4c2t"}, {"preset": "dual-socket-ht"}, {"shape": "1s4n3c2t"}
            ),
            "kubelet": self.kubelet(),
            "events": [self.event(i) for i in range(self.rng.randint(0, 8))],
        }
        if self.rng.random() < 0.3:
            data["devices"] = self.sane({"nvidia.com/gpu": {0: 2, 1: 1}})
        if self.rng.random() < 0.3:
            data["memory"] = self.sane({0: {"memory": "64Gi"}, 1: {"memory": "64Gi"}})
        return data


def scenarios(seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` random scenario documents, the same for the same seed."""
    gen = _Gen(seed)
    return [gen.scenario() for _ in range(count)]


def run_one(data: dict[str, Any]) -> str:
    """Parse and simulate one document: "ok", "refused" (a typed error) or raise."""
    try:
        report = simulate(parse_scenario(data, source="fuzz", base=Path(".")))
        report.to_json(explain=True)
    except CpuManagerError:
        return "refused"
    return "ok"
