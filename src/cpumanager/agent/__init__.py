"""cpumanager.agent package."""
