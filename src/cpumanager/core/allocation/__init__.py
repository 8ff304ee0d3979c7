"""CPU selection: the kubelet's take-by-topology packing and its options."""
