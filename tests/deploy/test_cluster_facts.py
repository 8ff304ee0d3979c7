"""deploy/ keeps the cluster promises (docs/extender.md): two replicas that never all go,
readiness from fresh snapshots, TLS, per-node credentials, least privilege."""

from __future__ import annotations

from typing import Any

from cpumanager.extender.auth import AUDIENCE
from tests.deploy.test_manifests import documents


def find(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for _, d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def args_of(container: dict[str, Any]) -> dict[str, str]:
    command = container["command"]
    return {a: b for a, b in zip(command, [*command[1:], ""], strict=True) if a.startswith("--")}


def test_the_extender_survives_a_replica_loss() -> None:
    deployment = find("Deployment", "cpumanager-extender")
    spec = deployment["spec"]
    assert spec["replicas"] >= 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pdb = find("PodDisruptionBudget", "cpumanager-extender")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == spec["selector"]["matchLabels"]
    (container,) = spec["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    args = args_of(container)
    assert "--tls-cert" in args
    assert args["--auth"] == "tokenreview"
    limits = container["resources"]["limits"]
    assert int(limits["cpu"]) == int(args["--workers"])  # the quota the workers may use
    replicas = find("Service", "cpumanager-extender-replicas")
    assert replicas["spec"]["clusterIP"] == "None"
    assert replicas["spec"]["publishNotReadyAddresses"] is True  # pushes make it ready


def test_agents_push_to_every_replica_with_a_node_bound_token() -> None:
    daemonset = find("DaemonSet", "cpumanager-agent")
    pod = daemonset["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = args_of(container)
    assert "--to-every-endpoint" in args
    assert args["--to"].startswith("https://cpumanager-extender-replicas.")
    projected = next(v for v in pod["volumes"] if v["name"] == "tokens")["projected"]
    audiences = [s["serviceAccountToken"].get("audience") for s in projected["sources"]]
    assert audiences == [AUDIENCE]
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    security = container["securityContext"]
    assert security["capabilities"]["drop"] == ["ALL"]
    assert "add" not in security["capabilities"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False


def test_no_role_grants_nodes_proxy_or_secrets() -> None:
    for _, doc in documents():
        if doc["kind"] in ("ClusterRole", "Role"):
            for rule in doc["rules"]:
                assert "nodes/proxy" not in rule["resources"], doc["metadata"]["name"]
                assert "secrets" not in rule["resources"], doc["metadata"]["name"]
    agent = find("ClusterRole", "cpumanager-agent")
    assert agent["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}
    ]


def test_only_agents_and_schedulers_reach_the_extender_each_on_its_own_port() -> None:
    """The agents (a compromised node's among them) reach the push port alone, which
    serves no /bind; the schedulers reach the verbs port; the agents push there."""
    deployment = find("Deployment", "cpumanager-extender")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = args_of(container)
    verbs_port = int(args["--listen"].rpartition(":")[2])
    push_port = int(args["--push-listen"].rpartition(":")[2])
    assert verbs_port != push_port
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named == {"https": verbs_port, "push": push_port}
    policy = find("NetworkPolicy", "cpumanager-extender")
    by_port: dict[int, list[dict[str, Any]]] = {}
    for rule in policy["spec"]["ingress"]:
        assert all("ipBlock" not in peer for peer in rule["from"])
        for port in rule["ports"]:
            assert port["protocol"] == "TCP"
            by_port.setdefault(port["port"], []).extend(rule["from"])
    assert set(by_port) == {verbs_port, push_port}
    agents = by_port[push_port]
    assert [p["podSelector"]["matchLabels"] for p in agents] == [
        {"app.kubernetes.io/name": "cpumanager-agent"}
    ]
    schedulers = {
        tuple(sorted(p["podSelector"]["matchLabels"].items())) for p in by_port[verbs_port]
    }
    assert ("app.kubernetes.io/name", "cpumanager-agent") not in {
        item for selector in schedulers for item in selector
    }
    replicas = find("Service", "cpumanager-extender-replicas")
    assert [(p["port"], p["targetPort"]) for p in replicas["spec"]["ports"]] == [
        (push_port, "push")
    ]
    daemonset = find("DaemonSet", "cpumanager-agent")
    (agent,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert args_of(agent)["--to"].endswith(f".svc:{push_port}")
    static = find("NetworkPolicy", "cpumanager-extender-static-scheduler")
    assert [p["port"] for r in static["spec"]["ingress"] for p in r["ports"]] == [verbs_port]


def test_no_shipped_network_policy_admits_a_pod_network() -> None:
    """An ipBlock that covers a pod network admits every pod there (NetworkPolicies add
    up), /bind included. As shipped, an ipBlock names documentation addresses only
    (RFC 5737), which the operator replaces with the control-plane nodes' addresses."""
    import ipaddress

    documentation = [
        ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
    ]
    blocks = [
        peer["ipBlock"]["cidr"]
        for _, doc in documents()
        if doc["kind"] == "NetworkPolicy"
        for rule in doc["spec"].get("ingress", ())
        for peer in rule.get("from", ())
        if "ipBlock" in peer
    ]
    assert blocks, "the static scheduler's access policy is shipped"
    for cidr in blocks:
        network = ipaddress.ip_network(cidr)
        assert any(network.subnet_of(d) for d in documentation), cidr  # type: ignore[arg-type]


def test_pods_meet_their_namespaces_pod_security_level() -> None:
    """The API server refuses a pod its namespace's enforced PodSecurity level forbids (the
    Deployment or DaemonSet then creates none). The restricted level's rules, as the
    pod-security admission checks them for these manifests: no host namespaces, ports or
    paths; runAsNonRoot and no UID 0; no privilege escalation; every capability dropped
    (NET_BIND_SERVICE alone may be added); seccomp RuntimeDefault or Localhost."""
    levels = {
        d["metadata"]["name"]: d["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        for _, d in documents()
        if d["kind"] == "Namespace"
    }
    checked = 0
    for name, doc in documents():
        if doc["kind"] not in ("Deployment", "DaemonSet"):
            continue
        namespace = doc["metadata"]["namespace"]
        assert namespace in levels, f"{name}: namespace {namespace} is not shipped"
        if levels[namespace] != "restricted":
            continue
        spec = doc["spec"]["template"]["spec"]
        pod = spec.get("securityContext") or {}
        where = f"{name} {doc['metadata']['name']}"
        assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), where
        assert all("hostPath" not in v for v in spec.get("volumes", ())), where
        for container in [*spec.get("initContainers", ()), *spec["containers"]]:
            security = {**pod, **(container.get("securityContext") or {})}
            assert security.get("runAsNonRoot") is True, where
            assert security.get("runAsUser", 1) != 0, where
            assert security.get("allowPrivilegeEscalation") is False, where
            assert security.get("privileged", False) is False, where
            assert "ALL" in security["capabilities"]["drop"], where
            assert set(security["capabilities"].get("add", ())) <= {"NET_BIND_SERVICE"}, where
            seccomp = (container.get("securityContext") or {}).get("seccompProfile") or pod.get(
                "seccompProfile"
            )
            assert seccomp, where
            assert seccomp["type"] in ("RuntimeDefault", "Localhost"), where
            assert all("hostPort" not in p for p in container.get("ports", ())), where
            checked += 1
    assert checked >= 2  # the extender and the second scheduler


def test_daemonsets_mount_only_what_every_node_has_and_name_the_node_from_the_api() -> None:
    """A hostPath whose type check fails keeps the pod from starting on that node: the
    agents mount only directories every kubelet node has (/etc/hostname is missing where
    the hostname is transient), and take the Node's name from the Downward API."""
    every_node = {"/sys", "/var/lib/kubelet", "/var/lib/kubelet/pod-resources"}
    for _, ds in documents():
        if ds["kind"] != "DaemonSet":
            continue
        spec = ds["spec"]["template"]["spec"]
        for volume in spec.get("volumes", ()):
            host = volume.get("hostPath")
            if host is not None:
                assert host["path"] in every_node, (ds["metadata"]["name"], host)
                assert host.get("type") == "Directory", (ds["metadata"]["name"], host)
        for container in spec["containers"]:
            env = {e["name"]: e for e in container.get("env", ())}
            assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
