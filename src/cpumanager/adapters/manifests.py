"""Pods from manifest files: YAML (one or several documents) or JSON.

A path may be a file or a directory (every ``*.yaml``, ``*.yml`` and ``*.json`` in it, in
name order, not recursive); ``-`` is not special here, callers read stdin themselves and
use :func:`pods_from_text`. YAML is a superset of JSON, so one parser reads both. OS and
parse failures become one-line :class:`InputError` / :class:`WorkloadError` messages that
name the file; errors from the manifest itself keep their field path.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cpumanager.adapters._text import load_yaml_documents, manifest_files_in, read_utf8_text
from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, WorkloadError
from cpumanager.formats.manifest import pods_from_documents

__all__ = ["load_pods", "manifest_files", "pods_from_text", "read_manifest_documents"]


def pods_from_text(text: str, *, source: str) -> list[Pod]:
    """Parse manifest text; ``source`` names it in error messages."""
    return _pods(_documents(text, source), source)


def read_manifest_documents(path: Path) -> list[object]:
    """The parsed documents of one manifest file."""
    return _documents(_read(path), str(path))


def manifest_files(path: Path) -> list[Path]:
    """``path`` itself, or the manifest files of a directory in name order."""
    if path.is_dir():
        found = manifest_files_in(path)
        if not found:
            msg = f"directory {str(path)!r} holds no *.yaml, *.yml or *.json manifest"
            raise InputError(msg)
        return found
    return [path]


def load_pods(paths: Iterable[Path]) -> list[Pod]:
    """Every Pod of every file (directories expanded), in order; uids must be unique."""
    pods: list[Pod] = []
    owners: dict[str, str] = {}
    for given in paths:
        for path in manifest_files(given):
            for pod in _pods(read_manifest_documents(path), str(path)):
                if pod.uid in owners:
                    msg = (
                        f"{path}: pod {pod.display_name} has uid {pod.uid!r}, already used by "
                        f"a pod in {owners[pod.uid]}; give each pod its own metadata.uid"
                    )
                    raise WorkloadError(msg)
                owners[pod.uid] = str(path)
                pods.append(pod)
    return pods


def _read(path: Path) -> str:
    return read_utf8_text(path, what="manifest file", utf8_remedy="save it as UTF-8 YAML or JSON")


def _documents(text: str, source: str) -> list[object]:
    return load_yaml_documents(text, source=source, error=WorkloadError, remedy="fix the manifest")


def _pods(docs: list[object], source: str) -> list[Pod]:
    try:
        return pods_from_documents(docs)
    except WorkloadError as err:
        msg = f"{source}: {err.message}"
        raise WorkloadError(msg) from err
