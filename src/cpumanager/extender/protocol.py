"""The kube-scheduler extender protocol (``k8s.io/kube-scheduler/extender/v1``), pure.

The scheduler posts ``ExtenderArgs`` ({"Pod", "Nodes", "NodeNames"}: ``Nodes`` is a
NodeList when the extender is not ``nodeCacheCapable``, ``NodeNames`` otherwise) to the
filter and prioritize verbs and reads ``ExtenderFilterResult`` ({"Nodes", "NodeNames",
"FailedNodes", "FailedAndUnresolvableNodes", "Error"}) and ``HostPriorityList``
([{"Host", "Score"}], scores 0..10) back. The Go types carry no json tags, so the keys are
the field names; Go's decoder matches them case-insensitively and so do we.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cpumanager.core import limits
from cpumanager.core.workload import Pod
from cpumanager.errors import InputError
from cpumanager.formats.manifest import pod_from_manifest

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_NODES",
    "MAX_SCORE",
    "ExtenderArgs",
    "ProtocolError",
    "filter_result",
    "parse_args",
    "priority_list",
]

MAX_SCORE = 10  # extenderv1.MaxExtenderPriority
MAX_BODY_BYTES = limits.MAX_FILTER_BODY_BYTES
MAX_NODES = limits.MAX_NODE_NAMES


class ProtocolError(InputError):
    """A request body that is not a valid ExtenderArgs (answered with 400)."""


@dataclass(frozen=True, slots=True)
class ExtenderArgs:
    """A parsed ExtenderArgs: the pod, its raw spec, the candidate node names, and the
    NodeList items by name when the scheduler sent whole nodes (echoed back on filter)."""

    pod: Pod
    pod_spec: Mapping[str, Any]
    node_names: tuple[str, ...]
    node_items: Mapping[str, Mapping[str, Any]] | None


def _get(body: Mapping[str, Any], name: str) -> Any:
    """A field by Go's case-insensitive match (exact name first)."""
    if name in body:
        return body[name]
    lowered = name.lower()
    for key, value in body.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def _fail(problem: str) -> ProtocolError:
    return ProtocolError(f"bad ExtenderArgs: {problem}")


def parse_args(raw: bytes) -> ExtenderArgs:
    """ExtenderArgs from a request body; ProtocolError (one line) when it is not one."""
    if len(raw) > MAX_BODY_BYTES:
        msg = f"body of {len(raw)} bytes is over the {MAX_BODY_BYTES}-byte limit"
        raise _fail(msg)
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        msg = f"not JSON ({str(exc).splitlines()[0][:120]})"
        raise _fail(msg) from None
    if not isinstance(body, dict):
        msg = "the body must be a JSON object with Pod and Nodes or NodeNames"
        raise _fail(msg)
    if limits.depth_of(body) > limits.MAX_DEPTH:
        msg = f"nested deeper than {limits.MAX_DEPTH} levels"
        raise _fail(msg)
    raw_pod = _get(body, "Pod")
    if not isinstance(raw_pod, dict):
        msg = "Pod is missing or not an object"
        raise _fail(msg)
    pod_doc = dict(raw_pod)
    pod_doc.setdefault("kind", "Pod")
    pod_doc.setdefault("apiVersion", "v1")
    try:
        pod = pod_from_manifest(pod_doc)
    except InputError as exc:
        msg = f"Pod: {exc}"
        raise _fail(msg) from None
    spec = raw_pod.get("spec")
    pod_spec: Mapping[str, Any] = spec if isinstance(spec, dict) else {}
    names_raw = _get(body, "NodeNames")
    nodes_raw = _get(body, "Nodes")
    items: dict[str, Mapping[str, Any]] | None = None
    names: list[str] = []
    if names_raw is not None:
        if not isinstance(names_raw, list) or not all(isinstance(n, str) for n in names_raw):
            msg = "NodeNames must be a list of strings"
            raise _fail(msg)
        names = list(names_raw)
    elif nodes_raw is not None:
        node_list = nodes_raw.get("items") if isinstance(nodes_raw, dict) else None
        if not isinstance(node_list, list):
            msg = "Nodes must be a NodeList object with items"
            raise _fail(msg)
        items = {}
        for index, item in enumerate(node_list):
            meta = item.get("metadata") if isinstance(item, dict) else None
            name = meta.get("name") if isinstance(meta, dict) else None
            if not isinstance(name, str) or not name:
                msg = f"Nodes.items[{index}] has no metadata.name"
                raise _fail(msg)
            items[name] = item
            names.append(name)
    else:
        msg = "neither Nodes nor NodeNames is given"
        raise _fail(msg)
    if len(names) > MAX_NODES:
        msg = f"{len(names)} nodes is over the {MAX_NODES}-node limit"
        raise _fail(msg)
    for name in names:
        if not limits.is_node_name(name):
            shown = ascii(name[:80])
            msg = f"{shown} is not a Kubernetes node name (DNS-1123 subdomain, at most 253)"
            raise _fail(msg)
    return ExtenderArgs(pod, pod_spec, tuple(names), items)


def filter_result(
    args: ExtenderArgs,
    passed: Sequence[str],
    failed: Mapping[str, str],
    unresolvable: Mapping[str, str],
    error: str = "",
) -> dict[str, Any]:
    """ExtenderFilterResult in the shape the request used (Nodes or NodeNames)."""
    result: dict[str, Any] = {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": dict(failed),
        "FailedAndUnresolvableNodes": dict(unresolvable),
        "Error": error,
    }
    if args.node_items is not None:
        items = args.node_items
        result["Nodes"] = {"metadata": {}, "items": [items[name] for name in passed]}
    else:
        result["NodeNames"] = list(passed)
    return result


def priority_list(scores: Mapping[str, int]) -> list[dict[str, Any]]:
    """HostPriorityList: every host with its score, clamped to 0..MAX_SCORE."""
    return [
        {"Host": host, "Score": max(0, min(MAX_SCORE, score))} for host, score in scores.items()
    ]
