"""Which pods the extender may pass unchecked (:func:`pinned`), and whether a snapshot saw
what the kubelet sees (:func:`unseen`, ``nodeanswers/visible.py``): a snapshot that could
not read what the kubelet has is judged ``NodeNotRestorable``, never as an empty node.
"""

from __future__ import annotations

from cpumanager.core.workload import Pod, QoSClass, qos_class
from cpumanager.nodeanswers.fit import pod_requests
from cpumanager.nodeanswers.visible import unseen

__all__ = ["pinned", "unseen"]


def pinned(pod: Pod) -> bool:
    """Whether the node's resource managers could refuse or pin the pod: Guaranteed under
    either PodLevelResources gate value, or asking for hugepages or extended resources
    (devices). A pod that is none of these gets no topology hint from any manager, so no
    snapshot can change its admission: it passes nodes the extender cannot check (no
    snapshot yet, stale), which keeps the agents, CoreDNS and the extender itself
    schedulable on new nodes."""
    if any(
        qos_class(pod, pod_level_resources=gate) is QoSClass.GUARANTEED for gate in (True, False)
    ):
        return True
    return any(name.startswith("hugepages-") or "/" in name for name in pod_requests(pod))
