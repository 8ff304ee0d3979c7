"""Read a KubeletConfiguration YAML (or JSON) file into a validated :class:`KubeletConfig`.

OS and parse failures become one-line :class:`InputError` / :class:`ConfigError` messages
naming the file; validation errors keep the kubelet's wording, prefixed by the file name.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from cpumanager.adapters._text import read_utf8_text, yaml_problem
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import KubeletConfig

__all__ = ["kubelet_config_from_text", "read_kubelet_config"]


def kubelet_config_from_text(text: str, *, source: str) -> KubeletConfig:
    """Parse KubeletConfiguration text; ``source`` names it in messages."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        msg = f"{source}: not valid YAML or JSON{yaml_problem(err)}; fix the file"
        raise ConfigError(msg) from err
    if data is None:
        data = {}
    try:
        return KubeletConfig.from_mapping(data)
    except ConfigError as err:
        msg = f"{source}: {err.message}"
        raise ConfigError(msg) from err


def read_kubelet_config(path: Path) -> KubeletConfig:
    """Read and validate a KubeletConfiguration file."""
    text = read_utf8_text(path, what="kubelet configuration", utf8_remedy="save it as YAML")
    return kubelet_config_from_text(text, source=str(path))
