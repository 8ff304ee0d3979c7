"""The CPU manager's ``cpu_manager_state``, V1 .. V4 (pure).

``model`` (the V1/V2 structs), ``checksum`` (their go-spew text and hash), ``cpulist`` (the
kubelet's ``cpuset.Parse``), ``codec`` (V1/V2 bytes <-> models, faithful) with
``codec_fast`` beside it, ``v3_v4`` (the formats after v1.35), ``restore`` (the kubelet's
restore at start) with ``restore_fast`` beside it, ``migrate`` (V1 <-> V2 through a
container map).
"""
