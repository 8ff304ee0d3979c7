"""The effective configuration, assembled from its sources in the kubelet's order (pure).

The kubelet (cmd/kubelet/app/server.go) loads ``--config`` with v1beta1 defaulting, merges
the ``--config-dir`` drop-ins over it in file-name order (JSON merge patches, then a JSON
round trip: see ``_apply_drop_ins``; maps merge key by key, anything else replaces), then
parses the command line again over the result, so flags win. Drop-ins and flags are not
defaulted again: a zero they set stays zero. Feature gates from the flags are merged with
the file's (the flag wins per gate); every other map flag replaces the file's map. A
``/configz`` answer is the running kubelet's configuration, already assembled, so it
stands alone.

Each field's origin is recorded: ``default``, ``file``, ``drop-in NAME``, ``flag --NAME`` or
``configz``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.decode import build_config, check_kind, decode
from cpumanager.formats.kubelet_config.defaults import (
    DEFAULT_ROOT_DIR,
    MANAGER_FIELDS,
    apply_defaults,
    merge_default_eviction,
)
from cpumanager.formats.kubelet_config.fields import check_string_maps, fail, mapping
from cpumanager.formats.kubelet_config.flags import KubeletFlags
from cpumanager.formats.kubelet_config.model import KubeletConfig

__all__ = ["ConfigSource", "EffectiveConfig", "assemble", "configz_body", "merge_patch"]


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """One configuration document: its name (a path or drop-in file name) and content."""

    name: str
    body: object


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    """The configuration the kubelet would run with, and where each field came from."""

    config: KubeletConfig
    origins: Mapping[str, str]  # v1beta1 field name -> origin
    root_dir: str = DEFAULT_ROOT_DIR
    root_dir_origin: str = "default"
    sources: tuple[str, ...] = field(default_factory=tuple)

    def fields(self) -> dict[str, dict[str, object]]:
        """Every field we read under its v1beta1 name: ``{"value": ..., "from": ...}``."""
        values = self.config.to_v1beta1(omit_empty=False)
        return {
            name: {"value": values[name], "from": self.origins.get(name, "default")}
            for name in sorted(values)
        }


def configz_body(raw: object) -> Mapping[str, object]:
    """The configuration inside a ``/configz`` answer (``{"kubeletconfig": {...}}``)."""
    body = mapping(raw, "configz")
    if set(body) == {"kubeletconfig"}:
        body = mapping(body["kubeletconfig"], "configz.kubeletconfig")
    return check_kind(body)


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386 JSON merge patch, as the kubelet applies drop-ins."""
    if not isinstance(patch, Mapping):
        return patch
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def assemble(
    *,
    file: ConfigSource | None = None,
    drop_ins: Sequence[ConfigSource] = (),
    flags: KubeletFlags | None = None,
    configz: ConfigSource | None = None,
) -> EffectiveConfig:
    """Merge the sources in the kubelet's order, then decode and validate the result.

    Raises ConfigError for a malformed source and KubeletConfigInvalidError listing every
    validation error of the merged configuration.
    """
    flags = flags if flags is not None else KubeletFlags()
    if configz is not None:
        if file is not None or drop_ins or flags.fields:
            fail(
                "a /configz answer is the running kubelet's whole configuration; give it "
                "alone, without a configuration file, drop-ins or flags"
            )
        return _from_configz(configz)
    sources: list[str] = []
    base: Mapping[str, object] = {}
    if file is not None:
        base = _checked(file)
        sources.append(f"file {file.name}")
    raw, defaulted = apply_defaults(base)
    origins = {name: "default" if name in defaulted else "file" for name in raw}
    raw = _apply_drop_ins(raw, drop_ins, origins)
    sources += [f"drop-in {drop_in.name}" for drop_in in drop_ins]
    for name, value in flags.fields.items():
        flag = flags.flag_names.get(name, "flag")
        if name == "featureGates" and isinstance(value, Mapping):
            earlier = raw.get(name)
            if isinstance(earlier, Mapping) and earlier:
                raw[name] = {**earlier, **value}
                origins[name] = f"{origins.get(name, 'file')} + flag {flag}"
                continue
        origins[name] = f"flag {flag}"
        raw[name] = value
    if flags.fields:
        sources.append("flags")
    raw, added = merge_default_eviction(raw)
    if added:
        origins["evictionHard"] = f"{origins['evictionHard']} + defaults"
    config = build_config(raw, KubeletConfig, with_options=True)
    return EffectiveConfig(
        config=config,
        origins={name: origins[name] for name in MANAGER_FIELDS if name in origins},
        root_dir=flags.root_dir or DEFAULT_ROOT_DIR,
        root_dir_origin="flag --root-dir" if flags.root_dir else "default",
        sources=tuple(sources),
    )


def _apply_drop_ins(
    raw: dict[str, object], drop_ins: Sequence[ConfigSource], origins: dict[str, str]
) -> dict[str, object]:
    """The drop-ins over the defaulted file, as the kubelet's JSON round trip does it.

    The kubelet merge-patches the drop-ins (v1beta1 names) onto the JSON of its internal
    type, whose keys are Go field names, then unmarshals the result into the loaded
    configuration. So the drop-ins patch one another (a later ``null`` removes an earlier
    drop-in's value), and their sum lands on the file's values as Go's json.Unmarshal
    does: a map adds and overrides entries (``evictionHard`` keeps the default signals),
    a list or scalar replaces, and nothing the file set can be removed.
    """
    patch: object = {}
    patch_origins: dict[str, str] = {}
    for drop_in in drop_ins:
        body = dict(_checked(drop_in))
        body.pop("kind", None)
        body.pop("apiVersion", None)
        patch = merge_patch(patch, body)
        for name, value in body.items():
            if value is None:
                patch_origins.pop(name, None)
            else:
                patch_origins[name] = f"drop-in {drop_in.name}"
    out = dict(raw)
    for name, value in patch.items() if isinstance(patch, Mapping) else ():
        earlier = out.get(name)
        if isinstance(value, Mapping) and isinstance(earlier, Mapping):
            out[name] = {**earlier, **value}
        else:
            out[name] = value
    origins.update(patch_origins)
    return out


def _checked(source: ConfigSource) -> Mapping[str, object]:
    """The source's mapping; a mistyped field is reported with the source's name."""
    try:
        body = check_kind(source.body)
        check_string_maps(body)
        decode(body, KubeletConfig)
    except ConfigError as err:
        msg = f"{source.name}: {err.message}"
        raise ConfigError(msg) from err
    return body


def _from_configz(source: ConfigSource) -> EffectiveConfig:
    body = configz_body(source.body)
    raw, defaulted = apply_defaults(body)
    origins = {name: "default" if name in defaulted else "configz" for name in raw}
    config = build_config(raw, KubeletConfig, with_options=True)
    return EffectiveConfig(
        config=config,
        origins={name: origins[name] for name in MANAGER_FIELDS if name in origins},
        sources=(f"configz {source.name}",),
    )
