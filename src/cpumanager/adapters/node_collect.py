"""Collect a node snapshot from a real node (or a copy of one), and read snapshot files.

Sources, each recorded in ``sources`` with a status and a one-line reason:

* ``machine``: ``<root>/sys/devices/system/{cpu,node}`` (as ``topology --sysfs``);
* ``config``: the effective configuration as the kubelet assembles it
  (``load_effective_config``): ``--configz`` (a running kubelet's ``/configz``), else
  ``--kubelet-config`` / ``--config-dir`` / the kubelet's command line / ``--flags``, else
  ``<kubelet-root>/config.yaml`` and ``kubeadm-flags.env`` (where kubeadm puts them);
* the three checkpoints under ``<kubelet-root>``: ``cpu_manager_state``,
  ``memory_manager_state``, ``device-plugins/kubelet_internal_checkpoint``;
* ``podResources``: the socket ``<kubelet-root>/pod-resources/kubelet.sock``;
* ``pods``: ``--pods FILE`` (``kubectl get pods -A --field-selector spec.nodeName=N -o json``
  or the kubelet's ``/pods``).

What the node holds is recorded whatever its state: a missing, unreadable or corrupt file is
a fact about the node, not a reason to stop. Files named on the command line are the user's
choice and must be usable: a missing or malformed one is a one-line error and nothing is
written. Files under the kubelet root are read only when they are regular files (symbolic
links are not followed) and at most :data:`MAX_NODE_FILE_BYTES` long.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cpumanager._version import __version__
from cpumanager.adapters.filestore import write_atomic
from cpumanager.adapters.kubelet_config_file import load_effective_config
from cpumanager.adapters.podresources.client import (
    DEFAULT_TIMEOUT_SECONDS,
    SOCKET_RELATIVE_PATH,
    collect_answers,
)
from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.errors import (
    InputError,
    KubeletConfigInvalidError,
    MachineError,
    PodResourcesError,
    SnapshotError,
)
from cpumanager.formats.kubelet_config import EffectiveConfig, KubeletConfig
from cpumanager.formats.kubelet_config.launch import split_command_line
from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.nodeview.checkpoints import checkpoint_view
from cpumanager.nodeview.node_info import (
    checked_version,
    kubelet_version_of,
    version_among,
    version_in_pod_list,
)
from cpumanager.nodeview.podresources import PodResourcesAnswers
from cpumanager.nodeview.pods import NodePod, reduce_pod_list
from cpumanager.nodeview.snapshot import (
    MAX_SNAPSHOT_BYTES,
    CheckpointFile,
    ConfigView,
    NodeSnapshot,
    Source,
    snapshot_from_json,
    snapshot_to_json,
)

__all__ = [
    "CHECKPOINT_PATHS",
    "MAX_NODE_FILE_BYTES",
    "CollectOptions",
    "collect_snapshot",
    "load_snapshot",
    "write_snapshot",
]

MAX_NODE_FILE_BYTES = 64 * 1024 * 1024
CHECKPOINT_PATHS = {
    "cpu_manager_state": Path("cpu_manager_state"),
    "memory_manager_state": Path("memory_manager_state"),
    "kubelet_internal_checkpoint": Path("device-plugins/kubelet_internal_checkpoint"),
}
_CONFIG_NAME = Path("config.yaml")
_KUBEADM_FLAGS = Path("kubeadm-flags.env")
_MAX_REASON = 300


@dataclass(frozen=True, slots=True)
class CollectOptions:
    """Where to look; every path may point into a copy of a node (tests, post-mortems)."""

    root: Path = Path("/")
    kubelet_root: Path = Path("/var/lib/kubelet")
    pods: Path | None = None
    kubelet_config: Path | None = None
    configz: Path | None = None
    config_dir: Path | None = None
    kubelet_cmdline: Path | None = None
    flags: str = ""
    env_files: tuple[Path, ...] = ()
    node_name: str | None = None
    socket: Path | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    kubelet_version: str | None = None
    node_object: Path | None = None
    topology_view: str = "kubelet"  # how sysfs is read: the kubelet's view or the kernel's


def _clip(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_REASON else line[:_MAX_REASON] + "..."


_MISSING, _UNREADABLE, _INVALID = "missing", "unreadable", "invalid"


class _UnusableError(Exception):
    """A node file could not be read; ``status`` is missing, unreadable or invalid."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _read_node_file(path: Path, *, follow: bool = False) -> bytes:
    """A regular file's bytes, at most MAX_NODE_FILE_BYTES; _UnusableError otherwise.

    Opened without following a final symbolic link (unless ``follow``) and without blocking
    (a fifo put in place of a checkpoint cannot hang the snapshot); the type is checked on the
    open descriptor, so a file swapped after a look cannot slip through.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as err:
        raise _UnusableError(_MISSING, "no such file") from err
    except OSError as err:
        if err.errno == errno.ELOOP and not follow:
            raise _UnusableError(_UNREADABLE, "a symbolic link (not followed)") from err
        raise _UnusableError(_UNREADABLE, err.strerror or str(err)) from err
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _UnusableError(_UNREADABLE, "not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_NODE_FILE_BYTES:
            size = f"{info.st_size} bytes, more than {MAX_NODE_FILE_BYTES}"
            raise _UnusableError(_INVALID, size)
        try:
            data = handle.read(MAX_NODE_FILE_BYTES + 1)
        except OSError as err:
            raise _UnusableError(_UNREADABLE, err.strerror or str(err)) from err
    if len(data) > MAX_NODE_FILE_BYTES:
        raise _UnusableError(_INVALID, f"more than {MAX_NODE_FILE_BYTES} bytes")
    return data


def _read_given_file(path: Path, what: str) -> bytes:
    """A file named on the command line (a link to it is the user's choice and is
    followed): any problem is a one-line InputError."""
    try:
        return _read_node_file(path, follow=True)
    except _UnusableError as err:
        msg = f"{what} {str(path)!r}: {err.reason}; give a readable regular file"
        raise InputError(msg) from err


# --- machine ---------------------------------------------------------------------------


def _machine(root: Path, view: str) -> tuple[dict[str, object] | None, Source]:
    where = str(root / "sys/devices/system")
    if not (root / "sys/devices/system/cpu").is_dir():
        return None, Source("machine", "missing", where, "no sys/devices/system/cpu under --root")
    try:
        topology = SysfsReader(root, view=view).read()
    except MachineError as err:
        return None, Source("machine", "invalid", where, _clip(err.message))
    warnings = "; ".join(topology.warnings)
    return topology_to_dict(topology), Source("machine", "ok", where, _clip(warnings))


_HUGEPAGE_DIR = re.compile(r"hugepages-(\d{1,10})kB")
_NODE_DIR = re.compile(r"node(\d{1,7})")
_MAX_POOLS = 64


def _size_name(kib: int) -> str:
    """The kubelet's resource name for a page size: ``hugepages-2Mi``, ``hugepages-1Gi``."""
    for unit, factor in (("Ti", 1 << 30), ("Gi", 1 << 20), ("Mi", 1 << 10)):
        if kib % factor == 0:
            return f"hugepages-{kib // factor}{unit}"
    return f"hugepages-{kib}Ki"


