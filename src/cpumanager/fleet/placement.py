"""Placement and capacity from per-node answers (pure).

A node's answer lists, for the 1st, 2nd, ... copy of the pod placed on it in turn, whether
its kubelet would admit that copy (and its score), up to the first refusal. Admission on a
node depends only on what was placed on that node before, so the scheduler's one-after-another
placement over the whole fleet follows from these answers exactly: each replica goes to the
node whose next copy is admitted with the highest score (ties: the most free shared CPUs
left, then the node name), as kube-scheduler does with our filter and score.

Score (0-10): ``10 * free CPUs left after the copy / node CPUs``, rounded down, where free
CPUs are the shared pool's CPUs (the CPU manager's default set; every CPU under the none
policy) less the CPU requests of the copies placed in that pool (rounded up). It prefers
nodes where the copy leaves the most CPUs free for later exclusive allocations, i.e. spreads
and fragments least. Pods already on the node in the shared pool are not charged (the
kubelet's resource-fit predicate still counts them for admission).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Capacity",
    "CopyVerdict",
    "Fit",
    "NodeAnswer",
    "Rejection",
    "capacity",
    "place",
    "score",
]

MAX_SCORE = 10
UNUSABLE = "SnapshotUnusable"


def score(free_cpus: int, total_cpus: int) -> int:
    """The documented 0-10 score: the shared-pool share left after placing the copy."""
    if total_cpus <= 0:
        return 0
    return max(0, min(MAX_SCORE, (MAX_SCORE * free_cpus) // total_cpus))


@dataclass(frozen=True, slots=True)
class CopyVerdict:
    """One more copy on a node: admitted or not, the kubelet's reason, and the score."""

    admitted: bool
    reason: str = ""
    message: str = ""
    free_cpus: int = 0
    score: int = 0


@dataclass(frozen=True, slots=True)
class NodeAnswer:
    """A node's verdicts for successive copies: every admitted one, then the first refusal
    (absent when the limit was reached first). ``error`` says why the snapshot is unusable."""

    node: str
    copies: tuple[CopyVerdict, ...] = ()
    limit: int = 0
    error: str = ""

    @property
    def admitted(self) -> int:
        """How many more copies the node takes (at least this many when ``capped``)."""
        return sum(1 for c in self.copies if c.admitted)

    @property
    def capped(self) -> bool:
        """True when every tried copy was admitted (the limit, not the node, stopped us)."""
        return not self.error and all(c.admitted for c in self.copies)

    def refusal(self) -> tuple[str, str] | None:
        """(reason, message) of the first copy refused, or why the snapshot is unusable."""
        if self.error:
            return UNUSABLE, self.error
        for c in self.copies:
            if not c.admitted:
                return c.reason, c.message
        return None


@dataclass(frozen=True, slots=True)
class Rejection:
    """Nodes refusing for one reason; ``example`` is one node's message."""

    reason: str
    nodes: tuple[str, ...]
    example: str


def _group(refusals: Iterable[tuple[str, str, str]]) -> list[Rejection]:
    by_reason: dict[str, list[tuple[str, str]]] = {}
    for node, reason, message in refusals:
        by_reason.setdefault(reason, []).append((node, message))
    groups = [
        Rejection(reason, tuple(sorted(n for n, _ in items)), min(items)[1])
        for reason, items in by_reason.items()
    ]
    return sorted(groups, key=lambda g: (-len(g.nodes), g.reason))


@dataclass(frozen=True, slots=True)
class Fit:
    """Where each replica goes (None: no node admits it) and who refused, by reason."""

    placements: tuple[str | None, ...]
    per_node: dict[str, int] = field(default_factory=dict)
    rejections: tuple[Rejection, ...] = ()

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p is not None)


def place(answers: Sequence[NodeAnswer], replicas: int) -> Fit:
    """Place ``replicas`` copies one after another; every answer must cover ``replicas``
    copies or stop at a refusal."""
    used = dict.fromkeys((a.node for a in answers), 0)
    by_node = {a.node: a for a in answers}
    placements: list[str | None] = []
    for _ in range(replicas):
        best: tuple[int, int, str] | None = None
        for answer in answers:
            k = used[answer.node]
            if answer.error or k >= len(answer.copies) or not answer.copies[k].admitted:
                continue
            c = answer.copies[k]
            key = (-c.score, -c.free_cpus, answer.node)
            if best is None or key < best:
                best = key
        if best is None:
            placements.append(None)
            continue
        used[best[2]] += 1
        placements.append(best[2])
    refusals = []
    for node, k in used.items():
        answer = by_node[node]
        if answer.error:
            refusals.append((node, UNUSABLE, answer.error))
        elif k < len(answer.copies) and not answer.copies[k].admitted:
            c = answer.copies[k]
            refusals.append((node, c.reason, c.message))
    return Fit(
        tuple(placements),
        {n: k for n, k in sorted(used.items()) if k},
        tuple(_group(refusals)),
    )


@dataclass(frozen=True, slots=True)
class Capacity:
    """How many more copies each node takes, the fleet's total, and why nodes stop."""

    per_node: dict[str, int]
    capped: tuple[str, ...]
    total: int
    limits: tuple[Rejection, ...]


def capacity(answers: Sequence[NodeAnswer]) -> Capacity:
    """Sum the nodes' answers; a capped node counts its limit (the total is then a floor)."""
    per_node = {a.node: a.admitted for a in sorted(answers, key=lambda a: a.node)}
    refusals = []
    for a in answers:
        found = a.refusal()
        if found is not None:
            refusals.append((a.node, found[0], found[1]))
    capped = tuple(sorted(a.node for a in answers if a.capped))
    return Capacity(per_node, capped, sum(per_node.values()), tuple(_group(refusals)))
