"""The extender as the scheduler's binder (``bindVerb``): where assumptions begin and end.

kube-scheduler posts ``ExtenderBindingArgs`` ({"PodName", "PodNamespace", "PodUID",
"Node"}) to the bind verb once it has chosen a node, and reads ``ExtenderBindingResult``
({"Error"}) back. Here, one node at a time (a lock per node):

1. the pod is read from the API server (the bind call carries no spec); a pod no resource
   manager pins (``visibility.pinned``) skips steps 2 and 3;
2. the node is *caught up*: every active pod the API server has bound to it that its last
   snapshot does not report is assumed there (binds by another replica, by the default
   binder, before this replica started); an assumed pod the API server no longer has on
   the node is forgotten (deleted, or its binding failed elsewhere);
3. the pod is checked on the node as filter checks it, with those assumptions;
4. only if admitted, the Binding is created; only if that succeeds, the pod is assumed.

An assumption ends when the node's snapshot reports the pod's uid (``store.put``), when a
catch-up finds the pod gone from the node, or after the assumption's time to live
(``--assume-ttl``, counted from the bind). A failed bind assumes nothing. Filter and
prioritize read assumptions and never change them.

The API server is the one record both replicas share: a replica that missed the other's
binds, or restarted, learns them at its next bind to that node.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from cpumanager.core.limits import is_node_name
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError, InputError
from cpumanager.extender.judge import Verdict
from cpumanager.extender.protocol import ExtenderArgs
from cpumanager.extender.store import NodeStore, pod_shape
from cpumanager.extender.visibility import pinned
from cpumanager.formats.manifest import pod_from_manifest

SETTLE_SECONDS = 10.0  # an assumption younger than this is kept even if the list lacks it

__all__ = ["BindArgs", "Binder", "Bindings", "PodSource", "parse_bind_args", "pod_and_spec"]


class PodSource(Protocol):
    """What binding needs of the API server (``adapters.kube_api.KubeApi`` has it)."""

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def node_pods(
        self, node: str, *, active_only: bool = True, consistent: bool = False
    ) -> tuple[list[dict[str, Any]], str]: ...

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None: ...


Binder = PodSource


@dataclass(frozen=True, slots=True)
class BindArgs:
    """A parsed ExtenderBindingArgs."""

    name: str
    namespace: str
    uid: str
    node: str


def parse_bind_args(raw: bytes) -> BindArgs:
    """ExtenderBindingArgs from a request body; InputError (one line) when it is not one."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        msg = "bad ExtenderBindingArgs: not JSON"
        raise InputError(msg) from None
    if not isinstance(body, dict):
        msg = "bad ExtenderBindingArgs: expected an object"
        raise InputError(msg)
    lowered = {str(k).lower(): v for k, v in body.items()}
    values = []
    for key in ("PodName", "PodNamespace", "PodUID", "Node"):
        value = body.get(key, lowered.get(key.lower()))
        if not isinstance(value, str) or not value or len(value) > 253:
            msg = f"bad ExtenderBindingArgs: {key} must be a non-empty string"
            raise InputError(msg)
        values.append(value)
    name, namespace, _, node = values
    # Object names as the API server has them (DNS-1123): a node name goes into a field
    # selector, where a ',' or '=' would change what is listed.
    if not is_node_name(name):
        msg = "bad ExtenderBindingArgs: PodName is not a Kubernetes object name"
        raise InputError(msg)
    if not is_node_name(namespace) or "." in namespace or len(namespace) > 63:
        msg = "bad ExtenderBindingArgs: PodNamespace is not a Kubernetes namespace name"
        raise InputError(msg)
    if not is_node_name(node):
        msg = "bad ExtenderBindingArgs: Node is not a Kubernetes node name"
        raise InputError(msg)
    return BindArgs(*values)


def pod_and_spec(document: Mapping[str, Any]) -> tuple[Pod, Mapping[str, Any]]:
    """The Pod and its raw spec from an API server pod object."""
    doc = dict(document)
    doc.setdefault("kind", "Pod")
    doc.setdefault("apiVersion", "v1")
    spec = doc.get("spec")
    return pod_from_manifest(doc), spec if isinstance(spec, dict) else {}


class Bindings:
    """Bind verb state: one lock per node, the store's assumptions, the API server."""

    def __init__(
        self,
        store: NodeStore,
        api: PodSource,
        check: Callable[[ExtenderArgs], Verdict],
        ttl: float,
    ) -> None:
        self._store = store
        self._api = api
        self._check = check
        self._ttl = ttl
        self._guard = threading.Lock()
        # A node's lock and how many binds hold or wait for it; dropped when none does,
        # so the table holds only nodes being bound to (a bind names any node it likes).
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def _node_lock(self, node: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(node, (None, 0))
            if lock is None:
                lock = threading.Lock()
            self._locks[node] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                _, users = self._locks[node]
                if users == 1:
                    del self._locks[node]
                else:
                    self._locks[node] = (lock, users - 1)

    def catch_up(self, node: str) -> int:
        """Assume what the API server has bound to ``node`` and its snapshot does not report;
        forget assumed pods the API server no longer has there. Returns the pods assumed."""
        # A consistent list: one served from a lagging cache could miss a bind the other
        # replica (or another API server) has just made.
        documents, _ = self._api.node_pods(node, consistent=True)
        bound: dict[str, tuple[Pod, Mapping[str, Any]]] = {}
        for document in documents:
            try:
                pod, spec = pod_and_spec(document)
            except CpuManagerError:
                continue  # a pod the kubelet's code cannot read is not ours to hold CPUs for
            bound[str(pod.uid)] = (pod, spec)
        entry = self._store.get(node)
        if entry is None:
            return 0
        added = 0
        with self._store.lock:
            # A pod this replica bound moments ago may not be in the (cached) list yet.
            # (assumed at until - ttl: settled when that is SETTLE_SECONDS ago)
            settled = self._store.clock() + self._ttl - SETTLE_SECONDS
            for uid, (_, _, until) in list(entry.assumed.items()):
                if str(uid) not in bound and until <= settled:
                    self._store.forget_on(node, uid)
            for pod, spec in bound.values():
                if pod.uid in entry.reported or pod.uid in entry.assumed:
                    continue
                self._store.assume(node, pod, pod_shape(spec), self._ttl, move=False)
                added += 1
        return added

    def bind(self, args: BindArgs) -> str:
        """Check and bind (module docstring); the error for the scheduler, "" when bound."""
        try:
            document = self._api.pod(args.namespace, args.name)
            if document is None:
                return f"pod {args.namespace}/{args.name} no longer exists"
            pod, spec = pod_and_spec(document)
            if str(pod.uid) != args.uid:
                return f"pod {args.namespace}/{args.name} is another pod now (uid changed)"
            with self._node_lock(args.node):
                # A pod no manager pins cannot be refused by them: no catch-up, no check.
                if pinned(pod):
                    self.catch_up(args.node)
                    verdict = self._check(ExtenderArgs(pod, spec, (args.node,), None))
                else:
                    verdict = Verdict(True)
                if not verdict.admitted:
                    return (
                        f"node {args.node} no longer admits pod {args.namespace}/{args.name}: "
                        f"{verdict.reason}: {verdict.message}"
                    )
                self._api.bind(args.namespace, args.name, args.uid, args.node)
                self._store.assume(args.node, pod, pod_shape(spec), self._ttl, move=True)
        except CpuManagerError as exc:
            return " ".join(str(exc).split())
        return ""
