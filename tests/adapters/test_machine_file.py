"""Machine files on disk: YAML and JSON, round trips and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.adapters.machine_file import (
    dump_machine,
    load_machine_text,
    read_machine_file,
    write_machine_file,
)
from cpumanager.errors import MachineError
from cpumanager.presets import get_preset


@pytest.mark.parametrize("name", ["box.json", "box.yaml", "box.yml", "box.machine"])
def test_round_trip(tmp_path, name: str) -> None:
    topology = get_preset("xeon-snc3")
    path = tmp_path / name
    write_machine_file(topology, path)
    assert read_machine_file(path) == topology
    assert read_machine_file(path).name == "xeon-6972p-2s-snc3"


def test_json_file_read_as_yaml_too(tmp_path) -> None:
    path = tmp_path / "box.txt"
    path.write_text(dump_machine(get_preset("dual-socket-ht"), yaml_format=False))
    assert read_machine_file(path) == get_preset("dual-socket-ht")


def test_errors_name_the_file(tmp_path) -> None:
    with pytest.raises(MachineError, match="does not exist"):
        read_machine_file(tmp_path / "none.json")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(MachineError, match=r"machine file .*dir\.json' is a directory"):
        read_machine_file(tmp_path / "dir.json")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(MachineError, match=r"machine file .*bin\.yaml' is not UTF-8 text"):
        read_machine_file(tmp_path / "bin.yaml")
    with pytest.raises(MachineError, match="cannot write machine file"):
        write_machine_file(get_preset("dual-socket-ht"), tmp_path / "dir.json")


def test_text_errors_are_one_line() -> None:
    with pytest.raises(MachineError, match=r"machine file 'x.yaml': not valid YAML") as info:
        load_machine_text("a: [\n  b", source="x.yaml")
    assert "\n" not in str(info.value)
    with pytest.raises(MachineError, match="not valid JSON"):
        load_machine_text("{", source="x.json", yaml_first=False)
    with pytest.raises(MachineError, match=r"machine file 'x': machine 'cpus'"):
        load_machine_text('{"cpus": 3}', source="x", yaml_first=False)


HOSTILE_MACHINE_TEXT = [
    ("flow nesting", "[" * 30_000, "nested more than 100 levels"),
    ("block nesting", "".join(" " * i + "-\n" for i in range(0, 6_000, 2)), "nested more than"),
    ("huge integer", "cpus: " + "9" * 5_000, "more than 4300 digits"),
    ("recursive alias", "a: &x [*x]", "refers to a collection that contains it"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in HOSTILE_MACHINE_TEXT],
                         ids=[c[0] for c in HOSTILE_MACHINE_TEXT])  # fmt: skip
def test_hostile_yaml_is_a_one_line_machine_error(text: str, expected: str) -> None:
    with pytest.raises(MachineError, match=expected) as info:
        load_machine_text(text, source="m.yaml")
    assert "\n" not in info.value.message


def test_deep_json_is_a_machine_error() -> None:
    with pytest.raises(MachineError, match="nested too deeply"):
        load_machine_text("[" * 100_000 + "]" * 100_000, source="m.json", yaml_first=False)


def test_machine_file_must_be_regular_and_bounded(tmp_path) -> None:
    import os

    fifo = tmp_path / "m.yaml"
    os.mkfifo(fifo)
    with pytest.raises(MachineError, match="not a regular file"):
        read_machine_file(fifo)  # would block forever if opened for a plain read
    with pytest.raises(MachineError, match="not a regular file"):
        read_machine_file(Path("/dev/zero"))
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(33 * 1024 * 1024)
    with pytest.raises(MachineError, match="more than the 33554432 allowed"):
        read_machine_file(big)


def test_a_numa_cpus_value_too_long_to_print_is_a_machine_error() -> None:
    text = dump_machine(get_preset("dual-socket-ht"), yaml_format=True)
    hostile = text.replace("cpus: '0,2,4,6,8,10'", "cpus: 0x" + "9" * 5_000)
    assert hostile != text
    with pytest.raises(MachineError, match=r"numa_nodes\[0\]\.cpus"):
        load_machine_text(hostile, source="m.yaml")  # found by bench/fuzz_inputs.py


def test_more_than_65536_cpus_is_refused_before_building() -> None:
    cpus = ",".join(f'{{"id":{i},"core":{i},"socket":0,"numa":0}}' for i in range(65_537))
    with pytest.raises(MachineError, match="lists 65537 CPUs, more than the 65536"):
        load_machine_text(f'{{"cpus":[{cpus}]}}', source="m.json", yaml_first=False)
