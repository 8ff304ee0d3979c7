"""Workload manifests: annotations, one container, per-file errors that never stop the agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.adapters.workloads import read_workloads
from cpumanager.errors import InputError

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {annotations}
spec:
  containers:
  - name: main
    resources:
      limits: {{cpu: "2", memory: 1Gi}}
"""


def write(directory: Path, name: str, annotations: str = '{"cpumanager.io/pid": "42"}') -> None:
    (directory / f"{name}.yaml").write_text(POD.format(name=name, annotations=annotations))


def test_pid_and_cgroup_workloads_in_name_order(tmp_path: Path) -> None:
    write(tmp_path, "b", '{"cpumanager.io/cgroup": "/jobs/b/"}')
    write(tmp_path, "a")
    (tmp_path / "notes.txt").write_text("ignored")
    scan = read_workloads(tmp_path)
    assert scan.errors == ()
    assert [(w.pod.name, w.container_id) for w in scan.workloads] == [
        ("a", "pid://42"),
        ("b", "cgroup://jobs/b"),
    ]


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ("{}", "exactly one of the annotations"),
        ('{"cpumanager.io/pid": "1", "cpumanager.io/cgroup": "x"}', "exactly one"),
        ('{"cpumanager.io/pid": "abc"}', "not a process id"),
        ('{"cpumanager.io/pid": "0"}', "not a process id"),
        ('{"cpumanager.io/cgroup": "a/../../etc"}', "not a cgroup path"),
    ],
)
def test_bad_annotations_are_per_file_errors(
    tmp_path: Path, annotations: str, message: str
) -> None:
    write(tmp_path, "bad", annotations)
    write(tmp_path, "good")
    scan = read_workloads(tmp_path)
    assert [w.pod.name for w in scan.workloads] == ["good"]
    assert len(scan.errors) == 1
    assert message in scan.errors[0]
    assert "bad.yaml" in scan.errors[0]


def test_broken_yaml_two_containers_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: [")
    (tmp_path / "b.yaml").write_text(
        POD.format(name="two", annotations='{"cpumanager.io/pid": "7"}') + "  - name: side\n"
    )
    write(tmp_path, "c")
    (tmp_path / "d.json").write_text(
        '{"kind": "Pod", "metadata": {"name": "d", "annotations": {"cpumanager.io/pid": "42"}},'
        ' "spec": {"containers": [{"name": "main"}]}}'
    )
    scan = read_workloads(tmp_path)
    assert [w.pod.name for w in scan.workloads] == ["c"]
    assert [e.split(":")[0].rsplit("/", 1)[-1] for e in scan.errors] == [
        "a.yaml",
        "b.yaml",
        "d.json",
    ]
    assert "exactly one container" in scan.errors[1]
    assert "also claimed" in scan.errors[2]


def test_missing_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot list workloads directory"):
        read_workloads(tmp_path / "nope")
