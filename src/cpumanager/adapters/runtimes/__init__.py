"""Runtime adapters: ways to apply a cpuset to a running container (the Runtime port)."""
