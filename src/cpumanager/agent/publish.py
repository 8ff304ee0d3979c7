"""The node agent's publisher: snapshot the node when it changes, push only changes.

Every ``poll`` seconds the publisher stats the files the snapshot reads (checkpoints,
configuration, the pod list, the kubelet's pods directory); when one changed, or ``every``
seconds passed (the floor), it takes a snapshot. A snapshot whose content digest (the JSON
without ``collectedAt``) equals the last pushed one is not sent again: a heartbeat with the
digest keeps the extender's copy fresh instead, and a 409 answer (the extender restarted)
sends the whole snapshot. Failed sends are retried at the next round, never fatal.
"""

from __future__ import annotations

import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cpumanager.errors import CpuManagerError, HostError, InputError
from cpumanager.nodeview.digest import snapshot_digest
from cpumanager.nodeview.snapshot import NodeSnapshot, snapshot_to_dict, snapshot_to_json

__all__ = ["HttpSender", "Publisher", "file_marks", "fetch_node_pods", "watched_paths"]

Mark = tuple[int, int, int] | None
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
MAX_PODS_BYTES = 64 * 1024 * 1024


def fetch_node_pods(
    node_name: str,
    dest: Path,
    *,
    api: str = "https://kubernetes.default.svc",
    account: Path = SERVICE_ACCOUNT,
    timeout: float = 10.0,
) -> None:
    """Write the kubelet's ``/pods`` answer (through the API server's ``nodes/proxy``, RBAC
    ``get nodes/proxy``) to ``dest`` atomically, bounded in size; HostError on failure."""
    try:
        token = (account / "token").read_text().strip()
        context = ssl.create_default_context(cafile=str(account / "ca.crt"))
    except (OSError, ssl.SSLError) as exc:
        msg = f"cannot read the service account in {account}: {exc}; mount its token"
        raise HostError(msg) from None
    quoted = urllib.parse.quote(node_name, safe="")
    request = urllib.request.Request(f"{api}/api/v1/nodes/{quoted}/proxy/pods")  # noqa: S310
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:  # noqa: S310
            body = answer.read(MAX_PODS_BYTES + 1)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        msg = f"cannot get the pods of node {node_name} from {api}: {exc}"
        raise HostError(msg) from None
    if len(body) > MAX_PODS_BYTES:
        msg = f"the pod list of node {node_name} is over {MAX_PODS_BYTES} bytes"
        raise HostError(msg)
    partial = dest.with_name(dest.name + ".tmp")
    partial.write_bytes(body)
    os.replace(partial, dest)


def watched_paths(kubelet_root: Path, extra: Iterable[Path | None] = ()) -> list[Path]:
    """The files whose change means a new snapshot (missing ones are watched for appearing)."""
    paths = [
        kubelet_root / "cpu_manager_state",
        kubelet_root / "memory_manager_state",
        kubelet_root / "device-plugins" / "kubelet_internal_checkpoint",
        kubelet_root / "config.yaml",
        kubelet_root / "pods",
    ]
    paths.extend(p for p in extra if p is not None)
    return paths


def file_marks(paths: Iterable[Path]) -> dict[Path, Mark]:
    """(mtime ns, size, inode) of each path without following links; None when absent."""
    marks: dict[Path, Mark] = {}
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            marks[path] = None
            continue
        marks[path] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return marks


