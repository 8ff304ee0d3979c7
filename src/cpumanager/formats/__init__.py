"""Input formats the kubelet reads, parsed into core values.

KubeletConfiguration, Pod manifests and machine files: pure parsing, no I/O.
"""
