"""cpumanager.sim package."""
