"""Answers for a real node, from a snapshot: restore, whatif, preflight, NRT, show (pure).

These modules drive the manager facade (``manager/node.py``) on the state a snapshot holds,
so they sit above ``manager`` and ``sim`` (``nodeview``, the snapshot model, sits below
them); like ``nodeview`` they do no I/O: the CLI reads files and prints.
"""
