"""The kubelet release a node runs, from its Node object (pure).

``kubectl get node NAME -o json`` carries it in ``status.nodeInfo.kubeletVersion``
(``v1.33.2``); a ``kubectl get pods,nodes -o json`` List carries the Node among its items.
The text is checked against the releases core/versions.py models before it is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from cpumanager.core.versions import parse_release
from cpumanager.errors import InputError

__all__ = [
    "MAX_VERSION_CHARS",
    "checked_version",
    "kubelet_version_of",
    "split_nodes",
    "version_among",
    "version_in_pod_list",
]

MAX_VERSION_CHARS: Final = 80


def checked_version(text: object, where: str) -> str:
    """``text`` when it names a modelled release; a one-line InputError otherwise."""
    if not isinstance(text, str) or not text or len(text) > MAX_VERSION_CHARS:
        msg = f"{where}: expected a kubelet version such as v1.33.2"
        raise InputError(msg)
    parse_release(text)
    return text


def _version(node: Mapping[str, object], where: str) -> str | None:
    status = node.get("status")
    info = status.get("nodeInfo") if isinstance(status, Mapping) else None
    raw = info.get("kubeletVersion") if isinstance(info, Mapping) else None
    return None if raw is None else checked_version(raw, where + ".status.nodeInfo.kubeletVersion")


def _name(node: Mapping[str, object]) -> str:
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def kubelet_version_of(doc: object, *, node_name: str | None, where: str) -> str | None:
    """The Node's kubelet version (a Node, or the matching Node of a List); None if absent."""
    if not isinstance(doc, Mapping):
        msg = f"{where}: not a Node object; save 'kubectl get node NAME -o json'"
        raise InputError(msg)
    if doc.get("kind") == "Node":
        name = _name(doc)
        if node_name and name and name != node_name:
            msg = f"{where}: Node {name!r} is not the snapshot's node {node_name!r}"
            raise InputError(msg)
        return _version(doc, where)
    items = doc.get("items")
    nodes = split_nodes(items if isinstance(items, list) else [])[0]
    return _node_in(nodes, node_name, where)


def _node_in(
    nodes: Sequence[Mapping[str, object]], node_name: str | None, where: str
) -> str | None:
    matching = [n for n in nodes if not node_name or _name(n) == node_name]
    if len(matching) != 1:
        if not nodes:
            msg = f"{where}: no Node object in it; save 'kubectl get node NAME -o json'"
            raise InputError(msg)
        return None
    return _version(matching[0], where)


def split_nodes(items: Sequence[object]) -> tuple[list[Mapping[str, object]], list[object]]:
    """A List's Node items and the rest (the pods)."""
    nodes: list[Mapping[str, object]] = []
    rest: list[object] = []
    for item in items:
        if isinstance(item, Mapping) and item.get("kind") == "Node":
            nodes.append(item)
        else:
            rest.append(item)
    return nodes, rest


def version_in_pod_list(doc: object) -> tuple[object, list[Mapping[str, object]]]:
    """The pod list without its Node items (``kubectl get pods,nodes``), and those Nodes."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("items"), list):
        return doc, []
    nodes, rest = split_nodes(doc["items"])
    return ({**doc, "items": rest} if nodes else doc), nodes


def version_among(nodes: Sequence[Mapping[str, object]], node_name: str, where: str) -> str | None:
    """The kubelet version of the Node named ``node_name`` among ``nodes``; None if absent."""
    matching = [n for n in nodes if _name(n) == node_name]
    return _version(matching[0], where) if len(matching) == 1 else None
