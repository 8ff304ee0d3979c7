"""The node's pods, reduced to what admission reads (pure).

Input: ``kubectl get pods -A --field-selector spec.nodeName=N -o json`` (a ``List`` of Pods)
or the kubelet's ``/pods`` endpoint (a ``PodList``), already parsed from JSON.

Kept per pod, and nothing else (no env values, no secrets, no volumes, no probes):

* ``metadata``: name, namespace, uid, ``deletionTimestamp``, and only the annotations in
  :data:`KEPT_ANNOTATIONS` (the kubelet's static-pod bookkeeping);
* ``spec``: nodeName, restartPolicy, pod-level ``resources``, ``overhead``, and for every
  container and init container its name, ``resources.requests``/``limits`` and (init
  containers) ``restartPolicy``;
* ``status``: phase, qosClass, and per container status its name, ``containerID``, the
  previous instance's ``lastState.terminated.containerID`` and the state's kind.

The kubelet's own uid for a static pod is its config hash; the API server shows its mirror
pod under another uid with that hash in ``kubernetes.io/config.mirror``. A mirror pod is
therefore recorded under the hash, the uid its checkpoint entries use.

Container ids are ``<runtime>://<id>`` in pod statuses; the runtime's id (after ``://``)
is what the kubelet's container map holds. Every pod must run on the snapshot's node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from cpumanager.core import limits
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.workload import Pod
from cpumanager.errors import WorkloadError
from cpumanager.formats.manifest import pods_from_documents

__all__ = [
    "KEPT_ANNOTATIONS",
    "MAX_PODS",
    "ContainerStatus",
    "NodePod",
    "node_pods_from_reduced",
    "reduce_pod_list",
    "running_containers",
]

KEPT_ANNOTATIONS = (
    "kubernetes.io/config.hash",
    "kubernetes.io/config.mirror",
    "kubernetes.io/config.source",
)
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
MAX_PODS = limits.MAX_PODS  # far above any kubelet's --max-pods; bounds work on hostile input
_LIST_KINDS = ("List", "PodList")
_STATE_KINDS = ("running", "terminated", "waiting")
_TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """One container's runtime identity: the current and the previous instance's ids."""

    name: ContainerName
    container_id: ContainerID | None
    last_container_id: ContainerID | None
    state: str  # running, terminated, waiting or "" (not reported)


@dataclass(frozen=True, slots=True)
class NodePod:
    """A pod on the node: the reduced manifest, the parsed Pod and its container statuses."""

    manifest: Mapping[str, object]
    pod: Pod
    phase: str
    statuses: tuple[ContainerStatus, ...]

    @property
    def terminal(self) -> bool:
        """Succeeded or Failed: the kubelet's active-pod list leaves such pods out."""
        return self.phase in _TERMINAL_PHASES


def _fail(path: str, problem: str) -> NoReturn:
    msg = f"pod list: {path}: {problem}" if path else f"pod list: {problem}"
    raise WorkloadError(msg)


def _map(raw: object, path: str) -> Mapping[str, object]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        _fail(path, "expected an object")
    return raw


def _text(body: Mapping[str, object], key: str, path: str) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        _fail(f"{path}.{key}", "expected a string")
    return value


def _runtime_id(raw: str) -> ContainerID | None:
    """``containerd://abc`` -> ``abc`` (the runtime's id); empty -> None."""
    if not raw:
        return None
    return ContainerID(raw.partition("://")[2] or raw)


def _resources(raw: object, path: str) -> dict[str, object]:
    body = _map(raw, path)
    kept = {key: body[key] for key in ("requests", "limits") if body.get(key) is not None}
    return kept


def _container(raw: object, path: str, *, init: bool) -> dict[str, object]:
    body = _map(raw, path)
    kept: dict[str, object] = {"name": _text(body, "name", path)}
    resources = _resources(body.get("resources"), f"{path}.resources")
    if resources:
        kept["resources"] = resources
    if init and body.get("restartPolicy") is not None:
        kept["restartPolicy"] = body["restartPolicy"]
    return kept


