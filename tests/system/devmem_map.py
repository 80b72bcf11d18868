"""What root in a Linux partition meets when it points /dev/mem at each address of the board.

Built from the board description (rtmux.board) and the system's placement (rtmux.config), so the list
follows the board and the configuration instead of being written by hand. For the Linux partition of a
system, every physical address falls in one region with one expected outcome (`Outcome`):

  ABORT     not mapped at stage 2 and not emulated: the hypervisor refuses the access and injects a
            synchronous external abort (devmem dies of SIGBUS: exit status 135), and counts it in the
            `refused or emulated: N aborts` line it prints when the partition stops;
  EMULATED  trapped and answered by the hypervisor's emulation (GIC distributor, the redistributor
            window, the partition's PL011, the V-Bus device's page when the system has channels; every
            model reads an access it does not define as zero): exit status 0, no abort;
  MAPPED    the partition's own devices, mapped at stage 2 (QEMU answers, the hypervisor never sees it),
            and on a GICv2 the CPU interface at the board's GICC address (Linux's is the virtual CPU
            interface, GICV, which the hypervisor maps there);
  LINUX     the partition's own RAM: Linux refuses the mapping itself (STRICT_DEVMEM; exit status 1);
  BEYOND_PA above the CPU's physical address range: the kernel's own fault (an address size fault,
            which arm64 Linux answers with SIGKILL: exit status 137), before any stage 2.

An access is decided page by page, as the CPU performs it (checked on QEMU 7.2): devmem maps every page
the access touches (and one more near a page's end, `outcome`), so Linux refuses the whole access when
one of them is its RAM; otherwise the first page, in address order, that stage 2 does not map decides
for the whole access (the hypervisor handles the trapped access as one: an emulated first page answers
all of it, a refused one aborts it); an access inside mapped pages only is MAPPED.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rtmux import board as b
from rtmux import config as cfg
from rtmux.image.dtgen import GICV2_CPU_SIZE, GICV2_DIST_SIZE

PAGE = b.PAGE_SIZE
# Stage 2 translates 39-bit IPAs (board.py, pcie-mmio64); beyond them every access traps like any
# unmapped one. QEMU's cortex-a72 implements 44-bit physical addresses (ID_AA64MMFR0_EL1.PARange = 4):
# Linux's page tables cannot point above that, and its /dev/mem refuses offsets at or above 2^48.
IPA_LIMIT = 1 << 39
PA_LIMIT = 1 << 44
WIDTHS = (8, 16, 32, 64)  # busybox devmem access sizes, in bits


class Outcome(Enum):
    ABORT = "abort"
    EMULATED = "emulated"
    MAPPED = "mapped"
    LINUX = "linux"
    BEYOND_PA = "beyond-pa"

    @property
    def status(self) -> int:
        """devmem's exit status (as the shell reports it)."""
        return {"abort": 135, "emulated": 0, "mapped": 0, "linux": 1, "beyond-pa": 137}[self.value]


@dataclass(frozen=True)
class Area:
    """A named physical range with one outcome for the partition."""

    name: str
    region: b.Region
    outcome: Outcome


@dataclass(frozen=True)
class Access:
    """One devmem access: `width` bits at `address`; `write` with the value written."""

    address: int
    width: int
    area: str  # the area of its first byte
    outcome: Outcome
    write: bool = False


@dataclass(frozen=True)
class Probe:
    """A register read whose value is known: (value >> shift) & mask == expected."""

    name: str
    address: int
    width: int
    shift: int
    mask: int
    expected: int


