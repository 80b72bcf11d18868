"""Partition device trees, generated from the board's own DTB.

The board DTB comes from QEMU itself (`-M <machine>,dumpdtb=FILE` with the board's -cpu/-smp/-m), cached
under build/board/. `generate` edits a copy for one partition (see rtmux.formats.fdt for why we edit a
parsed tree rather than DTS text):

kept:    the root's properties; /psci with method = "hvc" (the hypervisor answers PSCI); /cpus with only
         the partition's CPUs (cpu-map dropped: it names every CPU); the GIC without its ITS child and with
         the redistributor region narrowed to the partition's CPUs' frames (one region per run of
         consecutive CPUs); the generic timer; for a Linux partition the PMU (each CPU's own, which the
         hypervisor leaves to Linux; `interrupt-affinity`, where present, narrowed to its CPUs); the PL011
         at its board address (a virtual one, emulated by the hypervisor); the nodes of the devices
         assigned to the partition; the clocks those reference.
replaced: the memory nodes by one `memory@<ipa>` holding the partition's RAM; /chosen by `bootargs`,
         `stdout-path` and, when given, `linux,initrd-start`/`linux,initrd-end` (64-bit) and fresh
         `kaslr-seed`/`rng-seed` values (QEMU's own seeds in the board DTB are fixed once dumped).
removed: everything else (other virtio-mmio transports, PCIe, fw-cfg, RTC, GPIO and gpio-keys, flash,
         an rtos partition's PMU (its accesses trap), the platform bus, the SMMU).
PCIe:    an assigned PCIe host keeps its node without `msi-map`/`msi-parent` (no ITS in a partition: its
         devices use INTx) and without `iommu-map`/`iommu-map-mask` (the hypervisor owns the SMMU; the
         partition programs device addresses as it sees them, its IPAs), and `ranges` keeps only the
         windows the partition was given (not the 64-bit one, beyond stage 2's IPA space).

`extra_nodes` is the hook for nodes the hypervisor emulates: `vbus_device_node` builds the V-Bus's
virtio-mmio node for the Linux partition (`virtio_mmio_node` any such node). `vbus_region_node` builds
the `/rtmux-vbus` node of an rtos partition's DTB (its contract: lib/include/lib/vbus.h), and
`services_node` its `/rtmux-services` node (what Linux offers its threads: [services]).
"""

from __future__ import annotations

import os
import shlex
import struct
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from rtmux import paths, qemu
from rtmux.board import SPI_BASE, VIRTIO_MMIO_SIZE, Board, Region
from rtmux.config import (
    KIND_LINUX,
    KIND_RTOS,
    LOG_OFF,
    VBUS_SGI_TO_HYP,
    VBUS_SGI_TO_RTOS,
    Partition,
    SystemConfig,
)
from rtmux.errors import SetupError
from rtmux.formats import fdt
from rtmux.formats.fdt import Node

BOARD_DTB_DIR = paths.BUILD_DIR / "board"

# /chosen seeds a Linux partition boots with (the sizes QEMU gives a bare guest): `kaslr-seed` places the
# kernel (KASLR), `rng-seed` credits 256 bits to the kernel's random pool. Without rng-seed the pool is
# not ready after boot and every get_random_*() call (fork, exec, slab freelists) extracts entropy the slow
# way: hackbench then takes 4.3x the guest time of bare Linux.
KASLR_SEED_BYTES = 8
RNG_SEED_BYTES = 32
RANDOM_SEED_BYTES = KASLR_SEED_BYTES + RNG_SEED_BYTES
DUMPDTB_TIMEOUT_S = 60

# GIC interrupt specifier flags (dt-bindings/interrupt-controller/irq.h)
IRQ_TYPE_EDGE_RISING = 1
IRQ_TYPE_LEVEL_HIGH = 4
GIC_SPI = 0
GIC_SPECIFIER_CELLS = 3  # the GIC binding's #interrupt-cells: type, number, flags


def board_dtb_command(board: Board, output: Path, qemu_bin: str = qemu.QEMU_BIN) -> list[str]:
    """QEMU with the board's machine options, writing its DTB to `output` and exiting."""
    args = board.qemu_args()
    machine = args.index("-M") + 1
    args[machine] = f"{args[machine]},dumpdtb={output}"
    return [qemu_bin, *args, "-nographic", "-nic", "none"]