def _containers(spec: Mapping[str, object], key: str, path: str) -> list[dict[str, object]]:
    raw = spec.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        _fail(f"{path}.{key}", "expected a list")
    if len(raw) > limits.MAX_CONTAINERS_PER_POD:
        cap = limits.MAX_CONTAINERS_PER_POD
        _fail(f"{path}.{key}", f"{len(raw):,} containers is over the limit of {cap:,}")
    return [
        _container(item, f"{path}.{key}[{i}]", init=key == "initContainers")
        for i, item in enumerate(raw)
    ]


def _status(raw: object, path: str) -> dict[str, object]:
    body = _map(raw, path)
    kept: dict[str, object] = {"name": _text(body, "name", path)}
    if body.get("containerID"):
        kept["containerID"] = _text(body, "containerID", path)
    last = _map(_map(body.get("lastState"), f"{path}.lastState").get("terminated"), path)
    if last.get("containerID"):
        kept["lastContainerID"] = _text(last, "containerID", f"{path}.lastState.terminated")
    state = _map(body.get("state"), f"{path}.state")
    for kind in _STATE_KINDS:
        if kind in state:
            kept["state"] = kind
            break
    return kept


def _reduce_pod(raw: object, path: str) -> dict[str, object]:
    body = _map(raw, path)
    kind = body.get("kind", "Pod")
    if kind != "Pod":
        _fail(f"{path}.kind", f"{kind!r} is not a Pod")
    meta = _map(body.get("metadata"), f"{path}.metadata")
    annotations = _map(meta.get("annotations"), f"{path}.metadata.annotations")
    kept_annotations = {k: annotations[k] for k in KEPT_ANNOTATIONS if k in annotations}
    uid = _text(meta, "uid", f"{path}.metadata")
    mirror = kept_annotations.get(MIRROR_ANNOTATION)
    if isinstance(mirror, str) and mirror:
        uid = mirror  # the kubelet keys a static pod by its config hash
    metadata: dict[str, object] = {
        "name": _text(meta, "name", f"{path}.metadata"),
        "namespace": _text(meta, "namespace", f"{path}.metadata") or "default",
    }
    if uid:
        metadata["uid"] = uid
    if kept_annotations:
        metadata["annotations"] = kept_annotations
    if meta.get("deletionTimestamp") is not None:
        metadata["deletionTimestamp"] = meta["deletionTimestamp"]
    spec_raw = _map(body.get("spec"), f"{path}.spec")
    spec: dict[str, object] = {
        "nodeName": _text(spec_raw, "nodeName", f"{path}.spec"),
        "containers": _containers(spec_raw, "containers", f"{path}.spec"),
    }
    inits = _containers(spec_raw, "initContainers", f"{path}.spec")
    if inits:
        spec["initContainers"] = inits
    for key in ("restartPolicy", "overhead"):
        if spec_raw.get(key) is not None:
            spec[key] = spec_raw[key]
    pod_resources = _resources(spec_raw.get("resources"), f"{path}.spec.resources")
    if spec_raw.get("resources") is not None:
        spec["resources"] = pod_resources
    status_raw = _map(body.get("status"), f"{path}.status")
    status: dict[str, object] = {
        "phase": _text(status_raw, "phase", f"{path}.status"),
    }
    if status_raw.get("qosClass"):
        status["qosClass"] = _text(status_raw, "qosClass", f"{path}.status")
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status_raw.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            _fail(f"{path}.status.{key}", "expected a list")
        status[key] = [_status(item, f"{path}.status.{key}[{i}]") for i, item in enumerate(items)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def reduce_pod_list(doc: object, *, node_name: str | None) -> tuple[str, tuple[NodePod, ...]]:
    """The reduced pods of a List/PodList and the node they run on.

    ``node_name`` None takes the pods' own ``spec.nodeName`` (all must agree). A pod on
    another node, or pods on several, is a WorkloadError: the list is from the wrong query.
    """
    body = _map(doc, "")
    kind = body.get("kind")
    if kind not in _LIST_KINDS:
        _fail(
            "kind",
            f"{kind!r} is not a List or PodList; give 'kubectl get pods -A --field-selector "
            "spec.nodeName=NODE -o json' output or the kubelet's /pods JSON",
        )
    items = body.get("items")
    items = [] if items is None else items
    if not isinstance(items, list):
        _fail("items", "expected a list of Pods")
    if len(items) > MAX_PODS:
        _fail("items", f"{len(items)} pods is more than {MAX_PODS}; give one node's pods")
    reduced = [_reduce_pod(item, f"items[{i}]") for i, item in enumerate(items)]
    names = sorted({str(_spec(p)["nodeName"]) for p in reduced})
    if node_name is None:
        if len(names) > 1:
            _fail(
                "spec.nodeName",
                f"the pods run on several nodes ({', '.join(map(repr, names))}); list one "
                "node's pods (--field-selector spec.nodeName=NODE) or name the node",
            )
        node_name = names[0] if names else ""
    for index, pod in enumerate(reduced):
        where = _spec(pod)["nodeName"]
        if where != node_name:
            meta = pod["metadata"]
            assert isinstance(meta, dict)
            _fail(
                f"items[{index}].spec.nodeName",
                f"pod {meta['namespace']}/{meta['name']} runs on {where!r}, not on "
                f"{node_name!r}; this pod list is from another node",
            )
    return node_name, node_pods_from_reduced(reduced)


def _spec(manifest: Mapping[str, object]) -> Mapping[str, object]:
    spec = manifest["spec"]
    assert isinstance(spec, Mapping)
    return spec


def node_pods_from_reduced(reduced: Sequence[Mapping[str, object]]) -> tuple[NodePod, ...]:
    """Parse reduced manifests (as stored in a snapshot) into NodePods; WorkloadError names
    the pod and field at fault."""
    if len(reduced) > MAX_PODS:
        _fail("", f"{len(reduced):,} pods is over the limit of {MAX_PODS:,}")
    try:
        pods = pods_from_documents([{"kind": "List", "items": list(reduced)}])
    except WorkloadError as err:
        msg = f"pod list: {err.message}"
        raise WorkloadError(msg) from err
    result = []
    for index, (manifest, pod) in enumerate(zip(reduced, pods, strict=True)):
        where = f"items[{index}].status"
        status = _map(manifest.get("status"), where)
        statuses: list[ContainerStatus] = []
        for key in ("initContainerStatuses", "containerStatuses"):
            items = status.get(key)
            if items is None:
                continue
            if not isinstance(items, list):
                _fail(f"{where}.{key}", "expected a list of container statuses")
            for i, raw in enumerate(items):
                path = f"{where}.{key}[{i}]"
                item = _map(raw, path)
                statuses.append(
                    ContainerStatus(
                        name=ContainerName(_text(item, "name", path)),
                        container_id=_runtime_id(_text(item, "containerID", path)),
                        last_container_id=_runtime_id(_text(item, "lastContainerID", path)),
                        state=_text(item, "state", path),
                    )
                )
        phase = _text(status, "phase", where)
        result.append(NodePod(manifest, pod, phase, tuple(statuses)))
    return tuple(result)


def running_containers(
    pods: Sequence[NodePod],
) -> list[tuple[ContainerID, PodUID, ContainerName]]:
    """The container map's entries, oldest first: each previous instance, then the current
    one (so a map built newest-wins keeps the current id). Terminal pods are included: the
    kubelet's runtime still lists their exited containers at start."""
    entries: list[tuple[ContainerID, PodUID, ContainerName]] = []
    for node_pod in pods:
        for status in node_pod.statuses:
            ids = (status.last_container_id, status.container_id)
            entries.extend((i, node_pod.pod.uid, status.name) for i in ids if i is not None)
    return entries
