"""Read the kubelet's configuration sources from files, and assemble the effective configuration.

The parsing is pure (``cpumanager.formats.kubelet_config``); this module only reads: the
configuration file, a ``--config-dir`` drop-in directory, a kubelet command line, a systemd
unit with its drop-ins and environment files, env files such as ``kubeadm-flags.env``, and
a ``/configz`` answer. Every file is bounded in size and must be a regular file; drop-ins
that link out of their directory are refused. OS and parse failures become one-line
:class:`InputError` / :class:`ConfigError` messages naming the file; validation errors keep
the kubelet's wording.

:func:`load_effective_config` is the library entry point (node snapshots call it).
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from cpumanager.adapters._text import load_yaml_documents, read_bounded_text
from cpumanager.adapters.go_yaml import YamlShapeError, parse_yaml_keeping_duplicates
from cpumanager.core import limits
from cpumanager.core.printable import printable
from cpumanager.core.versions import Release
from cpumanager.errors import ConfigError, InputError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config import (
    ConfigSource,
    EffectiveConfig,
    KubeletConfig,
    assemble,
    parse_kubelet_flags,
)
from cpumanager.formats.kubelet_config.assemble import DROP_IN_CHECKS_SINCE
from cpumanager.formats.kubelet_config.document import decode_drop_in, decode_file
from cpumanager.formats.kubelet_config.fields import check_string_maps
from cpumanager.formats.kubelet_config.launch import (
    argv_from_env,
    expand_exec_start,
    parse_env_file,
    parse_systemd_unit,
    split_command_line,
)

__all__ = [
    "MAX_DROP_INS",
    "MAX_FILE_BYTES",
    "kubelet_config_from_text",
    "load_effective_config",
    "parse_yaml_keeping_duplicates",
    "read_config_source",
    "read_drop_in_dir",
    "read_kubelet_config",
    "read_systemd_unit_argv",
]

MAX_FILE_BYTES = 4 * 2**20  # a real KubeletConfiguration is a few KiB
MAX_DROP_INS = 256
_MAX_DEPTH = 8


def _load_yaml(text: str, *, source: str) -> object:
    # Depth-checked before composing; the pure loader keeps PyYAML's error positions.
    docs = load_yaml_documents(
        text, source=source, error=ConfigError, remedy="fix the file", loader=yaml.SafeLoader
    )
    if len(docs) > 1:
        msg = f"{source}: holds {len(docs)} YAML documents; give one KubeletConfiguration"
        raise ConfigError(msg)
    return {} if not docs or docs[0] is None else docs[0]


def kubelet_config_from_text(text: str, *, source: str) -> KubeletConfig:
    """Parse KubeletConfiguration text; ``source`` names it in messages."""
    data = _load_yaml(text, source=source)
    try:
        if isinstance(data, Mapping):
            check_string_maps(data)
        return KubeletConfig.from_mapping(data)
    except KubeletConfigInvalidError as err:
        # The kubelet's messages quote values as found; a newline in one must not split
        # the one-line error.
        errors = tuple(f"{source}: {printable(e)}" for e in err.errors)
        raise KubeletConfigInvalidError(errors) from err
    except ConfigError as err:
        msg = f"{source}: {printable(err.message)}"
        raise ConfigError(msg) from err
    except (ValueError, RecursionError) as err:  # e.g. a CPU id of 5,000 digits: int() refuses
        msg = f"{source}: a value cannot be used ({printable(str(err))[:120]}); fix the file"
        raise ConfigError(msg) from err


def read_kubelet_config(path: Path) -> KubeletConfig:
    """Read, default and validate one KubeletConfiguration file."""
    text = read_bounded_text(path, what="kubelet configuration", max_bytes=MAX_FILE_BYTES)
    return kubelet_config_from_text(text, source=str(path))


def read_config_source(
    path: Path,
    *,
    inside: Path | None = None,
    name: str = "",
    as_kubelet: bool = False,
    release: Release | None = None,
) -> ConfigSource:
    """A YAML or JSON configuration document, bounded and regular.

    ``as_kubelet`` decodes it as the kubelet's loader does (``formats.kubelet_config.document``:
    an empty or comment-only file, ``{`` read as JSON, apiVersion/kind, duplicate fields),
    refusing at stage ``loads``; ``release`` names the kubelet whose fields are known.
    """
    text = read_bounded_text(
        path, what="kubelet configuration", max_bytes=MAX_FILE_BYTES, inside=inside
    )
    if as_kubelet:
        try:
            loaded = decode_file(
                text, path=str(path), parse_yaml=parse_yaml_keeping_duplicates, release=release
            )
        except YamlShapeError as err:
            msg = f"{path}: {err}; fix the file"
            raise ConfigError(msg) from err
        except RecursionError as err:
            msg = f"{path}: nested too deeply to read; fix the file"
            raise ConfigError(msg) from err
        except ValueError as err:  # e.g. an integer of more than 4,300 digits
            msg = f"{path}: a value cannot be read ({printable(str(err))[:120]}); fix the file"
            raise ConfigError(msg) from err
        if limits.depth_of(loaded.body) > limits.MAX_DEPTH:
            msg = f"{path}: nested deeper than {limits.MAX_DEPTH} levels; fix the file"
            raise ConfigError(msg)
        return ConfigSource(
            name=name or str(path),
            body=loaded.body,
            warnings=loaded.warnings,
            from_json=loaded.from_json,
            pairs=loaded.pairs,
        )
    return ConfigSource(name=name or str(path), body=_load_yaml(text, source=str(path)))


def read_drop_in_dir(directory: Path, *, as_kubelet: bool = False) -> list[ConfigSource]:
    """``*.conf`` drop-ins in the order the kubelet walks them (lexical, depth first).

    ``as_kubelet`` loads each as 1.32's kubelet does (kind and apiVersion required, a key
    given twice refused; ``formats.kubelet_config.document.decode_drop_in``).
    """
    if not os.path.isdir(directory):  # False on any OSError, e.g. a name too long
        msg = (
            f"failed to walk through kubelet dropin directory {str(directory)!r}: it is not a "
            "directory; check --config-dir"
        )
        raise InputError(msg)
    found: list[Path] = []
    _walk(directory, found, depth=0)
    if as_kubelet:
        return [_kubelet_drop_in(path, directory) for path in found]
    return [
        read_config_source(path, inside=directory, name=str(path.relative_to(directory)))
        for path in found
    ]


def _kubelet_drop_in(path: Path, directory: Path) -> ConfigSource:
    text = read_bounded_text(
        path, what="kubelet configuration", max_bytes=MAX_FILE_BYTES, inside=directory
    )
    try:
        loaded = decode_drop_in(
            text,
            path=str(path),
            directory=str(directory),
            parse_yaml=parse_yaml_keeping_duplicates,
        )
    except YamlShapeError as err:
        msg = f"{path}: {err}; fix the file"
        raise ConfigError(msg) from err
    except RecursionError as err:
        msg = f"{path}: nested too deeply to read; fix the file"
        raise ConfigError(msg) from err
    if limits.depth_of(loaded.body) > limits.MAX_DEPTH:
        msg = f"{path}: nested deeper than {limits.MAX_DEPTH} levels; fix the file"
        raise ConfigError(msg)
    return ConfigSource(name=str(path.relative_to(directory)), body=loaded.body)


def _walk(directory: Path, found: list[Path], *, depth: int) -> None:
    try:
        entries = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError as err:
        msg = f"cannot list drop-in directory {str(directory)!r}: {err.strerror or err}"
        raise InputError(msg) from err
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            if depth < _MAX_DEPTH:
                _walk(entry, found, depth=depth + 1)
        elif entry.suffix == ".conf":
            found.append(entry)
            if len(found) > MAX_DROP_INS:
                msg = f"more than {MAX_DROP_INS} drop-ins under {str(directory)!r}; refused"
                raise InputError(msg)


def _under(root: Path, named: str) -> Path:
    """A path the kubelet's own files name, looked up under ``root`` as if ``root`` were
    ``/``: ``..`` stops at ``root`` (``/../../etc/x`` is ``root/etc/x``). Reads through it
    also pass ``inside=root``, so a symbolic link cannot lead out either."""
    return root / posixpath.normpath("/" + named).lstrip("/")


# systemd's unit directories, highest priority first (a drop-in in /etc masks one of the
# same name in /usr/lib); the unit's own directory ranks after /run.
_UNIT_DIRS = ("etc/systemd/system", "run/systemd/system")
_VENDOR_UNIT_DIRS = ("usr/local/lib/systemd/system", "usr/lib/systemd/system", "lib/systemd/system")


def _unit_drop_ins(unit: Path, root: Path) -> list[tuple[Path, Path]]:
    """``UNIT.d/*.conf`` from every unit directory, in name order, as systemd merges them.

    systemd's directories under ``root`` are searched only when the unit is installed in one
    of them (a unit file copied elsewhere brings only its own ``UNIT.d``).
    """
    name = f"{unit.name}.d"
    installed = {(root / d).resolve() for d in (*_UNIT_DIRS, *_VENDOR_UNIT_DIRS)}
    if unit.parent.resolve() in installed:
        dirs = [root / d / name for d in _UNIT_DIRS]
        dirs += [unit.parent / name, *(root / d / name for d in _VENDOR_UNIT_DIRS)]
    else:
        dirs = [unit.parent / name]
    chosen: dict[str, tuple[Path, Path]] = {}
    seen: set[Path] = set()
    for directory in dirs:
        if not directory.is_dir() or directory.resolve() in seen:
            continue
        seen.add(directory.resolve())
        for path in directory.glob("*.conf"):
            chosen.setdefault(path.name, (path, directory))
    return [chosen[name] for name in sorted(chosen)]


def read_systemd_unit_argv(unit: Path, *, root: Path = Path("/")) -> list[str]:
    """The kubelet's words from a unit, its drop-ins and environment files.

    Drop-ins come from ``UNIT.d/`` next to the unit and, for a unit installed under ``root``,
    from systemd's unit directories there (/etc, /run, /usr/local/lib, /usr/lib, /lib),
    merged by file name.
    """
    texts = [(str(unit), _read_text(unit, "systemd unit"))]
    for path, directory in _unit_drop_ins(unit, root):
        text = read_bounded_text(
            path, what="systemd drop-in", max_bytes=MAX_FILE_BYTES, inside=directory
        )
        texts.append((str(path), text))
    service = parse_systemd_unit(texts)
    if service.exec_start is None:
        msg = f"systemd unit {str(unit)!r} has no ExecStart= in [Service]; give the kubelet's unit"
        raise ConfigError(msg)
    environment = dict(service.environment)
    for named, optional in service.environment_files:
        path = _under(root, named)
        if optional and not os.path.lexists(path):  # any OSError (a name too long): absent
            continue
        text = read_bounded_text(
            path, what="environment file", max_bytes=MAX_FILE_BYTES, inside=root
        )
        environment.update(parse_env_file(text))
    return expand_exec_start(service.exec_start, environment, source=str(unit))


def _read_text(path: Path, what: str) -> str:
    return read_bounded_text(path, what=what, max_bytes=MAX_FILE_BYTES)


def load_effective_config(
    *,
    config: Path | None = None,
    config_dir: Path | None = None,
    flags: Sequence[str] = (),
    kubelet_cmdline: Path | None = None,
    systemd_unit: Path | None = None,
    env_files: Sequence[Path] = (),
    configz: Path | None = None,
    root: Path = Path("/"),
    release: Release | None = None,
) -> EffectiveConfig:
    """The configuration the kubelet would run with, and where each field came from.

    Flags are gathered from the systemd unit, then the command-line file, then the env
    files, then ``flags`` (later words win). ``config`` / ``config_dir`` default to the
    ``--config`` / ``--config-dir`` those flags name, looked up under ``root``.
    Raises InputError / ConfigError for unreadable or malformed sources, and
    KubeletConfigInvalidError listing every error the kubelet's validation would give.
    With ``release``, the file is loaded, defaulted and checked as that kubelet release
    does, and the error names the stage that refuses (``loads``, ``validates``, ``starts``).
    """
    words: list[str] = []
    if systemd_unit is not None:
        words += read_systemd_unit_argv(systemd_unit, root=root)
    if kubelet_cmdline is not None:
        words += split_command_line(
            _read_text(kubelet_cmdline, "kubelet command line"), source=str(kubelet_cmdline)
        )
    for env_file in env_files:
        words += argv_from_env(parse_env_file(_read_text(env_file, "environment file")))
    words += list(flags)
    parsed = parse_kubelet_flags(words)
    if configz is not None:
        text = _read_text(configz, "configz answer")
        try:
            body = json.loads(text)
        except ValueError as err:
            msg = f"{configz}: not valid JSON ({err}); save the answer of /configz as is"
            raise ConfigError(msg) from err
        except RecursionError as err:
            msg = f"{configz}: nested too deeply to read; save the answer of /configz as is"
            raise ConfigError(msg) from err
        if limits.depth_of(body) > limits.MAX_DEPTH:
            msg = f"{configz}: nested deeper than {limits.MAX_DEPTH} levels; save the answer as is"
            raise ConfigError(msg)
        return assemble(configz=ConfigSource(name=str(configz), body=body), flags=parsed)
    inside = None
    if config is None and parsed.config:
        config, inside = _under(root, parsed.config), root
    if config_dir is None and parsed.config_dir:
        config_dir = _under(root, parsed.config_dir)
        if not config_dir.resolve().is_relative_to(root.resolve()):
            msg = f"--config-dir {parsed.config_dir!r} links out of {str(root)!r}; refused"
            raise InputError(msg)
    as_kubelet = release is not None
    file = (
        read_config_source(config, inside=inside, as_kubelet=as_kubelet, release=release)
        if config is not None
        else None
    )
    strict_drop_ins = release is not None and release >= DROP_IN_CHECKS_SINCE
    drop_ins = (
        read_drop_in_dir(config_dir, as_kubelet=strict_drop_ins) if config_dir is not None else []
    )
    return assemble(file=file, drop_ins=drop_ins, flags=parsed, release=release)