def board_dtb(board: Board, *, qemu_bin: str = qemu.QEMU_BIN, cache_dir: Path = BOARD_DTB_DIR) -> bytes:
    """The board's DTB as QEMU generates it, from the cache when the QEMU binary and options are unchanged."""
    path = qemu.find_qemu(qemu_bin)
    stem = f"{board.name}-smp{board.cpus}-m{board.ram.size >> 20}M{'-iommu' if board.iommu_on else ''}"
    dtb, stamp = cache_dir / f"{stem}.dtb", cache_dir / f"{stem}.cmd"
    key = f"{shlex.join(board_dtb_command(board, Path('FILE'), path))} mtime={os.stat(path).st_mtime_ns}\n"
    try:
        if stamp.read_text() == key:
            return dtb.read_bytes()
    except OSError:
        pass
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = dtb.with_name(f"{dtb.name}.{os.getpid()}.tmp")  # parallel runs each dump their own
    cmd = board_dtb_command(board, tmp, path)
    try:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DUMPDTB_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"`{shlex.join(cmd)}` did not finish within {DUMPDTB_TIMEOUT_S} s") from exc
    if proc.returncode != 0 or not tmp.is_file():
        raise SetupError(
            f"`{shlex.join(cmd)}` failed (exit status {proc.returncode}): "
            f"{(proc.stderr or proc.stdout).strip()}"
        )
    tmp.replace(dtb)
    stamp.write_text(key)
    return dtb.read_bytes()


def virtio_mmio_node(base: int, size: int, intid: int, *, level: bool = False) -> Node:
    """A virtio-mmio transport node, as QEMU writes them (edge-triggered SPI unless `level`): for
    emulated devices."""
    if intid < SPI_BASE:
        raise ValueError(f"INTID {intid} is not an SPI")
    return Node(
        f"virtio_mmio@{base:x}",
        {
            "dma-coherent": b"",
            "interrupts": fdt.cells(
                GIC_SPI, intid - SPI_BASE, IRQ_TYPE_LEVEL_HIGH if level else IRQ_TYPE_EDGE_RISING
            ),
            "reg": fdt.u64_cells(base, size),
            "compatible": fdt.string("virtio,mmio"),
        },
    )


def append_nodes(*nodes: Node) -> Callable[[Node], None]:
    """An `extra_nodes` hook for `generate` that appends `nodes` to the root."""

    def hook(root: Node) -> None:
        root.children.extend(nodes)

    return hook


def vbus_device_node(config: SystemConfig, part: Partition) -> Node | None:
    """The V-Bus's virtio-mmio console in the Linux partition that has it, else None. Its interrupt is
    level-sensitive (platform/qemu-virt/board.h: asserted while InterruptStatus is non-zero); its reg
    covers the registers (VIRTIO_MMIO_SIZE), the hypervisor traps the whole page."""
    dev = config.vbus
    if dev is None or dev.partition != part.name:
        return None
    return virtio_mmio_node(dev.mmio.base, VIRTIO_MMIO_SIZE, dev.intid, level=True)


def vbus_region_node(config: SystemConfig, part: Partition) -> Node | None:
    """/rtmux-vbus of an rtos partition that serves channels, else None (lib/vbus.h: the contract):
    compatible "rtmux,vbus"; reg = the region (IPAs, 2 address and 2 size cells); rtmux,doorbell =
    <sgi-to-rtos sgi-to-hyp mpidr-hi mpidr-lo>, the MPIDR affinity of the Linux partition's boot CPU,
    where the rtos sends its SGI; one child channel@N per channel (N its index in the region) with
    reg = <N>, label = its name and rtmux,layout = <chan-off to-linux-off to-linux-size to-rtos-off
    to-rtos-size> (bytes from the region's start)."""
    if part.vbus is None or config.vbus is None:
        return None
    linux = config.partition(config.vbus.partition)
    mpidr = config.board.mpidr(linux.boot_cpu)
    node = Node(
        "rtmux-vbus",
        {
            "compatible": fdt.string("rtmux,vbus"),
            "reg": fdt.u64_cells(part.vbus.base, part.vbus.size),
            "rtmux,doorbell": fdt.cells(VBUS_SGI_TO_RTOS, VBUS_SGI_TO_HYP, mpidr >> 32, mpidr & 0xFFFF_FFFF),
            "#address-cells": fdt.cells(1),
            "#size-cells": fdt.cells(0),
        },
    )
    for ch in config.channels_of(part):
        node.children.append(
            Node(
                f"channel@{ch.index:x}",
                {
                    "reg": fdt.cells(ch.index),
                    "label": fdt.string(ch.name),
                    "rtmux,layout": fdt.cells(
                        ch.chan_off, ch.to_linux_off, ch.to_linux, ch.to_rtos_off, ch.to_rtos
                    ),
                },
            )
        )
    return node


