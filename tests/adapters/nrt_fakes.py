"""An in-memory stand-in for the API server's noderesourcetopologies (CustomObjectsApi's
cluster-scoped calls), with resourceVersion checks like the real one."""

from __future__ import annotations

import copy
import json
from typing import Any


class ApiError(Exception):
    """Shaped like kubernetes.client.ApiException: ``status`` and ``reason``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class FakeObjects:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str | None]] = []  # (verb, name, field manager)
        self.version = 0
        self.fail_next: ApiError | None = None
        self.timeouts: list[object] = []  # each call's _request_timeout

    def _check(self, group: str, version: str, plural: str) -> None:
        assert (group, version, plural) == (
            "topology.node.k8s.io", "v1alpha2", "noderesourcetopologies",
        )  # fmt: skip
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error

    def get_cluster_custom_object(
        self, group: str, version: str, plural: str, name: str, **kwargs: Any
    ) -> Any:
        self.calls.append(("get", name, None))
        self.timeouts.append(kwargs.get("_request_timeout"))
        self._check(group, version, plural)
        if name not in self.objects:
            raise ApiError(404, "Not Found")
        return copy.deepcopy(self.objects[name])

    def _store(self, body: Any) -> Any:
        json.dumps(body)  # the client sends JSON
        self.version += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.objects[stored["metadata"]["name"]] = stored
        return stored

    def create_cluster_custom_object(
        self, group: str, version: str, plural: str, body: Any, **kwargs: Any
    ) -> Any:
        self.calls.append(("create", body["metadata"]["name"], kwargs.get("field_manager")))
        self.timeouts.append(kwargs.get("_request_timeout"))
        self._check(group, version, plural)
        if body["metadata"]["name"] in self.objects:
            raise ApiError(409, "AlreadyExists")
        return self._store(body)

    def replace_cluster_custom_object(
        self, group: str, version: str, plural: str, name: str, body: Any, **kwargs: Any
    ) -> Any:
        self.calls.append(("replace", name, kwargs.get("field_manager")))
        self.timeouts.append(kwargs.get("_request_timeout"))
        self._check(group, version, plural)
        current = self.objects.get(name)
        if current is None:
            raise ApiError(404, "Not Found")
        if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict")
        return self._store(body)
