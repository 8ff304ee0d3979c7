"""Read and write machine files (YAML or JSON) in the format of :mod:`core.machine_format`.

The format is chosen by suffix when writing (``.yaml``/``.yml`` -> YAML, anything else ->
JSON). When reading, JSON is tried first for ``.json`` files and YAML otherwise; YAML is a
superset of JSON, so either parser accepts a JSON file. OS and parse failures become
:class:`MachineError` one-liners.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cpumanager.adapters._text import (
    MAX_MACHINE_BYTES,
    decode_utf8,
    load_yaml_documents,
    read_bounded_bytes,
)
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError
from cpumanager.formats.machine_format import topology_from_dict, topology_to_dict
from cpumanager.presets import MAX_SHAPE_CPUS

__all__ = ["dump_machine", "load_machine_text", "read_machine_file", "write_machine_file"]


def _is_yaml(path: Path) -> bool:
    return path.suffix.lower() in {".yaml", ".yml"}


def load_machine_text(text: str, *, source: str, yaml_first: bool = True) -> CPUTopology:
    """Parse machine-file text (YAML or JSON) named ``source`` in messages."""
    data: Any
    if yaml_first:
        docs = load_yaml_documents(
            text, source=f"machine file {source!r}", error=MachineError, remedy="fix or re-save it"
        )
        data = docs[0] if len(docs) == 1 else docs
    else:
        try:
            data = json.loads(text)
        except ValueError as err:
            msg = f"machine file {source!r} is not valid JSON ({err}); fix or re-save it"
            raise MachineError(msg) from err
        except RecursionError as err:
            msg = f"machine file {source!r} is nested too deeply to read; fix or re-save it"
            raise MachineError(msg) from err
    if not isinstance(data, dict):
        msg = (
            f"machine file {source!r} must hold a mapping with 'cpus', 'numa_nodes' and "
            "'distances'; write one with 'cpumanager topology --save FILE'"
        )
        raise MachineError(msg)
    listed = data.get("cpus")
    if isinstance(listed, list) and len(listed) > MAX_SHAPE_CPUS:
        msg = (
            f"machine file {source!r} lists {len(listed)} CPUs, more than the "
            f"{MAX_SHAPE_CPUS} cpumanager models; check the file"
        )
        raise MachineError(msg)
    try:
        topology = topology_from_dict(data)
    except ValueError as err:  # e.g. a number too long to print; never a traceback
        msg = f"machine file {source!r}: a value cannot be used ({str(err)[:100]}); fix it"
        raise MachineError(msg) from err
    except MachineError as err:
        msg = f"machine file {source!r}: {err.message}"
        raise MachineError(msg) from err
    if not topology.name:
        return topology_from_dict({**data, "name": Path(source).stem})
    return topology


def read_machine_file(path: Path) -> CPUTopology:
    """Load a machine file; unreadable, malformed or inconsistent files raise MachineError."""
    if not path.exists() and not path.is_symlink():
        msg = f"machine file {str(path)!r} does not exist; give a preset name or a file path"
        raise MachineError(msg)
    data, _info = read_bounded_bytes(
        path, what="machine file", max_bytes=MAX_MACHINE_BYTES, error=MachineError
    )
    text = decode_utf8(
        data, what="machine file", source=str(path), remedy="re-save it", error=MachineError
    )
    return load_machine_text(text, source=str(path), yaml_first=path.suffix.lower() != ".json")


def dump_machine(topology: CPUTopology, *, yaml_format: bool) -> str:
    """The machine-file text for ``topology`` (YAML or indented JSON)."""
    data = topology_to_dict(topology)
    if yaml_format:
        import yaml

        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100))
    return json.dumps(data, indent=1) + "\n"


def write_machine_file(topology: CPUTopology, path: Path) -> None:
    """Write ``topology`` to ``path`` (YAML for .yaml/.yml, JSON otherwise)."""
    text = dump_machine(topology, yaml_format=_is_yaml(path))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        msg = f"cannot write machine file {str(path)!r}: {err.strerror or err}"
        raise MachineError(msg) from err
