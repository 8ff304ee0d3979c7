"""The one exception tree of cpumanager.

Every error the library raises derives from :class:`CpuManagerError`; messages are one line,
quote the offending values and end with what to do. The CLI maps the three branches to exit
codes (1 = bad input or file, 3 = system or runtime failure; 2 is click's usage error).

::

    CpuManagerError
    ├── InputError                      bad text, file, flag or configuration  (exit 1)
    │   ├── InvalidCPUSetError          Linux list format could not be parsed
    │   ├── InvalidNUMAMaskError        NUMA node id out of range
    │   ├── MachineError                machine description or sysfs tree unusable
    │   ├── WorkloadError               Pod manifest malformed
    │   ├── ConfigError                 kubelet configuration / policy options invalid
    │   │   └── KubeletConfigInvalidError   every error the kubelet's validation gives
    │   ├── ScenarioError               simulator scenario malformed
    │   ├── InvalidPathError            a path names a directory or device, not a file
    │   ├── SnapshotError               node snapshot file unusable
    │   └── CheckpointError             cpu_manager_state unusable
    │       ├── CheckpointFormatError   not a checkpoint the kubelet could decode
    │       ├── CheckpointCorruptError  checksum mismatch
    │       ├── StateValidationError    decodes, but does not fit machine/policy/reservation
    │       └── ContainerMapRequiredError  a V1 conversion needs the container map
    ├── AllocationError                 a request cannot be satisfied          (exit 1)
    │   ├── NotEnoughCPUsError
    │   ├── SMTAlignmentError
    │   ├── TopologyAffinityError
    │   └── UnexpectedAdmissionError
    └── HostError                       the host failed us                     (exit 3)
        ├── StoreError                  reading/writing state files failed
        ├── PodResourcesError           the kubelet's PodResources API did not answer
        └── RuntimeApplyError           cpuset / affinity could not be applied

Errors that the kubelet reports as a pod admission *reason* carry it in ``reason`` so the
simulator and ``compute`` can print the kubelet's names.
"""

from __future__ import annotations

# Every character str.splitlines() breaks at, escaped: a message quoting a hostile value
# (a policy name holding a newline) stays one line by construction.
_LINE_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


class CpuManagerError(Exception):
    """Root of every error raised by cpumanager; its message is one line (line breaks in
    it are escaped)."""

    exit_code: int = 1
    reason: str = "CpuManagerError"

    def __init__(self, message: str) -> None:
        message = message.translate(_LINE_BREAKS)
        super().__init__(message)
        self.message = message


class InputError(CpuManagerError):
    """Bad text, file, flag or configuration given by the user."""

    reason = "InputError"


class InvalidCPUSetError(InputError):
    """A CPU list could not be parsed (``0-3,8``)."""

    reason = "InvalidCPUSetError"

    def __init__(self, text: str, detail: str) -> None:
        super().__init__(
            f"invalid CPU list {text!r}: {detail}; "
            "write CPU ids and ranges separated by commas, e.g. '0-3,8,10-11'"
        )
        self.text = text
        self.detail = detail


class InvalidNUMAMaskError(InputError):
    """A NUMA node id is out of the accepted range."""

    reason = "InvalidNUMAMaskError"


class MachineError(InputError):
    """A machine description (preset, file, sysfs tree) cannot be used."""

    reason = "MachineError"


class WorkloadError(InputError):
    """A Pod manifest or quantity is malformed."""

    reason = "WorkloadError"


class ConfigError(InputError):
    """The kubelet configuration or policy options are invalid."""

    reason = "ConfigError"


class KubeletConfigInvalidError(ConfigError):
    """A configuration the kubelet would refuse, with each of its messages in ``errors``.

    ``stage`` is where the kubelet stops: ``loads`` (the file cannot be decoded),
    ``validates`` (feature gates or ValidateKubeletConfiguration) or ``starts`` (a manager
    refuses its policy or reservation when the container manager builds it).
    """

    reason = "KubeletConfigInvalidError"

    def __init__(self, errors: tuple[str, ...], *, stage: str = "validates") -> None:
        many = f"{len(errors)} errors: " + " | ".join(errors)
        super().__init__(errors[0] if len(errors) == 1 else many)
        self.errors = errors
        self.stage = stage


class ScenarioError(InputError):
    """A simulator scenario is malformed."""

    reason = "ScenarioError"


class CheckpointError(InputError):
    """A cpu_manager_state checkpoint cannot be used."""

    reason = "CheckpointError"


class CheckpointFormatError(CheckpointError):
    """The bytes are not a checkpoint the kubelet could decode."""

    reason = "CheckpointFormatError"


class CheckpointCorruptError(CheckpointError):
    """The checkpoint decodes but its checksum does not match its content."""

    reason = "CheckpointCorruptError"

    def __init__(self, source: str, stored: int, computed: int) -> None:
        super().__init__(
            f"checkpoint {source!r} is corrupt (stored checksum {stored}, computed {computed}); "
            f"it was left untouched: inspect it with 'cpumanager state verify {source}'"
        )
        self.source = source
        self.stored = stored
        self.computed = computed


class ContainerMapRequiredError(CheckpointError):
    """Converting to or from V1 needs to know which container id belongs to which pod."""

    reason = "ContainerMapRequiredError"


class StateValidationError(CheckpointError):
    """The state decodes but does not fit the machine, the policy or the reservation."""

    reason = "StateValidationError"

    def __init__(self, message: str, *, reasons: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reasons = reasons or (message,)


class AllocationError(CpuManagerError):
    """A request cannot be satisfied on this machine in its current state."""

    reason = "AllocationError"


class NotEnoughCPUsError(AllocationError):
    """Fewer CPUs are available than requested."""

    reason = "NotEnoughCPUsError"


class SMTAlignmentError(AllocationError):
    """full-pcpus-only: the request is not a whole number of physical cores."""

    reason = "SMTAlignmentError"

    def __init__(
        self,
        message: str,
        *,
        requested: int,
        cpus_per_core: int,
        available_physical: int | None = None,
    ) -> None:
        super().__init__(message)
        self.requested = requested
        self.cpus_per_core = cpus_per_core
        self.available_physical = available_physical


class TopologyAffinityError(AllocationError):
    """The topology manager policy cannot align the pod's resources."""

    reason = "TopologyAffinityError"


class UnexpectedAdmissionError(AllocationError):
    """An allocation failed for a reason the kubelet does not classify."""

    reason = "UnexpectedAdmissionError"


class HostError(CpuManagerError):
    """The host failed: a file, a cgroup or a process did not do what we asked."""

    exit_code = 3
    reason = "HostError"


class StoreError(HostError):
    """Reading or writing a state file failed."""

    reason = "StoreError"


class RuntimeApplyError(HostError):
    """A cpuset or CPU affinity could not be applied to a workload."""

    reason = "RuntimeApplyError"


class InvalidPathError(InputError):
    """A path names something that is not the kind of file asked for (a directory, a fifo)."""

    reason = "InvalidPathError"


class SnapshotError(InputError):
    """A node snapshot file (``cpumanager node snapshot``) cannot be used."""

    reason = "SnapshotError"


class PodResourcesError(HostError):
    """The kubelet's PodResources API (gRPC on a Unix socket) did not give an answer.

    ``status`` says why in one word: ``missing`` (no socket), ``unimplemented`` (an older
    kubelet), ``disabled`` (a feature gate is off), ``rate-limited`` or ``error``.
    """

    reason = "PodResourcesError"

    def __init__(self, message: str, *, status: str = "error") -> None:
        super().__init__(message)
        self.status = status
