"""Hypothesis strategies for the extender's property tests: small busy nodes and pods."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from cpumanager.core.workload import Pod
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeview.snapshot import NodeSnapshot
from tests.extender.nodes import busy_snapshot

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
CPUS = ("100m", "500m", "1", "1", "2", "2", "3", "4", "5", "6", "8", "12")
MEMORY = ("256Mi", "1Gi", "4Gi", "100Gi", "200Gi")


@st.composite
def node_params(draw: Any) -> dict[str, Any]:
    """How to build a busy node: shape, configuration, and the seed of its running pods."""
    threads = draw(st.integers(1, 2))
    config: dict[str, Any] = {}
    if draw(st.booleans()):
        config["topologyManagerScope"] = "pod"
    if draw(st.integers(0, 4)) == 0:
        config["maxPods"] = draw(st.integers(1, 6))
    options = None
    if threads == 2 and draw(st.integers(0, 3)) == 0:
        options = {"full-pcpus-only": "true"}
    return {
        "seed": draw(st.integers(0, 10**6)),
        "pods": draw(st.integers(0, 6)),
        "sockets": draw(st.integers(1, 2)),
        "numa_per_socket": draw(st.integers(1, 2)),
        "cores_per_numa": draw(st.integers(1, 4)),
        "threads": threads,
        "topology_policy": draw(st.sampled_from(POLICIES)),
        "options": options,
        "config": config,
    }


def build_node(params: dict[str, Any], name: str) -> NodeSnapshot:
    """The node ``params`` describe; under another name it differs only in names, uids and
    container ids."""
    kept = {k: v for k, v in params.items() if k != "seed"}
    return busy_snapshot(name, random.Random(params["seed"]), **kept)


def nodes(name: str = "n") -> st.SearchStrategy[NodeSnapshot]:
    return node_params().map(lambda params: build_node(params, name))


def _container(name: str, cpu: str, memory: str, guaranteed: bool) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    if guaranteed:
        resources["limits"] = dict(requests)
    return {"name": name, "image": "busybox", "resources": resources}


@st.composite
def pod_docs(draw: Any, uid: str = "p") -> dict[str, Any]:
    """A v1.Pod as the scheduler sends it: 1-3 containers, up to 2 init containers (some
    of them sidecars), Guaranteed or Burstable."""
    guaranteed = draw(st.integers(0, 3)) > 0
    containers = [
        _container(f"c{i}", draw(st.sampled_from(CPUS)), draw(st.sampled_from(MEMORY)), guaranteed)
        for i in range(draw(st.integers(1, 3)))
    ]
    inits = []
    for i in range(draw(st.integers(0, 2))):
        init = _container(f"i{i}", draw(st.sampled_from(CPUS)), "256Mi", guaranteed)
        if draw(st.booleans()):
            init["restartPolicy"] = "Always"
        inits.append(init)
    spec: dict[str, Any] = {"containers": containers}
    if inits:
        spec["initContainers"] = inits
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{uid}", "namespace": "default", "uid": uid},
        "spec": spec,
    }


def pods(uid: str = "p") -> st.SearchStrategy[Pod]:
    return pod_docs(uid).map(pod_from_manifest)
