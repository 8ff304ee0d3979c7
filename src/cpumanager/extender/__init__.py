"""The kube-scheduler extender: filter and prioritize nodes with each kubelet's own admission.

``protocol`` parses and builds the extender/v1 JSON (pure), ``judge`` answers "would this
node's kubelet admit the pod" from a pushed snapshot, ``store`` keeps the pushed snapshots
and the pods approved but not yet reported (assumed), ``server`` is the HTTP front
(starlette), metered with prometheus-client.
"""
