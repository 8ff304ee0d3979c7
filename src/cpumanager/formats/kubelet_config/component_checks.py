"""ValidateKubeletConfiguration's checks of the component-base sections: logging and
tracing (pure), as 1.32 gives them (``logsapi.Validate``, ``ValidateTracingConfiguration``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cpumanager.formats.kubelet_config.checks import go_q

__all__ = ["logging_messages", "tracing_messages"]


def logging_messages(raw: object) -> list[str]:
    """component-base ``logsapi.Validate``: the format must be one the kubelet registers."""
    if not isinstance(raw, Mapping):
        return []
    log_format = raw.get("format") or "text"
    if isinstance(log_format, str) and log_format not in ("text", "json"):
        return [f"logging.format: Invalid value: {go_q(log_format)}: Unsupported log format"]
    return []


_MAX_SAMPLING = 1_000_000
_SCHEMES = ("dns", "unix", "unix-abstract")


def tracing_messages(raw: object, *, gate_on: bool) -> list[str]:
    """component-base ``ValidateTracingConfiguration`` with gate KubeletTracing on; with it
    off, tracing must not be set. The endpoint's scheme is checked (``dns://`` assumed
    without ``//``), and the URL as Go's ``url.Parse`` refuses it for a control character,
    a host name's character or its port (its other refusals are not modelled)."""
    if raw is None:
        return []
    if not gate_on:
        return [
            "invalid configuration: tracing should not be configured if KubeletTracing feature "
            "flag is disabled."
        ]
    if not isinstance(raw, Mapping):
        return []
    out: list[str] = []
    rate = raw.get("samplingRatePerMillion")
    if isinstance(rate, int) and not isinstance(rate, bool):
        where = f"tracing.samplingRatePerMillion: Invalid value: {rate}: "
        if rate < 0:
            out.append(where + "sampling rate must be positive")
        if rate > _MAX_SAMPLING:
            out.append(
                where + "sampling rate per million must be less than or equal to one million"
            )
    endpoint = raw.get("endpoint")
    if isinstance(endpoint, str):
        url = endpoint if "//" in endpoint else "dns://" + endpoint
        where = f"tracing.endpoint: Invalid value: {go_q(url)}: "
        problem = _url_problem(url)
        scheme = _url_scheme(url)
        if problem is not None:
            out.append(f"{where}parse {go_q(url)}: {problem}")
        elif scheme is not None and scheme not in _SCHEMES:
            out.append(
                f"{where}unsupported scheme: {scheme}.  Options are none, dns, unix, or "
                "unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md"
            )
    return out


def _url_scheme(url: str) -> str | None:
    """Go's ``url.Parse`` scheme (lower-cased), "" when there is none, None when the URL is
    one Go may refuse to parse for reasons not modelled."""
    if "%" in url or "[" in url or "]" in url:
        return None
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
    if match:
        return match.group(1).lower()
    return None if url.startswith(":") else ""


# ASCII bytes Go's url.Parse accepts in a host name (besides letters and digits)
_HOST_CHARS = frozenset("-._~!$&'()*+,;=:[]<>\"%")


def _url_problem(url: str) -> str | None:
    """Go's ``url.Parse`` refusal of ``url`` for a control character, a character a host
    name cannot hold, or a port that is not a number; None otherwise (or not modelled)."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return "net/url: invalid control character in URL"
    _, sep, rest = url.partition("//")
    if not sep:
        return None
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    if host.startswith("["):
        return None  # an IPv6 literal: not modelled
    for ch in host:
        if ord(ch) < 0x80 and not ch.isalnum() and ch not in _HOST_CHARS:
            return f"invalid character {go_q(ch)} in host name"
    port = _bad_port(host)
    return f"invalid port {go_q(port)} after host" if port else None


def _bad_port(host: str) -> str | None:
    """The ``:port`` of ``host:port`` when the port is not a number."""
    _, colon, port = host.rpartition(":")
    if colon and port and not port.isdigit():
        return ":" + port
    return None
