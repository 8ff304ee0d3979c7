"""The kubelet's restore, as one pure function, and a diagnosis that lists every reason.

:func:`restore_state` follows the released kubelets (spec §3.2): decode V1 then V2, migrate
a V1 file through the container map of the containers running at start, check the policy
name, then parse the CPU lists. It raises the first failure as the kubelet would (typed, with
the kubelet's text inside and a remedy). Machine validation (``validateState``) is separate:
:func:`cpumanager.core.restore.validate_restored`.

:func:`diagnose` runs the same steps without stopping, for ``cpumanager state verify``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu import codec_fast as fast
from cpumanager.checkpoint.cpu import restore_fast as fast_read
from cpumanager.checkpoint.cpu.codec import Attempt, DecodeOrder
from cpumanager.checkpoint.cpu.migrate import v1_to_v2
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import go_quote
from cpumanager.core.ids import ContainerID, ContainerName, PodUID, pod_uid_problem
from cpumanager.core.restore import check_policy_name, validation_problems
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import StateValidationError

__all__ = ["V1_PSEUDO_POD", "Diagnosis", "diagnose", "restore_state"]

# Where verify shows a V1 file's entries when no container map says whose they are.
V1_PSEUDO_POD = "(container IDs)"


def restore_state(
    data: bytes | None,
    *,
    source: str,
    configured_policy: str,
    container_map: ContainerMap,
    order: DecodeOrder = "v1-first",
) -> StateSnapshot | None:
    """The state a kubelet restores from ``data``; None when there is no file.

    With no file the kubelet writes ``{policy, "", no entries}`` and starts empty: the
    caller does that write (the stores do it on their first save).
    """
    if data is None:
        return None
    written = fast_read.read_v2(data)  # the kubelet's own layout: same verdict and state
    if written is not None and written[0] == configured_policy:
        return StateSnapshot.from_sorted(*written)  # type: ignore[arg-type]
    plain = fast.decode_v2_plain(data)  # other plain files (whitespace, any key order)
    if plain is not None and plain[0] == configured_policy:
        return codec.snapshot_from_plain(plain[0], plain[1], plain[2], source=source)
    checkpoint = codec.decode(data, source=source, order=order)
    if isinstance(checkpoint, CheckpointV1):
        checkpoint = v1_to_v2(checkpoint, container_map, source=source)
    check_policy_name(StateSnapshot(checkpoint.policy_name), configured_policy, source=source)
    return codec.snapshot_from_v2(checkpoint, source=source)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Everything ``verify`` reports. ``ok`` is the kubelet's verdict on what was checked."""

    format: str  # "v1", "v2" or "" when neither decodes
    attempts: tuple[Attempt, Attempt]
    checkpoint: CheckpointV1 | CheckpointV2 | None
    snapshot: StateSnapshot | None
    reasons: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def checksum_status(self) -> str:
        chosen = self._chosen()
        if chosen is None:
            corrupt = [r for r in self.attempts if r.kind == "corrupt"]
            if corrupt:
                r = corrupt[-1]
                return f"mismatch (stored {r.stored_checksum}, computed {r.computed_checksum})"
            return "not decodable"
        if chosen.stored_checksum == 0:
            return "unchecked (stored 0)"
        return f"ok ({chosen.stored_checksum})"

    def _chosen(self) -> Attempt | None:
        for result in self.attempts:
            if result.format == self.format:
                return result
        return None


def _parse_all(checkpoint: CheckpointV2) -> tuple[StateSnapshot | None, list[str]]:
    """Parse every CPU list, collecting every failure (the kubelet stops at the first)."""
    problems: list[str] = []
    try:
        default = codec.parse_cpu_list(checkpoint.default_cpu_set)
    except codec.CPUListError as err:
        problems.append(
            f"could not parse default cpu set {go_quote(checkpoint.default_cpu_set)}: {err}"
        )
        default = CPUSet()
    assignments: dict[str, dict[str, CPUSet]] = {}
    for pod, containers in sorted((checkpoint.entries or {}).items()):
        parsed = assignments.setdefault(pod, {})
        for name, text in sorted((containers or {}).items()):
            try:
                parsed[name] = codec.parse_cpu_list(text)
            except codec.CPUListError as err:
                problems.append(
                    f"could not parse cpuset {go_quote(text)} for container {go_quote(name)} "
                    f"in pod {go_quote(pod)}: {err}"
                )
    if problems:
        return None, problems
    return StateSnapshot(checkpoint.policy_name, default, assignments), []  # type: ignore[arg-type]


