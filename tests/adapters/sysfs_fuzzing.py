"""A fuzzer over sysfs trees (issue 21): regular machines, then their files made hostile.

Each case writes a small regular machine with :func:`tests.adapters.sysfs_tree.regular`,
then damages it: a file's text replaced (garbage, huge numbers, other scripts' digits,
NULs, masks of the wrong width), a file turned into a FIFO, a directory, a link to
``/dev/zero`` or out of the tree, a sparse file past the size cap, or deleted; CPU and node
directories added with odd ids. :func:`SysfsReader.read` must answer (a topology, with
warnings) or refuse with a one-line MachineError, within the case's time limit (a reader
that blocks on a FIFO is a finding, not a hang: the timer signal ends it).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
from pathlib import Path

from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.core import limits
from cpumanager.errors import MachineError
from tests.adapters.sysfs_tree import regular
from tests.extender.fuzzing import Tally, case_alarms, judge_case

__all__ = ["run"]

TEXTS = [
    "",
    "\n",
    "-1",
    "0x10",
    "99999999999999999999999999",
    "9" * 5_000,
    "\u0663",
    "0-",
    "0-99999999",
    "3-1",
    "0,,1",
    "ffffffff,ffffffff,ffffffff",
    "zz",
    "\x00\x00",
    "1 2 3",
    "10 20\n30",
    "Node 0 MemTotal: 99999999999999999999999 kB",
    "0-" + str(limits.MAX_CPUS * 4),
]


def _damage(rng: random.Random, root: Path, outside: Path) -> None:
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    for _ in range(rng.randint(1, 4)):
        if not files:
            return
        path = rng.choice(files)
        choice = rng.random()
        if choice < 0.45:
            path.write_text(rng.choice(TEXTS) + rng.choice(["", "\n"]))
            continue
        files.remove(path)
        path.unlink()
        if choice < 0.55:
            os.mkfifo(path)
        elif choice < 0.63:
            path.symlink_to("/dev/zero")
        elif choice < 0.7:
            path.symlink_to(outside)
        elif choice < 0.78:
            path.mkdir()
        elif choice < 0.86:
            with path.open("wb") as handle:
                handle.truncate(limits.MAX_SYSFS_FILE_BYTES + rng.randint(1, 4096))
        # else: simply missing
    if rng.random() < 0.2:
        extra = rng.choice(["cpu", "node"])
        number = rng.choice([7, 64, 4095, 2**20, 2**40])
        base = root / "sys/devices/system" / ("cpu" if extra == "cpu" else "node")
        (base / f"{extra}{number}").mkdir(parents=True, exist_ok=True)


def run(count: int, seed: int, scratch: Path, *, case_seconds: float = 10.0) -> Tally:
    """``count`` damaged trees under ``scratch`` through the reader."""
    rng = random.Random(seed)
    tally = Tally()
    outside = scratch / "outside"
    outside.write_text("0-3\n")
    with case_alarms():
        for index in range(count):
            root = scratch / f"t{index % 4}"
            shutil.rmtree(root, ignore_errors=True)
            regular(
                root,
                sockets=rng.choice([1, 2]),
                cores=rng.choice([1, 2, 3]),
                threads=rng.choice([1, 2]),
                numa=rng.random() < 0.8,
            )
            _damage(rng, root, outside)

            def attempt(root: Path = root) -> tuple[str, str]:
                # the kubelet's view too: a clear MachineError (cadvisor fails) or a topology
                with contextlib.suppress(MachineError):
                    SysfsReader(root, view="kubelet").read()
                topology = SysfsReader(root, view="kernel").read()
                return ("read-with-warnings" if topology.warnings else "read"), ""

            judge_case(tally, index, case_seconds, attempt)
    return tally
