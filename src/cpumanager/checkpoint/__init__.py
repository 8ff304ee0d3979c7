"""Pure codecs for the kubelet's cpu_manager_state checkpoint (bytes <-> model)."""