def services_node(config: SystemConfig, part: Partition) -> Node | None:
    """/rtmux-services of the rtos partition a system with [services] has, else None:
    compatible "rtmux,services"; rtmux,files = the exported directories (a string list, in configuration
    order; absent when none); rtmux,files-ro = <one cell per directory, 1 = read-only> (absent with
    rtmux,files); rtmux,log = "syslog" or "file:/PATH" (absent when off). The channels have fixed names
    (rtmux-files, rtmux-log), so they are not in the node."""
    services = config.services
    if services is None or part.kind != KIND_RTOS:
        return None
    props = {"compatible": fdt.string("rtmux,services")}
    if services.dirs:
        props["rtmux,files"] = fdt.strings(*(d.path for d in services.dirs))
        props["rtmux,files-ro"] = fdt.cells(*(int(d.read_only) for d in services.dirs))
    if services.log != LOG_OFF:
        props["rtmux,log"] = fdt.string(services.log)
    return Node("rtmux-services", props)


def _reg_regions(node: Node, address_cells: int, size_cells: int) -> list[Region]:
    if "reg" not in node.props:
        return []
    values = node.get_cells("reg")
    step = address_cells + size_cells
    out = []
    for i in range(0, len(values) - step + 1, step):
        addr = _join(values[i : i + address_cells])
        size = _join(values[i + address_cells : i + step])
        out.append(Region(addr, size))
    return out


def _join(cells: Sequence[int]) -> int:
    value = 0
    for c in cells:
        value = (value << 32) | c
    return value


def _compatible(node: Node) -> list[str]:
    return node.get_strings("compatible") if "compatible" in node.props else []


def _cpu_runs(cpus: Sequence[int]) -> list[tuple[int, int]]:
    """[(first, count)] of consecutive CPUs: 0,1,3 -> [(0, 2), (3, 1)]."""
    runs: list[tuple[int, int]] = []
    for cpu in sorted(cpus):
        if runs and runs[-1][0] + runs[-1][1] == cpu:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((cpu, 1))
    return runs


# The GICv2 frames a partition is given: the distributor's 4 KiB and the CPU interface's 8 KiB.
GICV2_DIST_SIZE = 0x1000
GICV2_CPU_SIZE = 0x2000


