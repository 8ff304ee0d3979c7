"""Local workloads for the agent: Pod manifests that name a process or a cgroup.

A workload is a Pod manifest (YAML or JSON, one Pod per document) with exactly one container
and one of two annotations saying what to pin:

* ``cpumanager.io/pid: "1234"``: a process (container id ``pid://1234``);
* ``cpumanager.io/cgroup: "machine.slice/job"``: a cgroup directory relative to the cgroup
  root (container id ``cgroup://machine.slice/job``; ``job``, ``./job``, ``job/.`` and
  ``job//`` are all ``cgroup://job``).

The directory is read afresh on every tick (``*.yaml``, ``*.yml``, ``*.json``, name order,
not recursive). A broken file does not stop the agent: it is reported and skipped, so its pod
counts as gone (as if it had been deleted) until the file is fixed. Each file is read and
parsed on its own, within a size cap and the YAML limits of :mod:`._text`, so no file can
end a tick.

The agent usually runs as root and acts on what these files say, so they are checked like
sshd's strict modes: the directory and every manifest must be owned by root or by the
agent's user and must not be writable by group or others; symbolic links are not followed.
A manifest may only target processes or cgroups of its file's owner (``refuse``, given by
the runtime, says so per target). The uid prefix ``cpumanager-run.`` is reserved for
``cpumanager run``: a manifest cannot claim a run's ownership.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cpumanager.adapters._text import (
    decode_utf8,
    load_yaml_documents,
    manifest_files_in,
    read_bounded_bytes,
)
from cpumanager.core.ids import ContainerID
from cpumanager.core.printable import printable
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError, InputError, WorkloadError
from cpumanager.formats.manifest import pod_from_manifest

__all__ = [
    "CGROUP_ANNOTATION",
    "MAX_WORKLOAD_BYTES",
    "PID_ANNOTATION",
    "RESERVED_UID_PREFIX",
    "TargetCheck",
    "Workload",
    "WorkloadScan",
    "normalize_cgroup_path",
    "read_workloads",
    "strict_mode_problem",
]

PID_ANNOTATION = "cpumanager.io/pid"
CGROUP_ANNOTATION = "cpumanager.io/cgroup"
RESERVED_UID_PREFIX = "cpumanager-run."
MAX_WORKLOAD_BYTES = 1024 * 1024  # one Pod; the API server stores at most ~1.5 MiB
_PID_MAX = 2**31 - 1  # the largest pid_t
_PID = re.compile(r"[0-9]{1,10}")
_MAX_CGROUP_PATH = 4096
TargetCheck = Callable[[ContainerID, int], "str | None"]
""""Why the owner (uid) of a manifest may not pin this target", or None when it may."""


@dataclass(frozen=True, slots=True)
class Workload:
    """One pod to pin, the runtime id of its only container, and the file it came from."""

    pod: Pod
    container_id: ContainerID
    source: str
    owner_uid: int = 0  # who owns the manifest file (what it may target)


@dataclass(frozen=True, slots=True)
class WorkloadScan:
    """What one read of the workloads directory found: workloads and per-file errors."""

    workloads: tuple[Workload, ...] = ()
    errors: tuple[str, ...] = field(default_factory=tuple)


def normalize_cgroup_path(text: str) -> str | None:
    """The canonical form of a cgroup path below the root, or None when it is not one.

    Empty and ``.`` components are dropped, so ``job``, ``./job``, ``job/.`` and ``job//``
    name the same cgroup; ``..`` and control characters are refused.
    """
    if len(text) > _MAX_CGROUP_PATH or not text.isprintable():
        return None
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


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
        text = pid.strip() if isinstance(pid, str) else str(pid) if isinstance(pid, int) else ""
        number = int(text) if _PID.fullmatch(text) else 0
        if not 0 < number <= _PID_MAX:
            shown = printable(repr(pid), limit=40)
            msg = f"{source}: {PID_ANNOTATION} {shown} is not a process id; write e.g. '1234'"
            raise WorkloadError(msg)
        return ContainerID(f"pid://{number}")
    relative = normalize_cgroup_path(cgroup) if isinstance(cgroup, str) else None
    if relative is None:
        shown = printable(repr(cgroup), limit=80)
        msg = (
            f"{source}: {CGROUP_ANNOTATION} {shown} is not a cgroup path; write a path "
            "relative to the cgroup root, e.g. 'machine.slice/job'"
        )
        raise WorkloadError(msg)
    return ContainerID(f"cgroup://{relative}")


def strict_mode_problem(info: os.stat_result, *, what: str, agent_uid: int) -> str | None:
    """Why a file or directory with status ``info`` must not be trusted, or None.

    As sshd's StrictModes: owned by root or the agent's user, not writable by group or
    others (another user could otherwise make the agent pin what they choose).
    """
    if info.st_uid not in (0, agent_uid):
        return f"{what} is owned by uid {info.st_uid}, not by root or the agent's user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"{what} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o}); "
            "chmod go-w it"
        )
    return None


def _workloads_of(path: Path, *, agent_uid: int) -> list[Workload]:
    source = printable(str(path))
    data, info = read_bounded_bytes(
        path,
        what="workload file",
        max_bytes=MAX_WORKLOAD_BYTES,
        follow_symlinks=False,
        error=WorkloadError,
    )
    problem = strict_mode_problem(info, what="the file", agent_uid=agent_uid)
    if problem is not None:
        msg = f"{source}: ignored: {problem}"
        raise WorkloadError(msg)
    text = decode_utf8(
        data, what="workload file", source=source, remedy="save it as UTF-8", error=WorkloadError
    )
    docs = load_yaml_documents(text, source=source, error=WorkloadError, remedy="fix the file")
    docs = [doc for doc in docs if doc is not None]
    found = []
    for index, doc in enumerate(docs):
        where = f"{source} (document {index + 1})" if len(docs) > 1 else source
        try:
            pod = pod_from_manifest(doc)
        except WorkloadError as err:
            msg = f"{where}: {err.message}"
            raise WorkloadError(msg) from err
        if pod.uid.startswith(RESERVED_UID_PREFIX):
            msg = (
                f"{where}: metadata.uid {printable(pod.uid)!r} uses the prefix "
                f"{RESERVED_UID_PREFIX!r}, reserved for 'cpumanager run'; choose another uid"
            )
            raise WorkloadError(msg)
        if pod.init_containers or len(pod.containers) != 1:
            msg = (
                f"{where}: pod {pod.display_name} has {len(pod.init_containers)} init and "
                f"{len(pod.containers)} app containers; a workload has exactly one container"
            )
            raise WorkloadError(msg)
        found.append(Workload(pod, _container_id(doc, where), where, info.st_uid))
    return found


def _directory_problem(directory: Path, agent_uid: int) -> str | None:
    try:
        info = os.stat(directory)
    except OSError as err:
        return f"cannot list workloads directory {printable(str(directory))!r}: {err.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"workloads directory {printable(str(directory))!r} is not a directory"
    problem = strict_mode_problem(info, what="the directory", agent_uid=agent_uid)
    if problem is None:
        return None
    return (
        f"workloads directory {printable(str(directory))!r} is not trusted: {problem}; "
        "nothing in it is read"
    )


def read_workloads(
    directory: Path, *, refuse: TargetCheck | None = None, agent_uid: int | None = None
) -> WorkloadScan:
    """Every workload in ``directory``; broken files (and duplicate uids) become errors.

    InputError when the directory itself cannot be listed or is not trusted (strict modes).
    ``refuse`` says whether a file's owner may target what it names.
    """
    uid = os.geteuid() if agent_uid is None else agent_uid
    problem = _directory_problem(directory, uid)
    if problem is not None:
        raise InputError(problem)
    try:
        paths = manifest_files_in(directory)
    except OSError as err:
        msg = (
            f"cannot list workloads directory {printable(str(directory))!r}: {err.strerror or err}"
        )
        raise InputError(msg) from err
    workloads: list[Workload] = []
    errors: list[str] = []
    owners: dict[str, str] = {}
    targets: dict[str, str] = {}
    for path in paths:
        try:
            found = _workloads_of(path, agent_uid=uid)
        except CpuManagerError as err:
            errors.append(err.message)
            continue
        except Exception as err:  # one file must never end a tick
            errors.append(
                f"{printable(str(path))}: could not be read ({type(err).__name__}); fix the file"
            )
            continue
        for workload in found:
            refusal = refuse(workload.container_id, workload.owner_uid) if refuse else None
            if refusal is not None:
                errors.append(f"{workload.source}: {workload.container_id}: {refusal}")
                continue
            pod_uid = workload.pod.uid
            if pod_uid in owners:
                errors.append(
                    f"{workload.source}: pod uid {pod_uid!r} is also used in {owners[pod_uid]}; "
                    "give each workload its own name or metadata.uid"
                )
                continue
            if workload.container_id in targets:
                errors.append(
                    f"{workload.source}: {workload.container_id} is also claimed by "
                    f"{targets[workload.container_id]}; pin each process or cgroup once"
                )
                continue
            owners[pod_uid] = workload.source
            targets[workload.container_id] = workload.source
            workloads.append(workload)
    return WorkloadScan(tuple(workloads), tuple(errors))
