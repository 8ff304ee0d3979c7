"""core.compute: the request/response protocol, its validation, and agreement with the library."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.cli.compute_protocol import (
    KINDS,
    MAX_HINT_NUMA_NODES,
    Answer,
    ComputeSession,
    Kind,
)
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.take import take_by_topology
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.errors import CpuManagerError, NotEnoughCPUsError, SMTAlignmentError
from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.presets import get_preset

SESSION = ComputeSession()
MACHINE = "2s2n4c2t"  # 32 CPUs; node n holds cores 4n..4n+3 and their siblings (+16)


def take(**fields: Any) -> Answer:
    return SESSION.answer("take", {"machine": MACHINE, "available": "0-31", **fields})


def message(answer: Answer) -> str:
    error = answer.body["error"]
    assert isinstance(error, dict)
    return str(error["message"])


def error_type(answer: Answer) -> str:
    error = answer.body["error"]
    assert isinstance(error, dict)
    return str(error["type"])


# --- take ---------------------------------------------------------------------------------


def test_take_without_affinity_is_take_by_topology() -> None:
    topology = get_preset(MACHINE)
    expected = take_by_topology(topology, topology.all_cpus, 6, StaticPolicyOptions())
    assert take(count=6).body == {"cpus": str(expected)}


def test_numa_affinity_is_served_first_then_the_rest() -> None:
    assert take(count=4, numa_affinity=[3]).body == {"cpus": "12-13,28-29"}
    # node 3 has 8 CPUs; 10 takes all of them, then 2 by take-by-topology from the rest
    cpus = CPUSet.parse(str(take(count=10, numa_affinity=[3]).body["cpus"]))
    node3 = get_preset(MACHINE).cpus_in_numa_nodes([3])
    assert node3 <= cpus
    assert len(cpus) == 10


def test_numa_affinity_with_align_by_socket_uses_the_whole_socket() -> None:
    answer = take(count=10, numa_affinity=[3], options={"align-by-socket": "true"})
    cpus = CPUSet.parse(str(answer.body["cpus"]))
    assert cpus <= get_preset(MACHINE).cpus_in_sockets([1])


def test_full_pcpus_only_admission_check_and_its_opt_out() -> None:
    full = {"full-pcpus-only": "true"}
    assert error_type(take(count=3, options=full)) == SMTAlignmentError.reason
    assert "not multiple" in str(take(count=3, options=full).body)
    tight = take(count=4, options=full, available="0-2")
    assert error_type(tight) == SMTAlignmentError.reason
    assert "available physical CPUs = 3" in str(tight.body)
    assert len(CPUSet.parse(str(take(count=3, options=full, smt_check=False).body["cpus"]))) == 3
    assert take(count=0, options=full).body == {"cpus": ""}


def test_not_enough_cpus_is_an_answer() -> None:
    answer = take(count=40)
    assert error_type(answer) == NotEnoughCPUsError.reason
    assert not answer.input_error


def test_the_kubelet_input_whose_distributed_loop_never_returns_is_answered() -> None:
    """One socket, 4 NUMA nodes x 3 cores, siblings c and c+12, CPUs 0,3,6,9 taken, 14 asked."""
    answer = SESSION.answer(
        "take",
        {
            "machine": "1s4n3c2t",
            "available": str(CPUSet.range(0, 24) - CPUSet([0, 3, 6, 9])),
            "count": 14,
            "options": {"distribute-cpus-across-numa": "true", "full-pcpus-only": "true"},
        },
    )
    cpus = CPUSet.parse(str(answer.body["cpus"]))
    topology = get_preset("1s4n3c2t")
    assert len(cpus) == 14
    assert all(topology.siblings(cpu) <= cpus for cpu in cpus)  # whole cores only


def test_options_accept_json_booleans_and_gate_strings() -> None:
    spread = {"distribute-cpus-across-cores": True}
    assert (
        take(count=2, options=spread).body
        == take(count=2, options={"distribute-cpus-across-cores": "true"}).body
    )
    off = take(count=2, options=spread, feature_gates={"CPUManagerPolicyAlphaOptions": "false"})
    assert error_type(off) == "ConfigError"
    assert off.input_error


@pytest.mark.parametrize(
    ("fields", "kind", "text"),
    [
        ({"count": True}, "InputError", "'count' must be a whole number"),
        ({"count": 1.5}, "InputError", "'count' must be a whole number"),
        ({"count": 1, "available": 7}, "InputError", "'available' must be a string"),
        ({"count": 1, "options": []}, "InputError", "'options' must be a JSON object"),
        ({"count": 1, "options": {"full-pcpus-only": 1.0}}, "InputError", "string value"),
        ({"count": 1, "feature_gates": {"CPUManagerPolicyBetaOptions": 3}}, "InputError", "true"),
        ({"count": 1, "numa_affinity": "0"}, "InputError", "list of NUMA node ids"),
        ({"count": 1, "numa_affinity": [True]}, "InputError", "whole numbers"),
        ({"count": 1, "numa_affinity": [5000]}, "InvalidNUMAMaskError", "outside 0-1023"),
        ({"count": 1, "smt_check": "no"}, "InputError", "'smt_check'"),
        ({"count": 1, "distributed_combination_fix": 1}, "InputError", "combination_fix"),
        ({"count": 1, "machine": 3}, "MachineError", "preset name"),
        ({"count": 1, "machine": {"cpus": [{"cpu": 0}]}}, "MachineError", "lacks"),
        ({"count": 1, "machine": "1000s100n100c8t"}, "MachineError", "more than 65536 CPUs"),
        ({"count": 1, "machine": "9" * 5000 + "s1n1c1t"}, "MachineError", "more than 65536"),
        ({"count": 1, "machine": "x" * 500}, "MachineError", "xxx..."),
    ],
)
def test_take_input_errors(fields: dict[str, Any], kind: str, text: str) -> None:
    answer = take(id="i", **fields)
    assert answer.input_error
    assert error_type(answer) == kind
    assert text in message(answer)
    assert answer.body["id"] == "i"


def test_distributed_combination_fix_switch() -> None:
    """Issue 12's second row: released kubelets end on nodes 0,1,2,15; the fix on 0-3."""
    request = {
        "machine": "2s8n4c2t",  # 2 sockets x 8 NUMA nodes x 4 cores x 2 threads = 128 CPUs
        "available": "0-127",
        "count": 32,
        "options": {"distribute-cpus-across-numa": "true"},
    }
    topology = get_preset("2s8n4c2t")
    released = CPUSet.parse(str(SESSION.answer("take", request).body["cpus"]))
    fixed = SESSION.answer("take", {**request, "distributed_combination_fix": True}).body
    assert released == topology.cpus_in_numa_nodes([0, 1, 2, 15])
    assert CPUSet.parse(str(fixed["cpus"])) == topology.cpus_in_numa_nodes([0, 1, 2, 3])


