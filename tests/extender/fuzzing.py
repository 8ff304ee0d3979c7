"""Fuzzers for node snapshots and for the extender's requests (issue 21).

**Snapshots.** Real snapshots (the fixture nodes of tests/data/nodes as ``node snapshot``
collects them, and busy generated nodes) are mutated by structure: a value anywhere in the
tree replaced by a hostile one (huge or odd quantities, wrong types, deep nesting, long or
odd strings), a key dropped, a list item duplicated, a subtree moved from elsewhere; now
and then the JSON bytes themselves are cut or flipped. Each case is decoded, restored and
judged for a few pods, as a push or a fleet run would; it must end in an answer or a
CpuManagerError with a one-line message.

**Requests.** The extender's application is called in-process (no sockets) with filter and
prioritize bodies (ExtenderArgs with mutated pods and node names), pushes (mutated snapshot
documents, odd node names), heartbeats and odd headers. Every answer must be below 500 with
a one-line text body for errors. ``run_snapshots`` and ``run_requests`` return a tally;
findings are (input, reason) pairs.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from cpumanager.errors import CpuManagerError
from cpumanager.extender.fanout import FanoutSettings
from cpumanager.extender.judge import judge
from cpumanager.extender.prepared import PreparedNode, try_prepare
from cpumanager.extender.server import ExtenderConfig, create_app
from cpumanager.extender.store import NodeStore
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeview.digest import snapshot_digest
from cpumanager.nodeview.snapshot import snapshot_from_json, snapshot_to_dict

__all__ = ["Tally", "case_alarms", "judge_case", "run_requests", "run_snapshots", "seed_documents"]

HOSTILE: list[Callable[[random.Random], object]] = [
    lambda r: None,
    lambda r: r.choice([True, False]),
    lambda r: r.choice([0, -1, 1, 2**31, 2**63, 2**64 + 1, -(2**70), 10**400]),
    lambda r: r.choice([1.5, -0.0, 1e308, 5e-324]),
    lambda r: r.choice(["1e9999", "1e999", "9" * 1_200, "0." + "0" * 2_000 + "1", "-1", "1Ei"]),
    lambda r: r.choice(["", " ", "x", "\u202e", "\ud800", "a\nb", '"', "\x00", "../..", "%"]),
    lambda r: "y" * r.choice([254, 4_000, 100_000]),
    lambda r: r.choice([[], {}, [1.5], ["x"], [5], [{}], {"": None}]),
    lambda r: _deep(r.choice([30, 70, 300])),  # deeper: as bytes (mutate_bytes)
    lambda r: [{"name": "c", "containerID": "containerd://x", "state": r.choice(["x", 5])}],
    lambda r: {"cpu": r.choice(["1e9999", "2", "-2", 3, [1]]), "memory": "1Gi"},
]


def _deep(levels: int) -> object:
    value: object = 0
    for index in range(levels):
        value = [value] if index % 2 else {"k": value}
    return value


@dataclass
class Tally:
    """Counts per outcome and the findings (input excerpt, what went wrong)."""

    cases: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    findings: list[tuple[str, str]] = field(default_factory=list)

    def count(self, outcome: str) -> None:
        self.cases += 1
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


class _Late(BaseException):
    """A case that did not answer within its time (raised by the alarm)."""


def _late(_signum: int, _frame: object) -> None:
    raise _Late


@contextmanager
def case_alarms() -> Iterator[None]:
    """The alarm that bounds each case of a reader fuzzer, installed for the run."""
    previous = signal.signal(signal.SIGALRM, _late)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, previous)


def judge_case(
    tally: Tally, index: int, seconds: float, attempt: Callable[[], tuple[str, str]]
) -> None:
    """Run one reader case within ``seconds`` (inside :func:`case_alarms`) and count it.

    ``attempt`` returns its outcome and a finding ("" for none). A reader must answer or
    refuse in one line: a multi-line refusal, no answer in time or any other exception is a
    finding.
    """
    finding = ""
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        outcome, finding = attempt()
    except CpuManagerError as err:
        outcome = "refused"
        if "\n" in err.message:
            finding = f"multi-line: {err.message[:300]!r}"
    except _Late:
        finding = f"no answer within {seconds:g} s"
    except Exception:  # a finding: the reader must answer or refuse
        finding = traceback.format_exc(limit=-4)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if finding:
        outcome = "finding"
        tally.findings.append((str(index), finding))
    tally.count(outcome)


# --- seeds --------------------------------------------------------------------------------


def seed_documents() -> list[dict[str, Any]]:
    """Snapshot documents to mutate: every fixture node, and busy generated nodes."""
    from tests.extender.nodes import busy_snapshot, make_snapshot
    from tests.nodeanswers.snapshots import fixture_snapshot
    from tests.nodeview.fixture_nodes import NODES_DIR

    nodes = sorted(p.name for p in NODES_DIR.iterdir() if p.is_dir())
    documents = [snapshot_to_dict(fixture_snapshot(node)) for node in nodes]
    rng = random.Random(7)
    documents.append(snapshot_to_dict(busy_snapshot("busy-a", rng, pods=12)))
    documents.append(
        snapshot_to_dict(
            busy_snapshot("busy-b", rng, pods=20, sockets=2, topology_policy="restricted")
        )
    )
    documents.append(snapshot_to_dict(make_snapshot("plain", topology_policy="best-effort")))
    return documents


def _paths(tree: object, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    stack: list[tuple[object, tuple[Any, ...]]] = [(tree, prefix)]
    while stack:
        value, path = stack.pop()
        yield path
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend((child, (*path, index)) for index, child in enumerate(value))


def _at(tree: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        tree = tree[step]
    return tree


def mutate_tree(rng: random.Random, tree: Any, donors: list[Any]) -> Any:
    """A copy of ``tree`` with one to three structure-aware mutations."""
    tree = copy.deepcopy(tree)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        paths = [p for p in _paths(tree) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _at(tree, path[:-1]), path[-1]
        choice = rng.random()
        if choice < 0.55:
            parent[key] = rng.choice(HOSTILE)(rng)
        elif choice < 0.7:
            del parent[key]
        elif choice < 0.8 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif choice < 0.9:
            donor = rng.choice(donors)
            donor_paths = [p for p in _paths(donor) if p]
            parent[key] = copy.deepcopy(_at(donor, rng.choice(donor_paths)))
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "Kind", "schema", "pods", "machine"])] = rng.choice(
                HOSTILE
            )(rng)
    return tree


def dumps(document: object) -> bytes:
    """JSON bytes; a tree nested past what the encoder recurses through becomes that much
    opening nesting (a case of its own)."""
    try:
        return json.dumps(document).encode()
    except RecursionError:
        return b"[" * 10_000


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    raw = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        spot = rng.randrange(len(raw) + 1)
        choice = rng.random()
        if choice < 0.4 and raw:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        elif choice < 0.7:
            del raw[spot : spot + rng.randint(1, 200)]
        else:
            raw[spot:spot] = rng.choice(
                [
                    b"[",
                    b"{",
                    b'"',
                    b"\\u",
                    b"\xff",
                    b"1e9999",
                    b"[" * 500,
                    b"[" * 5000 + b"]" * 5000,
                ]
            )
    return bytes(raw)


# --- snapshots ----------------------------------------------------------------------------

PODS = [
    {"metadata": {"name": "g2", "uid": "fz-g2"}, "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}},
    {"metadata": {"name": "bu", "uid": "fz-bu"}, "spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "250m"}}}]}},
    {"metadata": {"name": "g6", "uid": "fz-g6"}, "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "6", "memory": "2Gi"}}},
        {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}},
]  # fmt: skip


def _one_line(message: str) -> str | None:
    return None if "\n" not in message and "\r" not in message else "multi-line message"


def snapshot_case(data: bytes) -> str:
    """One snapshot through decode, restore and judgement: "refused", "unrestorable",
    "judged"; raises on a finding."""
    try:
        snapshot = snapshot_from_json(data)
    except CpuManagerError as err:
        if _one_line(err.message):
            raise AssertionError(err.message) from None
        return "refused"
    snapshot_digest(json.loads(data))
    prepared = try_prepare(snapshot) if snapshot.pods is not None else None
    if not isinstance(prepared, PreparedNode):
        if isinstance(prepared, CpuManagerError) and _one_line(prepared.message):
            raise AssertionError(prepared.message)
        return "unrestorable"
    pods = [pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc}) for doc in PODS]
    for index, pod in enumerate(pods):
        verdict = judge(prepared, pod, assumed=pods[:index])
        if "\n" in verdict.explanation():
            raise AssertionError(verdict.explanation())
    return "judged"


def snapshot_cases(seed: int, count: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    seeds = seed_documents()
    for _ in range(count):
        document = mutate_tree(rng, rng.choice(seeds), seeds)
        data = dumps(document)
        if rng.random() < 0.15:
            data = mutate_bytes(rng, data)
        yield data


def run_snapshots(count: int, seed: int) -> Tally:
    tally = Tally()
    for data in snapshot_cases(seed, count):
        try:
            tally.count(snapshot_case(data))
        except Exception:  # a finding: anything but an answer or a one-line refusal
            tally.count("finding")
            tally.findings.append((repr(data[:300]), traceback.format_exc(limit=-4)))
    return tally


# --- requests -----------------------------------------------------------------------------

TOKEN = b"fuzz-token"
NAMES = ["node-a", "node-b", "node-c"]


async def asgi_call(
    app: Any, method: str, path: str, body: bytes, headers: list[tuple[str, str]]
) -> tuple[int, bytes]:
    """One request to an ASGI app in-process: (status, body)."""
    raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    raw_headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("utf-8", "surrogatepass"),
        "query_string": b"",
        "root_path": "",
        "headers": raw_headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    status = 0
    chunks: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


def request_cases(seed: int, count: int) -> Iterator[tuple[str, str, bytes, list[tuple[str, str]]]]:
    rng = random.Random(seed)
    seeds = [d for d in seed_documents() if d.get("pods") is not None]
    auth = [("Authorization", "Bearer " + TOKEN.decode())]
    for _ in range(count):
        kind = rng.random()
        headers = list(auth)
        if rng.random() < 0.05:
            headers = [("Authorization", rng.choice(["bearer x", "Basic y", "Bearer", ""]))]
        if kind < 0.45:
            pod = {"Pod": rng.choice(PODS)}
            if rng.random() < 0.8:
                pod = mutate_tree(rng, pod, [{"p": PODS}])
            names: Any = list(rng.sample(NAMES, rng.randint(0, 3)))
            if rng.random() < 0.2:
                names = mutate_tree(rng, {"n": names}, [{"n": NAMES}]).get("n")
            body: Any = {**pod, "NodeNames": names}
            if rng.random() < 0.1:
                body = {**pod, "Nodes": {"items": [{"metadata": {"name": n}} for n in NAMES]}}
            data = dumps(body)
            if rng.random() < 0.1:
                data = mutate_bytes(rng, data)
            yield "POST", rng.choice(["/filter", "/filter", "/prioritize"]), data, headers
        elif kind < 0.8:
            name = rng.choice(NAMES)
            document = dict(rng.choice(seeds), nodeName=name)
            if rng.random() < 0.7:
                document = mutate_tree(rng, document, seeds)
            path_name = (
                name
                if rng.random() < 0.85
                else rng.choice(["UP", "a..b", "x" * 300, "%2F", "\u202e", "-n", "n\u0000"])
            )
            data = dumps(document)
            if rng.random() < 0.1:
                data = mutate_bytes(rng, data)
            yield "POST", f"/v1/nodes/{path_name}/snapshot", data, headers
        elif kind < 0.95:
            body = rng.choice(
                [{"digest": "0" * 64}, {"digest": 5}, [], "x", {"digest": "\ud800"}, "[" * 4000]
            )
            text = json.dumps(body) if not isinstance(body, str) else body
            data = text.encode("utf-8", "surrogatepass")
            yield "POST", f"/v1/nodes/{rng.choice(NAMES)}/heartbeat", data, headers
        else:
            yield "GET", rng.choice(["/metrics", "/healthz", "/nowhere"]), b"", headers


def run_requests(count: int, seed: int) -> Tally:
    tally = Tally()
    config = ExtenderConfig(token=TOKEN, assume_ttl=5.0, stale_after=3600.0)
    app = create_app(config, NodeStore(), fanout=FanoutSettings(workers=1))

    async def drive() -> None:
        for method, path, body, headers in request_cases(seed, count):
            try:
                status, answer = await asgi_call(app, method, path, body, headers)
            except Exception:  # the app raised: an internal error
                tally.count("finding")
                tally.findings.append((f"{method} {path} {body[:200]!r}", traceback.format_exc(-4)))
                continue
            problem = ""
            if (status >= 500 and status != 503) or status == 0:
                problem = f"status {status}: {answer[:300]!r}"
            elif status >= 400 and answer.count(b"\n") > 1:
                problem = f"multi-line error: {answer[:300]!r}"
            if problem:
                tally.count("finding")
                tally.findings.append((f"{method} {path} {body[:200]!r}", problem))
            else:
                tally.count(f"{path.split('/')[-1] or path}:{status}")

    asyncio.run(drive())
    return tally
