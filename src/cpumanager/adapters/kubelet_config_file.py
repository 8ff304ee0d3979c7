"""Read a KubeletConfiguration YAML (or JSON) file into a validated :class:`KubeletConfig`.

OS and parse failures become one-line :class:`InputError` / :class:`ConfigError` messages
naming the file; validation errors keep the kubelet's wording, prefixed by the file name.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from cpumanager.core.kubelet_config import KubeletConfig
from cpumanager.errors import ConfigError, InputError

__all__ = ["kubelet_config_from_text", "read_kubelet_config"]


def kubelet_config_from_text(text: str, *, source: str) -> KubeletConfig:
    """Parse KubeletConfiguration text; ``source`` names it in messages."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        msg = f"{source}: not valid YAML or JSON{where} ({problem}); fix the file"
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        msg = f"kubelet configuration {str(path)!r} does not exist; check the path"
        raise InputError(msg) from err
    except UnicodeDecodeError as err:
        msg = f"kubelet configuration {str(path)!r} is not UTF-8 text; save it as YAML"
        raise InputError(msg) from err
    except OSError as err:
        msg = f"cannot read kubelet configuration {str(path)!r}: {err.strerror or err}"
        raise InputError(msg) from err
    return kubelet_config_from_text(text, source=str(path))