def test_align_by_socket_hardware_check() -> None:
    """More sockets than NUMA nodes: the kubelet refuses align-by-socket (ConfigError)."""
    answer = SESSION.answer(
        "take",
        {
            "machine": "fake-multi-socket-dual-socket-per-numa-ht",
            "available": "0-3",
            "count": 2,
            "options": {"align-by-socket": "true"},
        },
    )
    assert error_type(answer) == "ConfigError"


# --- hints --------------------------------------------------------------------------------


def test_hints_are_the_generator_in_kubelet_order() -> None:
    topology = get_preset(MACHINE)
    answer = SESSION.answer(
        "hints", {"machine": MACHINE, "available": "1-31", "reusable": "0", "count": 5}
    )
    expected = generate_cpu_hints(
        topology, available=CPUSet.range(1, 32), reusable=CPUSet([0]), count=5
    )
    assert answer.body == {"hints": [hint.to_json() for hint in expected]}
    assert all(0 in hint["affinity"] for hint in answer.body["hints"])  # type: ignore[attr-defined]


def test_hints_from_an_existing_assignment() -> None:
    base = {"machine": MACHINE, "available": "", "count": 2}
    same = SESSION.answer("hints", {**base, "assigned": "0,16"}).body
    assert same["hints"] == [
        {"affinity": [0], "preferred": True},
        {"affinity": [0, 1], "preferred": False},
        {"affinity": [0, 2], "preferred": False},
        {"affinity": [0, 3], "preferred": False},
        {"affinity": [0, 1, 2], "preferred": False},
        {"affinity": [0, 1, 3], "preferred": False},
        {"affinity": [0, 2, 3], "preferred": False},
        {"affinity": [0, 1, 2, 3], "preferred": False},
    ]
    assert SESSION.answer("hints", {**base, "assigned": "0"}).body == {"hints": []}


def test_hints_refuse_to_list_too_many_nodes() -> None:
    answer = SESSION.answer("hints", {"machine": "ia64-4s-64n", "available": "0-3", "count": 2})
    assert answer.input_error
    assert f"above {MAX_HINT_NUMA_NODES}" in str(answer.body)


# --- merge --------------------------------------------------------------------------------

