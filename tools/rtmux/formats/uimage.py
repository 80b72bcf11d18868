"""U-Boot's legacy image format for scripts: what `mkimage -A arm64 -O linux -T script -C none` makes of a
boot script and what U-Boot's `source` command runs (boot.scr).

Layout (big-endian): a 64-byte header (magic 0x27051956, the header's CRC-32 computed with that field
zero, time, data size, load and entry address, the data's CRC-32, OS, architecture, type, compression,
a 32-byte NUL-padded name), then the data. A script's data is a table of lengths ending with a zero
word (one entry: the script's length), then the script's text.

The time field is 0 here, so that the same script always gives the same bytes (mkimage writes the
current time unless SOURCE_DATE_EPOCH says otherwise).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = 0x27051956
HEADER = struct.Struct(">7I4B32s")
NAME_LEN = 32
OS_LINUX = 5
ARCH_ARM64 = 22
TYPE_SCRIPT = 6
COMP_NONE = 0


class UImageError(ValueError):
    """Bytes that are not a well-formed legacy script image."""


@dataclass(frozen=True)
class Script:
    name: str
    text: bytes
    time: int
    os: int
    arch: int


def script(text: bytes, name: str) -> bytes:
    """The legacy image of a boot script: `text` behind the header, named `name` (at most 31 bytes)."""
    encoded = name.encode("ascii")
    if len(encoded) >= NAME_LEN:
        raise UImageError(f"image name {name!r} is longer than {NAME_LEN - 1} bytes")
    data = struct.pack(">II", len(text), 0) + text
    fields = [MAGIC, 0, 0, len(data), 0, 0, zlib.crc32(data), OS_LINUX, ARCH_ARM64, TYPE_SCRIPT, COMP_NONE]
    header = HEADER.pack(*fields, encoded)
    fields[1] = zlib.crc32(header)
    return HEADER.pack(*fields, encoded) + data


def parse_script(image: bytes) -> Script:
    """The script inside a legacy script image; UImageError naming the first thing that is wrong."""
    if len(image) < HEADER.size:
        raise UImageError(f"{len(image)} bytes: shorter than the {HEADER.size}-byte header")
    magic, hcrc, time, size, _load, _ep, dcrc, os_, arch, type_, comp, raw_name = HEADER.unpack_from(image)
    if magic != MAGIC:
        raise UImageError(f"magic {magic:#010x}, expected {MAGIC:#010x}")
    zeroed = bytearray(image[: HEADER.size])
    zeroed[4:8] = bytes(4)
    if zlib.crc32(zeroed) != hcrc:
        raise UImageError("the header's CRC-32 does not match")
    data = image[HEADER.size :]
    if len(data) != size:
        raise UImageError(f"the header gives {size} bytes of data, the image has {len(data)}")
    if zlib.crc32(data) != dcrc:
        raise UImageError("the data's CRC-32 does not match")
    if type_ != TYPE_SCRIPT:
        raise UImageError(f"image type {type_}, not a script ({TYPE_SCRIPT})")
    if comp != COMP_NONE:
        raise UImageError(f"compression {comp}: only an uncompressed script is read")
    if len(data) < 8:
        raise UImageError("no length table")
    length, end = struct.unpack_from(">II", data)
    if end != 0:
        raise UImageError("the length table has more than one entry")
    text = data[8:]
    if len(text) != length:
        raise UImageError(f"the length table gives {length} bytes of script, the image has {len(text)}")
    return Script(raw_name.rstrip(b"\0").decode("ascii", "replace"), text, time, os_, arch)
