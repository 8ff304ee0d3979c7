"""The device manager's ``kubelet_internal_checkpoint``, V1 and V2 (pure).

``model`` (the structs and their Go types), ``codec`` (bytes <-> models, faithful) with
``codec_fast`` beside it, ``restore`` (what the kubelet restores at start).
"""