ONE = [{"cpu": [{"affinity": [1], "preferred": True}]}]


def merge(**fields: Any) -> Answer:
    return SESSION.answer("merge", {"numa_nodes": [0, 1], "policy": "restricted", **fields})


def test_merge_provider_shapes() -> None:
    assert merge(providers=ONE).body == {
        "hint": {"affinity": [1], "preferred": True},
        "admit": True,
    }
    no_pref = merge(providers=[None, {}, {"cpu": None}]).body
    assert no_pref == {"hint": {"affinity": [0, 1], "preferred": True}, "admit": True}
    no_place = merge(providers=[{"cpu": []}]).body
    assert no_place == {"hint": {"affinity": [0, 1], "preferred": False}, "admit": False}


def test_merge_numa_limit_and_distances() -> None:
    nine = list(range(9))
    assert "max-allowable-numa-nodes" in str(merge(numa_nodes=nine, providers=[]).body)
    wide = merge(numa_nodes=nine, providers=[], options={"max-allowable-numa-nodes": 9})
    assert wide.body["admit"] is True
    closest = {"prefer-closest-numa-nodes": "true"}
    assert error_type(merge(providers=ONE, options=closest)) == "ConfigError"
    rows: dict[str, Any] = {"0": {"0": 10, "1": 20}, "1": [20, 10]}
    assert merge(providers=ONE, options=closest, distances=rows).body["admit"] is True


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"providers": {}}, "'providers' must be a list"),
        ({"providers": [3]}, "providers[0]"),
        ({"providers": [{"cpu": 3}]}, "list of hints or null"),
        ({"providers": [{"cpu": [{"affinity": [0]}]}]}, "preferred"),
        ({"providers": [{"cpu": [{"affinity": [0], "preferred": 1}]}]}, "true or false"),
        ({"providers": [], "policy": 3}, "'policy' must be a string"),
        ({"providers": [], "numa_nodes": [0, 0]}, "distinct"),
        ({"providers": [], "distances": {"x": [1]}}, "NUMA node ids"),
        ({"providers": [], "distances": {"0": 5}}, "list of distances"),
        ({"providers": [], "distances": {"0": {"y": 1}}}, "NUMA node ids"),
        ({"providers": [], "feature_gates": {"CPUManagerPolicyAlphaOptions": True}}, "knows"),
    ],
)
def test_merge_input_errors(fields: dict[str, Any], text: str) -> None:
    answer = merge(**fields)
    assert answer.input_error
    assert text in message(answer)


def test_merge_explain_and_exact() -> None:
    explained = ComputeSession(explain=True).answer(
        "merge", {"numa_nodes": [0, 1], "policy": "restricted", "providers": ONE}
    )
    assert "explanation" in explained.body
    exact = ComputeSession(method="exact").answer(
        "merge", {"numa_nodes": [0, 1], "policy": "restricted", "providers": ONE}
    )
    assert exact.body == merge(providers=ONE).body


# --- protocol -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("{", "not valid JSON at column 2"),
        ("[" * 100_000, "nested too deeply"),
        ("9" * 5000, "too many digits"),
        ("[]", "must be a JSON object"),
        ('{"count": 1}', "needs 'machine', 'available'"),
        ('{"machine": "x", "available": "", "count": 1, "colour": 1}', "'colour'"),
    ],
)
def test_bad_lines(line: str, text: str) -> None:
    answer = SESSION.answer_line("take", line)
    assert answer.input_error
    message = str(answer.body["error"]["message"])  # type: ignore[index]
    assert text in message
    assert "\n" not in message
    assert len(message) < 400


def test_machines_are_cached_and_the_cache_is_bounded() -> None:
    session = ComputeSession()
    described = topology_to_dict(get_preset("dual-socket-ht"))
    assert session.machine(described) is session.machine(json.loads(json.dumps(described)))
    assert session.machine("Dual-Socket-HT ") is session.machine("dual-socket-ht")
    for sockets in range(1, 40):
        session.machine(f"{sockets}s1n1c1t")
    assert len(session._machines) <= 32


