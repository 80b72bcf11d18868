"""The boards rtmux knows, each described by one struct: memory map, interrupts, devices.

QEMU `virt` (7.2, `-M virt,virtualization=on,gic-version=3`, or `gic-version=2`). What its device tree
says (RAM base, the GIC's frames, the maintenance and timer PPIs, the console UART) comes from its
descriptions, platform/qemu-virt/board.toml and platform/qemu-virt-gicv2/board.toml (rtmux.boarddesc,
imported from `-machine dumpdtb`), which the images' generated header comes from too; what only QEMU
knows (the virtio-mmio transports, the PCIe host, the SMMU, the flash, the place of the V-Bus device, the
machine options) is written here (checked against the monitor's `info qtree`, see
docs/configuration.md). Interrupt numbers are GIC INTIDs throughout:
SGIs 0-15, PPIs 16-31 (PPI n = INTID 16 + n), SPIs from 32 (SPI n = INTID 32 + n); device trees write
SPIs as `<0 n flags>` and PPIs as `<1 n flags>`.

A device is *assignable* when the hypervisor can hand it to one partition whole (stage-2 mapping of its
MMIO, its SPIs routed to that partition). Everything else is either owned by the hypervisor (GIC, PL011:
each partition gets a virtual one; the SMMU) or hidden from every partition.

A device that can master DMA (`dma`) reaches memory without the CPU's stage 2. It is confined only when
it sits behind the board's IOMMU (`streams`: the stream IDs it uses there), which the hypervisor programs
so that those streams reach the owning partition's RAM and nothing else. On QEMU virt that is the PCIe
host behind the SMMUv3 (`-M virt,iommu=smmuv3`): virtio-mmio transports are not behind it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from rtmux import boarddesc, paths

# The address and INTID basics are the board description's (rtmux.boarddesc); here for every user of the
# tools' board.
from rtmux.boarddesc import GIB as GIB
from rtmux.boarddesc import KIB as KIB
from rtmux.boarddesc import MIB as MIB
from rtmux.boarddesc import PPI_BASE as PPI_BASE
from rtmux.boarddesc import SPI_BASE as SPI_BASE
from rtmux.boarddesc import BoardError as BoardError
from rtmux.boarddesc import Region as Region
from rtmux.boarddesc import hexa as hexa

PAGE_SIZE = 4 * KIB  # stage-2 granule: devices are mapped by whole pages

# How QEMU makes the virt board rtmux runs on: EL2 present (virtualization=on), a GICv3, Cortex-A72 CPUs.
# The QEMU runner (rtmux.qemu) uses the same options for the bare runs.
QEMU_VIRT_MACHINE = "virt,virtualization=on,gic-version=3"
QEMU_VIRT_CPU = "cortex-a72"
# The GIC versions rtmux drives on QEMU virt; the rtos and the hypervisor pick their driver from what
# the CPU reports, the tools start QEMU with the one asked for.
GIC_VERSIONS = (3, 2)


def qemu_virt_machine(gic: int = 3) -> str:
    """QEMU's -M value for QEMU virt with GIC version `gic` (3 or 2), EL2 present."""
    if gic not in GIC_VERSIONS:
        raise ValueError(f"QEMU virt has no GIC version {gic} rtmux drives (3 or 2)")
    return f"virt,virtualization=on,gic-version={gic}"


def spi(n: int) -> int:
    """INTID of SPI n."""
    return SPI_BASE + n


def ppi(n: int) -> int:
    """INTID of PPI n."""
    return PPI_BASE + n


