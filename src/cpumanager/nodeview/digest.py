"""A snapshot's content digest: equal digests mean the same node state (pure).

``collectedAt`` changes at every collection and is left out, so an agent can tell whether
anything it would push has changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["snapshot_digest"]


def snapshot_digest(document: Mapping[str, Any]) -> str:
    """sha256 of a snapshot's JSON object without ``collectedAt``."""
    content = {k: v for k, v in document.items() if k != "collectedAt"}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
