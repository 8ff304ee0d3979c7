"""The node agent's publisher: snapshot the node when it changes, push only changes.

Every ``poll`` seconds the publisher stats the files the snapshot reads (checkpoints,
configuration, the pod list, the kubelet's pods directory); when one changed, or ``every``
seconds passed (the floor), it takes a snapshot. A snapshot whose content digest (the JSON
without ``collectedAt``) equals the last pushed one is not sent again: a heartbeat with the
digest keeps the extender's copy fresh instead, and a 409 answer (the extender restarted)
sends the whole snapshot. Failed sends are retried at the next round, never fatal.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cpumanager.errors import CpuManagerError, HostError, InputError
from cpumanager.nodeview.digest import snapshot_digest
from cpumanager.nodeview.snapshot import NodeSnapshot, snapshot_to_dict, snapshot_to_json

__all__ = [
    "EveryEndpoint",
    "HttpSender",
    "NodePods",
    "Publisher",
    "file_marks",
    "watched_paths",
]

Mark = tuple[int, int, int] | None


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


def write_atomically(dest: Path, body: bytes) -> None:
    partial = dest.with_name(dest.name + ".tmp")
    partial.write_bytes(body)
    os.replace(partial, dest)


class NodePods:
    """The node's pods from the API server: one list, then a watch on ``spec.nodeName``
    (``adapters.kube_api``), kept in ``dest`` as a PodList (rewritten atomically on every
    change, so the publisher's file marks see it). Runs in a daemon thread; on a failed
    or ended watch it lists again after ``backoff`` seconds. No ``nodes/proxy``: RBAC
    ``list`` and ``watch`` on pods."""

    def __init__(self, api: Any, node: str, dest: Path, *, backoff: float = 5.0) -> None:
        self._api = api
        self._node = node
        self._dest = dest
        self._backoff = backoff
        self._pods: dict[str, dict[str, Any]] = {}
        self.error = ""
        self.listed = threading.Event()

    def _write(self) -> None:
        items = [self._pods[key] for key in sorted(self._pods)]
        write_atomically(self._dest, json.dumps({"kind": "PodList", "items": items}).encode())

    @staticmethod
    def _key(pod: dict[str, Any]) -> str:
        meta = pod.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    def once(self, *, watch_seconds: int = 300) -> None:
        """One list and one watch until it ends (KubeApiError when the server fails)."""
        items, version = self._api.node_pods(self._node, active_only=False)
        self._pods = {self._key(p): p for p in items}
        self._write()
        self.listed.set()
        for kind, pod in self._api.watch_node_pods(self._node, version, seconds=watch_seconds):
            if kind == "BOOKMARK":
                continue
            if kind == "DELETED":
                self._pods.pop(self._key(pod), None)
            else:
                self._pods[self._key(pod)] = pod
            self._write()

    def run_forever(self) -> None:
        while True:
            try:
                self.once()
                self.error = ""
            except CpuManagerError as exc:
                self.error = str(exc)
            time.sleep(self._backoff)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run_forever, name="node-pods", daemon=True)
        thread.start()
        return thread

    def ready(self) -> None:
        """For the publisher's ``before``: HostError until the first list arrived."""
        if not self.listed.is_set():
            msg = f"no pod list of node {self._node} yet ({self.error or 'listing'})"
            raise HostError(msg)


class _NamedTLS(http.client.HTTPSConnection):
    """HTTPS to one address, the certificate checked against ``name`` (one endpoint of a
    headless Service, whose certificate names the Service)."""

    def __init__(self, address: str, port: int, name: str, context: ssl.SSLContext, timeout: float):
        super().__init__(address, port, timeout=timeout, context=context)
        self._name = name
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self._name)


@dataclass
class EveryEndpoint:
    """POSTs to every address the URL's host name resolves to (every replica behind a
    headless Service), each checked against the host name. The answer: 200 when every
    replica took it, 409 when one asks for the whole snapshot, else the first failure."""

    base: str
    token: Callable[[], bytes | None]
    timeout: float = 10.0
    ca_file: Path | None = None
    resolve: Callable[[str, int], list[str]] | None = None

    def __post_init__(self) -> None:
        parsed = urllib.parse.urlsplit(self.base)
        if parsed.scheme != "https" or not parsed.hostname:
            msg = f"--to {self.base!r}: pushing to every endpoint needs an https URL"
            raise InputError(msg)
        self.name = parsed.hostname
        self.port = parsed.port or 443
        self.prefix = parsed.path.rstrip("/")
        self.context = ssl.create_default_context(
            cafile=str(self.ca_file) if self.ca_file else None
        )
        self.last_error = ""  # why the last post reached no replica, or not all of them

    def addresses(self) -> list[str]:
        if self.resolve is not None:
            return self.resolve(self.name, self.port)
        try:
            found = socket.getaddrinfo(self.name, self.port, type=socket.SOCK_STREAM)
        except OSError:
            return []
        return sorted({str(info[4][0]) for info in found})

    def _one(self, address: str, path: str, body: bytes) -> int:
        connection = _NamedTLS(address, self.port, self.name, self.context, self.timeout)
        headers = {"Content-Type": "application/json", "Host": self.name}
        token = self.token()
        if token is not None:
            headers["Authorization"] = "Bearer " + token.decode("latin-1")
        try:
            connection.request("POST", self.prefix + path, body=body, headers=headers)
            return int(connection.getresponse().status)
        except (OSError, http.client.HTTPException) as err:
            self.last_error = f"{address}: {err or type(err).__name__}"
            return 0
        finally:
            connection.close()

    def post(self, path: str, body: bytes) -> int:
        self.last_error = ""
        statuses = [self._one(address, path, body) for address in self.addresses()]
        if not statuses:
            self.last_error = f"{self.name} resolves to no address"
            return 0
        if 409 in statuses:
            return 409
        failed = [s for s in statuses if s != 200]
        return failed[0] if failed else 200


def token_reader(path: Path | None) -> Callable[[], bytes | None]:
    """The token file read at each use (the kubelet rotates a projected token)."""

    def read() -> bytes | None:
        if path is None:
            return None
        try:
            token = path.read_bytes()[:16384].strip()
        except OSError:
            return None
        return token or None

    return read


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is the answer, never followed: urllib would resend the Authorization header
    (the node's token) to whatever host the Location names."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener(context: ssl.SSLContext | None) -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_NoRedirects(), urllib.request.HTTPSHandler(context=context))


@dataclass
class HttpSender:
    """POSTs to the extender with the bearer token; returns the HTTP status (0: no answer)."""

    base: str
    token: bytes | None
    timeout: float = 10.0
    ca_file: Path | None = None
    context: ssl.SSLContext | None = field(default=None, init=False)
    token_file: Path | None = None  # read at each post instead of ``token`` when given
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
        token = token_reader(self.token_file)() if self.token_file else self.token
        if token is not None:
            request.add_header("Authorization", "Bearer " + token.decode("latin-1"))
        try:
            with _opener(self.context).open(request, timeout=self.timeout) as response:
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
