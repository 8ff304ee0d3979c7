"""The API server through the ``kubernetes`` client: how the agent and the extender reach it.

:func:`api_client` finds the cluster the way kubectl and client-go do: an explicit
kubeconfig, else ``$KUBECONFIG``, else the in-cluster environment
(``KUBERNETES_SERVICE_HOST``/``_PORT``, the mounted ServiceAccount token and CA; the client
rereads the token file as the kubelet rotates it), else ``~/.kube/config``. Every request has
a whole-request timeout; redirects are never followed (a 3xx is an error), so the bearer
token is never sent to another host.

Calls made here, and nothing else: ``pods`` of one node (list by fieldSelector
``spec.nodeName`` and watch), get one pod, create ``pods/binding``, create
``tokenreviews``. Failures are :class:`KubeApiError` with one line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cpumanager.errors import CpuManagerError

__all__ = [
    "ACTIVE_PODS",
    "KubeApi",
    "KubeApiError",
    "api_client",
    "client_for",
]

ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
DEFAULT_TIMEOUT = 10.0


class KubeApiError(CpuManagerError):
    """A call to the API server failed (one line: what, and the server's reason)."""


def api_client(kubeconfig: Path | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> KubeApi:
    """A client for the cluster (module docstring); KubeApiError when none is configured."""
    return KubeApi(client_for(kubeconfig), timeout)


def client_for(kubeconfig: Path | None = None) -> Any:
    """A ``kubernetes.client.ApiClient`` for the cluster, found as the module docstring says,
    that follows no redirect; KubeApiError when no cluster is configured."""
    import urllib3
    import yaml
    from kubernetes import client
    from kubernetes import config as untyped_config
    from kubernetes.config.config_exception import ConfigException

    config: Any = untyped_config
    configuration = client.Configuration()
    try:
        if kubeconfig is not None:
            config.load_kube_config(str(kubeconfig), client_configuration=configuration)
        elif os.environ.get("KUBECONFIG"):
            config.load_kube_config(client_configuration=configuration)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(client_configuration=configuration)
    except (ConfigException, OSError, ValueError, TypeError, KeyError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = (
            f"no usable cluster configuration ({first}); give --kubeconfig, set KUBECONFIG, "
            "or run in a pod with a ServiceAccount token"
        )
        raise KubeApiError(msg) from None
    # No redirects followed (the token stays with the API server), no silent retries.
    configuration.retries = urllib3.Retry(total=0, redirect=False, raise_on_redirect=True)
    return client.ApiClient(configuration)


def _reason(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, (str, bytes)):
        try:
            parsed = json.loads(body)
            message = str(parsed.get("message", "")) if isinstance(parsed, dict) else ""
        except ValueError:
            message = ""
    text = message or getattr(exc, "reason", None) or str(exc) or type(exc).__name__
    line = " ".join(str(text).split())[:300]
    return f"HTTP {status}: {line}" if status else line


def _watch_ended(node: str, raw: object) -> None:
    code = raw.get("code") if isinstance(raw, dict) else None
    msg = f"the watch on node {node}'s pods ended: HTTP {code}"
    raise KubeApiError(msg)


class KubeApi:
    """The calls the project makes (module docstring), each bounded by ``timeout`` seconds."""

    def __init__(self, api_client: Any, timeout: float) -> None:
        from kubernetes import client

        self._client = api_client
        self._core = client.CoreV1Api(api_client)
        self._auth = client.AuthenticationV1Api(api_client)
        self.timeout = timeout

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def _raw(self, response: Any) -> Any:
        try:
            return json.loads(response.data)
        finally:
            response.release_conn()

    def node_pods(
        self, node: str, *, active_only: bool = True, consistent: bool = False
    ) -> tuple[list[dict[str, Any]], str]:
        """The pods bound to ``node`` as JSON objects and the list's resourceVersion. Served
        from the API server's watch cache as it is (``resourceVersion=0``: cheap, may lag),
        or with ``consistent`` as of now (no resourceVersion: a quorum read, which API
        servers from 1.31 serve from the cache once it has caught up)."""
        selector = f"spec.nodeName={node}" + (f",{ACTIVE_PODS}" if active_only else "")
        version: dict[str, Any] = {} if consistent else {"resource_version": "0"}
        try:
            response = self._core.list_pod_for_all_namespaces(
                field_selector=selector,
                _preload_content=False,
                _request_timeout=self.timeout,
                **version,
            )
            body = self._raw(response)
        except Exception as exc:  # the client raises many types; each is one line here
            msg = f"cannot list the pods of node {node}: {_reason(exc)}"
            raise KubeApiError(msg) from None
        if not isinstance(body, dict):
            msg = f"cannot list the pods of node {node}: the answer is not a PodList"
            raise KubeApiError(msg)
        items = body.get("items")
        meta = body.get("metadata")
        # The list's version, with or without items: the watch resumes exactly there.
        listed = meta.get("resourceVersion") if isinstance(meta, dict) else None
        pods = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        return pods, listed if isinstance(listed, str) else ""

    def watch_node_pods(
        self, node: str, resource_version: str, *, seconds: int = 300
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Events (type, pod object) on ``node``'s pods after ``resource_version``; ends
        after ``seconds`` or when the server closes the watch (list again when it says
        the version is too old: KubeApiError with HTTP 410)."""
        from kubernetes import watch as untyped_watch

        watch: Any = untyped_watch
        watcher = watch.Watch()
        core = self._core

        def list_pods(**kwargs: Any) -> Any:
            # No docstring on purpose: the watch then yields the pods as JSON objects
            # instead of building (and validating) client models for each event.
            return core.list_pod_for_all_namespaces(**kwargs)

        try:
            for event in watcher.stream(
                list_pods,
                field_selector=f"spec.nodeName={node}",
                resource_version=resource_version,
                timeout_seconds=seconds,
                allow_watch_bookmarks=True,
                _request_timeout=seconds + self.timeout,
            ):
                kind = event.get("type")
                raw = event.get("raw_object")
                if kind == "ERROR":
                    _watch_ended(node, raw)
                if isinstance(kind, str) and isinstance(raw, dict):
                    yield kind, raw
        except KubeApiError:
            raise
        except Exception as exc:
            msg = f"the watch on node {node}'s pods failed: {_reason(exc)}"
            raise KubeApiError(msg) from None
        finally:
            watcher.stop()

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One pod as a JSON object; None when it does not exist."""
        try:
            response = self._core.read_namespaced_pod(
                name, namespace, _preload_content=False, _request_timeout=self.timeout
            )
            body = self._raw(response)
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return None
            msg = f"cannot read pod {namespace}/{name}: {_reason(exc)}"
            raise KubeApiError(msg) from None
        return body if isinstance(body, dict) else None

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Create the pod's Binding to ``node`` (the scheduler's own call)."""
        body: Any = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        try:
            response: Any = self._core.create_namespaced_pod_binding(
                name, namespace, body, _preload_content=False, _request_timeout=self.timeout
            )
            response.release_conn()
        except Exception as exc:
            msg = f"binding pod {namespace}/{name} to node {node} failed: {_reason(exc)}"
            raise KubeApiError(msg) from None

    def token_review(self, token: str, audiences: tuple[str, ...]) -> Mapping[str, Any]:
        """The TokenReview status for ``token`` with the expected ``audiences``."""
        body: Any = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token, "audiences": list(audiences)},
        }
        try:
            response = self._auth.create_token_review(
                body, _preload_content=False, _request_timeout=self.timeout
            )
            result = self._raw(response)
        except Exception as exc:
            msg = f"TokenReview failed: {_reason(exc)}"
            raise KubeApiError(msg) from None
        status = result.get("status") if isinstance(result, dict) else None
        return status if isinstance(status, dict) else {}