def size_text(size: int) -> str:
    """A size in the largest binary unit that divides it: 16 MiB, 512 KiB, 4097 bytes."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


def intid_text(intid: int) -> str:
    """INTID 79 (SPI 47)."""
    if intid >= SPI_BASE:
        return f"INTID {intid} (SPI {intid - SPI_BASE})"
    if intid >= PPI_BASE:
        return f"INTID {intid} (PPI {intid - PPI_BASE})"
    return f"INTID {intid} (SGI {intid})"


@dataclass(frozen=True)
class Device:
    """One device of the board."""

    name: str  # how configurations refer to it: "virtio-mmio.31", "rtc", ...
    compatible: str  # first `compatible` string of its device-tree node
    regions: tuple[Region, ...]
    interrupts: tuple[int, ...] = ()  # INTIDs
    edge: bool = False  # its interrupts are edge-triggered (else level)
    assignable: bool = False
    why_not: str = ""  # for a device that is not assignable: the reason, shown in errors
    dma: bool = False  # it can master DMA (read and write memory by itself)
    streams: Region | None = None  # its stream IDs at the board's IOMMU [base, end); None: not behind one

    @property
    def node_name(self) -> str:
        """The device-tree node name of its first region, e.g. virtio_mmio@a003e00."""
        return f"{self.compatible_node}@{self.regions[0].base:x}"

    @property
    def compatible_node(self) -> str:
        return _NODE_NAMES.get(self.compatible, self.name)


# Node base names in QEMU's generated device tree, by compatible string.
_NODE_NAMES = {
    "virtio,mmio": "virtio_mmio",
    "arm,pl011": "pl011",
    "arm,pl031": "pl031",
    "arm,pl061": "pl061",
    "qemu,fw-cfg-mmio": "fw-cfg",
    "pci-host-ecam-generic": "pcie",
    "arm,smmu-v3": "smmuv3",
    "arm,gic-v3": "intc",
    "arm,gic-v3-its": "its",
    "cfi-flash": "flash",
    "qemu,platform": "platform-bus",
}


@dataclass(frozen=True)
class TimerPpis:
    """Generic-timer interrupt INTIDs (PPIs, one per CPU)."""

    secure_phys: int
    el1_phys: int
    el1_virt: int
    el2_phys: int


@dataclass(frozen=True)
class Board:
    """Everything the tools need to know about one board, for one memory size and CPU count."""

    name: str
    cpus: int
    ram: Region
    gicd: Region
    gicr: Region  # the redistributor region: `gicr_stride` bytes per CPU, CPU n at gicr.base + n * stride
    gicr_stride: int
    spi_count: int  # SPIs the distributor implements (INTIDs 32 .. 32 + spi_count - 1)
    timer: TimerPpis
    gic_maintenance: int  # INTID of the GIC maintenance interrupt (PPI)
    pmu: int  # INTID of the PMU overflow interrupt (PPI)
    uart: Device  # the console UART, owned by the hypervisor, virtual in every partition
    devices: tuple[Device, ...]  # every device except the GIC and the UART
    # QEMU: the options that make this board (the same ones go to `-machine dumpdtb`)
    qemu_machine: str = ""
    qemu_cpu: str = ""
    # The IOMMU (its MMIO is in `devices`, owned by the hypervisor); present on QEMU only with
    # `iommu_option` in the machine options, which `with_iommu()` adds.
    iommu: Device | None = None
    iommu_option: str = ""
    iommu_on: bool = False
    # The GIC's version; a GICv2 has no redistributors (gicr is empty) but a memory-mapped CPU interface
    # (gicc, which every partition sees at its address: the physical one in the rtos's, the virtual
    # interface gicv in Linux's, which the hypervisor maps there), and the virtual interface control
    # (gich), the hypervisor's.
    gic_version: int = 3
    gicc: Region | None = None
    gich: Region | None = None
    gicv: Region | None = None
    # The V-Bus's virtio-mmio device, emulated by the hypervisor in the Linux partition: a page where
    # the board has nothing, and an SPI no device raises (never assignable; None: the board has no place
    # for it).
    vbus: Device | None = None

    def with_iommu(self) -> Board:
        """The same board with its IOMMU present (QEMU: the machine option that creates it)."""
        if self.iommu is None:
            raise ValueError(f"{self.name} has no IOMMU")
        return replace(self, iommu_on=True)

    @property
    def machine(self) -> str:
        """QEMU's -M value: the board's machine options, with the IOMMU when it is on."""
        return f"{self.qemu_machine},{self.iommu_option}" if self.iommu_on else self.qemu_machine

    def qemu_args(self) -> list[str]:
        """QEMU's machine options for this board: -M, -cpu, -smp, -m."""
        return [
            "-M",
            self.machine,
            "-cpu",
            self.qemu_cpu,
            "-smp",
            str(self.cpus),
            "-m",
            _qemu_size(self.ram.size),
        ]

    def gicr_frame(self, cpu: int) -> Region:
        """The redistributor frames (RD_base, SGI_base) of one CPU."""
        return Region(self.gicr.base + cpu * self.gicr_stride, self.gicr_stride)

    def mpidr(self, cpu: int) -> int:
        """The affinity fields of CPU `cpu`'s MPIDR_EL1 (as a DTB's /cpus/cpu@N reg writes them)."""
        # QEMU virt with GICv3 puts 16 CPUs in a cluster: Aff0 = cpu % 16, Aff1 = cpu / 16.
        return (cpu // 16) << 8 | cpu % 16

    def _own_devices(self) -> tuple[Device, ...]:
        """The UART, the V-Bus page and the devices (not the GIC)."""
        return (self.uart, *((self.vbus,) if self.vbus is not None else ()), *self.devices)

    def device(self, name: str) -> Device | None:
        for dev in self._own_devices():
            if dev.name == name:
                return dev
        return None

    def device_at(self, region: Region) -> Device | None:
        """The device whose MMIO (any of its regions) overlaps `region`, GIC included."""
        for dev in self.all_devices():
            if any(r.overlaps(region) for r in dev.regions):
                return dev
        return None

    def device_of_interrupt(self, intid: int) -> Device | None:
        for dev in self._own_devices():
            if intid in dev.interrupts:
                return dev
        return None

    def all_devices(self) -> tuple[Device, ...]:
        """The devices with the GIC (distributor, redistributors, ITS shown as one device each)."""
        if self.gic_version == 2:
            frames = tuple(r for r in (self.gicd, self.gicc, self.gich, self.gicv) if r is not None)
            gic = Device("gic", "arm,cortex-a15-gic", frames, why_not="it is owned by the hypervisor")
        else:
            gic = Device("gic", "arm,gic-v3", (self.gicd, self.gicr), why_not="it is owned by the hypervisor")
        return (gic, *self._own_devices())

    def assignable_names(self) -> list[str]:
        return [d.name for d in self.devices if d.assignable]


VIRTIO_MMIO_BASE = 0x0A00_0000
VIRTIO_MMIO_SIZE = 0x200
VIRTIO_MMIO_COUNT = 32
VIRTIO_MMIO_FIRST_SPI = 16

# The V-Bus device (platform/qemu-virt/board.h: BOARD_VBUS_*, the reasons): the first page after QEMU's
# 32 virtio-mmio transports (0x0a00_0000..0x0a00_4000), in the range QEMU virt leaves empty up to its
# platform bus (0x0c00_0000); its registers use VIRTIO_MMIO_SIZE bytes of the page, which stage 2 traps
# whole. Its interrupt is SPI 192 (INTID 224): QEMU virt 7.2 raises SPIs 1..9, 16..47 (virtio-mmio),
# 74..77 (SMMU) and 112..175 (platform bus) only, and the distributor has 256 SPIs, the limit of the
# GICD_TYPER a partition reads (INTIDs up to 287).
VBUS_MMIO_BASE = 0x0A00_4000
VBUS_SPI = 192

# QEMU virt's SMMUv3 (with -M virt,iommu=smmuv3): two 64 KiB register pages, SPIs 74..77 (event queue,
# PRI queue, CMD_SYNC, global error; edge). It translates the DMA of every device on the PCIe host,
# stream ID = PCI requester ID (bus << 8 | device << 3 | function), 16 bits.
SMMU_BASE = 0x0905_0000
SMMU_SIZE = 0x2_0000
SMMU_FIRST_SPI = 74
QEMU_VIRT_IOMMU = "iommu=smmuv3"
PCIE_STREAMS = Region(0, 1 << 16)


def virtio_mmio_name(index: int) -> str:
    return f"virtio-mmio.{index}"


# The descriptions of QEMU virt (platform/NAME/board.toml), by GIC version.
QEMU_VIRT_BOARDS = {3: "qemu-virt", 2: "qemu-virt-gicv2"}


@functools.cache
def description(name: str) -> boarddesc.Description:
    """The repository's description of board `name` (platform/NAME/board.toml), one rtmux can use;
    BoardError naming the file and the field otherwise."""
    return boarddesc.load(paths.REPO_ROOT / "platform" / name / "board.toml", usable=True)


def qemu_virt(cpus: int = 2, memory: int = 1 * GIB, gic: int = 3) -> Board:
    """QEMU virt with `-smp cpus -m memory`: RAM starts at 0x4000_0000. With `gic` 2 it is the board
    "qemu-virt-gicv2" (gic-version=2: the distributor at the same address, the CPU interface, GICH and
    GICV after it, no redistributors, no ITS; at most 8 CPUs). BoardError if its description is not one
    rtmux can use.

    `-device virtio-*-device` fills the transports from the highest address down (the first such option
    gets transport 31 at 0x0a00_3e00, SPI 47); `bus=virtio-mmio-bus.N` pins one to transport N.
    """
    virtio = tuple(
        Device(
            virtio_mmio_name(i),
            "virtio,mmio",
            (Region(VIRTIO_MMIO_BASE + i * VIRTIO_MMIO_SIZE, VIRTIO_MMIO_SIZE),),
            (spi(VIRTIO_MMIO_FIRST_SPI + i),),
            edge=True,
            assignable=True,
            dma=True,
        )
        for i in range(VIRTIO_MMIO_COUNT)
    )
    smmu = Device(
        "smmu",
        "arm,smmu-v3",
        (Region(SMMU_BASE, SMMU_SIZE),),
        tuple(spi(SMMU_FIRST_SPI + i) for i in range(4)),
        edge=True,
        why_not="it is the IOMMU the hypervisor programs to confine DMA",
    )
    devices = (
        Device("flash", "cfi-flash", (Region(0, 0x0800_0000),), why_not="it holds the firmware"),
        Device(
            "its",
            "arm,gic-v3-its",
            (Region(0x0808_0000, 0x2_0000),),
            why_not="the GIC ITS is not virtualised (no MSIs in partitions)",
        ),
        Device("rtc", "arm,pl031", (Region(0x0901_0000, 0x1000),), (spi(2),), assignable=True),
        Device(
            "fw-cfg",
            "qemu,fw-cfg-mmio",
            (Region(0x0902_0000, 0x18),),
            why_not="it is QEMU's firmware interface (DMA to any physical address)",
        ),
        Device("gpio", "arm,pl061", (Region(0x0903_0000, 0x1000),), (spi(7),), assignable=True),
        Device(
            "platform-bus",
            "qemu,platform",
            (Region(0x0C00_0000, 0x0200_0000),),
            why_not="it is QEMU's dynamic sysbus window (empty)",
        ),
        smmu,
        *virtio,
        # The PCIe host, whole: its devices' interrupts are INTx on SPIs 3..6 (no MSIs: the ITS is not
        # virtualised, so the partition's DTB has no msi-map) and their DMA goes through the SMMU.
        Device(
            "pcie",
            "pci-host-ecam-generic",
            (
                Region(0x1000_0000, 0x2EFF_0000),  # 32-bit MMIO window
                Region(0x3EFF_0000, 0x1_0000),  # PIO window
                Region(0x40_1000_0000, 0x1000_0000),  # ECAM (high)
            ),
            (spi(3), spi(4), spi(5), spi(6)),
            assignable=True,
            dma=True,
            streams=PCIE_STREAMS,
        ),
        Device(
            "pcie-mmio64",
            "pcie-mmio64",
            (Region(0x80_0000_0000, 0x80_0000_0000),),
            why_not="the PCIe host's 64-bit window lies beyond the 39-bit IPA space of stage 2 "
            "(a partition with the PCIe host uses its 32-bit window)",
        ),
    )
    machine = qemu_virt_machine(gic)  # ValueError for a GIC version QEMU virt does not have here
    desc = description(QEMU_VIRT_BOARDS[gic])
    g, console, timer = desc.gic, desc.console, desc.timer
    # load(usable=True) refused a description without them
    assert g is not None and console is not None and timer is not None
    assert g.maintenance_intid is not None and console.intid is not None
    if g.version != gic or console.type != "pl011":
        raise BoardError(
            f"{desc.name}: QEMU virt with a GICv{gic} and a PL011, not GICv{g.version}, {console.type}"
        )
    uart = Device(
        "pl011",
        "arm,pl011",
        (console.frame,),
        (console.intid,),
        why_not="it is owned by the hypervisor (every partition sees a virtual PL011 at this address)",
    )
    if gic == 2:  # no ITS; the GICv2m MSI frame in its place
        v2m = Device(
            "v2m",
            "arm,gic-v2m-frame",
            (Region(0x0802_0000, 0x1000),),
            why_not="the GICv2m MSI frame is not virtualised (no MSIs in partitions)",
        )
        devices = (*(d for d in devices if d.name != "its"), v2m)
    return Board(
        name=desc.name,
        cpus=cpus,
        ram=Region(desc.memory[0].base, memory),
        gicd=g.distributor,
        gicr=g.redistributors or Region(0, 0),
        gicr_stride=boarddesc.GICV3_REDIST_STRIDE,
        gic_version=gic,
        gicc=g.cpu_interface,
        gich=g.hyp_interface,
        gicv=g.virtual_cpu_interface,
        spi_count=256,
        timer=TimerPpis(
            secure_phys=timer["secure_phys"],
            el1_phys=timer["phys"],
            el1_virt=timer["virt"],
            el2_phys=timer["hyp_phys"],
        ),
        gic_maintenance=g.maintenance_intid,
        pmu=ppi(7),
        uart=uart,
        devices=devices,
        qemu_machine=machine,
        qemu_cpu=QEMU_VIRT_CPU,
        iommu=smmu,
        iommu_option=QEMU_VIRT_IOMMU,
        vbus=Device(
            "vbus",
            "virtio,mmio",
            (Region(VBUS_MMIO_BASE, PAGE_SIZE),),
            (spi(VBUS_SPI),),
            why_not="it is the V-Bus device the hypervisor emulates in the Linux partition ([[channel]])",
        ),
    )


# Limits of QEMU virt (7.2): -smp up to 123 CPUs with GICv3 (the redistributor region above holds 123
# frames), RAM in the low region up to 255 GiB.
QEMU_VIRT_MAX_CPUS = 123
QEMU_VIRT_MAX_RAM = 255 * GIB

# A GICv2 serves at most 8 CPUs.
QEMU_VIRT_GICV2_MAX_CPUS = 8

BOARDS = tuple(QEMU_VIRT_BOARDS.values())
# The GIC version of each board name.
BOARD_GIC = {name: gic for gic, name in QEMU_VIRT_BOARDS.items()}


def _qemu_size(size: int) -> str:
    for unit, suffix in ((GIB, "G"), (MIB, "M"), (KIB, "K")):
        if size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


_VIRTIO_NAME = re.compile(r"virtio-mmio\.(\d+)$")


def virtio_index(name: str) -> int | None:
    """31 for "virtio-mmio.31", None for another name."""
    m = _VIRTIO_NAME.match(name)
    return int(m.group(1)) if m else None
