"""Topology-manager hint merging: the kubelet's exact merge and a fast equivalent."""