def generate(
    board_dtb_bytes: bytes,
    board: Board,
    part: Partition,
    *,
    bootargs: str | None = None,
    initrd: tuple[int, int] | None = None,
    extra_nodes: Callable[[Node], None] | None = None,
    seed: bytes | None = None,
) -> bytes:
    """The DTB of one partition. initrd: (start, end) IPAs; bootargs: None = the partition's; seed:
    RANDOM_SEED_BYTES random bytes for /chosen `kaslr-seed` (the first 8) and `rng-seed` (the rest)."""
    tree = fdt.parse(board_dtb_bytes)
    root = tree.root
    ac = root.get_cells("#address-cells")[0]
    sc = root.get_cells("#size-cells")[0]
    assigned = [r for dev in part.devices if not dev.implicit for r in dev.mmio]
    uart_base = board.uart.regions[0].base

    keep: list[Node] = []
    uart_node: Node | None = None
    for node in root.children:
        base = node.basename
        compat = _compatible(node)
        regions = _reg_regions(node, ac, sc)
        if base == "psci":
            node.props["method"] = fdt.string("hvc")
            keep.append(node)
        elif base == "cpus":
            _prune_cpus(node, part.cpus)
            keep.append(node)
        elif "arm,gic-v3" in compat:
            _prune_gic(node, board, part.cpus, ac, sc)
            keep.append(node)
        elif "arm,cortex-a15-gic" in compat or "arm,gic-400" in compat:
            _prune_gic_v2(node, board, ac, sc)
            keep.append(node)
        elif "arm,armv8-timer" in compat:
            keep.append(node)
        elif _is_pmu(compat) and part.kind == KIND_LINUX:
            _prune_affinity(node, root, part.cpus)
            keep.append(node)
        elif "arm,pl011" in compat and regions and regions[0].base == uart_base:
            uart_node = node
            keep.append(node)
        elif regions and base != "memory" and any(r.overlaps(a) for r in regions for a in assigned):
            if node.props.get("device_type") == fdt.string("pci"):
                _prune_pci_host(node, assigned, ac)
            keep.append(node)
    if uart_node is None:
        raise fdt.FdtError(f"the board DTB has no PL011 at 0x{uart_base:x}")
    keep += _referenced_clocks(root, keep)
    memory = Node(
        f"memory@{part.ram.ipa:x}",
        {"reg": fdt.u64_cells(part.ram.ipa, part.ram.size), "device_type": fdt.string("memory")},
    )
    chosen = Node("chosen")
    chosen.props["bootargs"] = fdt.string(part.bootargs if bootargs is None else bootargs)
    chosen.props["stdout-path"] = fdt.string(f"/{uart_node.name}")
    if initrd is not None:
        start, end = initrd
        if not part.ram.ipa <= start <= end <= part.ram.ipa + part.ram.size:
            raise ValueError(f"initrd 0x{start:x}..0x{end:x} is outside the partition's RAM")
        chosen.props["linux,initrd-start"] = fdt.u64_cells(start)
        chosen.props["linux,initrd-end"] = fdt.u64_cells(end)
    if seed is not None:
        if len(seed) != RANDOM_SEED_BYTES:
            raise ValueError(f"the random seed must be {RANDOM_SEED_BYTES} bytes, not {len(seed)}")
        chosen.props["kaslr-seed"] = seed[:KASLR_SEED_BYTES]
        chosen.props["rng-seed"] = seed[KASLR_SEED_BYTES:]
    # Original order of the kept nodes, then memory and chosen.
    root.remove_children(keep)
    root.children.insert(0, memory)
    root.children.append(chosen)
    if extra_nodes is not None:
        extra_nodes(root)
    tree.boot_cpuid_phys = part.boot_cpu
    tree.reservations = []
    return fdt.serialize(tree)


def _is_pmu(compat: Sequence[str]) -> bool:
    """The CPUs' performance monitors: "arm,armv8-pmuv3" or a core's own ("arm,cortex-a72-pmu")."""
    return any(c == "arm,armv8-pmuv3" or (c.startswith("arm,") and c.endswith("-pmu")) for c in compat)


def _prune_affinity(node: Node, root: Node, cpus: Sequence[int]) -> None:
    """`interrupt-affinity` (a CPU phandle per CPU the PMU's interrupt serves) keeps only the
    partition's CPUs: Linux refuses a PMU whose affinity names a CPU its DTB lacks. Where each CPU has
    its own SPI (one GIC specifier per phandle), the interrupts go with their CPUs."""
    if "interrupt-affinity" not in node.props:
        return
    mine = {
        c.get_cells("phandle")[0]
        for c in root.find("/cpus").children
        if c.basename == "cpu" and "phandle" in c.props and c.get_cells("reg")[-1] in cpus
    }
    affinity = node.get_cells("interrupt-affinity")
    keep = [i for i, phandle in enumerate(affinity) if phandle in mine]
    node.props["interrupt-affinity"] = fdt.cells(*(affinity[i] for i in keep))
    specs = node.get_cells("interrupts")
    if len(affinity) > 1 and len(specs) == GIC_SPECIFIER_CELLS * len(affinity):
        per_cpu = [specs[i * GIC_SPECIFIER_CELLS : (i + 1) * GIC_SPECIFIER_CELLS] for i in keep]
        node.props["interrupts"] = fdt.cells(*(c for spec in per_cpu for c in spec))


def _prune_cpus(cpus_node: Node, cpus: Sequence[int]) -> None:
    kept = []
    for child in cpus_node.children:
        if child.basename == "cpu" and "reg" in child.props:
            if child.get_cells("reg")[-1] in cpus:
                kept.append(child)
        elif child.name != "cpu-map":
            kept.append(child)
    cpus_node.remove_children(kept)


