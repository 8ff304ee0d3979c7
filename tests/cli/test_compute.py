"""`cpumanager compute`: every kubelet vector through `--batch`, one invocation per table.

Each table is turned into JSON request lines (the vectors' inputs in the protocol's words),
sent in one CliRunner run, and the answers are compared line by line with the vectors'
expected outputs. Then flags mode, exit codes and one-line error answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

from cpumanager.cli.main import cli, main
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.workload import guaranteed_cpus, pod_guaranteed_cpus
from cpumanager.formats.machine_format import topology_to_dict
from tests.core.merge._vectors import DATA as MERGE_DATA
from tests.kubelet_vectors import kubelet_topology, load, vector_pod

TAKE_CASES: list[dict[str, Any]] = load("take_by_topology.json")["cases"]
HINT_CASES: list[dict[str, Any]] = [
    c for c in load("hints.json")["cases"] if c["api"] in ("container", "pod")
]
MERGE_CASES: list[dict[str, Any]] = MERGE_DATA["merge_cases"]


@dataclass
class Batch:
    exit_code: int
    answers: list[dict[str, Any]]
    stderr: str


def batch(kind: str, requests: list[Any], *extra: str) -> Batch:
    """One `compute KIND --batch` run over ``requests`` (strings are sent verbatim)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    result = CliRunner().invoke(
        cli, ["compute", kind, "--batch", *extra], input="\n".join(lines) + "\n"
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    return Batch(result.exit_code, answers, result.stderr)


def compare(answers: list[dict[str, Any]], expected: list[dict[str, Any]], ids: list[str]) -> None:
    """Line by line; every mismatch is listed by vector id."""
    assert len(answers) == len(expected)
    wrong = [
        f"{ident}: got {got}, expected {want}"
        for ident, got, want in zip(ids, answers, expected, strict=True)
        if got != want
    ]
    assert not wrong, "\n".join(wrong)


# --- take_by_topology vectors -------------------------------------------------------------


def take_request(case: dict[str, Any]) -> dict[str, Any]:
    """The vector's algorithm and knobs as static policy options."""
    opts = case["options"]
    options: dict[str, str] = {}
    request: dict[str, Any] = {
        "id": case["id"],
        "machine": topology_to_dict(kubelet_topology(case["topology"])),
        "available": case["available"],
        "count": case["num_cpus"],
        "options": options,
    }
    if case["algorithm"] == "distributed":
        options["distribute-cpus-across-numa"] = "true"
        if opts["cpu_group_size"] > 1:
            assert opts["cpu_group_size"] == kubelet_topology(case["topology"]).cpus_per_core
            options["full-pcpus-only"] = "true"
            # The vectors call the algorithm alone; the policy would refuse odd counts first.
            request["smt_check"] = case["num_cpus"] % opts["cpu_group_size"] == 0
        if opts["align_by_socket"]:
            options["align-by-socket"] = "true"
    else:
        if opts["prefer_align_by_uncore_cache"]:
            options["prefer-align-cpus-by-uncorecache"] = "true"
    if opts["cpu_sorting"] == "spread":
        options["distribute-cpus-across-cores"] = "true"
    return request


def take_expected(case: dict[str, Any]) -> dict[str, Any]:
    if case["expected_error"]:
        error = {"type": "NotEnoughCPUsError", "message": case["expected_error"]}
        return {"id": case["id"], "error": error}
    return {"id": case["id"], "cpus": str(CPUSet.parse(case["expected"]))}


def test_every_take_by_topology_vector_through_the_cli() -> None:
    run = batch("take", [take_request(c) for c in TAKE_CASES])
    assert run.exit_code == 0, run.stderr
    compare(run.answers, [take_expected(c) for c in TAKE_CASES], [c["id"] for c in TAKE_CASES])
    assert len(run.answers) == 62


def test_take_vectors_by_preset_name_agree_with_machine_objects() -> None:
    """The kubelet fixtures are presets too: naming them gives the same answers."""
    requests = [{**take_request(c), "machine": c["topology"]} for c in TAKE_CASES]
    run = batch("take", requests)
    assert run.exit_code == 0
    compare(run.answers, [take_expected(c) for c in TAKE_CASES], [c["id"] for c in TAKE_CASES])


# --- CPU hint vectors ---------------------------------------------------------------------


def hint_request(case: dict[str, Any]) -> dict[str, Any]:
    """The policy's state as available / assigned / count (what GetTopologyHints looks at)."""
    the_pod = vector_pod(case["pod"])
    if case["api"] == "container":
        count = guaranteed_cpus(the_pod, the_pod.container(case["container"]))
        held = [case["assignments"].get(case["pod"]["uid"], {}).get(case["container"])]
    else:
        count = pod_guaranteed_cpus(the_pod)
        held = list(case["assignments"].get(case["pod"]["uid"], {}).values())
    available = CPUSet.parse(case["default_cpuset"]) - CPUSet.parse(case["reserved_cpus"])
    request: dict[str, Any] = {
        "id": f"{case['test']}/{case['description']}",
        "machine": topology_to_dict(kubelet_topology(case["topology"])),
        "available": str(available),
        "count": count,
        "options": case["policy_options"],
    }
    if any(h is not None for h in held):
        request["assigned"] = str(CPUSet().union(*(CPUSet.parse(h) for h in held if h)))
    return request


def hint_expected(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{case['test']}/{case['description']}",
        "hints": _hints(case["expected_cpu_hints"]),
    }


def test_every_cpu_hint_vector_through_the_cli_in_kubelet_order() -> None:
    run = batch("hints", [hint_request(c) for c in HINT_CASES])
    assert run.exit_code == 0, run.stderr
    compare(
        run.answers,
        [hint_expected(c) for c in HINT_CASES],
        [f"{c['test']}/{c['description']}" for c in HINT_CASES],
    )
    assert len(run.answers) == 25


# --- merge vectors ------------------------------------------------------------------------


def _hints(raw: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    return [{"affinity": h["numa"], "preferred": h["preferred"]} for h in raw]


def merge_request(index: int, case: dict[str, Any]) -> dict[str, Any]:
    info = MERGE_DATA["numa_infos"][case["numa_info"]]
    providers = [
        None if p is None else {res: _hints(h) for res, h in p.items()}
        for p in case["providers_hints"]
    ]
    return {
        "id": index,
        "numa_nodes": info["nodes"],
        "distances": info["distances"],
        "policy": case["policy"],
        "options": case["policy_options"],
        "providers": providers,
    }


def merge_expected(index: int, case: dict[str, Any]) -> dict[str, Any]:
    want = case["expected_hint"]
    return {
        "id": index,
        "hint": {"affinity": want["numa"], "preferred": want["preferred"]},
        "admit": case["expected_admit"],
    }


@pytest.mark.parametrize("method", [[], ["--exact"]], ids=["fast", "exact"])
def test_every_merge_vector_through_the_cli(method: list[str]) -> None:
    requests = [merge_request(i, c) for i, c in enumerate(MERGE_CASES)]
    run = batch("merge", requests, *method)
    assert run.exit_code == 0, run.stderr
    compare(
        run.answers,
        [merge_expected(i, c) for i, c in enumerate(MERGE_CASES)],
        [f"{i:03d}-{c['policy']}-{c['description']}" for i, c in enumerate(MERGE_CASES)],
    )
    assert len(run.answers) == 140


def test_merge_explain_adds_the_explanation() -> None:
    requests = [merge_request(i, c) for i, c in enumerate(MERGE_CASES[:10])]
    run = batch("merge", requests, "--explain")
    assert run.exit_code == 0
    for answer in run.answers:
        assert set(answer) == {"id", "hint", "admit", "explanation"}
        assert answer["explanation"]["summary"]


# --- error lines --------------------------------------------------------------------------

GOOD_TAKE = {"machine": "dual-socket-ht", "available": "0-11", "count": 2}

ERROR_LINES: list[tuple[str, Any, str, str]] = [
    ("bad JSON", '{"machine": "dual-socket-ht",', "InputError", "not valid JSON"),
    ("not an object", "[1, 2]", "InputError", "must be a JSON object"),
    ("unknown machine", {**GOOD_TAKE, "machine": "no-such-box"}, "MachineError", "no-such-box"),
    ("machine object", {**GOOD_TAKE, "machine": {"cpus": []}}, "MachineError", "at least one"),
    ("bad cpuset", {**GOOD_TAKE, "available": "0-x"}, "InvalidCPUSetError", "0-x"),
    ("CPU off machine", {**GOOD_TAKE, "available": "0-99"}, "InvalidCPUSetError", "12-99"),
    ("unknown field", {**GOOD_TAKE, "cont": 2}, "InputError", "'cont'"),
    ("missing field", {"machine": "dual-socket-ht"}, "InputError", "'available', 'count'"),
    ("count type", {**GOOD_TAKE, "count": "2"}, "InputError", "'count'"),
    ("negative count", {**GOOD_TAKE, "count": -1}, "InputError", "at least 0"),
    ("bad option", {**GOOD_TAKE, "options": {"fast": "true"}}, "ConfigError", '"fast"'),
    ("bad bool", {**GOOD_TAKE, "options": {"full-pcpus-only": "yes"}}, "ConfigError", "yes"),
    (
        "gate off",
        {
            **GOOD_TAKE,
            "options": {"align-by-socket": "true"},
            "feature_gates": {"CPUManagerPolicyAlphaOptions": False},
        },
        "ConfigError",
        "Alpha-level",
    ),
    ("unknown gate", {**GOOD_TAKE, "feature_gates": {"X": True}}, "InputError", "'X'"),
    ("unknown node", {**GOOD_TAKE, "numa_affinity": [7]}, "InvalidNUMAMaskError", "[7]"),
]


def test_error_lines_are_one_line_answers_and_processing_continues() -> None:
    lines: list[Any] = []
    for _name, line, _type, _text in ERROR_LINES:
        lines += [line, GOOD_TAKE]
    run = batch("take", lines)
    assert run.exit_code == 1
    assert run.stderr == ""
    assert len(run.answers) == 2 * len(ERROR_LINES)
    for index, (name, _line, kind, text) in enumerate(ERROR_LINES):
        bad, good = run.answers[2 * index], run.answers[2 * index + 1]
        assert set(bad) == {"error"}, name
        assert bad["error"]["type"] == kind, (name, bad)
        assert text in bad["error"]["message"], (name, bad)
        assert "\n" not in bad["error"]["message"]
        assert good == {"cpus": "0,6"}, name


def test_allocation_errors_are_answers_not_input_errors() -> None:
    run = batch(
        "take",
        [
            {**GOOD_TAKE, "count": 20},
            {**GOOD_TAKE, "count": 3, "options": {"full-pcpus-only": "true"}},
        ],
    )
    assert run.exit_code == 0
    assert [a["error"]["type"] for a in run.answers] == ["NotEnoughCPUsError", "SMTAlignmentError"]


def test_blank_lines_are_skipped_and_ids_echoed() -> None:
    run = batch("take", ["", {**GOOD_TAKE, "id": "x"}, "   ", {**GOOD_TAKE, "id": 2}])
    assert run.answers == [{"cpus": "0,6", "id": "x"}, {"cpus": "0,6", "id": 2}]


def test_hints_and_merge_error_lines() -> None:
    hints = batch(
        "hints",
        [
            {"machine": "dual-socket-ht", "available": "0-11", "count": 2, "reusable": "99"},
            {"machine": "dual-socket-ht", "available": "0-11", "count": 0},
        ],
    )
    assert hints.exit_code == 1
    assert hints.answers[0]["error"]["type"] == "InvalidCPUSetError"
    assert hints.answers[1] == {"hints": None}
    merges = batch(
        "merge",
        [
            {"numa_nodes": [0, 1], "policy": "strict", "providers": []},
            {"numa_nodes": [0, 1], "policy": "restricted", "providers": [{"cpu": [{"numa": [0]}]}]},
            {"numa_nodes": [0, 1], "policy": "restricted", "providers": [{"cpu": []}]},
        ],
    )
    assert merges.exit_code == 1
    assert merges.answers[0]["error"]["type"] == "ConfigError"
    assert "strict" in merges.answers[0]["error"]["message"]
    assert merges.answers[1]["error"]["type"] == "InputError"
    assert merges.answers[2] == {"hint": {"affinity": [0, 1], "preferred": False}, "admit": False}


# --- flags mode ---------------------------------------------------------------------------


def flags(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["compute", *args])
    return result.exit_code, result.stdout, result.stderr


def test_take_with_flags() -> None:
    code, out, _ = flags(
        "take", "--machine", "2s2n4c2t", "--available", "0-31", "--count", "4",
        "--numa-affinity", "1", "--option", "full-pcpus-only=true",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == {"cpus": "4-5,20-21"}
    code, out, _ = flags(
        "take", "--machine", "2s2n4c2t", "--available", "0-31", "--count", "3",
        "--option", "full-pcpus-only=true", "--no-smt-check",
    )  # fmt: skip
    assert code == 0
    assert len(CPUSet.parse(json.loads(out)["cpus"])) == 3


def test_take_with_a_machine_file(tmp_path: Any) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(topology_to_dict(kubelet_topology("topoDualSocketHT"))))
    code, out, _ = flags("take", "--machine", str(path), "--available", "0-11", "--count", "2")
    assert (code, json.loads(out)) == (0, {"cpus": "0,6"})


def test_hints_and_merge_with_flags() -> None:
    code, out, _ = flags("hints", "--machine", "2s1n2c2t", "--available", "0-7", "--count", "2")
    assert code == 0
    assert json.loads(out)["hints"][0] == {"affinity": [0], "preferred": True}
    code, out, _ = flags(
        "hints", "--machine", "dual-socket-ht", "--available", "", "--count", "2",
        "--assigned", "0,6,3",
    )  # fmt: skip
    assert (code, json.loads(out)) == (0, {"hints": []})
    providers = '[{"cpu": [{"affinity": [1], "preferred": true}]}, null]'
    code, out, _ = flags(
        "merge", "--numa-nodes", "0,1", "--policy", "restricted", "--providers", providers,
        "--option", "prefer-closest-numa-nodes=true", "--distances", '{"0":[10,20],"1":[20,10]}',
    )  # fmt: skip
    assert code == 0
    assert json.loads(out) == {"hint": {"affinity": [1], "preferred": True}, "admit": True}


def test_flags_input_error_is_an_answer_with_exit_1() -> None:
    code, out, _ = flags("take", "--machine", "dual-socket-ht", "--available", "0-", "--count", "1")
    assert code == 1
    assert json.loads(out)["error"]["type"] == "InvalidCPUSetError"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["take"], "give --available, --count"),
        (["take", "--batch", "--count", "2"], "drop --count"),
        (["merge", "--numa-nodes", "0", "--policy", "none", "--providers", "[{"], "JSON"),
        (["merge", "--numa-nodes", "0,a", "--policy", "none", "--providers", "[]"], "0,1"),
        (["take", "--available", "0", "--count", "1", "--option", "oops"], "NAME=VALUE"),
    ],
)
def test_usage_errors(args: list[str], text: str) -> None:
    code, _out, err = flags(*args)
    assert code == 2
    assert text in err


def test_through_main_and_help() -> None:
    """main() routes `compute`; --help lists the three blocks."""
    with CliRunner().isolation() as (out, _err, _mixed):
        main(["compute", "--help"])
        text = out.getvalue().decode()
    for name in ("take", "hints", "merge"):
        assert name in text
