"""``node recover``'s plan: the checkpoint a recovering kubelet keeps (pure)."""

from __future__ import annotations

import json

from cpumanager.nodeanswers.recover import plan_recover
from tests.nodeanswers.snapshots import fixture_snapshot


def test_healthy_node_needs_nothing() -> None:
    plan = plan_recover(fixture_snapshot("kubeadm"))
    assert not plan.needed
    assert not plan.files
    assert not plan.blocked


def test_switched_policy_gets_a_fresh_checkpoint_of_the_new_policy() -> None:
    plan = plan_recover(fixture_snapshot("policy-switched"))
    assert plan.needed
    assert not plan.blocked
    (written,) = plan.files
    assert written.kind == "cpu_manager_state"
    assert written.path.endswith("var/lib/kubelet/cpu_manager_state")
    assert json.loads(written.after)["policyName"] == "none"
    assert written.before is not None
    assert written.after != written.before
    assert len(plan.returns) == 2  # both exclusive holders go back to the shared pool
    assert 'configured policy "none" differs' in plan.refusal


def test_corrupt_checkpoint_is_replaced_by_a_valid_one() -> None:
    plan = plan_recover(fixture_snapshot("corrupt-checkpoint"))
    (written,) = plan.files
    content = json.loads(written.after)
    assert content["policyName"] == "static"
    assert plan.to_json()["files"][0]["content"] == written.after.decode()
