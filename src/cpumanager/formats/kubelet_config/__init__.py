"""The kubelet's configuration, as the kubelet assembles it (pure).

* ``model``: :class:`KubeletConfig`, the defaulted fields the resource managers read;
* ``defaults``: v1beta1 ``SetDefaults_KubeletConfiguration`` for those fields (zero = unset);
* ``decode`` / ``validation``: typed decoding, then every error the kubelet would give;
* ``flags`` / ``launch``: kubelet flags, and the command lines, systemd units and env files
  they come from;
* ``assemble``: file, drop-ins and flags merged in the kubelet's order, with each field's
  origin (the adapters read the files: ``adapters/kubelet_config_file.py``);
* per kubelet release, the whole file: ``document`` (the loader and codec), ``v1beta1``
  (every field's type and defaulting), ``go_decode`` and ``go_json_syntax`` (Go's JSON
  decoding of it, its syntax errors), ``gates`` (1.32's gate registry, ``SetFromMap``),
  ``whole`` / ``checks`` / ``component_checks`` (``ValidateKubeletConfiguration``), stage
  by stage.
"""

from __future__ import annotations

from cpumanager.formats.kubelet_config.assemble import (
    ConfigSource,
    EffectiveConfig,
    assemble,
    configz_body,
)
from cpumanager.formats.kubelet_config.defaults import (
    DEFAULT_EVICTION_HARD,
    DEFAULT_ROOT_DIR,
    MANAGER_FIELDS,
    apply_defaults,
)
from cpumanager.formats.kubelet_config.fields import format_go_duration, parse_go_duration
from cpumanager.formats.kubelet_config.flags import KubeletFlags, parse_kubelet_flags
from cpumanager.formats.kubelet_config.model import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
    KubeletConfig,
    MemoryReservation,
    reserved_memory_per_node,
)

__all__ = [
    "CPU_MANAGER_POLICIES",
    "DEFAULT_EVICTION_HARD",
    "DEFAULT_ROOT_DIR",
    "MANAGER_FIELDS",
    "MEMORY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_SCOPES",
    "ConfigSource",
    "EffectiveConfig",
    "KubeletConfig",
    "KubeletFlags",
    "MemoryReservation",
    "apply_defaults",
    "assemble",
    "configz_body",
    "format_go_duration",
    "parse_go_duration",
    "parse_kubelet_flags",
    "reserved_memory_per_node",
]
