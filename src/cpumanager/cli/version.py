"""What ``cpumanager --version`` prints, for the entry point and the click group alike."""

from __future__ import annotations

__all__ = ["VERSION_MESSAGE"]

# click's version_option wording; ``main`` prints it without importing click.
VERSION_MESSAGE = "%(prog)s, version %(version)s"
