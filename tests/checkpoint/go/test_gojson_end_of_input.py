"""Go's words for input that ends inside a token, and for type errors in nested structs.

Go's scanner ends the input by stepping one space: where a space is valid (between tokens,
inside a string) the error is ``unexpected end of JSON input``; inside an escape, a literal
or a number the space itself is the invalid character. Texts measured with Go's
``encoding/json`` (the v1 decoder the kubelet is built with).
"""

from __future__ import annotations

import pytest

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.memory import codec as memory

END_OF_INPUT = [
    (b'{"a":"x\\', "invalid character ' ' in string escape code"),
    (b'"\\', "invalid character ' ' in string escape code"),
    (b'{"a":"x\\u', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"x\\u0', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":"x\\u004', "invalid character ' ' in \\u hexadecimal character escape"),
    (b'{"a":1.', "invalid character ' ' after decimal point in numeric literal"),
    (b"1.", "invalid character ' ' after decimal point in numeric literal"),
    (b'{"a":1e', "invalid character ' ' in exponent of numeric literal"),
    (b'{"a":1e+', "invalid character ' ' in exponent of numeric literal"),
    (b'{"a":-', "invalid character ' ' in numeric literal"),
    (b"-", "invalid character ' ' in numeric literal"),
    (b'{"a":tru', "invalid character ' ' in literal true (expecting 'e')"),
    (b"t", "invalid character ' ' in literal true (expecting 'r')"),
    (b'{"a":n', "invalid character ' ' in literal null (expecting 'u')"),
    (b'{"a":f', "invalid character ' ' in literal false (expecting 'a')"),
    # a space is valid here: the input simply ends
    (b'{"a":"x', "unexpected end of JSON input"),
    (b'{"a":1', "unexpected end of JSON input"),
    (b"[1,", "unexpected end of JSON input"),
    (b'{"a"', "unexpected end of JSON input"),
    # a real invalid character keeps its own name
    (b'{"policyName":"a\\ ","checksum":1}', "invalid character ' ' in string escape code"),
    (b'{"policyName":"a\\x"}', "invalid character 'x' in string escape code"),
]


@pytest.mark.parametrize(("data", "message"), END_OF_INPUT)
def test_end_of_input_inside_a_token(data: bytes, message: str) -> None:
    with pytest.raises(gojson.GoJSONSyntaxError) as caught:
        gojson.parse(data)
    assert caught.value.message == message


NESTED = [
    (b'{"machineState":{"0":5}}',
     "json: cannot unmarshal number into Go struct field MemoryManagerCheckpoint.machineState "
     "of type state.NUMANodeState"),
    (b'{"machineState":{"0":{"memoryMap":{"memory":{"total":"x"}}}}}',
     "json: cannot unmarshal string into Go struct field MemoryTable.machineState.memoryMap."
     "total of type uint64"),
    (b'{"entries":{"p":{"c":[{"size":"x"}]}}}',
     "json: cannot unmarshal string into Go struct field Block.entries.size of type uint64"),
    (b'{"machineState":{"0":{"cells":[1,"x"]}}}',
     "json: cannot unmarshal string into Go struct field NUMANodeState.machineState.cells of "
     "type int"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), NESTED)
def test_type_errors_in_nested_structs(data: bytes, message: str) -> None:
    assert memory.attempt_memory(data).error == message
