"""The PodResources client against a real gRPC server on a Unix socket (the stand-in kubelet)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cpumanager.adapters.podresources import wire
from cpumanager.adapters.podresources.client import (
    MAX_RECEIVE_BYTES,
    PodResourcesClient,
    collect_answers,
)
from cpumanager.adapters.podresources.messages import message_class
from cpumanager.adapters.podresources.server import ServerBehaviour, serve
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import PodResourcesError
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    ClaimResource,
    ContainerResources,
    DeviceAllocation,
    DynamicResource,
    MemoryBlock,
    PodResources,
    PodResourcesAnswers,
)

GIB = 1 << 30
GPU_POD = PodResources(
    name="trainer",
    namespace="ml",
    containers=(
        ContainerResources(
            name="main",
            devices=(DeviceAllocation("nvidia.com/gpu", ("GPU-0", "GPU-1"), (1,)),),
            cpu_ids=CPUSet.parse("4-7"),
            memory=(MemoryBlock("memory", 4 * GIB, (1,)), MemoryBlock("hugepages-2Mi", 1 << 21)),
            dynamic_resources=(
                DynamicResource(
                    "nic", "ml", (ClaimResource(("vendor.com/nic=a",), "nic.dev", "p0", "d0", ""),)
                ),
            ),
        ),
        ContainerResources(name="sidecar"),
    ),
    cpu_ids=CPUSet.parse("4-7"),
)
SHARED_POD = PodResources("web", "default", (ContainerResources("nginx"),))
ANSWERS = PodResourcesAnswers(
    pods=(GPU_POD, SHARED_POD),
    allocatable=AllocatableResources(
        devices=(DeviceAllocation("nvidia.com/gpu", ("GPU-0", "GPU-1", "GPU-2")),),
        cpu_ids=CPUSet.parse("2-15"),
        memory=(MemoryBlock("memory", 30 * GIB, (0,)), MemoryBlock("memory", 31 * GIB, (1,))),
    ),
    calls={},
)


@pytest.fixture
def kubelet(tmp_path: Path):
    """Start a stand-in kubelet: ``kubelet(behaviour, answers)`` returns its socket path."""
    servers = []

    def start(behaviour: ServerBehaviour | None = None, answers=ANSWERS) -> Path:
        path = tmp_path / f"k{len(servers)}.sock"
        servers.append(serve(path, answers, behaviour or ServerBehaviour()))
        return path

    yield start
    for server in servers:
        server.stop(None)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_wire_bytes_follow_the_proto_field_numbers() -> None:
    # Built by hand from api.proto: ListPodResourcesResponse.pod_resources = 1;
    # PodResources name = 1, namespace = 2, containers = 3; ContainerResources name = 1,
    # devices = 2, cpu_ids = 3 (packed int64); ContainerDevices resource_name = 1,
    # device_ids = 2, topology = 3; TopologyInfo nodes = 1; NUMANode ID = 1 (varint).
    numa = _field(1, _varint(1 << 3 | 0) + _varint(1))
    device = _field(1, b"example.com/dev") + _field(2, b"d0") + _field(3, numa)
    container = _field(1, b"c") + _field(2, device) + _field(3, _varint(3) + _varint(130))
    pod = _field(1, b"p") + _field(2, b"ns") + _field(3, container)
    data = _field(1, pod)
    decoded = wire.pods_from_list(message_class("ListPodResourcesResponse").FromString(data))
    assert decoded == (
        PodResources(
            "p",
            "ns",
            (
                ContainerResources(
                    "c",
                    devices=(DeviceAllocation("example.com/dev", ("d0",), (1,)),),
                    cpu_ids=CPUSet([3, 130]),
                ),
            ),
        ),
    )
    assert wire.list_response(decoded).SerializeToString() == data


def test_all_three_calls_round_trip(kubelet) -> None:
    answers = collect_answers(kubelet())
    assert {name: call.status for name, call in answers.calls.items()} == {
        "List": "ok",
        "GetAllocatableResources": "ok",
        "Get": "ok",
    }
    assert answers.pods == ANSWERS.pods
    assert answers.allocatable == ANSWERS.allocatable
    assert answers.get == GPU_POD  # Get is probed with the first listed pod


def test_devices_without_topology_and_optional_share_id_keep_their_absence(kubelet) -> None:
    pod = PodResources(
        "p",
        "ns",
        (
            ContainerResources(
                "c",
                devices=(
                    DeviceAllocation("a/b", ("x",), None),
                    DeviceAllocation("a/b", ("y",), ()),
                ),
                dynamic_resources=(DynamicResource("c", "ns", (ClaimResource(share_id=None),)),),
            ),
        ),
    )
    answers = collect_answers(kubelet(answers=PodResourcesAnswers((pod,), None, {})))
    assert answers.pods == (pod,)


def test_unimplemented_get_is_recorded_and_the_rest_kept(kubelet) -> None:
    older = ServerBehaviour(implemented=("List", "GetAllocatableResources"))
    answers = collect_answers(kubelet(older))
    assert answers.calls["Get"].status == "unimplemented"
    assert "does not implement" in answers.calls["Get"].reason
    assert answers.pods == ANSWERS.pods
    assert answers.allocatable == ANSWERS.allocatable


def test_kubelet_without_allocatable_call(kubelet) -> None:
    answers = collect_answers(kubelet(ServerBehaviour(implemented=("List",))))
    assert answers.calls["GetAllocatableResources"].status == "unimplemented"
    assert answers.allocatable is None
    assert answers.pods == ANSWERS.pods


def test_disabled_get_gate(kubelet) -> None:
    answers = collect_answers(kubelet(ServerBehaviour(get_disabled=True)))
    call = answers.calls["Get"]
    assert call.status == "disabled"
    assert "PodResources API Get method disabled" in call.reason
    assert "KubeletPodResourcesGet" in call.reason


def test_rate_limited_call(kubelet) -> None:
    answers = collect_answers(kubelet(ServerBehaviour(rate_limit_after=1)))
    assert answers.calls["List"].status == "ok"
    assert answers.calls["GetAllocatableResources"].status == "rate-limited"
    assert answers.calls["Get"].status == "rate-limited"
    assert "rejected by rate limit" in answers.calls["Get"].reason


def test_timeout_gives_one_line_and_skips_the_other_calls(kubelet) -> None:
    path = kubelet(ServerBehaviour(delay_seconds=0.5))
    answers = collect_answers(path, timeout_seconds=0.1)
    assert answers.calls["List"].status == "error"
    assert "no answer within 0.1 s" in answers.calls["List"].reason
    assert answers.calls["Get"].status == "skipped"
    assert answers.pods is None


def _big_answers(total_bytes: int) -> PodResourcesAnswers:
    chunk = "x" * (1 << 20)
    ids = tuple(chunk for _ in range(total_bytes >> 20))
    pod = PodResources("big", "ns", (ContainerResources("c", (DeviceAllocation("a/b", ids),)),))
    return PodResourcesAnswers((pod,), None, {})


def test_receive_limit_is_16_mib(kubelet) -> None:
    assert MAX_RECEIVE_BYTES == 16 * 1024 * 1024
    under = kubelet(answers=_big_answers(15 << 20))
    with PodResourcesClient(under) as client:
        assert len(client.list()[0].containers[0].devices[0].device_ids) == 15
    over = kubelet(answers=_big_answers(17 << 20))
    with PodResourcesClient(over) as client, pytest.raises(PodResourcesError) as caught:
        client.list()
    assert "larger than 16 MiB" in caught.value.message
    assert "\n" not in caught.value.message


def test_missing_socket(tmp_path: Path) -> None:
    with pytest.raises(PodResourcesError) as caught:
        collect_answers(tmp_path / "pod-resources" / "kubelet.sock")
    assert caught.value.status == "missing"
    assert "is the kubelet running" in caught.value.message


def test_regular_file_and_symlink_are_refused(tmp_path: Path, kubelet) -> None:
    plain = tmp_path / "plain.sock"
    plain.write_text("")
    with pytest.raises(PodResourcesError, match="is not a Unix socket"):
        collect_answers(plain)
    link = tmp_path / "link.sock"
    link.symlink_to(kubelet())
    with pytest.raises(PodResourcesError, match="symbolic link"):
        collect_answers(link)


def test_socket_without_listener(tmp_path: Path) -> None:
    path = tmp_path / "dead.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))  # bound, never listening: connections are refused
        answers = collect_answers(path, timeout_seconds=2)
    finally:
        sock.close()
    assert answers.calls["List"].status == "error"
    assert answers.calls["GetAllocatableResources"].status == "skipped"


def test_absurd_cpu_id_in_an_answer_is_one_line() -> None:
    response = message_class("ListPodResourcesResponse")()
    pod = response.pod_resources.add(name="p", namespace="ns")
    pod.containers.add(name="c").cpu_ids.extend([1 << 40])
    with pytest.raises(PodResourcesError, match="List answer is unusable"):
        wire.pods_from_list(response)


def test_negative_numa_id_in_an_answer_is_one_line() -> None:
    response = message_class("AllocatableResourcesResponse")()
    response.devices.add(resource_name="a/b", device_ids=["x"]).topology.nodes.add(ID=-1)
    with pytest.raises(PodResourcesError, match="negative"):
        wire.allocatable_from_message(response)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user (nobody)")
@pytest.mark.parametrize("reachable", [True, False], ids=["socket-0600", "directory-0700"])
def test_permission_denied_as_another_user(reachable: bool) -> None:
    where = Path(tempfile.mkdtemp(prefix="cpm", dir="/tmp"))
    where.chmod(0o755 if reachable else 0o700)
    path = where / "kubelet.sock"
    server = serve(path, ANSWERS)
    path.chmod(0o600)  # the kubelet's socket: root only
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from cpumanager.adapters.podresources.client import collect_answers\n"
        "from cpumanager.errors import PodResourcesError\n"
        "os.setgid(65534); os.setuid(65534)  # nobody, after the imports\n"
        "try:\n"
        "    collect_answers(Path(sys.argv[1]))\n"
        "except PodResourcesError as err:\n"
        "    print(err.status, err.message)\n"
    )
    src = Path(__file__).resolve().parents[3] / "src"
    try:
        result = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(src)},
            timeout=60,
            check=False,
        )
    finally:
        server.stop(None)
        shutil.rmtree(where, ignore_errors=True)
    assert result.returncode == 0, result.stderr
    assert "permission denied" in result.stdout
    assert "run as root" in result.stdout
