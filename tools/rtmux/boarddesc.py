"""A board's description (issue 26): what rtmux must know of a board, in one TOML file, and how to write
one from the board's own device tree (`./rtmux board import FILE.dtb`).

The description holds what the hypervisor, the rtos and the tools need and a DTB says: RAM, the CPUs
and their MPIDRs with how they are started, the PSCI conduit, the GIC's version and register frames, its
maintenance interrupt, the architected timer's PPIs, and the console UART (type, address, interrupt).
Interrupts are GIC INTIDs (SGIs 0-15, PPIs 16-31, SPIs from 32), addresses are CPU physical addresses
(the DTB's bus addresses translated through every `ranges` on the way to the root).

Import never guesses: what the DTB does not say (a memory node the firmware fills in, CPUs started by a
spin table, a console rtmux has no driver for) is left out of the description and said, one line each,
in `Imported.missing`, which `./rtmux board import` prints and writes as comments at the top of the
file. `platform/<board>/board.toml` are the repository's descriptions; tests/unit/python/
test_boarddesc.py checks each against its DTB.

Everything else takes the board's facts from here: `header()` writes them as the C header of the images
(`python -m rtmux.boarddesc header BOARD.toml -o board_desc.h`, which the Makefile runs into
build/gen/<board>/ and platform/<board>/board.h includes), and rtmux.board builds the tools' board from
the descriptions of QEMU virt. `problems()` says what rtmux needs that a description lacks or that the
images cannot do (one line each, the field named); `load(path, usable=True)` and `header()` refuse such
a description with those lines, `./rtmux board import` prints them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rtmux import paths
from rtmux.formats import fdt

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30

SPI_BASE = 32  # INTID of SPI 0
PPI_BASE = 16  # INTID of PPI 0


def hexa(value: int) -> str:
    """An address as the docs and messages write it: 0x4000_0000 (groups of four digits)."""
    if value < 0:
        return "-" + hexa(-value)
    return f"0x{value:09_x}"  # at least 8 digits: 0x0900_0000


@dataclass(frozen=True, order=True)
class Region:
    """A physical address range [base, base + size)."""

    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def contains(self, other: Region) -> bool:
        return self.base <= other.base and other.end <= self.end

    def overlaps(self, other: Region) -> bool:
        return self.base < other.end and other.base < self.end

    def __str__(self) -> str:
        return f"{hexa(self.base)}..{hexa(self.end)}"


GIC_V3 = ("arm,gic-v3",)
GIC_V2 = ("arm,gic-400", "arm,cortex-a15-gic", "arm,cortex-a9-gic", "arm,cortex-a7-gic")
TIMER_COMPATIBLE = ("arm,armv8-timer", "arm,armv7-timer")
# Console UARTs by the first compatible string rtmux knows, and the type the description names.
UART_TYPES = {
    "arm,pl011": "pl011",
    "fsl,imx8mp-uart": "imx",
    "fsl,imx8mm-uart": "imx",
    "fsl,imx6q-uart": "imx",
}
# The driver of each console UART type (hyp/drivers/NAME.c and rtos/drivers/NAME.c, the Makefile's
# UART_DRIVERS): the generated header names it (BOARD_UART_DRIVER).
UART_DRIVERS = {"pl011": "pl011", "imx": "imx_uart"}
# The timer's four PPIs in the order the binding gives them.
TIMER_NAMES = ("secure_phys", "phys", "virt", "hyp_phys")

# What both images assume of a board's address map: each identity-maps the first GiB as device memory
# and the second as normal memory, in 39-bit address spaces (hyp/arch/arm64/mmu.c, rtos/arch/arm64/
# cpu.c; stage 2's IPA space is 39 bits too). So the GIC and the console UART lie in the first GiB, and
# the RAM the images are loaded into (a description's first memory region, 2 MiB aligned as the arm64
# boot protocol and stage 2's blocks want) starts in the second.
DEVICE_WINDOW = Region(0, GIB)
IMAGE_WINDOW = Region(GIB, GIB)
ADDRESS_BITS = 39
RAM_ALIGN = 2 * MIB
# A GICv3's redistributor frames: RD_base then SGI_base, 64 KiB each, one pair per CPU (no GICv4 VLPI
# frames), in the DTB's redistributor region.
GICV3_REDIST_STRIDE = 0x2_0000
# A GICv2 reaches CPU interfaces 0..7: the CPUs with those Aff0 values, in one cluster.
GICV2_MAX_CPUS = 8


class BoardError(ValueError):
    """A description or a DTB rtmux cannot use, with what is wrong."""


@dataclass(frozen=True)
class Gic:
    version: int  # 2 or 3
    distributor: Region
    redistributors: Region | None = None  # v3
    cpu_interface: Region | None = None  # GICC (v2; optional on v3)
    hyp_interface: Region | None = None  # GICH (v2)
    virtual_cpu_interface: Region | None = None  # GICV (v2)
    maintenance_intid: int | None = None


@dataclass(frozen=True)
class Console:
    type: str  # a value of UART_TYPES
    frame: Region
    intid: int | None
    node: str  # the DTB path it came from


@dataclass(frozen=True)
class Description:
    name: str
    compatible: str  # the DTB root's first compatible string
    memory: tuple[Region, ...]
    mpidrs: tuple[int, ...]
    enable_method: str  # "psci" is the only one rtmux can start CPUs with
    psci_method: str | None  # "hvc" or "smc"
    gic: Gic | None
    timer: dict[str, int] | None  # TIMER_NAMES -> INTID
    console: Console | None


@dataclass
class Imported:
    description: Description
    missing: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------------
# Reading a DTB


def _cells_value(cells: list[int]) -> int:
    value = 0
    for c in cells:
        value = (value << 32) | c
    return value


def _address_cells(node: fdt.Node) -> int:
    return node.get_cells("#address-cells")[0] if "#address-cells" in node.props else 2


def _size_cells(node: fdt.Node) -> int:
    return node.get_cells("#size-cells")[0] if "#size-cells" in node.props else 1


class _Dtb:
    """The parsed tree with what import needs: parents, phandles, address translation."""

    def __init__(self, data: bytes) -> None:
        self.root = fdt.parse(data).root
        self.parent: dict[int, fdt.Node] = {}
        self.path: dict[int, str] = {}
        self.by_phandle: dict[int, fdt.Node] = {}
        for path, node in self.root.walk():
            self.path[id(node)] = path
            for c in node.children:
                self.parent[id(c)] = node
            ph = node.phandle()
            if ph is not None:
                self.by_phandle[ph] = node

    def compatible(self, node: fdt.Node) -> list[str]:
        return node.get_strings("compatible") if "compatible" in node.props else []

    def find_compatible(self, names: tuple[str, ...]) -> fdt.Node | None:
        for _, node in self.root.walk():
            if node.props.get("status", b"okay\0") in (b"okay\0", b"ok\0") and any(
                c in names for c in self.compatible(node)
            ):
                return node
        return None

    def regs(self, node: fdt.Node) -> list[Region]:
        """The node's reg entries as CPU physical frames."""
        bus = self.parent[id(node)]
        ac, sc = _address_cells(bus), _size_cells(bus)
        cells = node.get_cells("reg") if "reg" in node.props else []
        step = ac + sc
        if step == 0 or len(cells) % step:
            raise BoardError(f"{self.path[id(node)]}: reg is not a list of <{ac} {sc}> cells")
        out = []
        for i in range(0, len(cells), step):
            addr = _cells_value(cells[i : i + ac])
            size = _cells_value(cells[i + ac : i + step])
            out.append(Region(self.translate(bus, addr, size), size))
        return out

    def translate(self, bus: fdt.Node, addr: int, size: int) -> int:
        """A bus address of `bus`'s children as a CPU physical address (ranges up to the root)."""
        node = bus
        while id(node) in self.parent:
            parent = self.parent[id(node)]
            if "ranges" not in node.props:
                raise BoardError(
                    f"{self.path[id(node)]}: no ranges: its children's addresses do not reach the CPU"
                )
            raw = node.get_cells("ranges")
            if raw:
                cac, pac, csc = _address_cells(node), _address_cells(parent), _size_cells(node)
                step = cac + pac + csc
                for i in range(0, len(raw) - step + 1, step):
                    child = _cells_value(raw[i : i + cac])
                    target = _cells_value(raw[i + cac : i + cac + pac])
                    length = _cells_value(raw[i + cac + pac : i + step])
                    if child <= addr and addr + max(size, 1) <= child + length:
                        addr = addr - child + target
                        break
                else:
                    raise BoardError(f"{self.path[id(node)]}: ranges do not cover {addr:#x}")
            node = parent
        return addr

    def interrupts(self, node: fdt.Node) -> list[int]:
        """The node's interrupts as GIC INTIDs (3-cell GIC specifiers: type, number, flags)."""
        if "interrupts" not in node.props:
            return []
        cells = node.get_cells("interrupts")
        if len(cells) % 3:
            raise BoardError(f"{self.path[id(node)]}: interrupts are not 3-cell GIC specifiers")
        return [(SPI_BASE if cells[i] == 0 else PPI_BASE) + cells[i + 1] for i in range(0, len(cells), 3)]

    def resolve(self, ref: str) -> fdt.Node | None:
        """A node from a path or an alias (as /chosen's stdout-path writes it, options after ':')."""
        ref = ref.split(":", 1)[0]
        if not ref.startswith("/"):
            aliases = self.root.child("aliases")
            if aliases is None or ref not in aliases.props:
                return None
            ref = aliases.get_string(ref)
        try:
            return self.root.find(ref)
        except fdt.FdtError:
            return None