class Map:
    """The board as one partition sees it through /dev/mem."""

    def __init__(self, system: cfg.SystemConfig, partition: str) -> None:
        self.system = system
        self.board = system.board
        part = next(p for p in system.partitions if p.name == partition)
        self.part = part
        areas: list[Area] = []
        brd = self.board
        # RAM: the hypervisor's, each partition's (Linux's own refused by Linux), the free rest
        areas.append(Area("hypervisor RAM", system.hypervisor, Outcome.ABORT))
        used = [system.hypervisor]
        for p in system.partitions:
            ram = b.Region(p.ram.pa, p.ram.size)
            used.append(ram)
            areas.append(Area(f"{p.name} RAM", ram, Outcome.LINUX if p is part else Outcome.ABORT))
        at = brd.ram.base
        for r in sorted(used) + [b.Region(brd.ram.end, 0)]:
            if r.base > at:
                areas.append(Area(f"free RAM {b.hexa(at)}", b.Region(at, r.base - at), Outcome.ABORT))
            at = max(at, r.end)
        # the GIC, then the emulated PL011
        areas += self._gic_v2() if brd.gic_version == 2 else self._gic_v3()
        areas.append(Area("pl011 (virtual)", brd.uart.regions[0], Outcome.EMULATED))
        if system.vbus is not None and system.vbus.partition == part.name:
            areas.append(Area("V-Bus device (virtual)", system.vbus.mmio, Outcome.EMULATED))
        # the partition's own devices (stage 2 maps them), then every other device of the board
        mine: set[str] = set()
        for assigned in part.devices:
            if assigned.implicit:
                continue
            mine.add(assigned.board_device or assigned.name)
            for i, r in enumerate(assigned.mmio):
                areas.append(Area(f"{assigned.name} #{i} (the partition's)", r, Outcome.MAPPED))
        for dev in brd.devices:
            if dev.name in mine:
                continue
            for i, r in enumerate(dev.regions):
                if r.base >= PA_LIMIT:
                    continue
                end = min(r.end, PA_LIMIT)
                areas.append(Area(f"{dev.name} #{i}", b.Region(r.base, end - r.base), Outcome.ABORT))
        # devices of other partitions are in brd.devices already (ABORT); holes between everything
        areas.sort(key=lambda a: a.region.base)
        for first, second in zip(areas, areas[1:], strict=False):
            if first.region.overlaps(second.region):
                raise ValueError(f"{first.name} {first.region} overlaps {second.name} {second.region}")
        holes: list[Area] = []
        at = 0
        for a in areas:
            if a.region.base > at:
                holes.append(self._hole(at, a.region.base))
            at = max(at, a.region.end)
        if at < PA_LIMIT:
            holes.append(self._hole(at, PA_LIMIT))
        self.areas = sorted(areas + holes, key=lambda a: a.region.base)
        beyond = Area("beyond the physical address range", b.Region(PA_LIMIT, PAGE), Outcome.BEYOND_PA)
        self.areas.append(beyond)

    def _gic_v3(self) -> list[Area]:
        """The distributor and the redistributor window (the hypervisor's limit of CPUs, frame by frame),
        emulated; the rest of the redistributor region refused."""
        brd, system = self.board, self.system
        areas = [Area("GIC distributor", brd.gicd, Outcome.EMULATED)]
        window = b.Region(brd.gicr.base, cfg.MAX_CPUS * brd.gicr_stride)
        for cpu in range(cfg.MAX_CPUS):
            owner = next((p.name for p in system.partitions if cpu in p.cpus), None)
            what = f"CPU {cpu} ({owner})" if owner else f"CPU {cpu} (beyond the board)"
            if cpu < brd.cpus and owner is None:
                what = f"CPU {cpu} (no partition)"
            areas.append(Area(f"redistributor {what}", brd.gicr_frame(cpu), Outcome.EMULATED))
        areas.append(Area("redistributor region beyond the hypervisor's window",
                          b.Region(window.end, brd.gicr.end - window.end), Outcome.ABORT))  # fmt: skip
        return areas

    def _gic_v2(self) -> list[Area]:
        """A GICv2: the distributor's 4 KiB emulated (the rest of its 64 KiB frame is nothing's); the
        partition's CPU interface (8 KiB) mapped at the GICC address, the rest of that frame refused; the
        virtual interface control (GICH) and the physical frame of the virtual CPU interface (GICV)
        mapped into no partition; no redistributors (the window a GICv3's would have is refused)."""
        brd = self.board
        if brd.gicc is None or brd.gich is None or brd.gicv is None:
            raise ValueError(f"board {brd.name}: a GICv2 without its CPU interface frames")
        dist = b.Region(brd.gicd.base, GICV2_DIST_SIZE)
        cpu = b.Region(brd.gicc.base, GICV2_CPU_SIZE)
        return [
            Area("GIC distributor", dist, Outcome.EMULATED),
            Area(
                "GIC distributor frame beyond its 4 KiB",
                b.Region(dist.end, brd.gicd.end - dist.end),
                Outcome.ABORT,
            ),
            Area("GIC CPU interface (the partition's)", cpu, Outcome.MAPPED),
            Area(
                "GIC CPU interface frame beyond its 8 KiB",
                b.Region(cpu.end, brd.gicc.end - cpu.end),
                Outcome.ABORT,
            ),
            Area("GICH (the hypervisor's)", brd.gich, Outcome.ABORT),
            Area("GICV (physical frame)", brd.gicv, Outcome.ABORT),
            Area(
                "no redistributors (a GICv2)",
                # where QEMU virt's GICv3 has them: the hypervisor's redistributor window on a GICv3
                b.Region(b.qemu_virt(brd.cpus, brd.ram.size).gicr.base, cfg.MAX_CPUS * brd.gicr_stride),
                Outcome.ABORT,
            ),
        ]

    def _hole(self, start: int, end: int) -> Area:
        """Nothing of the board's between start and end (past the end of RAM, past the IPA space)."""
        what = "beyond the end of RAM" if start == self.board.ram.end else "hole"
        what += ", beyond the IPA space" if start >= IPA_LIMIT else ""
        return Area(f"{what} {b.hexa(start)}", b.Region(start, end - start), Outcome.ABORT)

    def area_of(self, address: int) -> Area:
        for a in self.areas:
            if a.region.base <= address < a.region.end:
                return a
        raise ValueError(f"{b.hexa(address)} is in no area")

    def outcome(self, address: int, width: int) -> Outcome:
        """What a `width`-bit devmem access at `address` does (module docstring)."""
        page = address // PAGE * PAGE
        last = address + width // 8 - 1
        touched = range(page, last // PAGE * PAGE + 1, PAGE)
        # busybox devmem (1.35) maps a second page when the offset in the page plus the width *in bits*
        # passes the page's end: the last 8..64 bytes of a page map the next one too
        mapped = [page, page + PAGE] if address - page + width > PAGE else [page]
        if any(self.area_of(p).outcome == Outcome.LINUX for p in mapped):
            return Outcome.LINUX
        for p in touched:
            kind = self.area_of(p).outcome
            if kind != Outcome.MAPPED:
                return kind
        return Outcome.MAPPED

    def check_pages(self) -> None:
        """Every page lies in areas of one outcome (stage 2 works on whole pages)."""
        for a in self.areas:
            for edge in (a.region.base, a.region.end - 1):
                page = edge // PAGE * PAGE
                outcomes = {self.area_of(x).outcome for x in (page, page + PAGE - 1) if x < PA_LIMIT + PAGE}
                if len(outcomes) != 1:
                    raise ValueError(f"page {b.hexa(page)} of {a.name} has outcomes {outcomes}")

    def points(self, area: Area) -> list[int]:
        """The addresses to try in an area: its start, an unaligned offset, a page crossing inside it,
        its last aligned doubleword and its last byte (where wider accesses cross into the next area)."""
        r = area.region
        found = [r.base, r.base + 1]
        last_page = (r.end - 1) // PAGE * PAGE
        if last_page > r.base:
            found.append(last_page - 2)
        if area.outcome != Outcome.BEYOND_PA:
            found += [max(r.base, r.end - 8), r.end - 1]
        return sorted(set(found))

    def reads(self) -> list[Access]:
        """Every area's points at every width."""
        out = []
        for a in self.areas:
            for address in self.points(a):
                for w in WIDTHS:
                    out.append(Access(address, w, a.name, self.outcome(address, w)))
        return out

    def write_addresses(self) -> list[int]:
        """Where writes of every width are tried: the start and last doubleword of every area the
        hypervisor refuses, and in the emulated ones only registers where no access of any width may
        change anything (read-only identification, unaligned offsets, other CPUs' redistributors); the
        partition's own devices and RAM are not written (they keep its shell alive)."""
        out: list[int] = []
        for a in self.areas:
            r = a.region
            if a.outcome == Outcome.ABORT:
                out += [r.base, max(r.base, r.end - 8)]
        brd = self.board
        gicd, uart = brd.gicd.base, brd.uart.regions[0].base
        out += [
            gicd + 0x4,  # GICD_TYPER: read-only (64 bits there: not an architected access)
            gicd + 0x1,  # GICD_CTLR, unaligned
            gicd + 0x183,  # GICD_ICENABLER0, unaligned
            gicd + self._gicd_pidr2,  # GICD_PIDR2: read-only
            uart + 0x1,  # UARTDR, unaligned
            uart + 0x32,  # UARTCR, unaligned
            uart + 0xFE0,  # UARTPeriphID0: read-only
        ]
        if brd.gic_version == 2:
            out.append(gicd + 0x800)  # GICD_ITARGETSR0: SGI targets, banked and read-only
            if len(self.part.cpus) == 1:
                # GICD_SGIR: every written value sends (filter 1) to every CPU of the partition but the
                # sender: none of a partition of one CPU (the rtos's is among the target list's, which
                # filter 1 ignores; a byte, halfword or doubleword there is no access a GICv2 defines)
                out.append(gicd + 0xF00)
            return sorted(set(out))
        for cpu in range(cfg.MAX_CPUS):
            if cpu in self.part.cpus:
                continue  # the partition's own redistributor: its timer's enable lives there
            frame = brd.gicr_frame(cpu).base
            sgi = frame + 0x1_0000
            out += [frame, sgi + 0x180, sgi + 0x400]  # GICR_CTLR, ICENABLER0 (timers), IPRIORITYR0
        return sorted(set(out))

    def writes(self) -> list[Access]:
        out = []
        for address in self.write_addresses():
            area = self.area_of(address)
            for w in WIDTHS:
                out.append(Access(address, w, area.name, self.outcome(address, w), write=True))
        return out

    @property
    def _gicd_pidr2(self) -> int:
        """GICD_PIDR2's offset: in the last 48 bytes of the distributor's frame (64 KiB on a GICv3, 4 KiB
        on a GICv2)."""
        return 0xFFE8 if self.board.gic_version == 3 else 0xFE8

    def probes(self) -> list[Probe]:
        """Registers whose emulated (or, for the partition's own PCIe host, real) value is known, so the
        sweep shows who answered."""
        brd = self.board
        gicd, uart = brd.gicd.base, brd.uart.regions[0].base
        arch_rev = (4, 0xF, brd.gic_version)  # PIDR2.ArchRev: the GIC's version
        out = [Probe("GICD_PIDR2", gicd + self._gicd_pidr2, 32, *arch_rev)]
        if brd.gic_version == 2:
            out += self._gic_v2_probes()
        else:
            out.append(Probe("GICD_TYPER.LPIS (no LPIs in a partition)", gicd + 0x4, 32, 17, 1, 0))
        out += [
            Probe("UARTPeriphID0", uart + 0xFE0, 32, 0, 0xFF, 0x11),
            Probe("UARTPeriphID1", uart + 0xFE4, 32, 0, 0xFF, 0x10),
            Probe("UARTPCellID3", uart + 0xFFC, 32, 0, 0xFF, 0xB1),
            Probe("UARTFR.TXFE", uart + 0x18, 32, 7, 1, 1),
        ]
        for cpu in range(brd.cpus if brd.gic_version == 3 else 0):
            frame = brd.gicr_frame(cpu).base
            out.append(Probe(f"GICR_PIDR2 of CPU {cpu}", frame + 0xFFE8, 32, *arch_rev))
            # GICR_TYPER: Processor_Number [23:8] (QEMU numbers the frames by CPU)
            out.append(Probe(f"GICR_TYPER.Processor_Number of CPU {cpu}", frame + 0x8, 64, 8, 0xFFFF, cpu))
        if brd.gic_version == 3:
            beyond = brd.gicr_frame(brd.cpus).base
            out.append(Probe("GICR_TYPER beyond the board", beyond + 0x8, 64, 0, (1 << 64) - 1, 0))
        vbus = self.system.vbus
        if vbus is not None and vbus.partition == self.part.name:
            # virtio-mmio: MagicValue "virt", Version 2 (the modern interface), DeviceID 3 (console)
            out.append(Probe("V-Bus MagicValue", vbus.mmio.base, 32, 0, 0xFFFF_FFFF, 0x7472_6976))
            out.append(Probe("V-Bus Version", vbus.mmio.base + 0x4, 32, 0, 0xFFFF_FFFF, 2))
            out.append(Probe("V-Bus DeviceID (console)", vbus.mmio.base + 0x8, 32, 0, 0xFFFF_FFFF, 3))
        for dev in self.part.devices:
            if dev.board_device == "pcie":
                ecam = max(dev.mmio)  # the configuration space (ECAM), above 4 GiB on QEMU virt
                # device 00:00.0, QEMU's PCIe host bridge: Red Hat (0x1b36) device 0x0008
                out.append(Probe("PCIe 00:00.0 vendor/device", ecam.base, 32, 0, 0xFFFF_FFFF, 0x0008_1B36))
        return out

    def _gic_v2_probes(self) -> list[Probe]:
        """A GICv2's known values: the distributor's as the hypervisor emulates it (its CPUs and
        interrupt lines, the targets of SPIs 32..35 filtered by ownership), and the CPU interface mapped
        for Linux, which is the virtual one (GICV: Linux's own settings; the physical GICC of its CPU has
        the hypervisor's)."""
        brd, part = self.board, self.part
        gicd = brd.gicd.base
        assert brd.gicc is not None
        gicc = brd.gicc.base
        out = [
            # GICD_TYPER: ITLinesNumber [4:0] ((N + 1) * 32 INTIDs), CPUNumber [7:5] (CPU interfaces - 1)
            Probe(
                "GICD_TYPER.ITLinesNumber", gicd + 0x4, 32, 0, 0x1F, (b.SPI_BASE + brd.spi_count) // 32 - 1
            ),
            Probe("GICD_TYPER.CPUNumber", gicd + 0x4, 32, 5, 0x7, brd.cpus - 1),
            # GICC_IIDR (at 0xFC): ArchitectureVersion [19:16], Implementer [11:0] (Arm)
            Probe("GICC_IIDR.ArchitectureVersion", gicc + 0xFC, 32, 16, 0xF, 2),
            Probe("GICC_IIDR.Implementer (Arm)", gicc + 0xFC, 32, 0, 0xFFF, 0x43B),
            # Linux's GICv2 driver enables Group 0 (GICC_CTLR bit 0) and, entered at EL1, keeps EOImode 0
            # (bit 9); it sets the priority mask to 0xf0. The physical GICC of its CPU is the hypervisor's:
            # EOImode 1, mask 0xff.
            Probe("GICC_CTLR.EnableGrp0 (Linux's virtual CPU interface)", gicc, 32, 0, 1, 1),
            Probe("GICC_CTLR.EOImode (Linux's, not the hypervisor's 1)", gicc, 32, 9, 1, 0),
            Probe("GICC_PMR (Linux's 0xf0, not the hypervisor's 0xff)", gicc + 0x4, 32, 0, 0xFF, 0xF0),
        ]
        if len(part.cpus) == 1:
            # GICD_ITARGETSR0..7 are banked and read as the reading CPU's interface, in every byte (CPU
            # interface n is the CPU with Aff0 n)
            mine = 1 << (brd.mpidr(part.cpus[0]) & 0xFF)
            out.append(
                Probe(
                    "GICD_ITARGETSR0 (this CPU's interface)",
                    gicd + 0x800,
                    32,
                    0,
                    0xFFFF_FFFF,
                    mine * 0x0101_0101,
                )
            )
            # GICD_ITARGETSR8: SPIs 32..35, each naming the partition's CPU when it is the partition's (its
            # devices', its virtual UART's, the V-Bus device's), none otherwise
            linux = set(part.interrupts) | set(brd.uart.interrupts)
            if self.system.vbus is not None and self.system.vbus.partition == part.name:
                linux |= set(brd.vbus.interrupts if brd.vbus is not None else ())
            word = sum((mine if b.SPI_BASE + i in linux else 0) << (8 * i) for i in range(4))
            out.append(Probe("GICD_ITARGETSR8 (SPIs 32..35)", gicd + 0x820, 32, 0, 0xFFFF_FFFF, word))
        return out
