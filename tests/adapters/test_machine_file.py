"""Machine files on disk: YAML and JSON, round trips and one-line errors."""

from __future__ import annotations

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
    with pytest.raises(MachineError, match="cannot read machine file"):
        read_machine_file(tmp_path / "dir.json")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(MachineError, match="cannot read machine file"):
        read_machine_file(tmp_path / "bin.yaml")
    with pytest.raises(MachineError, match="cannot write machine file"):
        write_machine_file(get_preset("dual-socket-ht"), tmp_path / "dir.json")


def test_text_errors_are_one_line() -> None:
    with pytest.raises(MachineError, match=r"'x.yaml' is not valid YAML") as info:
        load_machine_text("a: [\n  b", source="x.yaml")
    assert "\n" not in str(info.value)
    with pytest.raises(MachineError, match="not valid JSON"):
        load_machine_text("{", source="x.json", yaml_first=False)
    with pytest.raises(MachineError, match=r"machine file 'x': machine 'cpus'"):
        load_machine_text('{"cpus": 3}', source="x", yaml_first=False)