# --- nothing but answers ------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
CPU_TEXT = st.sampled_from(["", "0", "0-3", "1,3,5-7", "0-31", "0-", "x", "40", "3-1"])
MACHINES = st.sampled_from([MACHINE, "dual-socket-ht", "1s4n3c2t", "nope", 7, {"cpus": []}])
OPTION_NAMES = st.sampled_from(
    [
        "full-pcpus-only",
        "distribute-cpus-across-numa",
        "align-by-socket",
        "distribute-cpus-across-cores",
        "prefer-align-cpus-by-uncorecache",
        "strict-cpu-reservation",
        "prefer-closest-numa-nodes",
        "max-allowable-numa-nodes",
        "bogus",
    ]
)
OPTIONS = st.dictionaries(OPTION_NAMES, st.sampled_from(["true", "false", "9", True, "x"]))
HINT = st.fixed_dictionaries(
    {
        "affinity": st.none() | st.lists(st.integers(0, 4), max_size=3),
        "preferred": st.booleans(),
    }
)
PROVIDER = st.none() | st.dictionaries(
    st.sampled_from(["cpu", "gpu", "mem"]), st.none() | st.lists(HINT, max_size=3), max_size=2
)


def field_requests(kind: Kind) -> st.SearchStrategy[dict[str, Any]]:
    """Plausible requests with some wrong values mixed in."""
    if kind == "merge":
        return st.fixed_dictionaries(
            {
                "numa_nodes": st.lists(st.integers(0, 4), max_size=5, unique=True),
                "policy": st.sampled_from(
                    ["none", "best-effort", "restricted", "single-numa-node", "x"]
                ),
                "providers": st.lists(PROVIDER, max_size=3),
            },
            optional={"options": OPTIONS, "distances": JSON_VALUES},
        )
    optional: dict[str, st.SearchStrategy[Any]] = {"options": OPTIONS, "id": JSON_VALUES}
    if kind == "take":
        optional["numa_affinity"] = st.none() | st.lists(st.integers(0, 4), max_size=3)
        optional["smt_check"] = st.booleans()
    else:
        optional["reusable"] = CPU_TEXT
        optional["assigned"] = CPU_TEXT
    return st.fixed_dictionaries(
        {"machine": MACHINES, "available": CPU_TEXT, "count": st.integers(-1, 40)},
        optional=optional,
    )


def well_formed(answer: Answer) -> None:
    body = answer.body
    if "error" in body:
        error = body["error"]
        assert isinstance(error, dict)
        assert set(error) == {"type", "message"}
        assert "\n" not in str(error["message"])
    json.dumps(body)  # always printable


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(KINDS), request=JSON_VALUES)
def test_any_json_value_gets_an_answer(kind: Kind, request: Any) -> None:
    well_formed(SESSION.answer(kind, request))


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from(KINDS), line=st.text(max_size=40))
def test_any_text_line_gets_an_answer(kind: Kind, line: str) -> None:
    well_formed(SESSION.answer_line(kind, line))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_field_level_fuzz_gets_answers_and_sound_cpus(data: st.DataObject, kind: Kind) -> None:
    request = data.draw(field_requests(kind))
    try:
        answer = SESSION.answer(kind, request)
    except CpuManagerError as err:  # pragma: no cover - would be a bug
        pytest.fail(f"escaped: {err!r}")
    well_formed(answer)
    if kind == "take" and "cpus" in answer.body:
        cpus = CPUSet.parse(str(answer.body["cpus"]))
        assert cpus <= CPUSet.parse(request["available"])
        assert len(cpus) == max(request["count"], 0)


OPTION_SETS = [
    {},
    {"full-pcpus-only": "true"},
    {"distribute-cpus-across-numa": "true"},
    {"distribute-cpus-across-numa": "true", "full-pcpus-only": "true"},
    {"distribute-cpus-across-cores": "true"},
    {"prefer-align-cpus-by-uncorecache": "true"},
]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 3), st.integers(1, 2)),
    data=st.data(),
    raw_options=st.sampled_from(OPTION_SETS),
)
def test_take_is_the_library_answer(
    shape: tuple[int, int, int, int], data: st.DataObject, raw_options: dict[str, str]
) -> None:
    """Without numa_affinity and with the SMT check off, compute take adds nothing."""
    name = "{}s{}n{}c{}t".format(*shape)
    topology = get_preset(name)
    available = CPUSet(data.draw(st.sets(st.sampled_from(sorted(topology.all_cpus)))))
    count = data.draw(st.integers(0, len(topology.all_cpus)))
    options = StaticPolicyOptions.parse(raw_options, alpha_enabled=True)
    request = {
        "machine": name,
        "available": str(available),
        "count": count,
        "options": raw_options,
        "smt_check": False,
    }
    answer = SESSION.answer("take", request)
    try:
        expected: dict[str, object] = {
            "cpus": str(take_by_topology(topology, available, count, options))
        }
    except CpuManagerError as err:
        expected = {"error": {"type": err.reason, "message": err.message}}
    assert answer.body == expected
