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

import yaml

from cpumanager.core.manifest import pods_from_documents
from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, WorkloadError

__all__ = ["load_pods", "manifest_files", "pods_from_text", "read_manifest_documents"]

_SUFFIXES = (".yaml", ".yml", ".json")


def pods_from_text(text: str, *, source: str) -> list[Pod]:
    """Parse manifest text; ``source`` names it in error messages."""
    return _pods(_documents(text, source), source)


def read_manifest_documents(path: Path) -> list[object]:
    """The parsed documents of one manifest file."""
    return _documents(_read(path), str(path))


def manifest_files(path: Path) -> list[Path]:
    """``path`` itself, or the manifest files of a directory in name order."""
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.suffix.lower() in _SUFFIXES and p.is_file())
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
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        msg = f"manifest file {str(path)!r} does not exist; check the path"
        raise InputError(msg) from err
    except IsADirectoryError as err:
        msg = f"{str(path)!r} is a directory; pass it to load_pods or name a file"
        raise InputError(msg) from err
    except UnicodeDecodeError as err:
        msg = f"manifest file {str(path)!r} is not UTF-8 text; save it as UTF-8 YAML or JSON"
        raise InputError(msg) from err
    except OSError as err:
        msg = f"cannot read manifest file {str(path)!r}: {err.strerror or err}; check it"
        raise InputError(msg) from err


def _documents(text: str, source: str) -> list[object]:
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as err:
        where = ""
        mark = getattr(err, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        msg = f"{source}: not valid YAML or JSON{where} ({problem}); fix the manifest"
        raise WorkloadError(msg) from err


def _pods(docs: list[object], source: str) -> list[Pod]:
    try:
        return pods_from_documents(docs)
    except WorkloadError as err:
        msg = f"{source}: {err.message}"
        raise WorkloadError(msg) from err


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
