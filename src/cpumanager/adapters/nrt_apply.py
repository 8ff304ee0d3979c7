"""The node's NodeResourceTopology object on the API server, through the kubernetes client.

:class:`NRTWriter` keeps one cluster-scoped ``noderesourcetopologies.topology.node.k8s.io``
(``v1alpha2``) object per node up to date: it creates the object when it is missing and
replaces it (with the ``resourceVersion`` it read, so a concurrent writer makes it retry,
never overwrite blindly) when its content -- ``attributes``, ``zones`` and
``topologyPolicies`` -- differs from the document; every write names the field manager
``cpumanager-nrt``. A document equal to the last one written costs no API call, except
every ``recheck`` rounds, when the object is read again (someone may have deleted or
edited it). Labels and annotations others put on the object are kept.

:func:`list_node_pods` is the pod list the object is computed from: the API server's pods
bound to the node (``spec.nodeName``), the very list the scheduler plugin fingerprints.
:func:`api_clients` builds the client from a kubeconfig file or, without one, from the pod's
service account (in-cluster). :func:`pci_numa_nodes` reads the NUMA node of PCI-addressed
devices from sysfs for devices nothing else places.

Failures of the API server or the network become one-line :class:`HostError`\\ s.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from cpumanager.errors import HostError

__all__ = [
    "FIELD_MANAGER",
    "GROUP",
    "MANAGED_BY",
    "PLURAL",
    "VERSION",
    "NRTWriter",
    "ObjectsApi",
    "api_clients",
    "list_node_pods",
    "pci_numa_nodes",
]

GROUP = "topology.node.k8s.io"
VERSION = "v1alpha2"
PLURAL = "noderesourcetopologies"
FIELD_MANAGER = "cpumanager-nrt"
MANAGED_BY = {"app.kubernetes.io/managed-by": "cpumanager"}
MAX_PODS_BYTES = 64 * 1024 * 1024
TIMEOUT = 10.0  # seconds for each call to the API server
_MAX_PCI_DEVICES = 65536
_CONTENT_KEYS = ("attributes", "zones", "topologyPolicies")
_PCI_ADDRESS = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


class ObjectsApi(Protocol):
    """The part of ``kubernetes.client.CustomObjectsApi`` the writer uses."""

    def get_cluster_custom_object(
        self, group: str, version: str, plural: str, name: str, **kwargs: Any
    ) -> Any: ...

    def create_cluster_custom_object(
        self, group: str, version: str, plural: str, body: Any, **kwargs: Any
    ) -> Any: ...

    def replace_cluster_custom_object(
        self, group: str, version: str, plural: str, name: str, body: Any, **kwargs: Any
    ) -> Any: ...


def _content(document: Mapping[str, Any]) -> dict[str, Any]:
    return {key: document.get(key) or [] for key in _CONTENT_KEYS}


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def _failure(action: str, name: str, exc: BaseException) -> HostError:
    reason = getattr(exc, "reason", None) or exc.__class__.__name__
    status = _status(exc)
    where = f" (HTTP {status})" if status is not None else ""
    return HostError(f"cannot {action} NodeResourceTopology {name}: {reason}{where}")


class NRTWriter:
    """Create or update one node's NodeResourceTopology when its content changes."""

    def __init__(
        self,
        objects: ObjectsApi,
        *,
        field_manager: str = FIELD_MANAGER,
        recheck: int = 30,
        timeout: float = TIMEOUT,
    ) -> None:
        self._objects = objects
        self._timeout = timeout
        self._field_manager = field_manager
        self._recheck = max(1, recheck)
        self._written: dict[str, Any] | None = None
        self._name = ""
        self._quiet_rounds = 0

    def write(self, document: Mapping[str, Any]) -> str:
        """``created``, ``updated`` or ``unchanged``; HostError when the API server fails
        (a conflicting writer included: the next round reads the object again)."""
        name = str(document["metadata"]["name"])
        content = _content(document)
        if name == self._name and content == self._written:
            self._quiet_rounds += 1
            if self._quiet_rounds < self._recheck:
                return "unchanged"
        self._quiet_rounds = 0
        self._written = None  # unknown until the server answers
        current = self._get(name)
        if current is None:
            body = self._body(document, None)
            self._call("create", name, body)
            outcome = "created"
        elif _content(current) == content:
            outcome = "unchanged"
        else:
            self._call("update", name, self._body(document, current))
            outcome = "updated"
        self._name, self._written = name, content
        return outcome

    def _get(self, name: str) -> dict[str, Any] | None:
        try:
            found = self._objects.get_cluster_custom_object(
                GROUP, VERSION, PLURAL, name, _request_timeout=self._timeout
            )
        except Exception as exc:
            if _status(exc) == 404:
                return None
            failure = _failure("read", name, exc)
            raise failure from None
        if not isinstance(found, dict) or not isinstance(found.get("metadata") or {}, dict):
            msg = f"cannot read NodeResourceTopology {name}: the API server sent no object"
            raise HostError(msg)
        return found

    def _body(self, document: Mapping[str, Any], current: Mapping[str, Any] | None) -> Any:
        body = copy.deepcopy(dict(document))
        metadata: dict[str, Any] = {"name": document["metadata"]["name"]}
        labels = dict(MANAGED_BY)
        if current is not None:
            old = current.get("metadata") or {}
            labels = {**(old.get("labels") or {}), **labels}
            if old.get("annotations"):
                metadata["annotations"] = dict(old["annotations"])
            metadata["resourceVersion"] = old.get("resourceVersion")
        metadata["labels"] = labels
        body["metadata"] = metadata
        return body

    def _call(self, action: str, name: str, body: Any) -> None:
        try:
            if action == "create":
                self._objects.create_cluster_custom_object(
                    GROUP,
                    VERSION,
                    PLURAL,
                    body,
                    field_manager=self._field_manager,
                    _request_timeout=self._timeout,
                )
            else:
                self._objects.replace_cluster_custom_object(
                    GROUP,
                    VERSION,
                    PLURAL,
                    name,
                    body,
                    field_manager=self._field_manager,
                    _request_timeout=self._timeout,
                )
        except Exception as exc:
            failure = _failure(action, name, exc)
            raise failure from None


