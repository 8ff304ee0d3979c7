"""Mutation fuzzer for the memory and device checkpoints (also bench/fuzz_node_checkpoints.py).

Each case mutates a golden ``memory_manager_state`` or ``kubelet_internal_checkpoint`` (byte
flips, interesting tokens, cuts, duplications) and checks that ``decode_any``, the two
restores, ``verify``/``rewrite`` and, every ``cli_every``-th case, ``cpumanager state rewrite``
either succeed or raise a CpuManagerError (anything else is a traceback); that a file which
decodes re-encodes to bytes that decode to the same checkpoint; that the Static policy's
validation runs on any memory file that decodes (checksum or not); and that a failed rewrite
writes no file.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from cpumanager.checkpoint import kinds, node_files
from cpumanager.checkpoint.device.restore import restore_device_state
from cpumanager.checkpoint.memory.codec import MemoryManagerCheckpoint
from cpumanager.checkpoint.memory.restore import (
    default_machine_state,
    restore_memory_state,
    validate_memory_state,
)
from cpumanager.errors import CpuManagerError
from tests.checkpoint.fuzzing import Tally
from tests.cli.runner import run_main

GOLDEN = Path(__file__).resolve().parent / "golden"
SEEDS: tuple[bytes, ...] = tuple(
    p.read_bytes()
    for sub in ("memory", "device")
    for p in sorted((GOLDEN / sub).glob("*.json"))
    if "invalid-json" not in p.name
)
TOKENS = (
    b"null", b'"', b"\\", b"\\ud800", b"1e999", b"-1", b"18446744073709551616", b"{", b"}",
    b"[", b"]", b",", b"\xff", b'"-1"', b'"x"', b"[]", b"{}", b'"AAA"', b'"CgA="', b"0",
    b'"machineState"', b'"Data"', b'"cells"', b'"DeviceIDs"',
)  # fmt: skip


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(out) + 1)
        choice = rng.random()
        if choice < 0.3 and out:
            out[min(pos, len(out) - 1)] ^= 1 << rng.randrange(8)
        elif choice < 0.6:
            out[pos:pos] = rng.choice(TOKENS)
        elif choice < 0.8:
            del out[pos : pos + rng.randint(1, 12)]
        else:
            start = rng.randrange(len(out) + 1)
            out[pos:pos] = out[start : start + rng.randint(1, 40)]
    return bytes(out)


def cases(count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(count):
        yield mutate(rng.choice(SEEDS), rng)


def check(data: bytes, directory: Path, *, cli: bool, tally: Tally) -> None:
    tally.cases += 1
    try:
        kind, checkpoint = kinds.decode_any(data, source="fuzz")
        again = kinds.decode_any(kinds.encode_any(checkpoint), source="fuzz")
        if again != (kind, checkpoint):
            tally.tracebacks.append((data, "re-encoded bytes decode differently"))
        tally.accepted += 1
    except CpuManagerError:
        tally.rejected += 1
    except Exception as err:
        tally.tracebacks.append((data, f"decode_any: {type(err).__name__}: {err}"))

    def validate() -> None:
        # the Static policy's validation on the mutated content, checksum or not
        read = node_files.read_node_file(data, "memory", source="f")
        assert isinstance(read.checkpoint, MemoryManagerCheckpoint)
        nodes = dict.fromkeys(read.checkpoint.machine_state or {}, 2 << 30)
        validate_memory_state(read.checkpoint, default_machine_state(nodes))

    steps = (
        ("validate memory", validate),
        ("restore memory", lambda: restore_memory_state(data, source="f", configured_policy="S")),
        ("restore device", lambda: restore_device_state(data, order="v2-then-v1")),
        ("verify memory", lambda: node_files.verify_node_file(data, "memory", source="f")),
        ("verify device", lambda: node_files.verify_node_file(data, "device", source="f")),
        ("rewrite memory", lambda: node_files.rewrite_node_file(data, "memory", source="f")),
        ("rewrite device", lambda: node_files.rewrite_node_file(data, "device", source="f")),
    )
    for name, step in steps:
        try:
            step()
        except CpuManagerError:
            pass
        except Exception as err:
            tally.tracebacks.append((data, f"{name}: {type(err).__name__}: {err}"))
    if cli:
        tally.cli_runs += 1
        source, out = directory / "in", directory / "out"
        source.write_bytes(data)
        out.unlink(missing_ok=True)
        result = run_main(["state", "rewrite", source, "--output-file", out])
        if result.exit_code == 0:
            if not out.exists():
                tally.tracebacks.append((data, "rewrite exited 0 without a file"))
        elif result.exit_code != 1 or out.exists() or len(result.stderr.strip().splitlines()) != 1:
            tally.tracebacks.append((data, f"rewrite: exit {result.exit_code}: {result.stderr!r}"))


def run(count: int, seed: int, directory: Path, *, cli_every: int = 0) -> Tally:
    tally = Tally()
    for index, data in enumerate(cases(count, seed)):
        check(data, directory, cli=bool(cli_every) and index % cli_every == 0, tally=tally)
    return tally
