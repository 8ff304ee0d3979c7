"""What the fixture nodes hold: kubeadm's configuration text and the pods, as the API
server returns them (env values and secrets included, so the tests see them dropped).

Used by ``fixture_nodes.py`` (the trees) and ``bench/bench_node.py`` (a big node).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cpumanager.core.devices import Device

KUBEADM_CONFIG = """\
# Shape: kubeadm. `kubeadm init` writes /var/lib/kubelet/config.yaml like this (every zero
# duration spelled out, empty structs as {{}}); the cpuManagerPolicy, reservedSystemCPUs and
# topologyManagerPolicy lines came from a kubeadm "kubeletconfiguration" patch.
apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
cpuManagerPolicy: {policy}
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {{}}
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {{}}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
{reserved}resolvConf: /run/systemd/resolve/resolv.conf
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
{topology}volumeStatsAggPeriod: 0s
"""


def kubeadm_config(*, policy: str, reserved: str | None, topology: str | None) -> str:
    return KUBEADM_CONFIG.format(
        policy=policy,
        reserved=f'reservedSystemCPUs: "{reserved}"\n' if reserved else "",
        topology=f"topologyManagerPolicy: {topology}\n" if topology else "",
    )


def with_static_memory(config: str) -> str:
    """The kubeadm text plus the Static memory manager: reservedMemory must add up to
    systemReserved memory (1Gi) + the default hard eviction threshold (100Mi)."""
    config = config.replace("memorySwap:", "memoryManagerPolicy: Static\nmemorySwap:").replace(
        "resolvConf:",
        "reservedMemory:\n- limits:\n    memory: 1Gi\n  numaNode: 0\n"
        "- limits:\n    memory: 100Mi\n  numaNode: 1\nresolvConf:",
    )
    return config.replace(
        "syncFrequency: 0s\n", "syncFrequency: 0s\nsystemReserved:\n  memory: 1Gi\n"
    )


# --- pods ------------------------------------------------------------------------------


@dataclass
class PodSpec:
    """One pod of a fixture node, written as the API server would return it."""

    namespace: str
    name: str
    containers: list[tuple[str, dict[str, dict[str, str]]]]
    phase: str = "Running"
    static_hash: str = ""  # a static pod: its mirror carries the hash
    init: list[tuple[str, dict[str, dict[str, str]]]] = field(default_factory=list)
    qos: str = "Burstable"


def _uid(seed: str) -> str:
    digits = "".join(f"{ord(ch):02x}" for ch in seed)[:32].ljust(32, "0")
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:32]}"


def _container_id(pod: PodSpec, name: str, *, previous: bool = False) -> str:
    seed = f"{'old' if previous else ''}{pod.namespace}{pod.name}{name}"
    return "containerd://" + "".join(f"{ord(ch):02x}" for ch in seed)[:64].ljust(64, "0")


def pod_manifest(pod: PodSpec, node_name: str) -> dict[str, object]:
    """The pod as ``kubectl get pods -o json`` shows it (noise included, to be dropped)."""

    def container(name: str, resources: dict[str, dict[str, str]]) -> dict[str, object]:
        return {
            "name": name,
            "image": f"registry.example/{name}:1.0",
            "env": [
                {"name": "DB_PASSWORD", "value": "hunter2"},
                {
                    "name": "API_TOKEN",
                    "valueFrom": {"secretKeyRef": {"name": "api", "key": "token"}},
                },
            ],
            "resources": resources,
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        }

    annotations = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"env":"DB_PASSWORD=hunter2"}',
        "prometheus.io/scrape": "true",
    }
    uid = _uid(f"{pod.namespace}/{pod.name}")
    if pod.static_hash:
        annotations |= {
            "kubernetes.io/config.hash": pod.static_hash,
            "kubernetes.io/config.mirror": pod.static_hash,
            "kubernetes.io/config.source": "file",
        }
    statuses = []
    for name, _ in pod.containers:
        status: dict[str, object] = {
            "name": name,
            "containerID": _container_id(pod, name),
            "image": f"registry.example/{name}:1.0",
            "ready": pod.phase == "Running",
            "restartCount": 1 if name == pod.containers[0][0] else 0,
            "state": (
                {"running": {"startedAt": "2026-12-01T08:00:00Z"}}
                if pod.phase == "Running"
                else {"terminated": {"exitCode": 0, "reason": "Completed"}}
            ),
        }
        if name == pod.containers[0][0]:
            status["lastState"] = {
                "terminated": {
                    "containerID": _container_id(pod, name, previous=True),
                    "exitCode": 137,
                    "reason": "OOMKilled",
                }
            }
        statuses.append(status)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": uid,
            "annotations": annotations,
            "labels": {"app": pod.name},
            "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        },
        "spec": {
            "nodeName": node_name,
            "restartPolicy": "Always",
            "containers": [container(n, r) for n, r in pod.containers],
            **({"initContainers": [container(n, r) for n, r in pod.init]} if pod.init else {}),
            "volumes": [{"name": "data", "secret": {"secretName": "db-credentials"}}],
        },
        "status": {
            "phase": pod.phase,
            "qosClass": pod.qos,
            "hostIP": "192.0.2.10",
            "containerStatuses": statuses,
        },
    }


def guaranteed(cpu: str, memory: str, **extra: str) -> dict[str, dict[str, str]]:
    amounts = {"cpu": cpu, "memory": memory, **extra}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def burstable(cpu: str, memory: str) -> dict[str, dict[str, str]]:
    return {"requests": {"cpu": cpu, "memory": memory}}


KUBEADM_PODS = [
    PodSpec(
        "kube-system",
        "kube-apiserver-{node}",
        [("kube-apiserver", burstable("250m", "256Mi"))],
        static_hash="5f0e8a1c4b3d2e6f7a8b9c0d1e2f3a4b",
    ),
    PodSpec(
        "kube-system",
        "etcd-{node}",
        [("etcd", burstable("100m", "100Mi"))],
        static_hash="0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    PodSpec("kube-system", "coredns-5d78c9869d-x7k2p", [("coredns", burstable("100m", "70Mi"))]),
    PodSpec("prod", "db-0", [("postgres", guaranteed("4", "8Gi"))], qos="Guaranteed"),
    PodSpec(
        "prod",
        "cache-0",
        [("redis", guaranteed("2", "2Gi")), ("exporter", guaranteed("500m", "64Mi"))],
        qos="Guaranteed",
    ),
    PodSpec("default", "web-7d9f8b6c5-qwz8r", [("nginx", {})], qos="BestEffort"),
    PodSpec(
        "batch",
        "report-28911",
        [("report", guaranteed("1", "1Gi"))],
        phase="Succeeded",
        qos="Guaranteed",
    ),
]

GPU_PODS = [
    PodSpec(
        "ml",
        "trainer-a",
        [("train", guaranteed("4", "8Gi", **{"nvidia.com/gpu": "2"}))],
        qos="Guaranteed",
    ),
    PodSpec(
        "ml",
        "trainer-b",
        [("train", guaranteed("2", "4Gi", **{"nvidia.com/gpu": "1"}))],
        qos="Guaranteed",
    ),
    PodSpec("ml", "notebook", [("jupyter", burstable("500m", "1Gi"))]),
]
MEMORY_PODS = [
    PodSpec("db", "pg-0", [("postgres", guaranteed("4", "40Gi"))], qos="Guaranteed"),
    PodSpec("db", "pg-1", [("postgres", guaranteed("2", "48Gi"))], qos="Guaranteed"),
    PodSpec("web", "front", [("nginx", burstable("500m", "1Gi"))]),
]
GPUS = (
    Device("GPU-0", (0,)),
    Device("GPU-1", (0,)),
    Device("GPU-2", (1,)),
    Device("GPU-3", (1,)),
)