def _prune_gic(gic: Node, board: Board, cpus: Sequence[int], ac: int, sc: int) -> None:
    gic.remove_children([c for c in gic.children if "arm,gic-v3-its" not in _compatible(c)])
    runs = _cpu_runs(cpus)
    regs = [board.gicd] + [
        Region(board.gicr_frame(first).base, count * board.gicr_stride) for first, count in runs
    ]
    if ac != 2 or sc != 2:
        raise fdt.FdtError(f"expected #address-cells = #size-cells = 2 at the root, not {ac}/{sc}")
    gic.props["reg"] = fdt.u64_cells(*(v for r in regs for v in (r.base, r.size)))
    gic.props["#redistributor-regions"] = fdt.cells(len(runs))


def _prune_gic_v2(gic: Node, board: Board, ac: int, sc: int) -> None:
    """A GICv2 as a partition sees it: the distributor (the hypervisor's filter) and the CPU interface
    (8 KiB: GICC_DIR is in its second page), without the virtualization interface and its maintenance
    interrupt, which are the hypervisor's, and without the GICv2m MSI frame (no MSIs in a partition).
    Its #address-cells stay: interrupt-map entries (a PCI host's) carry that many parent cells."""
    if board.gicc is None:
        raise fdt.FdtError(f"board {board.name} describes no GICv2 CPU interface")
    if ac != 2 or sc != 2:
        raise fdt.FdtError(f"expected #address-cells = #size-cells = 2 at the root, not {ac}/{sc}")
    gic.remove_children([])
    gic.props.pop("interrupts", None)
    regs = (Region(board.gicd.base, GICV2_DIST_SIZE), Region(board.gicc.base, GICV2_CPU_SIZE))
    gic.props["reg"] = fdt.u64_cells(*(v for r in regs for v in (r.base, r.size)))


# Properties of a PCI host node that name what a partition does not get: the ITS (MSIs) and the SMMU.
PCI_HIDDEN_PROPS = ("msi-map", "msi-map-mask", "msi-parent", "iommu-map", "iommu-map-mask")


def _prune_pci_host(node: Node, assigned: Sequence[Region], parent_ac: int) -> None:
    """A PCI host as its partition sees it: no MSI or IOMMU references, and `ranges` entries (child
    address, parent address, size) only for windows inside the partition's assigned MMIO."""
    for prop in PCI_HIDDEN_PROPS:
        node.props.pop(prop, None)
    child_ac = node.get_cells("#address-cells")[0]
    child_sc = node.get_cells("#size-cells")[0]
    step = child_ac + parent_ac + child_sc
    values = node.get_cells("ranges")
    kept: list[int] = []
    for i in range(0, len(values) - step + 1, step):
        entry = values[i : i + step]
        window = Region(_join(entry[child_ac : child_ac + parent_ac]), _join(entry[child_ac + parent_ac :]))
        if any(a.contains(window) for a in assigned):
            kept += entry
    node.props["ranges"] = fdt.cells(*kept)


def _referenced_clocks(root: Node, kept: list[Node]) -> list[Node]:
    """Root-level clock providers that kept nodes (or their descendants) name in `clocks`."""
    providers = {
        n.phandle(): n for n in root.children if n.phandle() is not None and "#clock-cells" in n.props
    }
    wanted: list[Node] = []
    for top in kept:
        for _path, node in top.walk():
            if "clocks" not in node.props:
                continue
            values = node.get_cells("clocks")
            i = 0
            while i < len(values):
                provider = providers.get(values[i])
                if provider is None:
                    break
                if all(provider is not k for k in (*kept, *wanted)):
                    wanted.append(provider)
                i += 1 + provider.get_cells("#clock-cells")[0]
    return wanted


def interrupts_of(node: Node) -> list[tuple[int, int, int]]:
    """(type, number, flags) triples of a node's GIC `interrupts` (tests, diagnostics)."""
    values = node.get_cells("interrupts")
    return [(values[i], values[i + 1], values[i + 2]) for i in range(0, len(values) - 2, 3)]


def u64_prop(node: Node, prop: str) -> int:
    raw = node.props[prop]
    value: int = struct.unpack(">Q", raw)[0] if len(raw) == 8 else struct.unpack(">I", raw)[0]
    return value
