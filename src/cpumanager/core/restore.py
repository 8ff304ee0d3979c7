"""What the kubelet checks when it restores a state at start-up, with every reason given.

Two gates sit between a decoded checkpoint and a running CPU manager:

1. The policy name must equal the configured one, byte for byte (``none`` and ``static``
   states are not interchangeable; the empty name of a ``{}`` file matches nothing).
2. The static policy's ``validateState`` (spec §6.3), with ``all`` = the machine's CPUs, or
   ``all - reserved`` under strict reservation, ``D`` = the default set:

   a. ``D`` empty: with assignments it is an error; without, it is a fresh state and the
      kubelet fills ``D`` with ``all`` (and writes the file).
   b. non-strict: reserved CPUs must all be in ``D``; strict: none of them may be.
   c. no assignment may intersect ``D`` (assignments may overlap *each other*: init
      containers lend their CPUs to app containers of the same pod).
   d. ``D`` plus every assignment must be exactly ``all`` (catches offlined or added CPUs
      and a crash between the two writes of an allocation).

The kubelet stops at the first failure and says only "drain the node and delete the file".
We collect every failure, keep the kubelet's wording for each (so it can be searched for),
and add what differs and what to do. The none policy validates nothing.
"""

from __future__ import annotations

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import go_quote, one_line
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import StateValidationError

__all__ = ["check_policy_name", "validate_restored", "validation_problems"]

_REMEDY = (
    "drain the node and delete the checkpoint (the kubelet's remedy), or edit it to match "
    "and run 'cpumanager state rewrite'"
)


def check_policy_name(snapshot: StateSnapshot, configured_policy: str, *, source: str) -> None:
    """Raise unless the checkpoint was written by the configured policy."""
    if snapshot.policy_name == configured_policy:
        return
    kubelet = (
        f"configured policy {go_quote(configured_policy)} differs from state checkpoint policy "
        f"{go_quote(snapshot.policy_name)}"
    )
    message = (
        f"checkpoint {source!r}: {kubelet}; the kubelet cannot switch policies on a live "
        f"state: drain the node and delete the checkpoint, or configure policy "
        f"{go_quote(snapshot.policy_name)} again"
    )
    raise StateValidationError(message, reasons=(kubelet,))


def _expected_cpus(all_cpus: CPUSet, reserved: CPUSet, strict_reservation: bool) -> CPUSet:
    return all_cpus - reserved if strict_reservation else all_cpus


def validation_problems(
    snapshot: StateSnapshot,
    *,
    all_cpus: CPUSet,
    reserved: CPUSet | None = None,
    strict_reservation: bool = False,
) -> tuple[str, ...]:
    """Every static-policy ``validateState`` failure, in the kubelet's words plus detail.

    A fresh state (empty default set and no assignments) is not a problem: the kubelet
    fills it in (see :func:`validate_restored`).
    """
    reserved = reserved if reserved is not None else CPUSet()
    default = snapshot.default_cpuset
    expected = _expected_cpus(all_cpus, reserved, strict_reservation)
    assigned = snapshot.assigned_cpus()
    if not default and not snapshot.assignments:
        return ()
    problems: list[str] = []
    if not default:
        problems.append("default cpuset cannot be empty")
    if strict_reservation:
        leaked = reserved & default
        if leaked:
            problems.append(
                f'some of strictly reserved cpus: "{leaked}" are present in defaultCpuSet: '
                f'"{default}"'
            )
    elif not reserved <= default:
        problems.append(
            f'not all reserved cpus: "{reserved}" are present in defaultCpuSet: "{default}" '
            f"(missing {reserved - default})"
        )
    for pod_uid, containers in snapshot.assignments.items():
        for name, cpus in containers.items():
            if cpus & default:
                problems.append(
                    f'pod: {one_line(pod_uid)}, container: {one_line(name)} cpuset: "{cpus}" '
                    f'overlaps with default cpuset "{default}" (shared {cpus & default})'
                )
    union = default | assigned
    if union != expected:
        detail = []
        if expected - union:
            detail.append(f"online but in no set: {expected - union}")
        if union - expected:
            detail.append(f"in the state but not available: {union - expected}")
        problems.append(
            f'current set of available CPUs "{expected}" doesn\'t match with CPUs in state '
            f'"{union}" ({"; ".join(detail)})'
        )
    return tuple(problems)


def validate_restored(
    snapshot: StateSnapshot,
    *,
    all_cpus: CPUSet,
    reserved: CPUSet | None = None,
    strict_reservation: bool = False,
    source: str = "cpu_manager_state",
) -> StateSnapshot:
    """The state the static policy starts from, or StateValidationError with every reason.

    A fresh state comes back with its default set filled (``all``, minus the reserved CPUs
    under strict reservation); the caller persists it, as the kubelet does.
    """
    problems = validation_problems(
        snapshot, all_cpus=all_cpus, reserved=reserved, strict_reservation=strict_reservation
    )
    if problems:
        message = (
            f"checkpoint {source!r} does not fit this machine: {'; '.join(problems)}; {_REMEDY}"
        )
        raise StateValidationError(message, reasons=problems)
    if not snapshot.default_cpuset and not snapshot.assignments:
        expected = _expected_cpus(all_cpus, reserved or CPUSet(), strict_reservation)
        return snapshot.with_default(expected)
    return snapshot
