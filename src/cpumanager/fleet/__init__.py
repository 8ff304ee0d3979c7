"""Fleet what-if: where would replicas of a pod go, and how many more copies fit, over many
node snapshots (``cpumanager fleet fit`` / ``fleet capacity``).

``placement.py`` is the pure part (per-node answers in, placement and capacity out),
``node.py`` answers for one snapshot with the node what-if, ``runner.py`` maps that over a
local process pool or a Dask cluster.
"""
