"""`node preflight` on the fixture nodes, against the kubelet's start-up checks.

kubeadm fixture (see test_whatif): static policy, reservedSystemCPUs 0,8, checkpoint
default set 0,4-8,12-15, db-0/postgres on 1-2,9-10 and cache-0/redis on 3,11.
"""

from __future__ import annotations

from dataclasses import replace

from cpumanager.core.cpuset import CPUSet
from cpumanager.nodeanswers.preflight import preflight
from tests.nodeanswers.snapshots import fixture_snapshot

PATH = "var/lib/kubelet/cpu_manager_state"


def _config(**changes: object):  # type: ignore[no-untyped-def]
    return replace(fixture_snapshot("kubeadm").kubelet_config(), **changes)


def test_same_configuration_is_safe() -> None:
    answer = preflight(fixture_snapshot("kubeadm"), _config())
    assert answer.safe
    assert answer.refusal == ""


def test_a_topology_policy_change_is_safe() -> None:
    # The topology manager keeps no checkpoint: nothing to refuse at start.
    assert preflight(
        fixture_snapshot("kubeadm"), _config(topology_manager_policy="best-effort")
    ).safe


def test_policy_change_is_the_kubelets_restore_refusal() -> None:
    # state_checkpoint.go restoreState: the policy name must match; NewCheckpointState wraps
    # it, and the container manager prefixes "start cpu manager error: ".
    answer = preflight(fixture_snapshot("kubeadm"), _config(cpu_manager_policy="none"))
    assert not answer.safe
    assert answer.refusal.startswith(
        "start cpu manager error: could not restore state from checkpoint: configured policy "
        '"none" differs from state checkpoint policy "static", please drain this node and '
        "delete the CPU manager checkpoint file "
    )
    assert answer.refusal.endswith(f'{PATH}" before restarting Kubelet')
    assert answer.drain == ["prod/cache-0", "prod/db-0"]
    # recover starts the none policy afresh: no exclusive assignment survives.
    assert answer.recover_keeps == []
    assert len(answer.recover_returns) == 2


def test_reserved_set_change_is_validate_state() -> None:
    # CPU 1 becomes reserved but postgres holds it, so it is not in the default set: the
    # static policy's validateState refuses with its "not all reserved cpus" error. recover
    # keeps redis (3,11 are untouched) and returns postgres.
    answer = preflight(
        fixture_snapshot("kubeadm"), _config(reserved_system_cpus=CPUSet.parse("0-1"))
    )
    assert answer.refusal == (
        'start cpu manager error: not all reserved cpus: "0-1" are present in defaultCpuSet: '
        '"0,4-8,12-15"'
    )
    assert answer.recover_keeps == ["prod/cache-0 container redis (CPUs 3,11)"]
    assert answer.recover_returns == ["prod/db-0 container postgres (CPUs 1-2,9-10)"]


def test_corrupt_checkpoint_is_refused_with_the_kubelets_words() -> None:
    snapshot = fixture_snapshot("corrupt-checkpoint")
    answer = preflight(snapshot, snapshot.kubelet_config())
    assert answer.refusal.startswith(
        "start cpu manager error: could not restore state from checkpoint: checkpoint is "
        "corrupted, please drain this node"
    )


def test_offline_cpus_node_restarts_as_it_is() -> None:
    snapshot = fixture_snapshot("offline-cpus")
    assert preflight(snapshot, snapshot.kubelet_config()).safe