@dataclass
class HttpSender:
    """POSTs to the extender with the bearer token; returns the HTTP status (0: no answer)."""

    base: str
    token: bytes | None
    timeout: float = 10.0
    ca_file: Path | None = None
    context: ssl.SSLContext | None = field(default=None, init=False)
    last_error: str = field(default="", init=False)  # why the last post got no answer

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlsplit(self.base)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            msg = f"--to {self.base!r} is not an http(s) URL; write e.g. http://extender:8888"
            raise InputError(msg)
        if parsed.scheme == "https":
            self.context = ssl.create_default_context(
                cafile=str(self.ca_file) if self.ca_file else None
            )
        self.base = self.base.rstrip("/")

    def post(self, path: str, body: bytes) -> int:
        self.last_error = ""
        request = urllib.request.Request(self.base + path, data=body, method="POST")  # noqa: S310 - http(s) only, checked in __post_init__
        request.add_header("Content-Type", "application/json")
        if self.token is not None:
            request.add_header("Authorization", "Bearer " + self.token.decode("latin-1"))
        try:
            with urllib.request.urlopen(  # noqa: S310 - http(s) only, checked in __post_init__
                request, timeout=self.timeout, context=self.context
            ) as response:
                return int(response.status)
        except urllib.error.HTTPError as err:
            self.last_error = f"HTTP {err.code} {err.reason}"
            return int(err.code)
        except urllib.error.URLError as err:
            self.last_error = str(err.reason)
            return 0
        except (OSError, TimeoutError) as err:
            self.last_error = str(err) or type(err).__name__
            return 0


@dataclass
class Publisher:
    """One node's publisher; :meth:`step` is one round, :meth:`run` loops."""

    collect: Callable[[], NodeSnapshot]
    post: Callable[[str, bytes], int]
    paths: list[Path]
    every: float = 10.0
    poll: float = 1.0
    clock: Callable[[], float] = time.monotonic
    last_digest: str = ""
    last_round: float | None = None
    marks: dict[Path, Mark] = field(default_factory=dict)
    before: Callable[[], None] | None = None  # e.g. fetch the pod list
    # Called with each snapshot whose content changed (e.g. write the NodeResourceTopology);
    # its failure is reported in the round's outcome and retried next round, never fatal.
    on_change: Callable[[NodeSnapshot], None] | None = None
    last_change_digest: str = ""

    def due(self) -> bool:
        """A snapshot is due: first round, a watched file changed, or the floor passed."""
        marks = file_marks(self.paths)
        changed = marks != self.marks
        self.marks = marks
        now = self.clock()
        return self.last_round is None or changed or now - self.last_round >= self.every

    def step(self) -> str:
        """Snapshot and send; says what was done (pushed, heartbeat, failed: <status>)."""
        self.last_round = self.clock()
        if self.before is not None:
            try:
                self.before()
            except HostError as exc:
                return f"failed: {exc}"
        snapshot = self.collect()
        digest = snapshot_digest(snapshot_to_dict(snapshot))
        name = urllib.parse.quote(snapshot.node_name, safe="")
        if not snapshot.node_name:
            msg = "the snapshot has no node name; give --node-name"
            raise HostError(msg)
        outcome = self._push(snapshot, digest, name)
        if self.on_change is not None and digest != self.last_change_digest:
            try:
                self.on_change(snapshot)
            except CpuManagerError as exc:
                return f"{outcome}; nrt failed: {exc}"
            self.last_change_digest = digest
            outcome += "; nrt written"
        return outcome

    def _push(self, snapshot: NodeSnapshot, digest: str, name: str) -> str:
        if digest == self.last_digest:
            body = json.dumps({"digest": digest}).encode()
            status = self.post(f"/v1/nodes/{name}/heartbeat", body)
            if status == 200:
                return "heartbeat"
            if status != 409:
                return f"failed: heartbeat answered {status or 'nothing'}"
        status = self.post(f"/v1/nodes/{name}/snapshot", snapshot_to_json(snapshot))
        if status != 200:
            self.last_digest = ""
            return f"failed: push answered {status or 'nothing'}"
        self.last_digest = digest
        return "pushed"

    def run(
        self,
        report: Callable[[str], None],
        *,
        rounds: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Loop: a round whenever :meth:`due`; ``rounds`` stops after that many rounds."""
        done = 0
        while rounds is None or done < rounds:
            if self.due():
                report(self.step())
                done += 1
                continue
            sleep(self.poll)