def _hugepages(root: Path) -> dict[int, dict[str, int]]:
    """Each NUMA node's hugepage pools in bytes (``nr_hugepages`` x page size); nodes or
    pools that cannot be read are left out (the machine source already names a bad tree)."""
    nodes_dir = root / "sys/devices/system/node"
    result: dict[int, dict[str, int]] = {}
    try:
        nodes = sorted(nodes_dir.iterdir())[:4096]
    except OSError:
        return result
    for node_dir in nodes:
        node = _NODE_DIR.fullmatch(node_dir.name)
        if node is None or node_dir.is_symlink():
            continue
        try:
            pools = sorted((node_dir / "hugepages").iterdir())[:_MAX_POOLS]
        except OSError:
            continue
        for pool in pools:
            size = _HUGEPAGE_DIR.fullmatch(pool.name)
            if size is None:
                continue
            try:
                count = int(_read_node_file(pool / "nr_hugepages")[:32].strip() or b"0")
            except (_UnusableError, ValueError):
                continue
            if count > 0:
                kib = int(size.group(1))
                result.setdefault(int(node.group(1)), {})[_size_name(kib)] = count * kib * 1024
    return result


# --- configuration ---------------------------------------------------------------------


def _config_view(effective: EffectiveConfig | None, status: str, problem: str) -> ConfigView:
    """The snapshot's view; without an effective configuration, the kubelet's defaults."""
    if effective is None:
        values = KubeletConfig().to_v1beta1(omit_empty=False)
        fields = {name: {"value": values[name], "from": "default"} for name in sorted(values)}
        return ConfigView(fields, status, _clip(problem))
    return ConfigView(
        effective.fields(),
        status,
        _clip(problem),
        root_dir=effective.root_dir,
        sources=tuple(effective.sources),
    )


