"""Fixture nodes: directory trees shaped like real nodes, under tests/data/nodes/<name>/.

Each tree holds what ``cpumanager node snapshot`` reads: a ``sys/devices/system`` subset
(built with ``tests/adapters/sysfs_tree.py``), ``etc/hostname``, ``var/lib/kubelet`` with
``config.yaml`` and the checkpoints, and beside them ``pods.json`` (``kubectl get pods -A
-o json`` output, env values and secrets included, so tests see them dropped) and, for
nodes whose kubelet answers, ``podresources.json`` (what the stand-in kubelet serves).

The checkpoints and PodResources answers are what our managers (the kubelet's decisions)
produce when the node's pods are admitted in order; they are generated once and committed
as facts. Regenerate with ``PYTHONPATH=src python -m tests.nodeview.fixture_nodes``.

Nodes:

* ``kubeadm``: kubeadm's config.yaml (every zero duration spelled out), static CPU policy,
  reservedSystemCPUs 0,8, single-numa-node; static (mirror) pods, Guaranteed and shared pods.
* ``policy-switched``: the checkpoint of a static-policy kubelet, config.yaml now says
  ``none`` (switched without a drain): the kubelet refuses to start, so no socket.
* ``offline-cpus``: CPUs 6,7,14,15 offline (cpu/online 0-5,8-13).
* ``gpu``: four GPUs, two on each NUMA node, a GPU pod on each node.
* ``corrupt-checkpoint``: the kubeadm node with one digit of the checksum changed.
* ``no-socket``: a healthy none-policy node whose pod-resources socket is missing.
* ``memory-static``: the kubeadm node with the Static memory manager (reservedMemory 1Gi on
  NUMA 0 and 100Mi on NUMA 1); two Guaranteed databases hold 40Gi of NUMA 0 and 48Gi of
  NUMA 1, so its memory checkpoint has a machine state and blocks.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import yaml

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.adapters.podresources.server import serve
from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.checkpoint.device.codec import (
    DeviceCheckpointData,
    DeviceManagerCheckpoint,
    PodDevicesEntry,
    encode_device,
)
from cpumanager.checkpoint.device.codec import with_fresh_checksum as device_checksum
from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    encode_memory,
)
from cpumanager.checkpoint.memory.codec import with_fresh_checksum as memory_checksum
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node, NodeResources
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    CallResult,
    ContainerResources,
    DeviceAllocation,
    PodResources,
    PodResourcesAnswers,
    answers_from_dict,
    answers_to_dict,
)
from tests.adapters.sysfs_tree import SysfsTree, tree_from_topology
from tests.nodeview.fixture_content import (
    GPU_PODS,
    GPUS,
    KUBEADM_PODS,
    MEMORY_PODS,
    PodSpec,
    kubeadm_config,
    pod_manifest,
    with_static_memory,
)

NODES_DIR = Path(__file__).resolve().parent.parent / "data" / "nodes"
KUBELET = Path("var/lib/kubelet")
GIB_KB = 1 << 20

# --- building a node -------------------------------------------------------------------


@dataclass
class NodeSpec:
    name: str
    hostname: str
    config_text: str
    kubelet: KubeletConfig  # the configuration the checkpoint was written under
    pods: list[PodSpec]
    offline: str = ""
    devices: dict[str, tuple[Device, ...]] = field(default_factory=dict)
    serves: bool = True
    corrupt: bool = False
    topology: CPUTopology | None = None  # None: the 16-CPU two-socket fixture machine
    hugepages_2m: int = 0  # 2 MiB pages on each NUMA node


def _machine(root: Path, offline: str) -> None:
    """Two sockets of four cores with two threads (Linux numbering: CPU c and c + 8 are
    siblings), one NUMA node and one L3 per socket, 64 GiB per node, SLIT 10/21."""
    tree = SysfsTree(root)
    tree.online(str(CPUSet.range(0, 16) - CPUSet.parse(offline)))
    for cpu in range(16):
        core = cpu % 8
        socket = core // 4
        package = f"{socket * 4}-{socket * 4 + 3},{socket * 4 + 8}-{socket * 4 + 11}"
        tree.cpu(
            cpu,
            package=socket,
            core_id=core % 4,
            siblings=f"{core},{core + 8}",
            package_cpus=package,
            caches=[(3, "Unified", package)],
        )
    for node, cpus in ((0, "0-3,8-11"), (1, "4-7,12-15")):
        tree.node(node, cpus, memory_kb=64 * GIB_KB, distance=[10, 21] if node == 0 else [21, 10])
    tree.node_online("0-1")


def _per_numa(resource: str, devices: list[Device]) -> list[DeviceAllocation]:
    """The kubelet's containerDevicesFromResourceDeviceInstances: one entry per device and
    NUMA node, or one without topology for a device that reports none."""
    out = []
    for device in devices:
        if not device.numa_nodes:
            out.append(DeviceAllocation(resource, (device.id,), None))
        out += [DeviceAllocation(resource, (device.id,), (n,)) for n in device.numa_nodes]
    return out


def _answers(node: Node, pods: list[tuple[PodSpec, dict[str, object]]]) -> PodResourcesAnswers:
    state = node.snapshot().cpu
    device_state = node.snapshot().devices
    listed = []
    for spec, manifest in pods:
        if spec.phase != "Running":
            continue
        meta = manifest["metadata"]
        assert isinstance(meta, dict)
        uid = PodUID(spec.static_hash or str(meta["uid"]))
        containers = []
        for name, _ in spec.containers:
            key = ContainerKey(uid, ContainerName(name))
            devices: list[DeviceAllocation] = []
            if device_state is not None:
                for resource, ids in sorted(device_state.allocations.get(key, {}).items()):
                    table = device_state.devices[resource]
                    devices += _per_numa(resource, [table[i] for i in sorted(ids)])
            containers.append(
                ContainerResources(
                    name=name,
                    devices=tuple(devices),
                    cpu_ids=state.cpuset_of(uid, ContainerName(name)) or CPUSet(),
                )
            )
        listed.append(PodResources(str(meta["name"]), spec.namespace, tuple(containers)))
    reserved = node.kubelet.reserved_cpus or CPUSet()
    devices_out: list[DeviceAllocation] = []
    if device_state is not None:
        for resource, table in sorted(device_state.devices.items()):
            devices_out += _per_numa(resource, list(table.values()))
    ok = CallResult("ok")
    return PodResourcesAnswers(
        pods=tuple(listed),
        allocatable=AllocatableResources(
            devices=tuple(devices_out), cpu_ids=node.topology.all_cpus - reserved
        ),
        calls={"List": ok, "GetAllocatableResources": ok, "Get": ok},
    )


def _memory_checkpoint(node: Node) -> bytes:
    """What the node's memory manager writes: with memoryManagerPolicy None no machine state
    and no entries; with Static its machine state and every container's blocks."""
    state = node.snapshot().memory
    if state is None:
        empty = MemoryManagerCheckpoint(policy_name="None", machine_state={}, entries={})
        return encode_memory(memory_checksum(empty))
    machine: dict[int, NUMANodeState | None] = {
        numa: NUMANodeState(
            held.assignments,
            {
                name: MemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                for name, t in held.tables.items()
            },
            held.cells,
        )
        for numa, held in state.nodes.items()
    }
    entries: dict[str, dict[str, tuple[Block, ...] | None] | None] = {}
    for key, blocks in state.blocks.items():
        per_pod = entries.setdefault(str(key.pod_uid), {})
        assert per_pod is not None
        per_pod[str(key.container_name)] = tuple(
            Block(b.numa_affinity, b.resource, b.size) for b in blocks
        )
    full = MemoryManagerCheckpoint(policy_name="Static", machine_state=machine, entries=entries)
    return encode_memory(memory_checksum(full))


