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

Given a kubelet ``release``, the result is checked as that release checks it, stage by stage
(``KubeletConfigInvalidError.stage``): every field's type (``loads``), the feature gates and
``ValidateKubeletConfiguration`` over the whole configuration (``validates``, see
``whole.py``), then the managers' refusals when the container manager builds them
(``starts``). Without a release, only the fields read here are checked, all at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cpumanager.core.versions import NEWEST, Release
from cpumanager.errors import ConfigError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config import whole
from cpumanager.formats.kubelet_config.decode import build_config, check_kind, decode
from cpumanager.formats.kubelet_config.defaults import (
    DEFAULT_ROOT_DIR,
    MANAGER_FIELDS,
    apply_defaults,
    merge_default_eviction,
)
from cpumanager.formats.kubelet_config.document import load_refusal
from cpumanager.formats.kubelet_config.fields import check_string_maps, fail, mapping
from cpumanager.formats.kubelet_config.flags import KubeletFlags
from cpumanager.formats.kubelet_config.model import KubeletConfig
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_SINCE
from cpumanager.formats.kubelet_config.validation import start_order_errors

__all__ = [
    "DROP_IN_CHECKS_SINCE",
    "DROP_IN_DEFAULTS_SINCE",
    "ConfigSource",
    "EffectiveConfig",
    "assemble",
    "configz_body",
    "merge_patch",
]

# From this release the kubelet applies v1beta1 defaulting to the configuration merged with
# the drop-ins (established in 1.32's mergeKubeletConfigurations; earlier releases: open).
DROP_IN_DEFAULTS_SINCE: Release = (1, 32)
# ... and loads each drop-in strictly (kind/apiVersion required, duplicate keys refused),
# reporting a mistyped field once merged (1.32's code; earlier releases: open).
DROP_IN_CHECKS_SINCE: Release = (1, 32)


@dataclass(frozen=True, slots=True)
class ConfigSource:
    """One configuration document: its name (a path or drop-in file name) and content."""

    name: str
    body: object
    warnings: tuple[str, ...] = ()
    from_json: bool = False  # a JSON file: the kubelet decodes its fields in the file's order
    pairs: tuple[tuple[str, object], ...] = ()  # a JSON file's fields, repeats included


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    """The configuration the kubelet would run with, and where each field came from."""

    config: KubeletConfig
    origins: Mapping[str, str]  # v1beta1 field name -> origin
    root_dir: str = DEFAULT_ROOT_DIR
    root_dir_origin: str = "default"
    sources: tuple[str, ...] = field(default_factory=tuple)
    release: Release | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

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
    release: Release | None = None,
) -> EffectiveConfig:
    """Merge the sources in the kubelet's order, then decode and validate the result.

    Raises ConfigError for a malformed source and KubeletConfigInvalidError listing every
    validation error of the merged configuration. With ``release``, defaults and checks
    are that kubelet release's, and the error carries the stage that refuses.
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
        base = _checked(file, release=release)
        sources.append(f"file {file.name}")
    raw, defaulted = apply_defaults(base, release=release or NEWEST)
    origins = {name: "default" if name in defaulted else "file" for name in raw}
    if drop_ins and release is not None and release >= DROP_IN_CHECKS_SINCE:
        _typed_drop_ins(drop_ins)
    raw = _apply_drop_ins(raw, drop_ins, origins)
    if drop_ins and release is not None and release >= DROP_IN_DEFAULTS_SINCE:
        # 1.32 defaults the merged configuration again: a drop-in's zero is unset.
        raw, again = apply_defaults(raw, release=release)
        for name in again:
            origins[name] = f"{origins.get(name, 'default')} + defaults"
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
    raw, added = merge_default_eviction(raw, release=release or NEWEST)
    if added:
        origins["evictionHard"] = f"{origins['evictionHard']} + defaults"
    if release is None:
        config = build_config(raw, KubeletConfig, with_options=True)
    else:
        file_gates = base.get("featureGates") if isinstance(base, Mapping) else None
        config = _staged(raw, release, file_gates=file_gates)
    warnings = [w for source in (file, *drop_ins) if source is not None for w in source.warnings]
    return EffectiveConfig(
        config=config,
        origins={name: origins[name] for name in MANAGER_FIELDS if name in origins},
        root_dir=flags.root_dir or DEFAULT_ROOT_DIR,
        root_dir_origin="flag --root-dir" if flags.root_dir else "default",
        sources=tuple(sources),
        release=release,
        warnings=tuple(warnings),
    )


def _staged(raw: Mapping[str, object], release: Release, *, file_gates: object) -> KubeletConfig:
    """The kubelet's stages over the merged configuration; the first that refuses raises."""
    try:
        typed = whole.decode_fields(
            {k: v for k, v in raw.items() if FIELD_SINCE.get(k, (1, 0)) <= release}
        )
    except ConfigError as err:
        raise KubeletConfigInvalidError((err.message,), stage="loads") from err
    gates = typed.get("featureGates")
    gate_values = dict(gates) if isinstance(gates, Mapping) else {}
    problem = whole.gate_error(gate_values, release)
    if problem is not None:
        raise KubeletConfigInvalidError(
            (whole.gate_refusal(problem, release, from_file=isinstance(file_gates, Mapping)),),
            stage="loads" if whole.gates_panic(release, file_gates) else "validates",
        )
    messages = whole.validation_messages(whole.defaulted(typed, release), release, gate_values)
    if messages:
        raise KubeletConfigInvalidError(tuple(messages), stage="validates")
    try:
        config, errors = decode(raw, KubeletConfig)
    except ConfigError as err:
        raise KubeletConfigInvalidError((err.message,), stage="starts") from err
    errors = [*errors, *start_order_errors(config)]
    if errors:
        raise KubeletConfigInvalidError(tuple(errors), stage="starts")
    return config


def _typed_drop_ins(drop_ins: Sequence[ConfigSource]) -> None:
    """The drop-ins' field types, as the kubelet reports them once merged (``loads``)."""
    for drop_in in drop_ins:
        if not isinstance(drop_in.body, Mapping):
            continue
        try:
            whole.decode_fields(drop_in.body)
        except ConfigError as err:
            text = (
                "failed to merge kubelet configs: failed to unmarshal merged JSON into kubelet "
                f"configuration: {err.message}"
            )
            raise KubeletConfigInvalidError((text,), stage="loads") from err


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


def _checked(source: ConfigSource, *, release: Release | None = None) -> Mapping[str, object]:
    """The source's mapping; a mistyped field is reported with the source's name.

    With a ``release``, the fields that release has are checked as its decoder checks them
    (stage ``loads``, with its text) and the others dropped; what the kubelet reads only
    when it starts (a reservation's resources) is left to ``_staged``.
    """
    typed = release is not None
    try:
        body = check_kind(source.body)
        if release is not None:
            # a field the release does not have is unknown to it: dropped, unread
            body = {k: v for k, v in body.items() if FIELD_SINCE.get(k, (1, 0)) <= release}
            whole.decode_fields(body, from_json=source.from_json, pairs=source.pairs)
    except ConfigError as err:
        if typed:
            raise load_refusal(source.name, f"failed to decode: {err.message}") from err
        msg = f"{source.name}: {err.message}"
        raise ConfigError(msg) from err
    if typed:
        # the kubelet reads the values it does not type (a reservation's resources and
        # quantities) only when it starts: refused then (``_staged``), not here
        return body
    try:
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