def _configuration(options: CollectOptions) -> tuple[ConfigView, Source]:
    """The effective configuration (``load_effective_config``), recorded with its sources.

    Named sources (``--configz``, ``--kubelet-config``, ``--config-dir``, the command line,
    ``--flags``) must be readable; without any, ``<kubelet-root>/config.yaml`` and kubeadm's
    ``<kubelet-root>/kubeadm-flags.env`` are used when present (one that is not a regular
    file, or a link to one, makes the configuration ``invalid``). A configuration
    the kubelet would refuse is a fact about the node: recorded as ``invalid`` with the
    kubelet's messages, never fatal.
    """
    config, env_files = options.kubelet_config, list(options.env_files)
    given = any(
        (config, options.config_dir, options.configz, options.kubelet_cmdline, options.flags)
    )
    where = str(options.configz or config or options.config_dir or options.kubelet_cmdline or "")
    if not given:
        implicit = options.kubelet_root / _CONFIG_NAME
        flags_env = options.kubelet_root / _KUBEADM_FLAGS
        # Anything present is read (a link to a file is followed, as the kubelet does); a
        # FIFO, device or dangling link is then refused and recorded as invalid, never as
        # missing: the kubelet's defaults are assumed only when there is nothing at all.
        config = implicit if os.path.lexists(implicit) else None
        env_files += [flags_env] if os.path.lexists(flags_env) else []
        where = str(implicit)
        if config is None and not env_files:
            reason = "no such file; the kubelet's defaults are assumed (give --kubelet-config)"
            return _config_view(None, "missing", ""), Source("config", "missing", where, reason)
    try:
        flags = split_command_line(options.flags, source="--flags") if options.flags else []
        effective = load_effective_config(
            config=config,
            config_dir=options.config_dir,
            flags=flags,
            kubelet_cmdline=options.kubelet_cmdline,
            env_files=env_files,
            configz=options.configz,
            root=options.root,
        )
    except KubeletConfigInvalidError as err:
        view = _config_view(None, "invalid", err.message)
        return view, Source("config", "invalid", where, _clip(err.message))
    except InputError as err:
        if given:
            raise
        view = _config_view(None, "invalid", err.message)
        return view, Source("config", "invalid", where, _clip(err.message))
    reason = "from " + ", ".join(effective.sources) if effective.sources else ""
    return _config_view(effective, "ok", ""), Source("config", "ok", where, _clip(reason))


# --- checkpoints, PodResources, pods ---------------------------------------------------


def _checkpoints(kubelet_root: Path) -> tuple[dict[str, CheckpointFile], list[Source]]:
    found: dict[str, CheckpointFile] = {}
    sources = []
    for kind, relative in CHECKPOINT_PATHS.items():
        path = kubelet_root / relative
        try:
            data = _read_node_file(path)
        except _UnusableError as err:
            sources.append(Source(kind, err.status, str(path), _clip(err.reason)))
            continue
        decoded, problem = checkpoint_view(kind, data)
        found[kind] = CheckpointFile(kind, str(path), data, decoded, problem)
        if problem:
            sources.append(Source(kind, "invalid", str(path), _clip(problem)))
        elif decoded is None:
            sources.append(Source(kind, "ok", str(path), "kept as raw bytes (not decoded)"))
        else:
            sources.append(Source(kind, "ok", str(path)))
    return found, sources


def _pod_resources(options: CollectOptions) -> tuple[PodResourcesAnswers | None, Source]:
    path = options.socket or options.kubelet_root / SOCKET_RELATIVE_PATH
    try:
        answers = collect_answers(path, timeout_seconds=options.timeout_seconds)
    except PodResourcesError as err:
        status = "missing" if err.status == "missing" else "unreadable"
        return None, Source("podResources", status, str(path), _clip(err.message))
    failed = [
        f"{name}: {call.reason}" for name, call in answers.calls.items() if call.status != "ok"
    ]
    status = "partial" if failed else "ok"
    return answers, Source("podResources", status, str(path), _clip("; ".join(failed)))


