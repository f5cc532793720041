"""A minimal writer for the ONNX protobuf messages a plain graph needs (no `onnx` package).

The ONNX model format is protobuf (onnx/onnx.proto3, field numbers below). Building a graph
needs only nodes with int/float/ints attributes, raw-data tensors, and typed graph inputs and
outputs, so a hundred lines of wire format save the 27 MB `onnx` package and its schema
machinery; onnxruntime itself checks the result when it loads the bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

# TensorProto.DataType
FLOAT = 1
UINT8 = 2
INT8 = 3
INT32 = 6
INT64 = 7
_DTYPES = {
    np.dtype(np.float32): FLOAT,
    np.dtype(np.uint8): UINT8,
    np.dtype(np.int8): INT8,
    np.dtype(np.int32): INT32,
    np.dtype(np.int64): INT64,
}
CONTRIB_OPSET = 1  # the version of onnxruntime's own operators (a node's `domain`) imported
# AttributeProto.AttributeType
_ATTR_FLOAT = 1
_ATTR_INT = 2
_ATTR_INTS = 7
IR_VERSION = 8  # what onnxruntime >= 1.14 reads; opset 18 needs IR 8

Attribute = int | float | Sequence[int]


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int64 fields are two's complement, ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _int(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(value)


def _bytes(number: int, value: bytes) -> bytes:
    return _key(number, 2) + _varint(len(value)) + value


def _str(number: int, value: str) -> bytes:
    return _bytes(number, value.encode("utf-8"))


def _messages(number: int, parts: Iterable[bytes]) -> bytes:
    return b"".join(_bytes(number, p) for p in parts)


def _attribute(name: str, value: Attribute) -> bytes:
    head = _str(1, name)
    if isinstance(value, bool):
        raise TypeError(f"attribute {name}: bool is not an ONNX attribute type")
    if isinstance(value, int):
        return head + _int(3, value) + _int(20, _ATTR_INT)
    if isinstance(value, float):
        return head + _key(2, 5) + struct.pack("<f", value) + _int(20, _ATTR_FLOAT)
    return head + b"".join(_int(8, v) for v in value) + _int(20, _ATTR_INTS)


def tensor(name: str, array: npt.NDArray[np.generic]) -> bytes:
    """A TensorProto holding `array` (float32, (u)int8, int32 or int64) as little-endian raw
    data."""
    kind = _DTYPES[array.dtype]
    dims = b"".join(_int(1, d) for d in array.shape)
    raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return dims + _int(2, kind) + _str(8, name) + _bytes(9, raw.tobytes())


def value_info(name: str, elem_type: int, shape: Sequence[int | str]) -> bytes:
    """A ValueInfoProto: a named tensor of `elem_type` whose dims are sizes or symbols."""
    dims = [_int(1, d) if isinstance(d, int) else _str(2, d) for d in shape]
    tensor_type = _int(1, elem_type) + _bytes(2, _messages(1, dims))
    return _str(1, name) + _bytes(2, _bytes(1, tensor_type))


@dataclass(slots=True)
class GraphWriter:
    """Collects nodes and initializers; `model()` returns the serialized ModelProto."""

    name: str
    nodes: list[bytes] = field(default_factory=list)
    initializers: list[bytes] = field(default_factory=list)
    domains: set[str] = field(default_factory=set)  # operator domains besides the default
    _count: int = 0

    def constant(self, name: str, array: npt.NDArray[np.generic]) -> str:
        """Add an initializer; returns its name."""
        self.initializers.append(tensor(name, array))
        return name

    def node(
        self,
        op: str,
        inputs: Sequence[str],
        *,
        domain: str = "",
        outputs: Sequence[str] | None = None,
        **attributes: Attribute,
    ) -> str:
        """Add a node; returns the name of its (first) output."""
        self._count += 1
        if domain:
            self.domains.add(domain)
        outs = list(outputs) if outputs else [f"{op.lower()}_{self._count}"]
        body = (
            b"".join(_str(1, i) for i in inputs)
            + b"".join(_str(2, o) for o in outs)
            + _str(3, f"n{self._count}")
            + _str(4, op)
            + _messages(5, (_attribute(k, v) for k, v in attributes.items()))
            + (_str(7, domain) if domain else b"")
        )
        self.nodes.append(body)
        return outs[0]

    def model(self, inputs: Sequence[bytes], outputs: Sequence[bytes], opset: int) -> bytes:
        """The ModelProto bytes of this graph with `inputs`/`outputs` (from `value_info`)."""
        graph = (
            _messages(1, self.nodes)
            + _str(2, self.name)
            + _messages(5, self.initializers)
            + _messages(11, inputs)
            + _messages(12, outputs)
        )
        imports = [_str(1, "") + _int(2, opset)]
        imports += [_str(1, d) + _int(2, CONTRIB_OPSET) for d in sorted(self.domains)]
        return (
            _int(1, IR_VERSION)
            + _str(2, "signet-desktop")
            + _bytes(7, graph)
            + _messages(8, imports)
        )
