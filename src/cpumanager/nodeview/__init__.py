"""A real node as data: the snapshot file's model, the PodResources answers, the node's pods.

Pure (no I/O): collection lives in ``cpumanager.adapters`` (``node_collect``,
``podresources``); these modules only build, check and (de)serialise values.
"""
