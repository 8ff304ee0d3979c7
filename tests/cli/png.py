"""Just enough PNG decoding to read a browser's screenshot: 8-bit RGB or RGBA, not
interlaced (what headless Chromium writes). Pixels as (r, g, b) tuples."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from pathlib import Path

__all__ = ["colours"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _rows(data: bytes) -> tuple[int, int, int, list[bytearray]]:
    assert data.startswith(_SIGNATURE), "not a PNG"
    pos, idat = len(_SIGNATURE), b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8, depth
            assert colour in (2, 6), colour
            assert interlace == 0, interlace
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def colours(path: Path) -> Counter[tuple[int, int, int]]:
    """How many pixels of each colour the image has."""
    width, _height, channels, rows = _rows(path.read_bytes())
    found: Counter[tuple[int, int, int]] = Counter()
    for line in rows:
        for x in range(width):
            at = x * channels
            found[(line[at], line[at + 1], line[at + 2])] += 1
    return found
