"""Mutation fuzzer for checkpoint files: shared by the test suite and bench/fuzz_checkpoint.py.

Each case mutates a valid kubelet file (bit flips, interesting bytes and tokens, cuts,
duplications, splices with another seed) and then checks that:

* the codec, the restore pipeline and ``diagnose`` either succeed or raise a CpuManagerError
  (anything else is a "traceback");
* a CheckpointStore that fails to load the file refuses to save over it, and the directory
  is left exactly as it was;
* every ``cli_every``-th case, ``cpumanager state rewrite IN --output-file OUT`` exits 0
  with a valid OUT, or exits 1 with one line on stderr and no OUT.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner

from cpumanager.adapters.checkpoint_store import CheckpointStore
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.restore import diagnose, restore_state
from cpumanager.cli.main import main
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointError, CpuManagerError, StoreError

GOLDEN = Path(__file__).resolve().parent / "golden"
SEEDS: tuple[bytes, ...] = (
    *(p.read_bytes() for p in sorted(GOLDEN.glob("*.json"))),
    b'{"policyName":"static","defaultCpuSet":"0,5-7","entries":{"pod":{"app":"1-2","init":"1-4"}},'
    b'"checksum":0}',
    b'{"policyName":"static","defaultCpuSet":"0-1","entries":null,"checksum":1674203617}',
    b'{\n\t"policyName": "none",\n\t"defaultCPUSet": "1-3",\n\t"entries": {\n\t\t"containerID1": '
    b'"4-6",\n\t\t"containerID2": "1-3"\n\t},\n\t"checksum": 3680390589\n}',
)
CMAP = ContainerMap(
    [
        (ContainerID("cid-app"), PodUID("pod-uid-1"), ContainerName("app")),
        (ContainerID("cid-sidecar"), PodUID("pod-uid-1"), ContainerName("sidecar")),
        (ContainerID("containerID1"), PodUID("pod"), ContainerName("container1")),
        (ContainerID("containerID2"), PodUID("pod"), ContainerName("container2")),
    ]
)
INTERESTING = (
    b"null", b'"', b"\\", b"\\u0000", b"\\ud800", b"1e999", b"-", b",,", b"{", b"}", b"[", b"]",
    b"99999999999999999999", b"18446744073709551616", b"0-4294967295", b"\xff", b"\xe2\x82",
    b"\x00", b" ", b"\n", b"[[[[[[[[", b'"entries":{"p":null}', b'"checksum":0', b"true",
    b'"POLICYNAME":"x"', b"\xef\xbb\xbf", b"NaN", b":", b"0", b"1-", b"3-1",
)  # fmt: skip
ALL_CPUS = CPUSet.range(0, 64)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """Apply one to four random mutations."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        pos = rng.randrange(len(buf) + 1) if buf else 0
        if op == 0 and buf:
            index = rng.randrange(len(buf))
            buf[index] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            buf[rng.randrange(len(buf))] = rng.choice(b'{}[]:,"\\-0123456789 \x00\x7f\xff')
        elif op == 2:
            buf[pos:pos] = rng.choice(INTERESTING)
        elif op == 3 and buf:
            end = min(len(buf), pos + rng.randint(1, 16))
            del buf[pos:end]
        elif op == 4 and buf:
            end = min(len(buf), pos + rng.randint(1, 32))
            buf[pos:pos] = buf[pos:end]
        elif op == 5:
            del buf[rng.randrange(len(buf) + 1) :]
        elif op == 6:
            other = rng.choice(SEEDS)
            cut = rng.randrange(len(other) + 1)
            buf[pos:] = other[cut:]
        elif op == 7 and buf:
            digits = [i for i, b in enumerate(buf) if 48 <= b <= 57]
            if digits:
                buf[rng.choice(digits)] = rng.choice(b"0123456789-,")
        else:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    return bytes(buf)


def cases(count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(rng.choice(SEEDS), rng)


@dataclass
class Tally:
    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    cli_runs: int = 0
    tracebacks: list[tuple[bytes, str]] = field(default_factory=list)


def _library(data: bytes) -> bool:
    """Run the pure layers; True when the kubelet would restore the file."""
    codec.attempts(data)
    codec.unknown_keys(data)
    diagnose(data, source="f", configured_policy="static", container_map=CMAP, all_cpus=ALL_CPUS)
    diagnose(data, source="f")
    with contextlib.suppress(CheckpointError):
        codec.decode(data, source="f", order="v2-first")
    try:
        restore_state(data, source="f", configured_policy="static", container_map=CMAP)
    except CheckpointError:
        return False
    return True


def _store(data: bytes, directory: Path) -> None:
    path = directory / "cpu_manager_state"
    path.write_bytes(data)
    before = sorted(p.name for p in directory.iterdir())
    store = CheckpointStore(directory)
    try:
        store.load("static", CMAP)
    except CheckpointError:
        try:
            store.save(StateSnapshot("static"))
        except StoreError:
            pass
        else:
            msg = "a store saved over a file that failed to load"
            raise AssertionError(msg) from None
        assert path.read_bytes() == data
        assert sorted(p.name for p in directory.iterdir()) == before
    for leftover in directory.iterdir():
        leftover.unlink()


def _cli(data: bytes, directory: Path) -> None:
    source, out = directory / "in", directory / "out"
    source.write_bytes(data)
    with CliRunner().isolation() as (_stdout, stderr, _mixed):
        try:
            main(["state", "rewrite", str(source), "--output-file", str(out)])
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        errors = stderr.getvalue().decode()
    if code == 0:
        codec.decode(out.read_bytes(), source="out", order="v2-first")
    else:
        assert code == 1, errors
        assert not out.exists()
        assert errors.startswith("cpumanager: error: "), errors
        assert errors.count("\n") == 1, errors
    assert source.read_bytes() == data
    for leftover in directory.iterdir():
        leftover.unlink()


def run(count: int, seed: int, directory: Path, *, cli_every: int = 10) -> Tally:
    """Fuzz ``count`` cases; unexpected exceptions are recorded, not raised."""
    tally = Tally()
    for index, data in enumerate(cases(count, seed)):
        tally.cases += 1
        try:
            if _library(data):
                tally.accepted += 1
            else:
                tally.rejected += 1
            _store(data, directory)
            if cli_every and index % cli_every == 0:
                tally.cli_runs += 1
                _cli(data, directory)
        except Exception as err:  # every escape is a finding, whatever its type
            kind = "uncaught " if isinstance(err, CpuManagerError) else ""
            tally.tracebacks.append((data, f"{kind}{type(err).__name__}: {err}"))
            for leftover in directory.iterdir():
                leftover.unlink()
    return tally