def _pods(
    options: CollectOptions,
) -> tuple[str | None, tuple[NodePod, ...] | None, Source, str | None]:
    if options.pods is None:
        reason = (
            "no --pods FILE given ('kubectl get pods -A --field-selector spec.nodeName=NODE "
            "-o json' or the kubelet's /pods)"
        )
        return options.node_name, None, Source("pods", "not-given", "", reason), None
    data = _read_given_file(options.pods, "--pods file")
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        msg = f"--pods file {str(options.pods)!r} is not JSON; save 'kubectl get pods ... -o json'"
        raise InputError(msg) from err
    except RecursionError as err:
        msg = f"--pods file {str(options.pods)!r} is nested too deeply"
        raise InputError(msg) from err
    doc, nodes = version_in_pod_list(doc)
    node_name, pods = reduce_pod_list(doc, node_name=options.node_name)
    version = version_among(nodes, node_name, f"--pods file {str(options.pods)!r}")
    source = Source("pods", "ok", str(options.pods), f"{len(pods)} pods")
    return node_name, pods, source, version


def _kubelet_version(options: CollectOptions, node_name: str, from_pods: str | None) -> str | None:
    """``--kubelet-version``, else the ``--node-object`` file's, else the pod list's."""
    if options.kubelet_version is not None:
        return checked_version(options.kubelet_version, "--kubelet-version")
    if options.node_object is not None:
        where = f"--node-object file {str(options.node_object)!r}"
        data = _read_given_file(options.node_object, "--node-object file")
        try:
            doc = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            msg = f"{where} is not JSON; save 'kubectl get node NAME -o json'"
            raise InputError(msg) from err
        return kubelet_version_of(doc, node_name=node_name or None, where=where)
    return from_pods


def _hostname(root: Path) -> str:
    try:
        text = _read_node_file(root / "etc/hostname").decode("utf-8", "replace")
    except _UnusableError:
        return ""
    return text.strip().lower()[:253]


def collect_snapshot(
    options: CollectOptions, *, now: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> NodeSnapshot:
    """Read every source; InputError only for files named in ``options`` that are unusable."""
    node_name, pods, pods_source, pods_version = _pods(options)
    config, config_source = _configuration(options)
    machine, machine_source = _machine(options.root, options.topology_view)
    checkpoints, checkpoint_sources = _checkpoints(options.kubelet_root)
    answers, answers_source = _pod_resources(options)
    node_name = node_name or _hostname(options.root)
    return NodeSnapshot(
        node_name=node_name,
        collected_at=now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        tool=f"cpumanager {__version__}",
        root=str(options.root),
        kubelet_root=str(options.kubelet_root),
        machine=machine,
        hugepages=_hugepages(options.root) if machine is not None else {},
        config=config,
        checkpoints=checkpoints,
        pod_resources=answers,
        pods=pods,
        sources=(machine_source, config_source, *checkpoint_sources, answers_source, pods_source),
        kubelet_version=_kubelet_version(options, node_name, pods_version),
    )


def write_snapshot(snapshot: NodeSnapshot, path: Path) -> None:
    """Write the snapshot file atomically (0644: it holds no secrets)."""
    write_atomic(path, snapshot_to_json(snapshot), mode=0o644)


def load_snapshot(path: Path) -> NodeSnapshot:
    """Read a snapshot file: a regular file of at most MAX_SNAPSHOT_BYTES, schema checked."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as err:
        msg = f"snapshot {str(path)!r} does not exist; take one with 'cpumanager node snapshot'"
        raise SnapshotError(msg) from err
    except OSError as err:
        msg = f"cannot read snapshot {str(path)!r}: {err.strerror or err}"
        raise SnapshotError(msg) from err
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        msg = f"snapshot {str(path)!r} is not a regular file; give a snapshot file"
        raise SnapshotError(msg)
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(MAX_SNAPSHOT_BYTES + 1)
        except OSError as err:
            msg = f"cannot read snapshot {str(path)!r}: {err.strerror or err}"
            raise SnapshotError(msg) from err
    return snapshot_from_json(data, source=str(path))
