"""Local workloads for the agent: Pod manifests that name a process or a cgroup.

A workload is a Pod manifest (YAML or JSON, one Pod per document) with exactly one container
and one of two annotations saying what to pin:

* ``cpumanager.io/pid: "1234"``: a process (container id ``pid://1234``);
* ``cpumanager.io/cgroup: "machine.slice/job"``: a cgroup v2 directory relative to the cgroup
  root (container id ``cgroup://machine.slice/job``).

The directory is read afresh on every tick (``*.yaml``, ``*.yml``, ``*.json``, name order,
not recursive). A broken file does not stop the agent: it is reported and skipped, so its pod
counts as gone (as if it had been deleted) until the file is fixed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from cpumanager.adapters._text import YAML_LOADER, manifest_files_in
from cpumanager.core.ids import ContainerID
from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, WorkloadError
from cpumanager.formats.manifest import pod_from_manifest

__all__ = ["CGROUP_ANNOTATION", "PID_ANNOTATION", "Workload", "WorkloadScan", "read_workloads"]

PID_ANNOTATION = "cpumanager.io/pid"
CGROUP_ANNOTATION = "cpumanager.io/cgroup"


@dataclass(frozen=True, slots=True)
class Workload:
    """One pod to pin, the runtime id of its only container, and the file it came from."""

    pod: Pod
    container_id: ContainerID
    source: str


@dataclass(frozen=True, slots=True)
class WorkloadScan:
    """What one read of the workloads directory found: workloads and per-file errors."""

    workloads: tuple[Workload, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)


def _container_id(doc: object, source: str) -> ContainerID:
    meta = doc.get("metadata") if isinstance(doc, Mapping) else None
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if not isinstance(annotations, Mapping):
        annotations = {}
    pid = annotations.get(PID_ANNOTATION)
    cgroup = annotations.get(CGROUP_ANNOTATION)
    if (pid is None) == (cgroup is None):
        msg = (
            f"{source}: a workload needs exactly one of the annotations {PID_ANNOTATION!r} "
            f"or {CGROUP_ANNOTATION!r}; say which process or cgroup to pin"
        )
        raise WorkloadError(msg)
    if pid is not None:
        text = str(pid).strip()
        if not text.isdigit() or int(text) <= 0:
            msg = f"{source}: {PID_ANNOTATION} {pid!r} is not a process id; write e.g. '1234'"
            raise WorkloadError(msg)
        return ContainerID(f"pid://{int(text)}")
    text = str(cgroup).strip().strip("/")
    if not text or ".." in text.split("/"):
        msg = (
            f"{source}: {CGROUP_ANNOTATION} {cgroup!r} is not a cgroup path; write a path "
            "relative to the cgroup root, e.g. 'machine.slice/job'"
        )
        raise WorkloadError(msg)
    return ContainerID(f"cgroup://{text}")


def _workloads_of(path: Path) -> list[Workload]:
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        docs = [doc for doc in yaml.load_all(text, Loader=YAML_LOADER) if doc is not None]
    except (OSError, UnicodeDecodeError) as err:
        msg = f"cannot read workload file {source!r}: {err}; check it"
        raise WorkloadError(msg) from err
    except yaml.YAMLError as err:
        msg = f"{source}: not valid YAML or JSON ({str(err).splitlines()[0]}); fix the file"
        raise WorkloadError(msg) from err
    found = []
    for index, doc in enumerate(docs):
        where = f"{source} (document {index + 1})" if len(docs) > 1 else source
        try:
            pod = pod_from_manifest(doc)
        except WorkloadError as err:
            msg = f"{where}: {err.message}"
            raise WorkloadError(msg) from err
        if pod.init_containers or len(pod.containers) != 1:
            msg = (
                f"{where}: pod {pod.display_name} has {len(pod.init_containers)} init and "
                f"{len(pod.containers)} app containers; a workload has exactly one container"
            )
            raise WorkloadError(msg)
        found.append(Workload(pod, _container_id(doc, where), where))
    return found


def read_workloads(directory: Path) -> WorkloadScan:
    """Every workload in ``directory``; broken files (and duplicate uids) become errors."""
    try:
        paths = manifest_files_in(directory)
    except OSError as err:
        msg = f"cannot list workloads directory {str(directory)!r}: {err.strerror or err}"
        raise InputError(msg) from err
    workloads: list[Workload] = []
    errors: list[str] = []
    owners: dict[str, str] = {}
    targets: dict[str, str] = {}
    for path in paths:
        try:
            found = _workloads_of(path)
        except WorkloadError as err:
            errors.append(err.message)
            continue
        for workload in found:
            uid = workload.pod.uid
            if uid in owners:
                errors.append(
                    f"{workload.source}: pod uid {uid!r} is also used in {owners[uid]}; "
                    "give each workload its own name or metadata.uid"
                )
                continue
            if workload.container_id in targets:
                errors.append(
                    f"{workload.source}: {workload.container_id} is also claimed by "
                    f"{targets[workload.container_id]}; pin each process or cgroup once"
                )
                continue
            owners[uid] = workload.source
            targets[workload.container_id] = workload.source
            workloads.append(workload)
    return WorkloadScan(tuple(workloads), tuple(errors))