def api_clients(kubeconfig: Path | None) -> tuple[Any, Any]:
    """``(CustomObjectsApi, CoreV1Api)`` from ``kubeconfig``, else ``$KUBECONFIG``, else
    the in-cluster account (``kube_api.client_for``: the token file reread as the kubelet
    rotates it, no redirect followed, so the token never goes to another host)."""
    from kubernetes import client

    from cpumanager.adapters.kube_api import KubeApiError, client_for

    try:
        api = client_for(kubeconfig)
    except KubeApiError as exc:
        raise HostError(str(exc)) from None
    return client.CustomObjectsApi(api), client.CoreV1Api(api)


def list_node_pods(core: Any, node_name: str, dest: Path, *, timeout: float = TIMEOUT) -> int:
    """Write the API server's pods bound to ``node_name`` (a ``List``) to ``dest``
    atomically; the number of pods. HostError on failure. The list is served from the API
    server's watch cache (``resourceVersion=0``), as the plugin's informer sees the pods,
    so a round costs the API server no read of every pod in etcd."""
    try:
        answer = core.list_pod_for_all_namespaces(
            field_selector=f"spec.nodeName={node_name}",
            resource_version="0",
            _preload_content=False,
            _request_timeout=timeout,
        )
        body = answer.data
    except Exception as exc:
        reason = getattr(exc, "reason", None) or exc
        msg = f"cannot list the pods of node {node_name}: {reason}"
        raise HostError(" ".join(msg.split())) from None
    if len(body) > MAX_PODS_BYTES:
        msg = f"the pod list of node {node_name} is over {MAX_PODS_BYTES} bytes"
        raise HostError(msg)
    try:
        items = json.loads(body).get("items") or []
    except (ValueError, AttributeError):
        msg = f"the pod list of node {node_name} is not a JSON object"
        raise HostError(msg) from None
    partial = dest.with_name(dest.name + ".tmp")
    partial.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": items}))
    os.replace(partial, dest)
    return len(items)


def pci_numa_nodes(root: Path) -> dict[str, int]:
    """The NUMA node of every PCI device sysfs places, by address (``0000:3b:02.0``), from
    ``<root>/sys/bus/pci/devices/<address>/numa_node`` (``-1``, no NUMA affinity, and
    unreadable entries are left out). Device plugins that name devices by PCI address
    (SR-IOV, many NICs and accelerators) are placed this way."""
    found: dict[str, int] = {}
    try:
        entries = sorted((root / "sys/bus/pci/devices").iterdir())
    except OSError:
        return found
    for entry in entries[:_MAX_PCI_DEVICES]:
        if not _PCI_ADDRESS.match(entry.name):
            continue
        try:
            text = (entry / "numa_node").read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            found[entry.name] = int(text)
    return found
