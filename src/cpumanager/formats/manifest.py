"""Pods from Kubernetes manifests that were already parsed from YAML or JSON (pure).

Accepted documents: a ``Pod``; a ``List`` or ``PodList`` whose ``items`` are Pods (what
``kubectl get pods -o yaml`` prints); ``None`` (an empty YAML document) is skipped.
Everything the CPU manager does not read (``status``, ``managedFields``, probes, volumes,
...) is ignored, so the output of ``kubectl get pod -o yaml|json`` loads as is.

The API server's defaulting is applied: a container that sets a limit but no request for a
resource gets ``request = limit``. Init containers with ``restartPolicy: Always`` are
sidecars (restartable init containers). Extended resources (``nvidia.com/gpu``,
``hugepages-2Mi``, ...) are kept with their quantities.

Pod-level resources (``spec.resources``) are read with the same quantity rules. Only the
resources the 1.34 API accepts there (cpu, memory, ``hugepages-<size>``) are allowed, and the
1.34 API server's defaulting (PodLevelResources on, as by default) is applied after the
containers': a pod-level hugepages limit defaults to the containers' aggregated limit
(unless a pod-level request for it is given); then, when pod-level limits are given, a
missing cpu/memory request defaults to the containers' aggregated request, and any other
missing request to its pod-level limit. A request above its limit is refused, as the API
server's validation does (after defaulting).

Pod identity: ``metadata.uid`` when present; otherwise a stable UUID derived from
``<namespace>/<name>`` (UUIDv5 in a fixed cpumanager namespace), so the same manifest gets
the same uid on every run and two pods with the same name in different namespaces differ.

Every malformed field raises :class:`WorkloadError` naming its path, e.g.
``spec.containers[1].resources.limits.cpu: 'abc' is not a quantity; ...``. With several
documents the path is prefixed by ``document N`` (1-based), and List items by
``items[i]``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import NoReturn

from cpumanager.core import limits
from cpumanager.core.ids import ContainerName, PodUID, pod_uid_problem
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    aggregate_container_limits,
    aggregate_container_requests,
    is_supported_pod_level_resource,
)
from cpumanager.errors import WorkloadError

__all__ = ["derived_pod_uid", "pod_from_manifest", "pods_from_documents"]

# Fixed namespace for derived uids: never change it, or every derived uid changes.
_UID_NAMESPACE = uuid.UUID("5a0c4e1e-7f3b-4c52-9d8e-3c1f2b6a9e10")
_LIST_KINDS = ("List", "PodList")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # container names: DNS labels
_POD_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")  # pod names: DNS subdomains
_RESOURCE_NAME = re.compile(
    r"^([A-Za-z0-9][-A-Za-z0-9_.]*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


def derived_pod_uid(namespace: str, name: str) -> PodUID:
    """The stable uid of a pod without ``metadata.uid`` (UUIDv5 of ``namespace/name``)."""
    return PodUID(str(uuid.uuid5(_UID_NAMESPACE, f"{namespace}/{name}")))


def pods_from_documents(docs: Sequence[object]) -> list[Pod]:
    """Every Pod in ``docs`` (parsed YAML/JSON documents), in document order."""
    many = len(docs) > 1
    pods: list[Pod] = []
    for index, doc in enumerate(docs):
        prefix = f"document {index + 1}: " if many else ""
        if doc is None:
            continue
        pods.extend(_pods_from_document(doc, prefix))
    _check_unique_uids(pods)
    return pods


def pod_from_manifest(doc: object) -> Pod:
    """Exactly one Pod from one document (a Pod, or a List holding one Pod)."""
    pods = _pods_from_document(doc, "")
    if len(pods) != 1:
        _fail("", f"expected exactly one Pod, found {len(pods)}")
    return pods[0]


# --- documents -------------------------------------------------------------------------


def _pods_from_document(doc: object, prefix: str) -> list[Pod]:
    body = _mapping(doc, prefix.rstrip(": ") or "document")
    kind = body.get("kind", "Pod" if "spec" in body else None)
    if kind in _LIST_KINDS:
        items = body.get("items")
        if items is None:
            return []
        if not isinstance(items, list):
            _fail(f"{prefix}items", f"expected a list of Pods, got {_kind_of(items)}")
        pods = []
        for position, item in enumerate(items):
            path = f"{prefix}items[{position}]"
            item_body = _mapping(item, path)
            item_kind = item_body.get("kind", "Pod")
            if item_kind != "Pod":
                _not_a_pod(path + ".kind", item_kind)
            pods.append(_pod(item_body, path + "."))
        return pods
    if kind != "Pod":
        _not_a_pod(f"{prefix}kind", kind)
    return [_pod(body, prefix)]


def _not_a_pod(path: str, kind: object) -> NoReturn:
    _fail(
        path,
        f"{kind!r} is not a Pod; give Pod manifests (kind: Pod), or a List / PodList of them "
        "as 'kubectl get pods -o yaml' prints",
    )


def _pod(body: Mapping[str, object], prefix: str) -> Pod:
    meta = _mapping(body.get("metadata", {}), f"{prefix}metadata")
    name = _optional_str(meta, "name", f"{prefix}metadata.name")
    namespace = _optional_str(meta, "namespace", f"{prefix}metadata.namespace") or "default"
    uid = _optional_str(meta, "uid", f"{prefix}metadata.uid")
    if not name and not uid:
        _fail(f"{prefix}metadata.name", "a Pod needs metadata.name (or metadata.uid)")
    uid_problem = pod_uid_problem(uid) if uid else None
    if uid_problem is not None:
        _fail(f"{prefix}metadata.uid", f"{uid[:140]!r} is refused: {uid_problem}")
    if namespace and (len(namespace) > 63 or not _NAME.fullmatch(namespace)):
        _fail(
            f"{prefix}metadata.namespace",
            f"{namespace[:100]!r} is not a valid namespace; use at most 63 lower-case letters, "
            "digits and '-'",
        )
    if name and (len(name) > 253 or not _POD_NAME.fullmatch(name)):
        _fail(
            f"{prefix}metadata.name",
            f"{name[:300]!r} is not a valid name; use lower-case letters, digits, '-' and '.'",
        )
    spec = _mapping(body.get("spec"), f"{prefix}spec")
    apps = _containers(spec, "containers", prefix, required=True)
    inits = _containers(spec, "initContainers", prefix, required=False)
    seen: dict[str, str] = {}
    for path, container in (*inits, *apps):
        if container.name in seen:
            _fail(
                f"{path}.name",
                f"{container.name!r} is also the name of {seen[container.name]}; "
                "container names must be unique within a pod",
            )
        seen[container.name] = path
    pod = Pod(
        uid=PodUID(uid) if uid else derived_pod_uid(namespace, name),
        name=name,
        namespace=namespace,
        init_containers=tuple(c for _, c in inits),
        containers=tuple(c for _, c in apps),
        overhead=_resource_list(spec.get("overhead"), f"{prefix}spec.overhead"),
    )
    raw_resources = spec.get("resources")
    if raw_resources is None:
        return pod
    return _with_pod_resources(pod, raw_resources, f"{prefix}spec.resources")


def _with_pod_resources(pod: Pod, raw: object, path: str) -> Pod:
    """``spec.resources``: parsed, checked for supported names, defaulted, validated."""
    body = _mapping(raw, path)
    limits = _resource_list(body.get("limits"), f"{path}.limits")
    requests = _resource_list(body.get("requests"), f"{path}.requests")
    for kind, amounts in (("limits", limits), ("requests", requests)):
        for resource in amounts:
            if not is_supported_pod_level_resource(resource):
                _fail(
                    f"{path}.{kind}.{resource}",
                    f"{resource!r} is not supported at pod level; use cpu, memory or "
                    "hugepages-<size> there, or set it per container",
                )
    if limits or requests:  # defaultHugePagePodLimits
        for resource, amount in aggregate_container_limits(pod).items():
            if resource.startswith("hugepages-") and resource not in requests:
                limits.setdefault(resource, amount)
    if limits:  # defaultPodRequests
        for resource, amount in aggregate_container_requests(pod).items():
            if resource in ("cpu", "memory"):
                requests.setdefault(resource, amount)
        for resource, limit in limits.items():
            requests.setdefault(resource, limit)
    for resource, limit in limits.items():
        request = requests.get(resource, limit)
        if request > limit:
            _fail(
                f"{path}.requests.{resource}",
                f"{_show(request)} must be less than or equal to the pod-level {resource} "
                f"limit {_show(limit)}",
            )
    return replace(pod, requests=requests, limits=limits, resources_given=True)


def _containers(
    spec: Mapping[str, object], key: str, prefix: str, *, required: bool
) -> list[tuple[str, Container]]:
    raw = spec.get(key)
    path = f"{prefix}spec.{key}"
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        _fail(path, f"expected a list of containers, got {_kind_of(raw)}")
    if required and not raw:
        _fail(path, "a Pod needs at least one container")
    if len(raw) > limits.MAX_CONTAINERS_PER_POD:
        _fail(
            path, f"{len(raw):,} containers is over the limit of {limits.MAX_CONTAINERS_PER_POD:,}"
        )
    init = key == "initContainers"
    return [
        (f"{path}[{i}]", _container(item, f"{path}[{i}]", init=init)) for i, item in enumerate(raw)
    ]


def _container(raw: object, path: str, *, init: bool) -> Container:
    body = _mapping(raw, path)
    name = _optional_str(body, "name", f"{path}.name")
    if not name:
        _fail(f"{path}.name", "every container needs a name")
    if len(name) > 63 or not _NAME.fullmatch(name):
        _fail(
            f"{path}.name",
            f"{name[:100]!r} is not a valid name; use at most 63 lower-case letters, digits, '-'",
        )
    kind = ContainerKind.INIT if init else ContainerKind.APP
    policy = body.get("restartPolicy")
    if init and policy is not None:
        if policy != "Always":
            _fail(
                f"{path}.restartPolicy",
                f"{policy!r} is not supported for an init container; only 'Always' "
                "(a restartable init container, i.e. a sidecar) may be set",
            )
        kind = ContainerKind.SIDECAR
    resources = _mapping(body.get("resources", {}), f"{path}.resources")
    limits = _resource_list(resources.get("limits"), f"{path}.resources.limits")
    requests = _resource_list(resources.get("requests"), f"{path}.resources.requests")
    for resource, limit in limits.items():
        request = requests.setdefault(resource, limit)  # API defaulting: request = limit
        if request > limit:
            _fail(
                f"{path}.resources.requests.{resource}",
                f"{_show(request)} must be less than or equal to the {resource} limit "
                f"{_show(limit)}",
            )
    return Container(name=ContainerName(name), requests=requests, limits=limits, kind=kind)


def _resource_list(raw: object, path: str) -> dict[str, Fraction]:
    if raw is None:
        return {}
    body = _mapping(raw, path)
    out: dict[str, Fraction] = {}
    for resource, value in body.items():
        if not _RESOURCE_NAME.fullmatch(resource):
            _fail(path, f"{resource!r} is not a valid resource name")
        field = f"{path}.{resource}"
        if value is None:  # JSON null decodes to a zero Quantity, as the API server stores it
            out[resource] = Fraction(0)
            continue
        if not isinstance(value, str | int | float):
            _fail(field, f"expected a quantity such as '2' or '500m', got {_kind_of(value)}")
        amount = parse_quantity(value, field=field)
        if amount < 0:
            _fail(field, f"{value!r} is negative; quantities must be zero or more")
        out[resource] = amount
    return out


# --- helpers ---------------------------------------------------------------------------


def _check_unique_uids(pods: list[Pod]) -> None:
    seen: dict[str, Pod] = {}
    for pod in pods:
        other = seen.get(pod.uid)
        if other is not None:
            msg = (
                f"pods {other.display_name} and {pod.display_name} have the same uid "
                f"{pod.uid!r}; give each pod its own metadata.uid (or distinct names)"
            )
            raise WorkloadError(msg)
        seen[pod.uid] = pod


def _mapping(raw: object, path: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        _fail(path, f"expected a mapping, got {_kind_of(raw)}")
    for key in raw:
        if not isinstance(key, str):
            _fail(path, f"keys must be strings, got {key!r}")
    return raw


def _optional_str(body: Mapping[str, object], key: str, path: str) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        _fail(path, f"expected a string, got {_kind_of(value)}")
    return value


def _kind_of(value: object) -> str:
    if value is None:
        return "nothing (null)"
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    for kind, label in names.items():
        if isinstance(value, kind):
            return f"{label} ({value!r})" if kind in (str, bool) else label
    return f"{type(value).__name__} {value!r}"


def _show(amount: Fraction) -> str:
    if amount.denominator == 1:
        return str(amount.numerator)
    return f"{float(amount):g}"


def _fail(path: str, problem: str) -> NoReturn:
    msg = f"{path}: {problem}" if path else problem
    raise WorkloadError(msg)
