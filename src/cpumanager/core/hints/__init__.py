"""Topology hints: what each resource provider says about NUMA placement.

``hint`` holds :class:`TopologyHint` and the answer types, ``source`` the hint rules the
fast merge searches, ``cpu_hints`` the CPU manager's hints and ``limits`` the NUMA node
counts at which hints change form. The memory and device managers' hints live with their
managers (``core/memory``, ``core/devices``).
"""
