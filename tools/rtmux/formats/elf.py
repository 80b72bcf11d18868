"""The few facts about ELF files the Linux guest tooling needs, read with the standard library only.

- `dynamic_info`: the program interpreter (PT_INTERP) and the DT_NEEDED libraries of an executable or
  shared library, found through the program headers (so stripped files work).
- `section`: one section's bytes by name, through the section headers (for a kernel module's `.modinfo`).
- `modinfo`: the `key=value` strings of a kernel module's `.modinfo` section (`depends`, `alias`, ...).
- `machine`: the architecture an executable is for (e_machine).

Only 64-bit little-endian ELF is accepted (AArch64 is the only target); anything else is an ElfError.
"""

from __future__ import annotations

import lzma
import struct
from dataclasses import dataclass
from pathlib import Path

ELFCLASS64 = 2
ELFDATA2LSB = 1
PT_LOAD = 1
PT_DYNAMIC = 2
PT_INTERP = 3
DT_NULL = 0
DT_NEEDED = 1
DT_STRTAB = 5


class ElfError(ValueError):
    """The file is not a 64-bit little-endian ELF file, or its tables are out of bounds."""


@dataclass(frozen=True)
class DynamicInfo:
    interpreter: str | None  # e.g. /lib/ld-linux-aarch64.so.1; None for a static file or a library
    needed: tuple[str, ...]  # DT_NEEDED sonames in file order


@dataclass(frozen=True)
class _Header:
    phoff: int
    shoff: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int
    shstrndx: int


def _header(data: bytes, name: str) -> _Header:
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ElfError(f"{name}: not an ELF file")
    if data[4] != ELFCLASS64 or data[5] != ELFDATA2LSB:
        raise ElfError(f"{name}: not a 64-bit little-endian ELF file")
    phoff, shoff = struct.unpack_from("<QQ", data, 32)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 54)
    return _Header(phoff, shoff, phentsize, phnum, shentsize, shnum, shstrndx)


def _slice(data: bytes, offset: int, size: int, name: str) -> bytes:
    if offset < 0 or size < 0 or offset + size > len(data):
        raise ElfError(f"{name}: table at offset {offset:#x} (size {size}) lies outside the file")
    return data[offset : offset + size]


def _cstring(data: bytes, offset: int, name: str) -> str:
    if offset >= len(data):
        raise ElfError(f"{name}: string offset {offset:#x} lies outside its table")
    end = data.find(b"\0", offset)
    return data[offset : end if end >= 0 else len(data)].decode("utf-8", errors="replace")


EM_AARCH64 = 183


def machine(data: bytes, name: str = "<bytes>") -> int:
    """e_machine of an ELF image (EM_AARCH64 for arm64)."""
    _header(data, name)
    value: int = struct.unpack_from("<H", data, 18)[0]
    return value


def dynamic_info_bytes(data: bytes, name: str = "<bytes>") -> DynamicInfo:
    """PT_INTERP and DT_NEEDED of an ELF image held in memory."""
    h = _header(data, name)
    segments = []
    for i in range(h.phnum):
        entry = _slice(data, h.phoff + i * h.phentsize, 56, name)
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", entry)
        segments.append((p_type, p_offset, p_vaddr, p_filesz))
    interpreter = None
    for p_type, p_offset, _vaddr, p_filesz in segments:
        if p_type == PT_INTERP:
            interpreter = _slice(data, p_offset, p_filesz, name).split(b"\0", 1)[0].decode()
    dynamic = [(off, size) for p_type, off, _v, size in segments if p_type == PT_DYNAMIC]
    if not dynamic:
        return DynamicInfo(interpreter, ())
    off, size = dynamic[0]
    table = _slice(data, off, size, name)
    entries = [struct.unpack_from("<qQ", table, i) for i in range(0, len(table) - 15, 16)]
    strtab_vaddr = None
    needed_offsets = []
    for tag, value in entries:
        if tag == DT_NULL:
            break
        if tag == DT_STRTAB:
            strtab_vaddr = value
        elif tag == DT_NEEDED:
            needed_offsets.append(value)
    if not needed_offsets:
        return DynamicInfo(interpreter, ())
    if strtab_vaddr is None:
        raise ElfError(f"{name}: DT_NEEDED entries but no DT_STRTAB")
    # DT_STRTAB is an address: find the loaded segment that holds it to get its file offset.
    for p_type, p_offset, p_vaddr, p_filesz in segments:
        if p_type == PT_LOAD and p_vaddr <= strtab_vaddr < p_vaddr + p_filesz:
            strtab_off = p_offset + (strtab_vaddr - p_vaddr)
            break
    else:
        raise ElfError(f"{name}: DT_STRTAB {strtab_vaddr:#x} is in no loaded segment")
    needed = tuple(_cstring(data, strtab_off + value, name) for value in needed_offsets)
    return DynamicInfo(interpreter, needed)


def dynamic_info(path: Path) -> DynamicInfo:
    """PT_INTERP and DT_NEEDED of the ELF file at `path`."""
    return dynamic_info_bytes(path.read_bytes(), str(path))


def section_bytes(data: bytes, section_name: str, name: str = "<bytes>") -> bytes | None:
    """The contents of the section called `section_name`, or None when the file has no such section."""
    h = _header(data, name)
    if h.shnum == 0 or h.shoff == 0:
        return None
    headers = []
    for i in range(h.shnum):
        entry = _slice(data, h.shoff + i * h.shentsize, 64, name)
        sh_name, sh_type, _flags, _addr, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", entry)
        headers.append((sh_name, sh_type, sh_offset, sh_size))
    if h.shstrndx >= len(headers):
        raise ElfError(f"{name}: section name table index {h.shstrndx} out of range")
    _n, _t, str_off, str_size = headers[h.shstrndx]
    names = _slice(data, str_off, str_size, name)
    for sh_name, sh_type, sh_offset, sh_size in headers:
        if _cstring(names, sh_name, name) == section_name:
            if sh_type == 8:  # SHT_NOBITS: occupies no file space
                return b""
            return _slice(data, sh_offset, sh_size, name)
    return None


def read_module(path: Path) -> bytes:
    """A kernel module's bytes; `.ko.xz` files are decompressed."""
    data = path.read_bytes()
    if path.name.endswith(".ko.xz"):
        try:
            return lzma.decompress(data)
        except lzma.LZMAError as exc:
            raise ElfError(f"{path}: cannot decompress: {exc}") from exc
    return data


def modinfo(path: Path) -> list[tuple[str, str]]:
    """The `key=value` pairs of a kernel module's `.modinfo` section, in order (keys may repeat)."""
    data = section_bytes(read_module(path), ".modinfo", str(path))
    if data is None:
        raise ElfError(f"{path}: no .modinfo section (not a kernel module?)")
    pairs = []
    for item in data.split(b"\0"):
        if b"=" in item:
            key, _, value = item.decode("utf-8", errors="replace").partition("=")
            pairs.append((key, value))
    return pairs