def _uart_type(dtb: _Dtb, node: fdt.Node) -> str | None:
    for c in dtb.compatible(node):
        if c in UART_TYPES:
            return UART_TYPES[c]
    return None


def _console(dtb: _Dtb, missing: list[str]) -> Console | None:
    chosen = dtb.root.child("chosen")
    named = None
    if chosen is not None and "stdout-path" in chosen.props:
        ref = chosen.get_string("stdout-path")
        named = dtb.resolve(ref)
        if named is None:
            missing.append(f"console: /chosen's stdout-path {ref!r} names no node")
        elif _uart_type(dtb, named) is not None:
            return _console_of(dtb, named)
        else:
            kinds = ", ".join(dtb.compatible(named)) or "no compatible"
            missing.append(
                f"console: /chosen's stdout-path {ref!r} is {dtb.path[id(named)]} ({kinds}), a UART rtmux "
                "has no driver for"
            )
    # The first UART of the aliases (serial0, serial1, ...) that rtmux can drive.
    aliases = dtb.root.child("aliases")
    for name in sorted(aliases.props if aliases is not None else (), key=_alias_order):
        if not name.startswith("serial"):
            continue
        node = dtb.resolve(name)
        if node is not None and node is not named and _uart_type(dtb, node) is not None:
            missing.append(f"console: took {name} ({dtb.path[id(node)]}) instead")
            return _console_of(dtb, node)
    missing.append("console: no UART rtmux has a driver for (" + ", ".join(sorted(UART_TYPES)) + ")")
    return None


