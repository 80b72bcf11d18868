"""U-Boot's legacy image format, for its boot scripts: what `mkimage -A arm64 -O linux -T script -C none`
writes, and what U-Boot's `source` command reads (its distro boot looks for `boot.scr.uimg`).

Layout (every number big-endian): a 64-byte header (magic 0x27051956, header CRC-32, time, data size,
load and entry addresses, data CRC-32, OS, architecture, type, compression, a 32-byte NUL-padded name),
then the data. A script's data is a table of lengths ended by a zero word, here one entry (the script's
length), then the script's text. The CRCs are zlib's CRC-32: the header's over the header with its own
CRC field zero, the data's over the data.

Written here rather than with mkimage (u-boot-tools) so that booting through U-Boot needs no host tool;
the unit test compares a script with the bytes mkimage 2023.01 writes for it.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = 0x27051956
HEADER = struct.Struct(">7I4B32s")  # magic, hcrc, time, size, load, ep, dcrc; os, arch, type, comp; name
NAME_MAX = 32  # bytes, the last of them a NUL when the name fills the field
OS_LINUX = 5  # IH_OS_LINUX: what mkimage -O linux writes; U-Boot's `source` does not look at it
ARCH_ARM64 = 22  # IH_ARCH_ARM64
TYPE_SCRIPT = 6  # IH_TYPE_SCRIPT
COMP_NONE = 0  # IH_COMP_NONE
LENGTH = struct.Struct(">I")


class UImageError(ValueError):
    """Bytes that are not a well-formed legacy script image."""


@dataclass(frozen=True)
class Script:
    """A script image's contents, as `parse_script` reads them back."""

    name: str
    text: str
    timestamp: int


def script(text: str, name: str, timestamp: int = 0) -> bytes:
    """The legacy image of the U-Boot script `text` (what `source` runs), named `name` (ASCII, at most 31
    bytes); `timestamp` is the header's creation time (seconds since 1970; 0 keeps the bytes the same at
    every build, as mkimage with SOURCE_DATE_EPOCH=0)."""
    body = text.encode("ascii")
    raw_name = name.encode("ascii")
    if len(raw_name) >= NAME_MAX:
        raise ValueError(f"image name {name!r} is longer than {NAME_MAX - 1} bytes")
    data = LENGTH.pack(len(body)) + LENGTH.pack(0) + body
    fields = (
        MAGIC, 0, timestamp, len(data), 0, 0, zlib.crc32(data),
        OS_LINUX, ARCH_ARM64, TYPE_SCRIPT, COMP_NONE, raw_name,
    )  # fmt: skip
    header = HEADER.pack(*fields)
    header = HEADER.pack(fields[0], zlib.crc32(header), *fields[2:])
    return header + data


def parse_script(image: bytes) -> Script:
    """A script image's name, text and time, checked as U-Boot's `source` checks it (magic, both CRCs,
    type); UImageError says what is wrong."""
    if len(image) < HEADER.size:
        raise UImageError(f"{len(image)} bytes: shorter than the {HEADER.size}-byte header")
    magic, hcrc, timestamp, size, _load, _ep, dcrc, _os, _arch, kind, comp, raw_name = HEADER.unpack_from(
        image
    )
    if magic != MAGIC:
        raise UImageError(f"magic 0x{magic:08x}, not 0x{MAGIC:08x}")
    unsigned = bytearray(image[: HEADER.size])
    unsigned[4:8] = bytes(4)
    if zlib.crc32(unsigned) != hcrc:
        raise UImageError("header CRC mismatch")
    data = image[HEADER.size : HEADER.size + size]
    if len(data) != size:
        raise UImageError(f"data size {size} but {len(data)} bytes follow the header")
    if zlib.crc32(data) != dcrc:
        raise UImageError("data CRC mismatch")
    if kind != TYPE_SCRIPT or comp != COMP_NONE:
        raise UImageError(f"image type {kind}, compression {comp}: not an uncompressed script")
    lengths = []
    at = 0
    while True:
        if at + LENGTH.size > len(data):
            raise UImageError("the table of lengths has no end")
        (length,) = LENGTH.unpack_from(data, at)
        at += LENGTH.size
        if length == 0:
            break
        lengths.append(length)
    if not lengths or at + lengths[0] > len(data):
        raise UImageError("no script, or a script longer than the data")
    text = data[at : at + lengths[0]].decode("ascii", errors="replace")
    return Script(raw_name.rstrip(b"\0").decode("ascii", errors="replace"), text, timestamp)
