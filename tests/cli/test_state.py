"""`cpumanager state`: every command, exit codes, one-line errors, kubelet verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.checkpoint.vectors import ALL, Vector
from tests.cli.runner import Run, run_main

ONE_POD = (
    b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"pod-uid-1":'
    b'{"app":"1-2","sidecar":"8"}},"checksum":300718079}'
)
V1_FILE = (
    b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"cid-app":"1-2",'
    b'"cid-sidecar":"8"},"checksum":3102233326}'
)
CMAP = (
    b'{"cid-app": {"podUID": "pod-uid-1", "containerName": "app"},'
    b' "cid-sidecar": {"podUID": "pod-uid-1", "containerName": "sidecar"}}'
)


def run(*args: str | Path) -> Run:
    return run_main(["state", *args])


def files(tmp_path: Path, **named: bytes) -> dict[str, Path]:
    out = {}
    for name, data in named.items():
        (tmp_path / name).write_bytes(data)
        out[name] = tmp_path / name
    return out


def snapshot_dir(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}


def assert_one_line_error(result: Run, code: int = 1) -> None:
    assert result.exit_code == code, result.output + result.stderr
    if code != 1 or result.stderr:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 or code == 2, result.stderr
        assert "Traceback" not in result.stderr


# --- verify agrees with the kubelet on every vector ------------------------------------------


@pytest.mark.parametrize("v", [v for v in ALL if v.content is not None], ids=lambda v: v.name)
def test_verify_agrees_with_the_kubelet(tmp_path: Path, v: Vector) -> None:
    assert v.content is not None
    paths = files(tmp_path, state=v.content, cmap=v.container_map_json().encode())
    # The vectors record what released kubelets (v1.18 .. v1.35) do with each file.
    result = run(
        "verify", paths["state"], "--policy", v.policy, "--containers", paths["cmap"],
        "--kubelet-version", "1.35", "-o", "json",
    )  # fmt: skip
    report = json.loads(result.output)
    assert report["ok"] is v.valid
    assert result.exit_code == (0 if v.valid else 1)
    if not v.valid and v.error != "checkpoint is corrupted":
        assert any(v.error in reason for reason in report["reasons"]), report


CANONICAL = [
    v
    for v in ALL
    if v.name
    in {
        "derived/kubelet-initial-none",
        "derived/blog-static-0-63",
        "derived/blog-static-strict",
        "derived/one-pod-two-containers",
        "derived/html-escaping-and-key-order",
        "derived/empty-inner-map",
        "derived/v1-canonical",
    }
]


@pytest.mark.parametrize("v", CANONICAL, ids=lambda v: v.name)
def test_rewrite_of_a_zeroed_checksum_reproduces_the_original(tmp_path: Path, v: Vector) -> None:
    assert v.content is not None
    text = v.content.decode()
    head, _, _ = text.rpartition('"checksum":')
    zeroed = files(tmp_path, state=(head + '"checksum":1}').encode())["state"]
    result = run("rewrite", zeroed, "--output-file", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out").read_bytes() == v.content
    assert zeroed.read_bytes() == (head + '"checksum":1}').encode()


# --- inspect --------------------------------------------------------------------------------


def test_inspect_table_and_json(tmp_path: Path) -> None:
    path = files(tmp_path, s=ONE_POD)["s"]
    table = run("inspect", path, "--machine", "topoDualSocketHT")
    assert table.exit_code == 0, table.output
    assert "sidecar" in table.output
    assert "0,3-7" in table.output
    data = json.loads(run("inspect", path, "--machine", "topoDualSocketHT", "-o", "json").output)
    assert data["format"] == "v2"
    assert data["checksum"]["status"] == "ok"
    assert data["entries"][0] == {
        "pod": "pod-uid-1",
        "container": "app",
        "cpus": "1-2",
        "count": 2,
        "sockets": [0, 1],
        "numa": [0, 1],
        "cores": [1, 2],
        "unknownCpus": "",
    }


def test_inspect_shows_a_corrupt_file_and_a_v1_file(tmp_path: Path) -> None:
    paths = files(tmp_path, bad=ONE_POD.replace(b"300718079", b"1"), v1=V1_FILE, m=CMAP)
    data = json.loads(run("inspect", paths["bad"], "-o", "json").output)
    assert data["checksum"]["status"] == "MISMATCH (computed 300718079)"
    v1 = json.loads(run("inspect", paths["v1"], "--containers", paths["m"], "-o", "json").output)
    assert v1["format"] == "v1"
    assert {e["pod"] for e in v1["entries"]} == {"pod-uid-1"}


# --- verify with a machine ------------------------------------------------------------------


def test_verify_with_a_machine(tmp_path: Path) -> None:
    path = files(tmp_path, s=ONE_POD)["s"]
    ok = run("verify", path, "--machine", "topoSingleSocketHT", "--policy", "static")
    assert ok.exit_code == 1  # CPU 8 is not on an 8-CPU machine
    assert "doesn't match with CPUs in state" in ok.output
    fits = files(tmp_path, f=b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":'
                 b'{"p":{"a":"1-2"}},"checksum":0}')["f"]  # fmt: skip
    good = run("verify", fits, "--machine", "topoSingleSocketHT", "--reserved-cpus", "0")
    assert good.exit_code == 0, good.output
    strict = run(
        "verify", fits, "--machine", "topoSingleSocketHT", "--reserved-cpus", "0",
        "--strict-reservation", "-o", "json",
    )  # fmt: skip
    assert strict.exit_code == 1
    assert len(json.loads(strict.output)["reasons"]) == 2


def test_verify_v1_without_a_map_is_a_note(tmp_path: Path) -> None:
    path = files(tmp_path, s=V1_FILE)["s"]
    result = run("verify", path, "--kubelet-version", "1.36")
    assert result.exit_code == 0
    assert "note:" in result.output


def test_verify_v1_at_137_has_no_v1_reader(tmp_path: Path) -> None:
    path = files(tmp_path, s=V1_FILE)["s"]
    result = run("verify", path, "-o", "json")
    assert result.exit_code == 1
    assert json.loads(result.output)["kubelet"].startswith("kubelet 1.37 refuses it: json: ")


# --- migrate --------------------------------------------------------------------------------


def test_migrate_v1_to_v2_and_back(tmp_path: Path) -> None:
    paths = files(tmp_path, v1=V1_FILE, m=CMAP)
    result = run(
        "migrate", paths["v1"], "--containers", paths["m"], "--output-file", tmp_path / "v2"
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "v2").read_bytes() == ONE_POD
    back = run(
        "migrate", tmp_path / "v2", "--containers", paths["m"], "--to", "v1",
        "--output-file", tmp_path / "again", "-o", "json",
    )  # fmt: skip
    assert back.exit_code == 0, back.output
    assert json.loads(back.output)["to"] == "v1"
    assert (tmp_path / "again").read_bytes() == V1_FILE
    assert paths["v1"].read_bytes() == V1_FILE


def test_migrate_in_place_keeps_last_good(tmp_path: Path) -> None:
    paths = files(tmp_path, v1=V1_FILE, m=CMAP)
    result = run("migrate", paths["v1"], "--containers", paths["m"], "--in-place")
    assert result.exit_code == 0, result.output
    assert paths["v1"].read_bytes() == ONE_POD
    assert (tmp_path / "v1.last-good").read_bytes() == V1_FILE


# --- errors: one line, right exit code, nothing written -------------------------------------

BAD_INPUTS = {
    "empty": b"",
    "truncated": ONE_POD[:40],
    "not-json": b"hello",
    "wrong-types": b'{"policyName":1}',
    "unknown-version": b'{"data":"{}","checksum":1234}',
    "bad-checksum": ONE_POD.replace(b"300718079", b"1"),
    "bad-cpuset": b'{"policyName":"static","defaultCpuSet":"0-x","checksum":0}',
    "huge-cpuset": b'{"policyName":"static","defaultCpuSet":"0-99999999999","checksum":0}',
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize(
    "command",
    [
        ["migrate", "{in}", "--containers", "{map}", "--output-file", "{out}"],
        ["migrate", "{in}", "--containers", "{map}", "--in-place"],
        ["rewrite", "{in}", "--in-place", "--to", "v2"],
        ["verify", "{in}"],
        ["inspect", "{in}"],
        ["diff", "{in}", "{in}"],
    ],
    ids=lambda c: c[0] + ("-inplace" if "--in-place" in c else ""),
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, name: str, command: list[str]
) -> None:
    paths = files(tmp_path, input=BAD_INPUTS[name], map=CMAP)
    before = snapshot_dir(tmp_path)
    args = [a.format(**{"in": paths["input"], "map": paths["map"], "out": tmp_path / "o"})
            for a in command]  # fmt: skip
    result = run(*args)
    lenient = {"rewrite": {"bad-checksum"}, "inspect": {"bad-checksum", "unknown-version"}}
    lenient["diff"] = lenient["inspect"]
    if name in lenient.get(command[0], set()):
        assert result.exit_code == 0  # showing or fixing a wrong checksum is their job
        return
    assert_one_line_error(result)
    if command[0] != "verify":
        assert result.stderr.startswith("cpumanager: error: "), result.stderr
    assert snapshot_dir(tmp_path) == before


def test_missing_directory_and_unreadable_inputs(tmp_path: Path) -> None:
    assert_one_line_error(run("verify", tmp_path / "nope"))
    assert_one_line_error(run("inspect", tmp_path))
    paths = files(tmp_path, s=ONE_POD)
    assert_one_line_error(run("rewrite", paths["s"]), 2)
    assert_one_line_error(run("rewrite", paths["s"], "--output-file", paths["s"]), 2)
    assert_one_line_error(
        run("rewrite", paths["s"], "--output-file", tmp_path / "x", "--in-place"), 2
    )
    assert_one_line_error(
        run("rewrite", paths["s"], "--output-file", tmp_path / "x", "--to", "v1"), 2
    )
    assert_one_line_error(run("verify", paths["s"], "--reserved-cpus", "0-9999999"))
    bad_map = files(tmp_path, m=b"[1]")["m"]
    assert_one_line_error(
        run("migrate", paths["s"], "--containers", bad_map, "--output-file", tmp_path / "x")
    )
    assert not (tmp_path / "x").exists()


def test_migrate_of_a_v1_with_an_unknown_container_fails(tmp_path: Path) -> None:
    paths = files(tmp_path, v1=V1_FILE, m=b"{}")
    result = run(
        "migrate", paths["v1"], "--containers", paths["m"], "--output-file", tmp_path / "o"
    )
    assert result.exit_code == 1
    assert not (tmp_path / "o").exists()


# --- diff -----------------------------------------------------------------------------------


def test_diff(tmp_path: Path) -> None:
    after = (
        b'{"policyName":"static","defaultCpuSet":"0,3-6","entries":{"pod-uid-1":'
        b'{"app":"1-2,7"},"pod-2":{"c":"8"}},"checksum":0}'
    )
    paths = files(tmp_path, a=ONE_POD, b=after)
    table = run("diff", paths["a"], paths["b"])
    assert table.exit_code == 0, table.output
    assert "changed" in table.output
    data = json.loads(run("diff", paths["a"], paths["b"], "-o", "json").output)
    assert data["shared"]["lost"] == "7"
    assert [c["change"] for c in data["containers"]] == ["added", "changed", "removed"]
    assert "no difference" in run("diff", paths["a"], paths["a"]).output
