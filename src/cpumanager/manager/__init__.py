"""cpumanager.manager package."""
