"""Topology hints: what each resource provider says about NUMA placement."""
