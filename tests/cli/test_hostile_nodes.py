"""Issue 21 through the CLI: one bad snapshot, configuration or unit is one line and a
non-zero exit (or, in a fleet run, one unusable node), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import Run, run_main
from tests.extender.nodes import make_snapshot, running_pod, snapshot_document
from tests.nodeanswers.snapshots import write

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: app
    resources:
      limits: {{cpu: "{cpu}", memory: 1Gi}}
"""


def one_line(result: Run) -> None:
    assert result.exit_code not in (0, 3), result.stderr  # 3: internal error
    assert "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def refused(result: Run) -> None:
    """A configuration the kubelet refuses: the verdict line, then the kubelet's own text."""
    assert result.exit_code not in (0, 3), result.stderr
    assert "internal error" not in result.stderr
    lines = result.stderr.strip().splitlines()
    if len(lines) > 1:
        assert lines[0].startswith("the kubelet would refuse this configuration"), result.stderr
        assert len(lines) == 2, result.stderr
        assert "Traceback" not in result.stderr


def wide_document() -> dict[str, Any]:
    return snapshot_document(
        make_snapshot(
            "wide",
            numa_per_socket=1024,
            cores_per_numa=1,
            threads=1,
            topology_policy="best-effort",
            config={"topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "1024"}},
        )
    )


def write_doc(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_1_whatif_on_a_1024_numa_node(tmp_path: Path) -> None:
    snap = write_doc(tmp_path / "wide.json", wide_document())
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="2"))
    result = run_main(["node", "whatif", snap, pod])
    assert result.exit_code == 0, result.stderr
    assert "admitted" in result.output


def test_2_whatif_refuses_a_machine_past_the_caps(tmp_path: Path) -> None:
    document = snapshot_document(make_snapshot("huge", numa_per_socket=2, cores_per_numa=16_385))
    snap = write_doc(tmp_path / "huge.json", document)
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="2"))
    result = run_main(["node", "whatif", snap, pod])
    one_line(result)
    assert "65,536" in result.stderr


def test_5_a_running_pod_with_a_huge_quantity(tmp_path: Path) -> None:
    document = snapshot_document(make_snapshot("n"))
    document["pods"] = [running_pod("r1", "1e9999", "1Gi", "n")]
    snap = write_doc(tmp_path / "n.json", document)
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="1"))
    for argv in (["node", "whatif", snap, pod], ["node", "show", snap]):
        result = run_main(argv)
        one_line(result)
        assert "too large" in result.stderr


def test_5_kube_reserved_with_a_huge_quantity(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "kubeReserved: {cpu: 1e9999}\n"
    )
    refused(run_main(["node", "config", "--kubelet-config", config]))
    configz = tmp_path / "configz.json"
    configz.write_text(json.dumps({"kubeletconfig": {"kubeReserved": {"cpu": "1e9999"}}}))
    refused(run_main(["node", "config", "--configz", configz]))


@pytest.mark.parametrize("statuses", [5, [1.5], ["x"], [{"name": 7}], {"name": "c0"}])
def test_6_container_statuses_of_the_wrong_type(tmp_path: Path, statuses: object) -> None:
    document = snapshot_document(make_snapshot("n"))
    pod = running_pod("r1", "1", "1Gi", "n")
    pod["status"]["containerStatuses"] = statuses
    document["pods"] = [pod]
    snap = write_doc(tmp_path / "n.json", document)
    result = run_main(["node", "show", snap])
    one_line(result)
    assert "containerStatuses" in result.stderr


@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 3_000 + "]" * 3_000], ids=["open", "deep"])
def test_10_a_deep_configz(tmp_path: Path, text: str) -> None:
    configz = tmp_path / "configz.json"
    configz.write_text(text)
    refused(run_main(["node", "config", "--configz", configz]))


def test_8_a_fleet_run_answers_every_good_snapshot(tmp_path: Path) -> None:
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    write_doc(snaps / "a-good.json", snapshot_document(make_snapshot("good-a")))
    write_doc(snaps / "b-wide.json", wide_document())
    bad = snapshot_document(make_snapshot("bad-status"))
    pod = running_pod("r1", "1", "1Gi", "bad-status")
    pod["status"]["containerStatuses"] = [1.5]
    bad["pods"] = [pod]
    write_doc(snaps / "c-bad.json", bad)
    huge = snapshot_document(make_snapshot("huge-q"))
    huge["pods"] = [running_pod("r2", "1e9999", "1Gi", "huge-q")]
    write_doc(snaps / "d-huge.json", huge)
    write_doc(snaps / "e-good.json", snapshot_document(make_snapshot("good-e")))
    pod_file = write(tmp_path, "p.yaml", POD.format(name="p", cpu="1"))
    result = run_main(
        [
            "fleet",
            "capacity",
            pod_file,
            "--snapshots",
            snaps,
            "--workers",
            "1",
            "--max-copies",
            "3",
            "-o",
            "json",
        ]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    per_node = report["perNode"]
    assert per_node["good-a"] > 0
    assert per_node["good-e"] > 0
    assert per_node["wide"] > 0
    unusable = [g for g in report["limits"] if g["reason"] == "SnapshotUnusable"]
    assert [g["nodes"] for g in unusable] == [["c-bad.json", "d-huge.json"]]


def test_10_tls_files_that_do_not_work_are_one_line(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    key.write_text("nothing\n")
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    for argv in (
        ["--tls-cert", cert, "--tls-key", key],
        ["--tls-cert", tmp_path / "absent.pem", "--tls-key", key],
    ):
        result = run_main(["extender", "--token-file", token, "--listen", "127.0.0.1:1", *argv])
        one_line(result)
        assert "--tls-cert" in result.stderr


def test_10_a_certificate_and_key_that_do_not_match_are_one_line(tmp_path: Path) -> None:
    x509 = pytest.importorskip("cryptography.x509")
    import datetime

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    def pem_pair(name: str) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(1)
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return cert.public_bytes(serialization.Encoding.PEM), key_pem

    cert_a, _ = pem_pair("a")
    _, key_b = pem_pair("b")
    cert, key, token = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "token"
    cert.write_bytes(cert_a)
    key.write_bytes(key_b)
    token.write_text("t0ken\n")
    argv = ["extender", "--token-file", token, "--tls-cert", cert, "--tls-key", key]
    result = run_main(argv)
    one_line(result)
    assert "MISMATCH" in result.stderr.upper()
