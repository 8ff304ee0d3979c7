"""The pure core: value types, topology model and the kubelet's algorithms. No I/O."""
