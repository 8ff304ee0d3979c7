"""Hostile workload manifests (issue 11, items 1-3, 6, 7): each is one per-file error.

Every case used to crash the agent (ValueError, RecursionError, a libyaml segfault), poison
the checkpoint with a uid that later broke every reader, or forge ownership or log lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cpumanager.adapters.workloads import (
    normalize_cgroup_path,
    read_workloads,
    strict_mode_problem,
)
from cpumanager.errors import InputError

POD = """\
kind: Pod
metadata:
  name: {name}
{extra}  annotations: {annotations}
spec:
  containers:
  - name: main
    resources: {{limits: {{cpu: "1", memory: 1Gi}}}}
"""


def pod_text(name: str, annotations: str = '{"cpumanager.io/pid": "42"}', extra: str = "") -> str:
    return POD.format(name=name, annotations=annotations, extra=extra)


def scan_with(tmp_path: Path, hostile: str | bytes) -> tuple[list[str], list[str]]:
    """Read a directory holding one good manifest and one hostile one."""
    (tmp_path / "a-good.yaml").write_text(pod_text("good"))
    path = tmp_path / "b-bad.yaml"
    if isinstance(hostile, bytes):
        path.write_bytes(hostile)
    else:
        path.write_text(hostile)
    scan = read_workloads(tmp_path)
    return [w.pod.name for w in scan.workloads], list(scan.errors)


HOSTILE = [
    ("superscript pid", pod_text("x", '{"cpumanager.io/pid": "²"}'), "is not a process id"),
    ("circled pid", pod_text("x", '{"cpumanager.io/pid": "①"}'), "is not a process id"),
    ("huge pid", pod_text("x", '{"cpumanager.io/pid": "' + "9" * 5000 + '"}'), "not a process"),
    ("integer over 4300 digits", pod_text("x", "{a: " + "1" * 4_400 + "}"), "4300 digits"),
    ("flow nesting 30000", "[" * 30_000, "nested more than 100 levels"),
    ("block nesting 300", "".join(" " * i + "- a:\n" for i in range(0, 600, 2)), "nested"),
    ("compact block nesting 3000", "- " * 3_000 + "x", "nested more than 100 levels"),
    ("not UTF-8", b"kind: Pod\xff\xfe", "is not UTF-8 text"),
    ("uid with a superscript", pod_text("x", extra='  uid: "cpumanager-run.\u00b2.1"\n'), "uid"),
    ("uid with a newline", pod_text("x", extra='  uid: "a\\nb"\n'), "metadata.uid"),
    (
        "uid forging a run",
        pod_text("x", extra='  uid: "cpumanager-run.1.4242"\n'),
        "reserved for 'cpumanager run'",
    ),
    ("recursive alias", "a: &x [*x]\n", "refers to a collection that contains it"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in HOSTILE],
                         ids=[c[0] for c in HOSTILE])  # fmt: skip
def test_a_hostile_file_is_one_error_and_the_others_load(
    tmp_path: Path, text: str | bytes, expected: str
) -> None:
    names, errors = scan_with(tmp_path, text)
    assert names == ["good"]
    assert len(errors) == 1
    assert expected in errors[0]
    assert "\n" not in errors[0]
    assert len(errors[0]) < 1_000


def test_size_cap(tmp_path: Path) -> None:
    names, errors = scan_with(tmp_path, pod_text("x") + "#" * (1024 * 1024))
    assert names == ["good"]
    assert "more than the 1048576 allowed" in errors[0]


def test_file_names_are_escaped_in_errors(tmp_path: Path) -> None:
    forged = "x.yaml\n2026-01-01 00:00:00 INFO cpumanager.agent: all good\n.yaml"
    (tmp_path / forged).write_text("kind: [")
    scan = read_workloads(tmp_path)
    assert len(scan.errors) == 1
    assert "\n" not in scan.errors[0]
    assert "x.yaml\\x0a2026" in scan.errors[0]


def test_symlinked_manifests_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "root-only.yaml").write_text(pod_text("secret"))
    workloads = tmp_path / "w"
    workloads.mkdir()
    (workloads / "link.yaml").symlink_to(secret / "root-only.yaml")
    scan = read_workloads(workloads)
    assert scan.workloads == ()  # the link is not even listed


def test_world_writable_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(pod_text("a"))
    tmp_path.chmod(0o777)
    with pytest.raises(InputError, match=r"not trusted: the directory is writable by group"):
        read_workloads(tmp_path)
    tmp_path.chmod(0o755)
    assert len(read_workloads(tmp_path).workloads) == 1


def test_group_writable_manifest_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(pod_text("a"))
    path.chmod(0o664)
    scan = read_workloads(tmp_path)
    assert scan.workloads == ()
    assert "ignored: the file is writable by group or others (mode 0664)" in scan.errors[0]


def test_files_of_other_users_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(pod_text("a"))
    info = os.stat(tmp_path / "a.yaml")
    assert strict_mode_problem(info, what="f", agent_uid=info.st_uid) is None
    stranger = info.st_uid + 4242
    if info.st_uid == 0:  # root's files are always trusted; make the file a stranger's
        os.chown(tmp_path / "a.yaml", stranger, -1)
        scan = read_workloads(tmp_path, agent_uid=0)
        assert f"owned by uid {stranger}, not by root" in scan.errors[0]
    else:
        problem = strict_mode_problem(info, what="the file", agent_uid=stranger)
        assert problem is not None
        assert "not by root or the agent's user" in problem


def test_owner_is_passed_to_the_target_check(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(pod_text("a"))
    (tmp_path / "b.yaml").write_text(pod_text("b", '{"cpumanager.io/pid": "1"}'))
    seen: list[tuple[str, int]] = []

    def refuse(target: str, owner: int) -> str | None:
        seen.append((target, owner))
        return "not yours" if target == "pid://1" else None

    scan = read_workloads(tmp_path, refuse=refuse)
    owner = os.stat(tmp_path / "a.yaml").st_uid
    assert seen == [("pid://42", owner), ("pid://1", owner)]
    assert [w.pod.name for w in scan.workloads] == ["a"]
    assert scan.errors[0].endswith("pid://1: not yours")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("job", "job"), ("job/.", "job"), ("./job", "job"), ("job//", "job"), ("/a//b/./", "a/b"),
     ("..", None), ("a/../b", None), ("", None), ("./", None), ("a\nb", None)],
)  # fmt: skip
def test_cgroup_paths_have_one_spelling(text: str, expected: str | None) -> None:
    assert normalize_cgroup_path(text) == expected


def test_two_spellings_of_one_cgroup_are_a_duplicate(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(pod_text("a", '{"cpumanager.io/cgroup": "job"}'))
    (tmp_path / "b.yaml").write_text(pod_text("b", '{"cpumanager.io/cgroup": "job/."}'))
    (tmp_path / "c.yaml").write_text(pod_text("c", '{"cpumanager.io/cgroup": "./job//"}'))
    scan = read_workloads(tmp_path)
    assert [w.container_id for w in scan.workloads] == ["cgroup://job"]
    assert len(scan.errors) == 2
    assert all("cgroup://job is also claimed by" in e for e in scan.errors)
