"""Reading FTS5's own records: the varint that leads an averages or docsize block."""

from __future__ import annotations


def leading_varint(block: bytes) -> int:
    """The first SQLite varint of `block`: 7 bits a byte, high bit set while more follow, the
    9th byte whole (an averages record starts with its row count, a docsize record with its
    first column's token count)."""
    value = 0
    for i, byte in enumerate(block[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value
