"""CPU manager policies (none, static): decide, never persist."""
