"""Reads a TensorBoard event file without the code that wrote it, for
tests/trainer/tensorboard_logger_test.cc. TensorBoard's own reader can not
be used: Debian 12 packages neither tensorboard nor tensorflow (nor
tensorboardX), and nothing is installed from PyPI here.

The TFRecord framing is parsed here (tensorboard/summary/writer/
record_writer.py: uint64 length, masked CRC-32C of the length, data, masked
CRC-32C of the data, little-endian), both CRCs are checked with a bitwise
CRC-32C written from its definition (reflected polynomial 0x82F63B78; and
with Debian's python3-crcmod when it is installed), and every record is
decoded by `protoc --decode=tensorboard.Event` with the .proto files (and
`--decode_raw`, which needs none, to check upstream's field numbers). The
hparams plugin's content is decoded the same way as HParamsPluginData.

usage: read_tfevents.py EVENT_FILE PROTO_DIR
Prints one JSON object per record: {"raw": decode_raw text, "wall_time",
"step", "file_version", "writer", "session_log", "values": [{"tag",
"simple_value", "plugin_name", "content"}]}, content as one line of text
format. Exits 1 with a message on a framing or CRC error.
"""

import codecs
import json
import re
import struct
import subprocess
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


try:
    import crcmod.predefined

    _CRCMOD = crcmod.predefined.mkCrcFun("crc-32c")
except ImportError:
    _CRCMOD = None


def masked(data):
    crc = crc32c(data)
    if _CRCMOD is not None and _CRCMOD(data) != crc:
        sys.exit("the two CRC-32C implementations disagree")
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(blob):
    pos = 0
    while pos < len(blob):
        if len(blob) - pos < 12:
            sys.exit(f"truncated record header at byte {pos}")
        header = blob[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", blob[pos + 8 : pos + 12])
        if header_crc != masked(header):
            sys.exit(f"bad length CRC at byte {pos}")
        data = blob[pos + 12 : pos + 12 + length]
        if len(data) != length or len(blob) < pos + 16 + length:
            sys.exit(f"truncated record at byte {pos}")
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length : pos + 16 + length])
        if data_crc != masked(data):
            sys.exit(f"bad data CRC at byte {pos}")
        yield data
        pos += 16 + length


def protoc(args, data, proto_dir):
    out = subprocess.run(
        ["protoc", "-I", proto_dir, "-I", "/usr/include"] + args,
        input=data, capture_output=True, check=True, cwd=proto_dir)
    return out.stdout.decode()


def field(text, name):
    m = re.search(r"^\s*" + name + r": (.*)$", text, re.M)
    return None if m is None else m.group(1)


def unquote(text):
    return None if text is None else codecs.escape_decode(text[1:-1].encode("latin-1"))[0]


def main():
    path, proto_dir = sys.argv[1], sys.argv[2]
    blob = open(path, "rb").read()
    for data in records(blob):
        text = protoc(["--decode=tensorboard.Event", "tensorboard/compat/proto/event.proto"], data, proto_dir)
        event = {
            "raw": protoc(["--decode_raw"], data, proto_dir),
            "wall_time": float(field(text, "wall_time") or 0),
            "step": int(field(text, "step") or 0),
            "file_version": (unquote(field(text, "file_version")) or b"").decode(),
            "writer": (unquote(field(text, "writer")) or b"").decode(),
            "session_log": field(text, "status") or "",
            "values": [],
        }
        for block in re.split(r"^  value \{$", text, flags=re.M)[1:]:
            content = unquote(field(block, "content"))
            if content is not None:
                content = " ".join(protoc(
                    ["--decode=tensorboard.hparams.HParamsPluginData",
                     "tensorboard/plugins/hparams/plugin_data.proto"],
                    content, proto_dir).split())
            event["values"].append({
                "tag": unquote(field(block, "tag")).decode(),
                "simple_value": field(block, "simple_value"),
                "plugin_name": (unquote(field(block, "plugin_name")) or b"").decode(),
                "content": content,
            })
        print(json.dumps(event))


if __name__ == "__main__":
    main()
