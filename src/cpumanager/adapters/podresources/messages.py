"""The ``v1.PodResourcesLister`` messages, described in Python and built at import time.

No generated code: the field names, numbers and types below are the public contract of the
kubelet's ``pkg/apis/podresources/v1/api.proto`` (package ``v1``), written out as a
``FileDescriptorProto`` and turned into message classes by protobuf's message factory, in a
private descriptor pool so no other ``v1.*`` protos in the process can clash. Field 1 of
``DynamicResource`` (the removed ``class_name``) is left unused, as in the proto.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["METHODS", "SERVICE", "message_class"]

SERVICE = "v1.PodResourcesLister"
# method -> (request message, response message)
METHODS: dict[str, tuple[str, str]] = {
    "List": ("ListPodResourcesRequest", "ListPodResourcesResponse"),
    "GetAllocatableResources": ("AllocatableResourcesRequest", "AllocatableResourcesResponse"),
    "Get": ("GetPodResourcesRequest", "GetPodResourcesResponse"),
}

_F = descriptor_pb2.FieldDescriptorProto
_STRING, _INT64, _UINT64, _MESSAGE = _F.TYPE_STRING, _F.TYPE_INT64, _F.TYPE_UINT64, _F.TYPE_MESSAGE
_ONE, _MANY = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

# message -> [(field name, number, type, label, message type or "")]; the proto's contract.
_MESSAGES: dict[str, list[tuple[str, int, int, int, str]]] = {
    "AllocatableResourcesRequest": [],
    "AllocatableResourcesResponse": [
        ("devices", 1, _MESSAGE, _MANY, "ContainerDevices"),
        ("cpu_ids", 2, _INT64, _MANY, ""),
        ("memory", 3, _MESSAGE, _MANY, "ContainerMemory"),
    ],
    "ListPodResourcesRequest": [],
    "ListPodResourcesResponse": [("pod_resources", 1, _MESSAGE, _MANY, "PodResources")],
    "PodResources": [
        ("name", 1, _STRING, _ONE, ""),
        ("namespace", 2, _STRING, _ONE, ""),
        ("containers", 3, _MESSAGE, _MANY, "ContainerResources"),
        ("cpu_ids", 4, _INT64, _MANY, ""),
        ("memory", 5, _MESSAGE, _MANY, "ContainerMemory"),
    ],
    "ContainerResources": [
        ("name", 1, _STRING, _ONE, ""),
        ("devices", 2, _MESSAGE, _MANY, "ContainerDevices"),
        ("cpu_ids", 3, _INT64, _MANY, ""),
        ("memory", 4, _MESSAGE, _MANY, "ContainerMemory"),
        ("dynamic_resources", 5, _MESSAGE, _MANY, "DynamicResource"),
    ],
    "ContainerMemory": [
        ("memory_type", 1, _STRING, _ONE, ""),
        ("size", 2, _UINT64, _ONE, ""),
        ("topology", 3, _MESSAGE, _ONE, "TopologyInfo"),
    ],
    "ContainerDevices": [
        ("resource_name", 1, _STRING, _ONE, ""),
        ("device_ids", 2, _STRING, _MANY, ""),
        ("topology", 3, _MESSAGE, _ONE, "TopologyInfo"),
    ],
    "TopologyInfo": [("nodes", 1, _MESSAGE, _MANY, "NUMANode")],
    "NUMANode": [("ID", 1, _INT64, _ONE, "")],
    "DynamicResource": [
        ("claim_name", 2, _STRING, _ONE, ""),
        ("claim_namespace", 3, _STRING, _ONE, ""),
        ("claim_resources", 4, _MESSAGE, _MANY, "ClaimResource"),
    ],
    "ClaimResource": [
        ("cdi_devices", 1, _MESSAGE, _MANY, "CDIDevice"),
        ("driver_name", 2, _STRING, _ONE, ""),
        ("pool_name", 3, _STRING, _ONE, ""),
        ("device_name", 4, _STRING, _ONE, ""),
        ("share_id", 5, _STRING, _ONE, ""),  # proto3 `optional`: presence is tracked
    ],
    "CDIDevice": [("name", 1, _STRING, _ONE, "")],
    "GetPodResourcesRequest": [
        ("pod_name", 1, _STRING, _ONE, ""),
        ("pod_namespace", 2, _STRING, _ONE, ""),
    ],
    "GetPodResourcesResponse": [("pod_resources", 1, _MESSAGE, _ONE, "PodResources")],
}
_OPTIONAL = {("ClaimResource", "share_id")}


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="cpumanager/podresources/v1/api.proto", package="v1", syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = message.field.add(name=field_name, number=number, type=kind, label=label)
            field.json_name = field_name
            if type_name:
                field.type_name = f".v1.{type_name}"
            if (name, field_name) in _OPTIONAL:
                message.oneof_decl.add(name=f"_{field_name}")
                field.oneof_index = len(message.oneof_decl) - 1
                field.proto3_optional = True
    service = proto.service.add(name=SERVICE.removeprefix("v1."))
    for method, (request, response) in METHODS.items():
        service.method.add(name=method, input_type=f".v1.{request}", output_type=f".v1.{response}")
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())
_CLASSES: dict[str, Any] = {
    name: message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"v1.{name}"))
    for name in _MESSAGES
}


def message_class(name: str) -> Any:
    """The message class for ``name`` (e.g. ``"ListPodResourcesResponse"``)."""
    return _CLASSES[name]
