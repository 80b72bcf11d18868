"""A small reader and writer of flattened device trees (DTB, devicetree specification v17).

Why our own instead of round-tripping through `dtc -O dts`: the Linux DTB is made by *editing* the board's
tree (drop nodes, rewrite a few properties, add /chosen). On a parsed tree that is a handful of dictionary
operations with exact values; on DTS text it would be pattern matching of a format with several spellings
of the same value. The format is small (a header, a reservation map, a token stream and a strings table:
about 150 lines both ways), needs no subprocess, and the tests still parse our output with `dtc`, an
independent implementation, so a writer bug cannot hide behind a matching reader bug.

Model: a `Node` has a name (with its unit address, e.g. "pl011@9000000"), ordered properties (raw bytes)
and ordered children. Values are stored as the DTB stores them (big-endian cells, NUL-terminated
strings); helpers convert to and from cells and strings. Phandles are kept as plain properties.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

FDT_MAGIC = 0xD00DFEED
FDT_BEGIN_NODE = 1
FDT_END_NODE = 2
FDT_PROP = 3
FDT_NOP = 4
FDT_END = 9
FDT_VERSION = 17
FDT_LAST_COMP_VERSION = 16
HEADER = struct.Struct(">10I")  # magic .. size_dt_struct (40 bytes)


class FdtError(ValueError):
    """The bytes are not a well-formed flattened device tree, or a lookup failed."""


def cells(*values: int) -> bytes:
    """Big-endian 32-bit cells."""
    return b"".join(struct.pack(">I", v) for v in values)


def u64_cells(*values: int) -> bytes:
    """Each value as two cells (high, low): the encoding of #address-cells = #size-cells = 2."""
    return b"".join(struct.pack(">Q", v) for v in values)


def string(text: str) -> bytes:
    return text.encode() + b"\0"


def strings(*texts: str) -> bytes:
    """A string list, such as `compatible`."""
    return b"".join(string(t) for t in texts)


@dataclass
class Node:
    name: str
    props: dict[str, bytes] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    # ---- lookups
    def child(self, name: str) -> Node | None:
        for c in self.children:
            if c.name == name:
                return c
        return None

    def find(self, path: str) -> Node:
        """The node at an absolute path such as "/intc@8000000/its@8080000"; FdtError if absent."""
        node = self
        for part in (p for p in path.split("/") if p):
            nxt = node.child(part)
            if nxt is None:
                raise FdtError(f"no node {path!r} (no {part!r} under {node.name or '/'})")
            node = nxt
        return node

    def walk(self, path: str = "/") -> Iterator[tuple[str, Node]]:
        """(path, node) for this node (at `path`) and every descendant, parents before children."""
        yield path, self
        for c in self.children:
            yield from c.walk(path.rstrip("/") + "/" + c.name)

    @property
    def basename(self) -> str:
        return self.name.split("@", 1)[0]

    # ---- property access
    def get_cells(self, prop: str) -> list[int]:
        raw = self.props[prop]
        if len(raw) % 4:
            raise FdtError(f"{self.name}: property {prop!r} is {len(raw)} bytes, not whole cells")
        return list(struct.unpack(f">{len(raw) // 4}I", raw))

    def get_strings(self, prop: str) -> list[str]:
        raw = self.props[prop]
        if not raw.endswith(b"\0"):
            raise FdtError(f"{self.name}: property {prop!r} is not NUL-terminated")
        return [s.decode() for s in raw[:-1].split(b"\0")]

    def get_string(self, prop: str) -> str:
        return self.get_strings(prop)[0]

    def phandle(self) -> int | None:
        raw = self.props.get("phandle")
        return struct.unpack(">I", raw)[0] if raw is not None and len(raw) == 4 else None

    def remove_children(self, keep: Sequence[Node]) -> None:
        ids = {id(n) for n in keep}
        self.children = [c for c in self.children if id(c) in ids]


@dataclass
class Tree:
    root: Node
    boot_cpuid_phys: int = 0
    reservations: list[tuple[int, int]] = field(default_factory=list)