def _alias_order(name: str) -> tuple[str, int]:
    digits = name.rstrip("0123456789")
    return (digits, int(name[len(digits) :] or 0))


def _console_of(dtb: _Dtb, node: fdt.Node) -> Console:
    frames = dtb.regs(node)
    if not frames:
        raise BoardError(f"{dtb.path[id(node)]}: a console UART without reg")
    irqs = dtb.interrupts(node)
    return Console(_uart_type(dtb, node) or "", frames[0], irqs[0] if irqs else None, dtb.path[id(node)])


def _gic(dtb: _Dtb, missing: list[str]) -> Gic | None:
    node = dtb.find_compatible(GIC_V3)
    version = 3
    if node is None:
        node = dtb.find_compatible(GIC_V2)
        version = 2
    if node is None:
        missing.append("gic: no GICv2 or GICv3 node (" + ", ".join(GIC_V3 + GIC_V2) + ")")
        return None
    frames = dtb.regs(node)
    irqs = dtb.interrupts(node)
    maintenance = irqs[0] if irqs else None
    if maintenance is None:
        missing.append(f"gic: {dtb.path[id(node)]} gives no maintenance interrupt")
    if version == 3:
        nregions = (
            node.get_cells("#redistributor-regions")[0] if "#redistributor-regions" in node.props else 1
        )
        if nregions != 1:
            missing.append(f"gic: {nregions} redistributor regions: only the first is described")
        if len(frames) < 2:
            raise BoardError(f"{dtb.path[id(node)]}: a GICv3 without a redistributor frame")
        extra = frames[1 + nregions :]
        return Gic(
            3,
            frames[0],
            redistributors=frames[1],
            cpu_interface=extra[0] if len(extra) > 0 else None,
            hyp_interface=extra[1] if len(extra) > 1 else None,
            virtual_cpu_interface=extra[2] if len(extra) > 2 else None,
            maintenance_intid=maintenance,
        )
    if len(frames) < 4:
        missing.append(
            f"gic: {dtb.path[id(node)]} has no GICH/GICV frames: a GICv2 without virtualization extensions"
        )
    return Gic(
        2,
        frames[0],
        cpu_interface=frames[1] if len(frames) > 1 else None,
        hyp_interface=frames[2] if len(frames) > 2 else None,
        virtual_cpu_interface=frames[3] if len(frames) > 3 else None,
        maintenance_intid=maintenance,
    )


