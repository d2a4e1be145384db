"""Reading QR codes back in tests, with zxing-cpp (a decoder that shares no code with segno, which
drew them): from the inline SVG a page serves, and from a browser's PNG screenshot. Neither
numpy nor Pillow is needed: both are turned into a grayscale buffer here."""

from __future__ import annotations

import re
import struct
import zlib

import zxingcpp

SCALE = 4


def decode_svg(svg: str) -> list[str]:
    """The texts of the QR codes in the page's inline SVG (one dark-stroked path of unit lines)."""
    size = int(re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).group(1))
    path = re.search(r'<path class="qrline"[^>]* d="([^"]+)"', svg).group(1)
    dark = [[False] * size for _ in range(size)]
    x = y = 0.0
    for command, a, b in re.findall(r"([MmHh])(-?[\d.]+)(?: (-?[\d.]+))?", path):
        if command == "M":
            x, y = float(a), float(b)
        elif command == "m":
            x, y = x + float(a), y + float(b)
        else:
            length = float(a) if command == "h" else float(a) - x
            for column in range(int(x), int(x + length)):
                dark[int(y)][column] = True
            x += length
    pixels = bytearray()
    for row in dark:
        line = bytes(0 if cell else 255 for cell in row for _ in range(SCALE))
        pixels += line * SCALE
    return _read(pixels, size * SCALE, size * SCALE)


def decode_png(png: bytes) -> list[str]:
    """The texts of the QR codes in an 8-bit, non-interlaced RGB(A) PNG (a Chromium screenshot)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, data = 8, b""
    width = height = channels = 0
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        body = png[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6), (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            data += body
        position += 12 + length
    raw = zlib.decompress(data)
    stride = width * channels
    previous = bytearray(stride)
    gray = bytearray()
    for row in range(height):
        start = row * (stride + 1)
        filter_type = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 0xFF
            elif filter_type == 2:
                line[i] = (line[i] + up) & 0xFF
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif filter_type == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + predictor) & 0xFF
        gray += bytes(
            (line[i] + line[i + 1] + line[i + 2]) // 3 for i in range(0, stride, channels)
        )
        previous = line
    return _read(gray, width, height)


def _read(gray: bytearray, width: int, height: int) -> list[str]:
    image = memoryview(bytes(gray)).cast("B", (height, width))
    return [code.text for code in zxingcpp.read_barcodes(image)]
