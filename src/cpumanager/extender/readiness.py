"""When a replica may take the scheduler's calls (``GET /readyz``).

Agents push to every replica (every endpoint of a headless Service), each at least every
push interval (10 s in deploy/). A replica is ready when all of these hold:

1. it has been up for ``ready_after`` seconds (20 s in deploy/: two push intervals, so
   every live agent has pushed to it since it started);
2. it holds at least one snapshot fresher than ``stale_after``;
3. at least :data:`FRESH_SHARE` of the nodes it has heard from lately (within
   :data:`GONE_AFTER` times ``stale_after``) are fresh: a replica the agents can no longer
   reach goes unready instead of failing every node as stale.

Rule 1 keeps a restarted replica out of the Service until it has heard from the fleet, so a
rollout (maxUnavailable 0) never routes a call to a replica that knows fewer nodes than the
one it replaces; rules 2 and 3 keep it out while it cannot hear the agents. A node silent
for longer than the horizon of rule 3 counts no more there: the store keeps a removed
node's last snapshot (until room is needed), and without the horizon a scale-down of a
tenth of the nodes would take every replica out of the Service for good. A replica cut off
from every agent still goes unready at once (rule 3) and stays so (rule 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

__all__ = ["FRESH_SHARE", "GONE_AFTER", "readiness"]

FRESH_SHARE = 0.9
GONE_AFTER = 5.0  # times stale_after: a node silent this long is taken as removed


class _Timing(Protocol):
    @property
    def stale_after(self) -> float: ...

    @property
    def ready_after(self) -> float: ...


def readiness(ages: Mapping[str, float], uptime: float, timing: _Timing) -> tuple[bool, str]:
    """(ready, one line why) from each held node's snapshot age and the replica's uptime."""
    fresh = sum(1 for age in ages.values() if age <= timing.stale_after)
    held = len(ages)
    recent = sum(1 for age in ages.values() if age <= GONE_AFTER * timing.stale_after)
    counts = f"{fresh} of {held} nodes fresh"
    if uptime < timing.ready_after:
        return False, f"not ready: up {uptime:.0f}s of {timing.ready_after:.0f}s ({counts})"
    if fresh == 0:
        return False, f"not ready: no fresh snapshot ({counts})"
    if fresh < FRESH_SHARE * recent:
        return False, f"not ready: under {FRESH_SHARE:.0%} fresh ({counts})"
    return True, f"ready: {counts}"