def from_dtb(data: bytes, name: str) -> Imported:
    """A description from a board's DTB, and what it lacks."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise BoardError(f"board name {name!r}: letters, digits, '.', '_' and '-' only (it names a folder)")
    try:
        dtb = _Dtb(data)
    except fdt.FdtError as e:
        raise BoardError(f"not a device tree: {e}") from None
    try:
        return _import(dtb, name)
    except fdt.FdtError as e:
        raise BoardError(f"a malformed property: {e}") from None
    except KeyError as e:
        raise BoardError(f"a node without its {e} property") from None


def _import(dtb: _Dtb, name: str) -> Imported:
    missing: list[str] = []
    compatible = (dtb.compatible(dtb.root) or [""])[0]

    memory: list[Region] = []
    for path, node in dtb.root.walk():
        if node.props.get("device_type") == b"memory\0":
            for f in dtb.regs(node):
                if f.size:
                    memory.append(f)
                else:
                    missing.append(
                        f"memory: {path} has a size of 0 (its firmware fills it in): give the RAM by hand"
                    )
    if not memory and not any(m.startswith("memory:") for m in missing):
        missing.append("memory: no memory node")

    cpus = dtb.root.child("cpus")
    mpidrs: list[int] = []
    methods: set[str] = set()
    if cpus is not None:
        for cpu in cpus.children:
            if cpu.props.get("device_type") != b"cpu\0":
                continue
            reg = cpu.get_cells("reg")
            mpidrs.append(_cells_value(reg[: _address_cells(cpus)]))
            if "enable-method" in cpu.props:
                methods.add(cpu.get_string("enable-method"))
    if not mpidrs:
        missing.append("cpus: no cpu node")
    method = ",".join(sorted(methods)) if methods else ""
    if method != "psci":
        missing.append(
            f"cpus: started by {method or 'no enable-method'}, not PSCI: rtmux starts and stops CPUs through "
            "PSCI (on a Raspberry Pi 4, TF-A's bl31 provides it)"
        )

    psci_node = dtb.find_compatible(("arm,psci-1.0", "arm,psci-0.2", "arm,psci"))
    psci_method = (
        psci_node.get_string("method") if psci_node is not None and "method" in psci_node.props else None
    )
    if psci_method is None:
        missing.append("psci: no psci node with a method")

    timer_node = dtb.find_compatible(TIMER_COMPATIBLE)
    timer = None
    if timer_node is None:
        missing.append("timer: no arm,armv8-timer node")
    else:
        irqs = dtb.interrupts(timer_node)
        if len(irqs) < 4:
            missing.append(f"timer: {len(irqs)} interrupts, not the 4 PPIs of the binding")
        else:
            timer = dict(zip(TIMER_NAMES, irqs[:4], strict=True))

    gic = _gic(dtb, missing)
    console = _console(dtb, missing)
    desc = Description(
        name=name,
        compatible=compatible,
        memory=tuple(memory),
        mpidrs=tuple(mpidrs),
        enable_method=method,
        psci_method=psci_method,
        gic=gic,
        timer=timer,
        console=console,
    )
    return Imported(desc, missing)


# ------------------------------------------------------------------------------------------------------
# The TOML file


def _frame_toml(f: Region) -> str:
    return f"{{ base = {f.base:#x}, size = {f.size:#x} }}"


def to_toml(imported: Imported, source: str) -> str:
    """The description as the file `./rtmux board import` writes (what is missing as comments)."""
    d = imported.description
    out = [
        f"# Board description (tools/rtmux/boarddesc.py), written by `./rtmux board import {source}`.",
        "# Interrupts are GIC INTIDs; addresses are CPU physical addresses.",
    ]
    if imported.missing:
        out.append("# Not found in the device tree (to give by hand, or what rtmux cannot use):")
        out += [f"#   {m}" for m in imported.missing]
    out += ["", f'name = "{d.name}"', f'compatible = "{d.compatible}"', ""]
    out.append("memory = [" + ", ".join(_frame_toml(m) for m in d.memory) + "]")
    out += ["", "[cpus]", "mpidr = [" + ", ".join(f"{m:#x}" for m in d.mpidrs) + "]"]
    out.append(f'enable_method = "{d.enable_method}"')
    if d.psci_method is not None:
        out += ["", "[psci]", f'method = "{d.psci_method}"']
    if d.gic is not None:
        g = d.gic
        out += ["", "[gic]", f"version = {g.version}", f"distributor = {_frame_toml(g.distributor)}"]
        for key, frame in (
            ("redistributors", g.redistributors),
            ("cpu_interface", g.cpu_interface),
            ("hyp_interface", g.hyp_interface),
            ("virtual_cpu_interface", g.virtual_cpu_interface),
        ):
            if frame is not None:
                out.append(f"{key} = {_frame_toml(frame)}")
        if g.maintenance_intid is not None:
            out.append(f"maintenance_intid = {g.maintenance_intid}")
    if d.timer is not None:
        out += ["", "[timer]"] + [f"{k}_intid = {d.timer[k]}" for k in TIMER_NAMES]
    if d.console is not None:
        c = d.console
        out += ["", "[console]", f'type = "{c.type}"', f"frame = {_frame_toml(c.frame)}"]
        if c.intid is not None:
            out.append(f"intid = {c.intid}")
        out.append(f'node = "{c.node}"')
    return "\n".join(out) + "\n"


def _frame(value: object, what: str) -> Region:
    if not isinstance(value, dict) or set(value) != {"base", "size"}:
        raise BoardError(f"{what}: not {{ base = ..., size = ... }}")
    base, size = value["base"], value["size"]
    if not isinstance(base, int) or not isinstance(size, int) or base < 0 or size <= 0:
        raise BoardError(f"{what}: base and size must be integers, size > 0")
    return Region(base, size)


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BoardError(f"{what}: {value!r} is not an integer >= 0")
    return value


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise BoardError(f"{what}: {value!r} is not a string")
    return value


def _table(t: dict[str, object], key: str) -> dict[str, object]:
    value = t[key]
    if not isinstance(value, dict):
        raise BoardError(f"{key}: not a table")
    return value


def load(path: Path, *, usable: bool = False) -> Description:
    """A description file; BoardError naming the file and the key for anything malformed, and with
    `usable` also for anything rtmux needs that the description lacks (problems(): one line each)."""
    where = paths.display(path)
    try:
        t = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BoardError(f"{where}: {e}") from None
    try:
        desc = _description(t)
    except KeyError as e:
        raise BoardError(f"{where}: missing key {e}") from None
    except BoardError as e:
        raise BoardError(f"{where}: {e}") from None
    if usable:
        found = problems(desc)
        if found:
            raise BoardError("\n".join(f"{where}: {line}" for line in found))
    return desc


def _description(t: dict[str, object]) -> Description:
    gic = None
    if "gic" in t:
        g = _table(t, "gic")
        gic = Gic(
            _int(g["version"], "gic.version"),
            _frame(g["distributor"], "gic.distributor"),
            **{
                k: _frame(g[k], f"gic.{k}")
                for k in ("redistributors", "cpu_interface", "hyp_interface", "virtual_cpu_interface")
                if k in g
            },
            maintenance_intid=(
                _int(g["maintenance_intid"], "gic.maintenance_intid") if "maintenance_intid" in g else None
            ),
        )
        if gic.version not in (2, 3):
            raise BoardError(f"gic.version {gic.version}: rtmux knows GICv2 and GICv3")
    console = None
    if "console" in t:
        c = _table(t, "console")
        kind = _str(c["type"], "console.type")
        if kind not in UART_DRIVERS:
            raise BoardError(
                f"console.type {kind!r}: rtmux has a driver for {', '.join(sorted(UART_DRIVERS))}"
            )
        console = Console(
            kind,
            _frame(c["frame"], "console.frame"),
            _int(c["intid"], "console.intid") if "intid" in c else None,
            _str(c.get("node", ""), "console.node"),
        )
    timer = None
    if "timer" in t:
        tt = _table(t, "timer")
        timer = {k: _int(tt[f"{k}_intid"], f"timer.{k}_intid") for k in TIMER_NAMES}
    memory = t.get("memory", [])
    if not isinstance(memory, list):
        raise BoardError("memory: not an array of { base = ..., size = ... }")
    cpus = _table(t, "cpus")
    mpidrs = cpus["mpidr"]
    if not isinstance(mpidrs, list):
        raise BoardError("cpus.mpidr: not an array")
    psci = _table(t, "psci") if "psci" in t else {}
    return Description(
        name=_str(t["name"], "name"),
        compatible=_str(t["compatible"], "compatible"),
        memory=tuple(_frame(m, f"memory[{i}]") for i, m in enumerate(memory)),
        mpidrs=tuple(_int(m, "cpus.mpidr") for m in mpidrs),
        enable_method=_str(cpus["enable_method"], "cpus.enable_method"),
        psci_method=_str(psci["method"], "psci.method") if "method" in psci else None,
        gic=gic,
        timer=timer,
        console=console,
    )


# ------------------------------------------------------------------------------------------------------
# What rtmux needs


def _ppi(intid: int) -> bool:
    return PPI_BASE <= intid < SPI_BASE


def _gic_frames(gic: Gic) -> list[tuple[str, Region]]:
    frames = [
        ("distributor", gic.distributor),
        ("redistributors", gic.redistributors),
        ("cpu_interface", gic.cpu_interface),
        ("hyp_interface", gic.hyp_interface),
        ("virtual_cpu_interface", gic.virtual_cpu_interface),
    ]
    return [(f"gic.{k}", f) for k, f in frames if f is not None]


def problems(d: Description) -> list[str]:
    """What rtmux needs that the description lacks, or that the images cannot do with it: one line each,
    starting with the field ("gic.hyp_interface: ..."). Empty: the images can be built for the board."""
    out: list[str] = []
    devices: list[tuple[str, Region]] = []

    g = d.gic
    if g is None:
        out.append("gic: none: the hypervisor and the rtos need a GICv2 or a GICv3")
    else:
        devices += _gic_frames(g)
        if g.version == 3 and g.redistributors is None:
            out.append("gic.redistributors: none: a GICv3's CPUs reach their interrupts through them")
        elif g.version == 3 and g.redistributors is not None:
            frames = g.redistributors.size // GICV3_REDIST_STRIDE
            if frames < len(d.mpidrs):
                out.append(
                    f"gic.redistributors: {g.redistributors} holds {frames} CPUs' frames, not the "
                    f"{len(d.mpidrs)} of cpus.mpidr"
                )
        if g.version == 2:
            for key, frame, what in (
                ("cpu_interface", g.cpu_interface, "the CPU interface (GICC)"),
                ("hyp_interface", g.hyp_interface, "the virtual interface control (GICH)"),
                ("virtual_cpu_interface", g.virtual_cpu_interface, "the virtual CPU interface (GICV)"),
            ):
                if frame is None:
                    out.append(
                        f"gic.{key}: none: a GICv2 without {what}; the hypervisor needs the virtualization "
                        "extensions' frames to give Linux a virtual CPU interface"
                    )
            for m in d.mpidrs:
                if m >> 8 or m & 0xFF >= GICV2_MAX_CPUS:
                    out.append(
                        f"cpus.mpidr: {m:#x}: a GICv2 reaches the CPUs with Aff0 0..{GICV2_MAX_CPUS - 1} of "
                        "one cluster only"
                    )
        if g.maintenance_intid is None:
            out.append("gic.maintenance_intid: none: the hypervisor's virtual GIC needs it")
        elif not _ppi(g.maintenance_intid):
            out.append(f"gic.maintenance_intid: {g.maintenance_intid} is not a PPI (INTID 16..31)")

    if d.timer is None:
        out.append("timer: none: both images run on the generic timer's PPIs")
    else:
        out += [
            f"timer.{k}_intid: {d.timer[k]} is not a PPI (INTID 16..31)"
            for k in TIMER_NAMES
            if not _ppi(d.timer[k])
        ]

    c = d.console
    if c is None:
        out.append(
            "console: none: the hypervisor needs a console UART it has a driver for "
            f"({', '.join(sorted(UART_DRIVERS))})"
        )
    else:
        devices.append(("console.frame", c.frame))
        if c.type not in UART_DRIVERS:
            out.append(f"console.type: {c.type!r}: rtmux has a driver for {', '.join(sorted(UART_DRIVERS))}")
        if c.intid is None:
            out.append("console.intid: none: the hypervisor takes the console's receive interrupt")
        elif c.intid < SPI_BASE:
            out.append(f"console.intid: {c.intid} is not an SPI (INTID 32 and above)")

    for what, frame in devices:
        if not DEVICE_WINDOW.contains(frame):
            out.append(f"{what}: {frame} lies beyond the first GiB, where the images map the board's devices")

    if not d.memory:
        out.append("memory: none: give the RAM by hand (memory = [{ base = ..., size = ... }])")
    else:
        first = d.memory[0]
        if first.base % RAM_ALIGN:
            out.append(f"memory[0]: base {hexa(first.base)} is not 2 MiB aligned")
        if not IMAGE_WINDOW.contains(Region(first.base, 1)):
            out.append(
                f"memory[0]: starts at {hexa(first.base)}: the images are loaded into the first region, "
                f"which must start in the second GiB ({IMAGE_WINDOW}), where they map RAM"
            )
    for i, ram in enumerate(d.memory):
        if ram.end > 1 << ADDRESS_BITS:
            out.append(f"memory[{i}]: {ram} ends beyond the {ADDRESS_BITS}-bit address space the images map")
        out += [
            f"memory[{i}]: {ram} overlaps memory[{j}] ({n})"
            for j, n in enumerate(d.memory[:i])
            if ram.overlaps(n)
        ]
        out += [f"memory[{i}]: {ram} overlaps {what} ({f})" for what, f in devices if ram.overlaps(f)]

    if not d.mpidrs:
        out.append("cpus.mpidr: no CPU")
    dup = sorted({m for m in d.mpidrs if d.mpidrs.count(m) > 1})
    if dup:
        out.append("cpus.mpidr: " + ", ".join(f"{m:#x}" for m in dup) + " more than once")
    if d.enable_method != "psci":
        out.append(
            f"cpus.enable_method: {d.enable_method or 'none'!r}: the hypervisor starts and stops CPUs "
            "through PSCI"
        )
    if d.psci_method is None:
        out.append("psci.method: none: the hypervisor calls the firmware's PSCI (by SMC)")
    elif d.psci_method != "smc":
        out.append(
            f"psci.method: {d.psci_method!r}: the hypervisor, at EL2, calls the firmware's PSCI by SMC only"
        )
    return out


# ------------------------------------------------------------------------------------------------------
# The images' header


def _address(value: int) -> str:
    return f"{value:#010x}ul"


def header(board: Description, *other_gics: Description, sources: Sequence[str] = ()) -> str:
    """The board's facts as the C header the images include (through platform/<board>/board.h): BOARD_*
    defines usable from C, assembly and linker scripts. `other_gics`: the same board made with another GIC
    version (QEMU virt's gic-version=2): their GIC frames are added, everything else must be the same
    (one build runs on either; the images pick their GIC driver from what the CPU reports). BoardError,
    one line per problem, for a description the images cannot be built for. `sources` are named in the
    header's comment."""
    found = [f"{d.name}: {line}" for d in (board, *other_gics) for line in problems(d)]
    gics = {}
    for d in (board, *other_gics):
        assert d.gic is not None or found  # problems() said so otherwise
        if d.gic is None:
            continue
        if d.gic.version in gics:
            found.append(f"{d.name}: gic.version: {d.gic.version} twice (each description adds another GIC)")
        gics[d.gic.version] = d.gic
    for d in other_gics:
        for what, mine, theirs in (
            ("memory", d.memory, board.memory),
            ("cpus", (d.mpidrs, d.enable_method), (board.mpidrs, board.enable_method)),
            ("psci", d.psci_method, board.psci_method),
            ("timer", d.timer, board.timer),
            ("console", d.console, board.console),
        ):
            if mine != theirs:
                found.append(
                    f"{d.name}: {what}: not {board.name}'s (the same board: only its GIC may differ)"
                )
        if d.gic is not None and board.gic is not None:
            if d.gic.distributor.base != board.gic.distributor.base:
                found.append(
                    f"{d.name}: gic.distributor: not at {board.name}'s ({hexa(board.gic.distributor.base)})"
                )
            if d.gic.maintenance_intid != board.gic.maintenance_intid:
                found.append(f"{d.name}: gic.maintenance_intid: not {board.name}'s")
    if found:
        raise BoardError("\n".join(found))
    assert board.gic is not None and board.timer is not None and board.console is not None
    assert board.gic.maintenance_intid is not None and board.console.intid is not None

    also = f" and the GIC of {', '.join(d.name for d in other_gics)}" if other_gics else ""
    out = [
        "/*",
        " * Generated by tools/rtmux/boarddesc.py (`python -m rtmux.boarddesc header`); do not edit.",
        f" * The board facts of {board.name}{also}, from the description{'s' if other_gics else ''}:",
        *(f" *   {source}" for source in sources),
        " * The board's platform/<board>/board.h includes it and adds what no device tree says. Usable",
        " * from C, assembly and linker scripts (BOARD_RAM_BASE, which they use, has no C suffix).",
        " */",
        "#ifndef BOARD_DESC_H",
        "#define BOARD_DESC_H",
        "",
        f'#define BOARD_NAME "{board.name}"',
        "",
        "/* RAM: the first memory region, where the images are loaded (how much there is the DTB says at run",
        " * time). */",
        f"#define BOARD_RAM_BASE {board.memory[0].base:#010x}",
        "",
        "/* CPUs are started and stopped through PSCI, the firmware's, by SMC. */",
        "#define BOARD_PSCI_SMC 1",
        "",
        "/* The GIC versions this build has the frames of (the images pick theirs from ID_AA64PFR0_EL1.GIC),",
        " * the distributor, and the maintenance PPI. */",
        f"#define BOARD_GIC_V3 {int(3 in gics)}",
        f"#define BOARD_GIC_V2 {int(2 in gics)}",
        f"#define BOARD_GICD_BASE {_address(board.gic.distributor.base)}",
        f"#define BOARD_GICD_SIZE {_address(board.gic.distributor.size)}",
        f"#define BOARD_INTID_GIC_MAINT {board.gic.maintenance_intid}u",
    ]
    v3 = gics.get(3)
    if v3 is not None and v3.redistributors is not None:
        out += [
            "",
            "/* GICv3: redistributor frames from GICR_BASE one BOARD_GICR_STRIDE apart (RD_base then",
            " * SGI_base, 64 KiB each), in CPU (Aff0) order. */",
            f"#define BOARD_GICR_BASE {_address(v3.redistributors.base)}",
            f"#define BOARD_GICR_SIZE {_address(v3.redistributors.size)}",
            f"#define BOARD_GICR_STRIDE {_address(GICV3_REDIST_STRIDE)}",
        ]
    v2 = gics.get(2)
    if v2 is not None:
        out += [
            "",
            "/* GICv2: the CPU interface (GICC), the virtual interface control (GICH), the virtual CPU",
            " * interface (GICV). */",
        ]
        for name, frame in (
            ("GICC", v2.cpu_interface),
            ("GICH", v2.hyp_interface),
            ("GICV", v2.virtual_cpu_interface),
        ):
            assert frame is not None  # problems() said so otherwise
            out += [
                f"#define BOARD_{name}_BASE {_address(frame.base)}",
                f"#define BOARD_{name}_SIZE {_address(frame.size)}",
            ]
    t = board.timer
    c = board.console
    out += [
        "",
        "/* The generic timer's PPIs: secure and EL1 physical, EL1 virtual, EL2 physical. */",
        f"#define BOARD_INTID_SEC_TIMER {t['secure_phys']}u",
        f"#define BOARD_INTID_PHYS_TIMER {t['phys']}u",
        f"#define BOARD_INTID_VIRT_TIMER {t['virt']}u",
        f"#define BOARD_INTID_HYP_TIMER {t['hyp_phys']}u",
        "",
        f"/* The console UART ({c.type}, {c.node or 'its DTB node'}). BOARD_UART_DRIVER names its driver:",
        " * the Makefile reads this line and compiles hyp/drivers/NAME.c and rtos/drivers/NAME.c (the",
        " * interface drivers/uart.h), no other UART driver. */",
        f'#define BOARD_UART_DRIVER "{UART_DRIVERS[c.type]}"',
        f"#define BOARD_UART_BASE {_address(c.frame.base)}",
        f"#define BOARD_UART_SIZE {_address(c.frame.size)}",
        f"#define BOARD_UART_INTID {c.intid}u",
        "",
        "#endif /* BOARD_DESC_H */",
    ]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rtmux.boarddesc header BOARD.toml [OTHER-GIC.toml...] [-o FILE]` (the Makefile's step)."""
    parser = argparse.ArgumentParser(prog="python -m rtmux.boarddesc", description="Board descriptions.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("header", help="write the C header of a board's facts (BOARD_* defines)")
    p.add_argument(
        "descriptions",
        nargs="+",
        type=Path,
        metavar="BOARD.toml",
        help="the board's description, then those of the same board made with another GIC version",
    )
    p.add_argument("-o", "--output", type=Path, help="write here (atomically) instead of standard output")
    args = parser.parse_args(argv)
    try:
        descs = [load(path, usable=True) for path in args.descriptions]
        text = header(descs[0], *descs[1:], sources=[paths.display(path) for path in args.descriptions])
    except BoardError as e:
        for line in str(e).splitlines():
            print(f"rtmux.boarddesc: {line}", file=sys.stderr)
        print(
            f"rtmux.boarddesc: no header written{f' ({args.output})' if args.output else ''}: the images "
            "cannot be built for this description",
            file=sys.stderr,
        )
        return 1
    if args.output is None:
        sys.stdout.write(text)
    else:
        tmp = args.output.with_name(f"{args.output.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
