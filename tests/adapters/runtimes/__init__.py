"""Tests of the runtime adapters."""
