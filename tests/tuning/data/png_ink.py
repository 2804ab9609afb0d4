#!/usr/bin/python3
"""Prints the share of pixels of a PNG screenshot (8-bit RGB or RGBA, not
interlaced, as Chromium writes them) that are not the page's white, and the
image size: "ink W H". Standard library only (zlib), for report_html_test."""
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG"
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
bpp = 3 if colour == 2 else 4
stride = width * bpp
prev = bytearray(stride)
ink = 0
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pred) & 255
    for x in range(0, stride, bpp):
        if line[x] < 250 or line[x + 1] < 250 or line[x + 2] < 250:
            ink += 1
    prev = line
print(f"{ink / (width * height):.4f} {width} {height}")