def _alloc_resp(ids: list[str]) -> bytes:
    """A device plugin's ContainerAllocateResponse: envs = {NVIDIA_VISIBLE_DEVICES: ids}."""
    key, value = b"NVIDIA_VISIBLE_DEVICES", ",".join(ids).encode()
    entry = bytes([0x0A, len(key)]) + key + bytes([0x12, len(value)]) + value
    return bytes([0x0A, len(entry)]) + entry


def _device_checkpoint(node: Node) -> bytes:
    """The device manager's checkpoint: entries per container, device ids by NUMA node."""
    devices = node.snapshot().devices
    entries: list[PodDevicesEntry] = []
    registered: dict[str, tuple[str, ...] | None] = {}
    if devices is not None:
        for key, held in sorted(devices.allocations.items()):
            for resource, ids in sorted(held.items()):
                table = devices.devices[resource]
                by_numa: dict[int, list[str]] = {}
                for device_id in sorted(ids):
                    numa = table[device_id].numa_nodes
                    by_numa.setdefault(numa[0] if numa else -1, []).append(device_id)
                entries.append(
                    PodDevicesEntry(
                        pod_uid=key.pod_uid,
                        container_name=key.container_name,
                        resource_name=resource,
                        device_ids={n: tuple(i) for n, i in sorted(by_numa.items())},
                        alloc_resp=_alloc_resp(sorted(ids)),
                    )
                )
        registered = {r: tuple(table) for r, table in sorted(devices.devices.items())}
    data = DeviceCheckpointData(
        pod_device_entries=tuple(entries) or None, registered_devices=registered
    )
    return encode_device(device_checksum(DeviceManagerCheckpoint(data)))