def _cstr(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    if end < 0:
        raise FdtError(f"unterminated string at offset {offset}")
    return data[offset:end].decode("utf-8", errors="replace")


def parse(data: bytes) -> Tree:
    """Parse a DTB (version 16 or 17)."""
    if len(data) < HEADER.size:
        raise FdtError(f"{len(data)} bytes is too short for an FDT header")
    (
        magic,
        total,
        off_struct,
        off_strings,
        off_rsv,
        version,
        last_comp,
        boot_cpu,
        size_strings,
        size_struct,
    ) = HEADER.unpack_from(data)
    if magic != FDT_MAGIC:
        raise FdtError(f"bad magic 0x{magic:08x} (expected 0x{FDT_MAGIC:08x})")
    if total > len(data) or last_comp > FDT_VERSION:
        raise FdtError(f"header says {total} bytes, version {version}/{last_comp}; have {len(data)} bytes")
    strings_blk = data[off_strings : off_strings + size_strings]
    reservations: list[tuple[int, int]] = []
    pos = off_rsv
    while True:
        addr, size = struct.unpack_from(">QQ", data, pos)
        pos += 16
        if addr == 0 and size == 0:
            break
        reservations.append((addr, size))
    pos = off_struct
    end_struct = off_struct + size_struct if version >= 17 else total
    stack: list[Node] = []
    root: Node | None = None
    while pos < end_struct:
        (token,) = struct.unpack_from(">I", data, pos)
        pos += 4
        if token == FDT_BEGIN_NODE:
            name = _cstr(data, pos)
            pos = (pos + len(name.encode()) + 1 + 3) & ~3
            node = Node(name)
            if stack:
                stack[-1].children.append(node)
            elif root is None:
                root = node
            else:
                raise FdtError("more than one root node")
            stack.append(node)
        elif token == FDT_END_NODE:
            if not stack:
                raise FdtError("unbalanced END_NODE")
            stack.pop()
        elif token == FDT_PROP:
            length, nameoff = struct.unpack_from(">II", data, pos)
            pos += 8
            if not stack:
                raise FdtError("property outside a node")
            stack[-1].props[_cstr(strings_blk, nameoff)] = bytes(data[pos : pos + length])
            pos = (pos + length + 3) & ~3
        elif token == FDT_NOP:
            continue
        elif token == FDT_END:
            break
        else:
            raise FdtError(f"unknown token {token} at offset {pos - 4}")
    if root is None or stack:
        raise FdtError("no complete root node")
    return Tree(root, boot_cpu, reservations)


def serialize(tree: Tree) -> bytes:
    """The DTB (version 17) of a tree: header, reservation map, structure block, strings block."""
    struct_blk = bytearray()
    strings_blk = bytearray()
    offsets: dict[str, int] = {}

    def name_offset(name: str) -> int:
        if name not in offsets:
            offsets[name] = len(strings_blk)
            strings_blk.extend(string(name))
        return offsets[name]

    def emit(node: Node) -> None:
        struct_blk.extend(struct.pack(">I", FDT_BEGIN_NODE))
        raw = string(node.name)
        struct_blk.extend(raw + b"\0" * (-len(raw) % 4))
        for pname, value in node.props.items():
            struct_blk.extend(struct.pack(">III", FDT_PROP, len(value), name_offset(pname)))
            struct_blk.extend(value + b"\0" * (-len(value) % 4))
        for c in node.children:
            emit(c)
        struct_blk.extend(struct.pack(">I", FDT_END_NODE))

    emit(tree.root)
    struct_blk.extend(struct.pack(">I", FDT_END))
    rsv = b"".join(struct.pack(">QQ", a, s) for a, s in tree.reservations) + struct.pack(">QQ", 0, 0)
    off_rsv = (HEADER.size + 7) & ~7
    off_struct = off_rsv + len(rsv)
    off_strings = off_struct + len(struct_blk)
    total = off_strings + len(strings_blk)
    header = HEADER.pack(
        FDT_MAGIC,
        total,
        off_struct,
        off_strings,
        off_rsv,
        FDT_VERSION,
        FDT_LAST_COMP_VERSION,
        tree.boot_cpuid_phys,
        len(strings_blk),
        len(struct_blk),
    )
    out = header + b"\0" * (off_rsv - len(header)) + rsv + bytes(struct_blk) + bytes(strings_blk)
    assert len(out) == total
    return out
