"""The memory manager's ``memory_manager_state``, V1 .. V3 (pure).

``model`` (the V1 structs and their Go types), ``codec`` (V1 bytes <-> model, faithful) with
``codec_fast_read`` and ``codec_fast_write`` beside it, ``v2_v3`` (the formats after v1.35),
``restore`` (the kubelet's restore and validation at start).
"""