def build_node(spec: NodeSpec, dest: Path) -> None:
    """Write one fixture node's tree into ``dest`` (replaced whole)."""
    if dest.exists():
        shutil.rmtree(dest)
    if spec.topology is None:
        _machine(dest, spec.offline)
    else:
        tree_from_topology(dest, spec.topology)
    for node in (0, 1) if spec.hugepages_2m else ():
        pool = dest / f"sys/devices/system/node/node{node}/hugepages/hugepages-2048kB"
        pool.mkdir(parents=True)
        (pool / "nr_hugepages").write_text(f"{spec.hugepages_2m}\n")
        (pool / "free_hugepages").write_text(f"{spec.hugepages_2m}\n")
    (dest / "etc").mkdir(parents=True)
    (dest / "etc/hostname").write_text(spec.hostname + "\n")
    kubelet_dir = dest / KUBELET
    kubelet_dir.mkdir(parents=True)
    (kubelet_dir / "config.yaml").write_text(spec.config_text)
    manifests = []
    for pod in spec.pods:
        pod.name = pod.name.format(node=spec.hostname)
        manifests.append((pod, pod_manifest(pod, spec.hostname)))
    items = [m for _, m in manifests]
    listing = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    (dest / "pods.json").write_text(json.dumps({**listing, "items": items}, indent=1) + "\n")
    topology = SysfsReader(dest, view="kernel").read()
    store = InMemoryStore()
    node = Node(
        topology=topology,
        kubelet=spec.kubelet,
        store=store,
        resources=NodeResources(devices=spec.devices),
    )
    active: list[Pod] = []
    node.start(active_pods=lambda: list(active))
    for pod_spec, manifest in manifests:
        if pod_spec.phase != "Running":
            continue
        reduced = dict(manifest)
        if pod_spec.static_hash:
            meta = manifest["metadata"]
            assert isinstance(meta, dict)
            reduced["metadata"] = {**meta, "uid": pod_spec.static_hash}
        pod = pod_from_manifest(reduced)
        result = node.admit(pod)
        assert result.admitted, (pod_spec.name, result.reason, result.message)
        active.append(pod)
    assert store.data is not None
    data = store.data
    (kubelet_dir / "memory_manager_state").write_bytes(_memory_checkpoint(node))
    (kubelet_dir / "device-plugins").mkdir()
    device_path = kubelet_dir / "device-plugins/kubelet_internal_checkpoint"
    device_path.write_bytes(_device_checkpoint(node))
    if spec.corrupt:
        text = data.decode()
        head, _, digits = text.rpartition('"checksum":')
        value = int(digits.rstrip("}"))
        data = f'{head}"checksum":{value ^ 1}}}'.encode()
    (kubelet_dir / "cpu_manager_state").write_bytes(data)
    if spec.serves:
        answers = _answers(node, manifests)
        (dest / "podresources.json").write_text(
            json.dumps(answers_to_dict(answers), indent=1, sort_keys=True) + "\n"
        )


def _static(*, reserved: str = "0,8", topology: str = "single-numa-node") -> KubeletConfig:
    return KubeletConfig(
        cpu_manager_policy="static",
        reserved_system_cpus=CPUSet.parse(reserved),
        system_reserved={"cpu": Fraction(len(CPUSet.parse(reserved)))},
        topology_manager_policy=topology,
    )


def node_specs() -> list[NodeSpec]:
    static_text = kubeadm_config(policy="static", reserved="0,8", topology="single-numa-node")
    fresh = lambda: [PodSpec(**vars(p)) for p in KUBEADM_PODS]  # noqa: E731 - names are mutated
    return [
        NodeSpec("kubeadm", "kubeadm-node-1", static_text, _static(), fresh()),
        NodeSpec(
            "policy-switched",
            "switched-node-1",
            kubeadm_config(policy="none", reserved=None, topology=None),
            _static(),
            fresh(),
            serves=False,
        ),
        NodeSpec(
            "offline-cpus", "offline-node-1", static_text, _static(), fresh(), offline="6,7,14,15"
        ),
        NodeSpec(
            "gpu",
            "gpu-node-1",
            static_text,
            _static(),
            [PodSpec(**vars(p)) for p in GPU_PODS],
            devices={"nvidia.com/gpu": GPUS},
            hugepages_2m=1024,
        ),
        NodeSpec(
            "corrupt-checkpoint", "corrupt-node-1", static_text, _static(), fresh(), corrupt=True
        ),
        NodeSpec(
            "memory-static",
            "memory-node-1",
            with_static_memory(static_text),
            KubeletConfig.from_mapping(yaml.safe_load(with_static_memory(static_text))),
            [PodSpec(**vars(p)) for p in MEMORY_PODS],
        ),
        NodeSpec(
            "no-socket",
            "plain-node-1",
            kubeadm_config(policy="none", reserved=None, topology=None),
            KubeletConfig(),
            fresh(),
            serves=False,
        ),
    ]


def fixture_answers(node_dir: Path) -> PodResourcesAnswers | None:
    """What the node's stand-in kubelet serves (None: this node has no socket)."""
    path = node_dir / "podresources.json"
    if not path.exists():
        return None
    return answers_from_dict(json.loads(path.read_text()))


@contextmanager
def fixture_kubelet(node_dir: Path, socket_path: Path) -> Iterator[Path | None]:
    """Serve the node's PodResources answers on ``socket_path`` (None: the node has none)."""
    answers = fixture_answers(node_dir)
    if answers is None:
        yield None
        return
    server = serve(socket_path, answers)
    try:
        yield socket_path
    finally:
        server.stop(None)


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else NODES_DIR
    for spec in node_specs():
        build_node(spec, target / spec.name)
        print(f"wrote {target / spec.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