def _foreign_uid_notes(snapshot: StateSnapshot) -> list[str]:
    """Entries whose pod uid no manifest may carry (cpumanager refuses such uids on input).

    The kubelet keeps them; cpumanager's agent releases them as stale and ``run`` leaves
    them alone, so they are worth a look but do not fail the verdict.
    """
    notes = []
    for uid in sorted(snapshot.assignments):
        if uid == V1_PSEUDO_POD:
            continue
        problem = pod_uid_problem(uid)
        if problem is not None:
            notes.append(
                f"pod {go_quote(uid[:140])}: {problem}; cpumanager never writes such a uid, so "
                "this entry did not come from its run or agent: an agent releases it as stale"
            )
    return notes


def diagnose(
    data: bytes,
    *,
    source: str,
    configured_policy: str | None = None,
    container_map: ContainerMap | None = None,
    all_cpus: CPUSet | None = None,
    reserved: CPUSet | None = None,
    strict_reservation: bool = False,
) -> Diagnosis:
    """Every reason the kubelet would refuse ``data``, for the checks the inputs allow.

    Without ``container_map`` a V1 file with entries cannot be judged (its migration needs
    the running containers): that is a note, not a failure. Without ``configured_policy``
    the policy is not checked. Without ``all_cpus`` the machine is not checked; with it, a
    ``static`` state is validated as the static policy does at start.
    """
    attempts = codec.attempts(data)
    reasons: list[str] = []
    notes: list[str] = []
    chosen = next((result for result in attempts if result.ok), None)
    if chosen is None:
        reasons.extend(f"as {r.format.upper()}: {r.error}" for r in attempts if r.error)
        return Diagnosis("", attempts, None, None, tuple(dict.fromkeys(reasons)))
    checkpoint = chosen.checkpoint
    assert checkpoint is not None
    v2: CheckpointV2 | None
    if isinstance(checkpoint, CheckpointV1):
        if container_map is None and checkpoint.entries:
            notes.append(
                "V1 file: a v1.18+ kubelet migrates it only if every container ID "
                f"({', '.join(sorted(checkpoint.entries))}) is among the containers it finds "
                "at start; give --containers to check (shown under pod '(container IDs)')"
            )
            container_map = ContainerMap(
                (ContainerID(cid), PodUID(V1_PSEUDO_POD), ContainerName(cid))
                for cid in checkpoint.entries
            )
        try:
            v2 = v1_to_v2(checkpoint, container_map or ContainerMap(), source=source)
        except StateValidationError as err:
            reasons.extend(err.reasons)
            v2 = None
    else:
        v2 = checkpoint
    policy = checkpoint.policy_name
    if configured_policy is not None and policy != configured_policy:
        reasons.append(
            f"configured policy {go_quote(configured_policy)} differs from state checkpoint "
            f"policy {go_quote(policy)}"
        )
    snapshot = None
    if v2 is not None:
        snapshot, problems = _parse_all(v2)
        reasons.extend(problems)
    if snapshot is not None:
        notes.extend(_foreign_uid_notes(snapshot))
    if snapshot is not None and all_cpus is not None:
        if (configured_policy or policy) == "static":
            reasons.extend(
                validation_problems(
                    snapshot,
                    all_cpus=all_cpus,
                    reserved=reserved,
                    strict_reservation=strict_reservation,
                )
            )
        else:
            notes.append(f"policy {policy!r} validates nothing against the machine")
    return Diagnosis(chosen.format, attempts, checkpoint, snapshot, tuple(reasons), tuple(notes))
