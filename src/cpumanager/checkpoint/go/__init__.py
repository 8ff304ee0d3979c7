"""Go's encodings as the kubelet's checkpoints use them, for every file kind (pure).

``gojson`` (Go's JSON syntax, faithful) with ``fastjson`` and ``plainjson`` (the C scanner on
the inputs where it provably agrees) beside it; ``gotypes`` (Go types as data), ``godecode``
(``json.Unmarshal``), ``goencode`` (``json.Marshal``), ``gospew`` (go-spew's ``%#v``);
``fnv`` (FNV-1a 32, the checksum's hash).
"""
