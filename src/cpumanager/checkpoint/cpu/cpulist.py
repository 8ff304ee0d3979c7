"""CPU lists as the kubelet's ``cpuset.Parse`` reads them, with Go's error texts."""

from __future__ import annotations

import re

from cpumanager.core.cpuset import MAX_CHECKPOINT_CPU_ID, CPUSet
from cpumanager.core.gocompat import go_quote

__all__ = ["CPUListError", "parse_cpu_list"]

# Go's cpuset is a hash set, so "0-4000000000" is merely slow there; our CPUSet is a bitmask
# and would need gigabytes. Linux caps NR_CPUS at 8192; ids past MAX_CHECKPOINT_CPU_ID
# (65,535, in core/cpuset.py beside CPUSet's own bound) are refused. The fast path's five
# digits are what that bound allows.
_ONE_RANGE = re.compile(r"([0-9]{1,5})(?:-([0-9]{1,5}))?")


class CPUListError(ValueError):
    """A CPU list the kubelet's ``cpuset.Parse`` rejects; ``str()`` is Go's error text."""


def _go_atoi(text: str) -> int:
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        message = f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax"
        raise CPUListError(message)
    value = -int(body) if text[:1] == "-" else int(body)
    if not -(1 << 63) <= value < (1 << 63):
        message = f"strconv.Atoi: parsing {go_quote(text)}: value out of range"
        raise CPUListError(message)
    return value


def parse_cpu_list(text: str) -> CPUSet:
    """``k8s.io/utils/cpuset.Parse`` with Go's error texts, refusing ids above 65,535."""
    if text == "":
        return CPUSet()
    single = _ONE_RANGE.fullmatch(text)
    if single is not None:  # "a" or "a-b" in plain digits: the usual container
        start = int(single.group(1))
        end = start if single.group(2) is None else int(single.group(2))
        if start <= end <= MAX_CHECKPOINT_CPU_ID:
            return CPUSet.from_bits(((1 << (end - start + 1)) - 1) << start)
    bits = 0
    for element in text.split(","):
        start_text, dash, end_text = element.partition("-")
        start = _go_atoi(start_text)
        end = _go_atoi(end_text) if dash else start
        if dash and start > end:
            message = f"invalid range {go_quote(element)} ({start} > {end})"
            raise CPUListError(message)
        if start < 0:  # Atoi splitting at the first '-' never yields one; kept for safety
            message = f"negative CPU id in {go_quote(element)}"
            raise CPUListError(message)
        if end > MAX_CHECKPOINT_CPU_ID:
            message = (
                f"CPU id {end} in {go_quote(element)} is above {MAX_CHECKPOINT_CPU_ID}, "
                "the largest this tool accepts"
            )
            raise CPUListError(message)
        bits |= ((1 << (end - start + 1)) - 1) << start
    return CPUSet.from_bits(bits)
