"""Manifest files under tmp_path: YAML, JSON, multi-document, directories and file errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpumanager.adapters.manifests import (
    load_pods,
    manifest_files,
    pods_from_text,
    read_manifest_documents,
)
from cpumanager.errors import InputError, WorkloadError

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: app
    resources:
      limits: {{cpu: "2", memory: 1Gi}}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_multi_document_yaml(tmp_path: Path) -> None:
    text = POD_YAML.format(name="a") + "---\n" + POD_YAML.format(name="b") + "---\n"
    pods = load_pods([write(tmp_path / "pods.yaml", text)])
    assert [p.name for p in pods] == ["a", "b"]


def test_json_list(tmp_path: Path) -> None:
    doc = {
        "kind": "List",
        "items": [
            {"kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": [{"name": "c"}]}}
        ],
    }
    pods = load_pods([write(tmp_path / "pods.json", json.dumps(doc, indent=2))])
    assert [p.name for p in pods] == ["j"]


def test_directory_in_name_order_skipping_other_files(tmp_path: Path) -> None:
    write(tmp_path / "b.yml", POD_YAML.format(name="b"))
    write(
        tmp_path / "a.json",
        json.dumps({"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}),
    )
    write(tmp_path / "notes.txt", "not a manifest")
    assert [p.name for p in load_pods([tmp_path])] == ["a", "b"]
    assert [p.name for p in manifest_files(tmp_path)] == ["a.json", "b.yml"]


def test_read_documents_and_text(tmp_path: Path) -> None:
    path = write(tmp_path / "one.yaml", POD_YAML.format(name="x"))
    assert len(read_manifest_documents(path)) == 1
    assert pods_from_text(POD_YAML.format(name="y"), source="<stdin>")[0].name == "y"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"manifest file '.*nope.yaml' does not exist; check"):
        load_pods([tmp_path / "nope.yaml"])


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="holds no"):
        load_pods([tmp_path])


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match="is not UTF-8 text"):
        load_pods([path])


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.yaml", "kind: Pod\nmetadata: {name: [\n")
    with pytest.raises(WorkloadError) as caught:
        load_pods([path])
    message = caught.value.message
    assert message.startswith(f"{path}: not valid YAML or JSON at line ")
    assert "\n" not in message


def test_manifest_error_keeps_field_path_and_file(tmp_path: Path) -> None:
    text = POD_YAML.format(name="a").replace('cpu: "2"', "cpu: abc")
    path = write(tmp_path / "p.yaml", text)
    with pytest.raises(
        WorkloadError, match=r"p\.yaml: spec\.containers\[0\]\.resources\.limits\.cpu: 'abc'"
    ):
        load_pods([path])


def test_uid_clash_across_files(tmp_path: Path) -> None:
    one = write(tmp_path / "1.yaml", POD_YAML.format(name="same"))
    two = write(tmp_path / "2.yaml", POD_YAML.format(name="same"))
    with pytest.raises(WorkloadError, match="already used by a pod in"):
        load_pods([one, two])


def test_unreadable_path_is_input_error(tmp_path: Path) -> None:
    target = tmp_path / "dir.yaml"
    target.mkdir()
    with pytest.raises(InputError):
        read_manifest_documents(target)
