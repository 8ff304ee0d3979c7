"""Shared CLI options: -o/--output, --sysfs/--machine, load_topology and emit_json."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cpumanager.cli.options import emit_json, load_topology, machine_options, output_option
from cpumanager.errors import MachineError
from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.presets import get_preset
from tests.adapters.sysfs_tree import regular


@click.command()
@output_option
def bare(output: str) -> None:
    click.echo(output)


@click.command()
@output_option("json", "yaml")
def no_table(output: str) -> None:
    click.echo(output)


@click.command()
@machine_options
@output_option("table", "json", "yaml")
def show(sysfs: Path | None, machine: str | None, output: str) -> None:
    topology = load_topology(sysfs=sysfs, machine=machine)
    emit_json({"name": topology.name, "cpus": len(topology.all_cpus), "output": output})


def test_output_option_defaults() -> None:
    runner = CliRunner()
    assert runner.invoke(bare, []).output == "table\n"
    assert runner.invoke(bare, ["-o", "json"]).output == "json\n"
    assert runner.invoke(bare, ["--output", "yaml"]).output == "yaml\n"
    assert runner.invoke(bare, ["-o", "wide"]).output == "wide\n"
    refused = runner.invoke(bare, ["-o", "out.json"])
    assert refused.exit_code == 2
    assert "name the file with --output-file" in refused.output
    assert runner.invoke(no_table, []).output == "json\n"
    assert runner.invoke(no_table, ["-o", "YAML"]).output == "yaml\n"


def test_machine_options(tmp_path: Path) -> None:
    runner = CliRunner()
    preset = json.loads(runner.invoke(show, ["--machine", "dual-socket-ht"]).output)
    assert preset == {"name": "topoDualSocketHT", "cpus": 12, "output": "table"}
    regular(tmp_path, sockets=1, cores=2, threads=1)
    from_sysfs = json.loads(runner.invoke(show, ["--sysfs", str(tmp_path), "-o", "json"]).output)
    assert from_sysfs["cpus"] == 2
    both = runner.invoke(show, ["--sysfs", str(tmp_path), "--machine", "x"])
    assert both.exit_code == 2
    assert "either --sysfs or --machine" in both.output


def test_load_topology_sources(tmp_path: Path) -> None:
    assert load_topology(sysfs=None, machine="2s1n2c1t").name == "2s1n2c1t"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(topology_to_dict(get_preset("gb200"))))
    assert load_topology(sysfs=None, machine=str(path)) == get_preset("gb200")
    regular(tmp_path / "tree", sockets=2, cores=1, threads=1)
    assert len(load_topology(sysfs=tmp_path / "tree", machine=None).socket_ids()) == 2
    with pytest.raises(MachineError, match="unknown machine 'nothing'"):
        load_topology(sysfs=None, machine="nothing")
    with pytest.raises(MachineError, match="does not exist"):
        load_topology(sysfs=None, machine=str(tmp_path / "missing.yaml"))
    with pytest.raises(click.UsageError):
        load_topology(sysfs=tmp_path, machine="x")


def test_emit_json_is_compact_and_sorted(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"b": [1, 2], "a": {"y": 1, "x": None}})
    assert capsys.readouterr().out == '{"a":{"x":null,"y":1},"b":[1,2]}\n'
