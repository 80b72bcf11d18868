"""One [[partition]] of a configuration: its kind, CPUs, memory, images, boot arguments, console tag
and devices, each checked on its own (the checks across partitions are in rtmux.config.place)."""

from __future__ import annotations

import difflib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtmux import board as boards
from rtmux import paths
from rtmux.board import Board, Device, Region, hexa, intid_text, size_text
from rtmux.config.fields import Fields, show
from rtmux.config.images import (
    DEBIAN_KERNEL_PREFIX,
    LINUX_FETCH_COMMAND,
    KernelLookup,
    build_hint,
    build_products,
    example_image,
    rel,
)
from rtmux.config.model import (
    DEFAULT_FAULT,
    DMA_IOMMU,
    DMA_MODES,
    DMA_NONE,
    DMA_UNRESTRICTED,
    FAULT_POLICIES,
    FAULT_RESTART,
    KIND_LINUX,
    KIND_RTOS,
    KINDS,
    LINUX_FAULT_BOOTARG_KEYS,
    LINUX_FAULT_BOOTARGS,
    MAX_DEVICES,
    MAX_IRQS,
    MAX_NAME,
    MAX_RESTART_WINDOW_S,
    MAX_RESTARTS,
    MAX_RTOS_CPUS,
    MAX_STREAMS,
    NAME_RE,
    RAM_ALIGN,
    SERVICES_BOOTARG_KEYS,
    TAG_RE,
    AssignedDevice,
    FaultPolicy,
    Image,
    Mapping,
    default_linux_bootargs,
    range_text,
)
from rtmux.config.payload import ARM64_HEADER, read_arm64_header

PARTITION_KEYS = (
    "name",
    "kind",
    "cpus",
    "memory",
    "image",
    "kernel",
    "initramfs",
    "bootargs",
    "console",
    "fault",
    "device",
    "shared",
    "starved_report",
)
# shared-core mode (an rtos partition's keys): the default and the range of starved_report, in ms
STARVED_REPORT_DEFAULT_MS = 1000
STARVED_REPORT_RANGE_MS = (1, 60_000)
_DURATION_RE = re.compile(r"^\s*(\d+)\s*(ms|s)\s*$")
KIND_KEYS = {KIND_RTOS: ("image",), KIND_LINUX: ("kernel", "initramfs")}
# The rtos kernel's own interrupt priorities (rtos/irq.h: RT_IRQ_PRIO_MIN..255).
RTOS_IRQ_PRIO_KEYS = ("irq_prio_timer", "irq_prio_vbus")
RTOS_IRQ_PRIO_RANGE = (32, 255)
MEMORY_KEYS = ("size", "base")
PART_CONSOLE_KEYS = ("tag",)
FAULT_KEYS = ("policy", "max_restarts", "window_s")
DEVICE_KEYS = ("name", "board", "mmio", "interrupts", "dma", "qemu")
MMIO_KEYS = ("base", "size")


@dataclass
class PartDraft:
    """A partition while it is being checked; `ok_*` say which parts parsed well enough to cross-check."""

    index: int
    label: str  # "partition 'linux'" or "partition #2"
    name: str | None = None
    kind: str | None = None
    cpus: list[int] = field(default_factory=list)
    size: int | None = None
    base: int | None = None
    tag: str | None = None
    bootargs: str = ""
    images: list[Image] = field(default_factory=list)
    devices: list[AssignedDevice] = field(default_factory=list)
    ram: Mapping | None = None
    fault: FaultPolicy | None = None  # None: the kind's default
    shared: bool = False
    starved_ms: int = 0


class PartitionReader(Fields):
    """Reads and checks one partition at a time."""

    def __init__(self, where: str, path: Path, find_kernel: KernelLookup | None) -> None:
        super().__init__(where, path)
        self.find_kernel = find_kernel

    def load_partition(self, index: int, table: dict[str, Any], board: Board) -> PartDraft:
        d = PartDraft(index, f"partition #{index + 1}")
        name = table.get("name")
        if name is None:
            self.error(d.label, "name is missing")
        elif not isinstance(name, str):
            self.wrong_type(d.label, "name", name, "a string")
        elif not NAME_RE.match(name) or len(name) > MAX_NAME:
            self.error(
                d.label,
                f"name {name!r} must be 1..{MAX_NAME} characters: a lower-case letter, then letters, "
                "digits, - or _",
            )
        else:
            d.name = name
            d.label = f"partition {name!r}"
        ctx = d.label
        kind = table.get("kind")
        if kind is None:
            self.error(ctx, f"kind is missing (one of {', '.join(KINDS)})")
        elif not isinstance(kind, str):
            self.wrong_type(ctx, "kind", kind, "a string")
        elif kind not in KINDS:
            close = difflib.get_close_matches(kind, KINDS, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"one of {', '.join(KINDS)}"
            self.error(ctx, f"kind {kind!r} is not a partition kind ({hint})")
        else:
            d.kind = kind
        known = [k for k in PARTITION_KEYS if d.kind is None or k not in _other_kind_keys(d.kind)]
        for key in table:
            if key not in PARTITION_KEYS:
                self.check_keys(ctx, {key: None}, known)
            elif d.kind is not None and key in _other_kind_keys(d.kind):
                uses = ", ".join(KIND_KEYS[d.kind])
                self.error(ctx, f"key '{key}' does not apply to kind '{d.kind}' (it boots from: {uses})")
        self.load_cpus(d, table, board)
        self.load_memory(d, table)
        self.load_images(d, table)
        bootargs = table.get("bootargs")
        if bootargs is not None and not isinstance(bootargs, str):
            self.wrong_type(ctx, "bootargs", bootargs, "a string")
        elif bootargs is not None:
            d.bootargs = bootargs
        elif d.kind == KIND_LINUX:
            d.bootargs = default_linux_bootargs(board)
        if d.kind == KIND_LINUX:
            for word in d.bootargs.split():
                key = word.split("=", 1)[0]
                if key in LINUX_FAULT_BOOTARG_KEYS:
                    self.error(
                        ctx,
                        f"bootargs: {word!r} would change how a panic reaches the hypervisor (rtmux appends "
                        f"'{LINUX_FAULT_BOOTARGS}'); choose what a panic does with fault.policy",
                    )
                elif key in SERVICES_BOOTARG_KEYS:
                    self.error(
                        ctx,
                        f"bootargs: {word!r} is rtmux's to write: it appends {key}= from [services] "
                        "(docs/configuration.md); configure the services there",
                    )
        if d.kind == KIND_RTOS:
            self.check_rtos_irq_prios(d)
        self.load_fault(d, table)
        self.load_sharing(d, table)
        console = self.get_table(ctx, table, "console") or {}
        self.check_keys(ctx, console, PART_CONSOLE_KEYS, prefix="console.")
        tag = self.get_str(ctx, console, "tag", "console.tag")
        if tag is not None and (not TAG_RE.match(tag) or len(tag) > MAX_NAME):
            self.error(
                ctx, f"console.tag {tag!r} must be 1..{MAX_NAME} printable ASCII characters without spaces"
            )
        elif tag is not None:
            d.tag = tag
        self.load_devices(d, table, board)
        return d

    def check_rtos_irq_prios(self, d: PartDraft) -> None:
        """The kernel's interrupt priorities in an rtos partition's bootargs (rtos/irq.h): the rtos would
        report a bad one and keep its default; the configuration refuses it instead."""
        for word in d.bootargs.split():
            key, _, value = word.partition("=")
            if key not in RTOS_IRQ_PRIO_KEYS:
                continue
            low, high = RTOS_IRQ_PRIO_RANGE
            if not value.isdigit() or not low <= int(value) <= high:
                self.error(
                    d.label,
                    f"bootargs: {word!r} is not an interrupt priority of the rtos ({low}..{high}, higher is "
                    "more urgent: rtos/irq.h)",
                )

    def load_sharing(self, d: PartDraft, table: dict[str, Any]) -> None:
        """`shared` and `starved_report` (an rtos partition's); a shared rtos gets `timer=phys`."""
        ctx = d.label
        shared = table.get("shared", False)
        if not isinstance(shared, bool):
            self.wrong_type(ctx, "shared", shared, "true or false")
            return
        if shared and d.kind == KIND_LINUX:
            self.error(
                ctx,
                "shared = true belongs to the rtos partition that shares its CPU (a Linux partition just "
                "lists the CPU in cpus)",
            )
            return
        report = table.get("starved_report")
        if report is not None and not shared:
            self.error(ctx, "starved_report applies only with shared = true")
            return
        if not shared:
            return
        d.shared = True
        d.starved_ms = STARVED_REPORT_DEFAULT_MS
        if report is not None:
            m = _DURATION_RE.match(report) if isinstance(report, str) else None
            low, high = STARVED_REPORT_RANGE_MS
            ms = (int(m[1]) * (1000 if m[2] == "s" else 1)) if m else None
            if ms is None:
                self.wrong_type(ctx, "starved_report", report, 'a duration such as "500ms" or "2s"')
            elif not low <= ms <= high:
                self.error(ctx, f"starved_report {report!r} is outside {low} ms..{high // 1000} s")
            else:
                d.starved_ms = ms
        # Linux owns the EL1 virtual timer on a CPU it shares: the rtos runs its kernel on the physical one.
        timers = [w for w in d.bootargs.split() if w.startswith("timer=")]
        if not timers:
            d.bootargs = f"{d.bootargs} timer=phys".strip()
        elif timers != ["timer=phys"]:
            self.error(
                ctx,
                f"bootargs: {' '.join(timers)} on a shared CPU: the EL1 virtual timer is Linux's there, so "
                "the rtos needs timer=phys (leave timer= out and rtmux adds it)",
            )

    def load_fault(self, d: PartDraft, table: dict[str, Any]) -> None:
        ctx = d.label
        fault = self.get_table(ctx, table, "fault")
        if fault is None:
            return
        self.check_keys(ctx, fault, FAULT_KEYS, prefix="fault.")
        default = DEFAULT_FAULT.get(d.kind or "", FaultPolicy(FAULT_RESTART, 3, 60))
        policy = self.get_str(ctx, fault, "policy", "fault.policy")
        if policy is None and "policy" not in fault:
            self.error(ctx, f"fault.policy is missing (one of {', '.join(FAULT_POLICIES)})")
            return
        if policy is None:
            return
        if policy not in FAULT_POLICIES:
            self.error(
                ctx, f"fault.policy {policy!r} is not a fault policy (one of {', '.join(FAULT_POLICIES)})"
            )
            return
        if policy != FAULT_RESTART:
            for key in ("max_restarts", "window_s"):
                if key in fault:
                    self.error(ctx, f'fault.{key} applies only to fault.policy = "restart"')
            d.fault = FaultPolicy(policy)
            return
        limits = {
            "max_restarts": (1, MAX_RESTARTS, default.max_restarts or 3),
            "window_s": (1, MAX_RESTART_WINDOW_S, default.window_s or 60),
        }
        values: dict[str, int] = {}
        for key, (low, high, fallback) in limits.items():
            value = fault.get(key, fallback)
            if isinstance(value, bool) or not isinstance(value, int):
                self.wrong_type(ctx, f"fault.{key}", value, "an integer")
            elif not low <= value <= high:
                self.error(ctx, f"fault.{key} {value} is outside {low}..{high}")
            else:
                values[key] = value
        if len(values) == len(limits):
            d.fault = FaultPolicy(FAULT_RESTART, values["max_restarts"], values["window_s"])

    def load_cpus(self, d: PartDraft, table: dict[str, Any], board: Board) -> None:
        ctx = d.label
        value = table.get("cpus")
        if value is None:
            self.error(ctx, "cpus is missing (e.g. cpus = [1])")
            return
        items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(items, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) for c in items
        ):
            self.wrong_type(ctx, "cpus", value, "an integer or an array of integers")
            return
        if not items:
            self.error(ctx, "cpus is empty: a partition needs at least one CPU")
        for cpu in items:
            if not 0 <= cpu < board.cpus:
                self.error(
                    ctx, f"cpus: CPU {cpu} is beyond the board ({board.name} has {_cpu_range(board.cpus)})"
                )
            elif cpu in d.cpus:
                self.error(ctx, f"cpus: CPU {cpu} is listed twice")
            else:
                d.cpus.append(cpu)
        if d.kind == KIND_RTOS and len(d.cpus) > MAX_RTOS_CPUS:
            self.error(
                ctx,
                f"cpus: {len(d.cpus)} CPUs ({', '.join(map(str, d.cpus))}) but the rtos runs on "
                f"{MAX_RTOS_CPUS} CPU; give an rtos partition one CPU (several CPUs suit a Linux partition)",
            )

    def load_memory(self, d: PartDraft, table: dict[str, Any]) -> None:
        ctx = d.label
        value = table.get("memory")
        if value is None:
            self.error(ctx, 'memory is missing (e.g. memory = "16M" or memory = { size = "16M" })')
            return
        if isinstance(value, dict):
            self.check_keys(ctx, value, MEMORY_KEYS, prefix="memory.")
            size_name = "memory.size"
            size_value = value.get("size")
            if size_value is None:
                self.error(ctx, "memory.size is missing")
            if "base" in value:
                base = self.get_address(ctx, value["base"], "memory.base")
                if base is not None and base % RAM_ALIGN:
                    self.error(ctx, f"memory.base {hexa(base)} is not 2 MiB aligned")
                else:
                    d.base = base
        else:
            size_name, size_value = "memory", value
        if size_value is None:
            return
        size = self.get_size(ctx, size_value, size_name)
        if size is None:
            return
        if size == 0 or size % RAM_ALIGN:
            self.error(
                ctx,
                f"{size_name} {show(size_value)} ({size_text(size) if size else '0'}) "
                "is not a non-zero multiple of 2 MiB",
            )
            return
        d.size = size

    def load_images(self, d: PartDraft, table: dict[str, Any]) -> None:
        if d.kind is None:
            return
        required = {KIND_RTOS: ("image",), KIND_LINUX: ("kernel",)}[d.kind]
        for role in KIND_KEYS[d.kind]:
            text = self.get_str(d.label, table, role)
            if text is None:
                if role in required and role not in table:
                    self.error(d.label, f"{role} is missing (the file to boot, e.g. {example_image(role)})")
                continue
            if not text.strip():
                self.error(d.label, f"{role} is empty")
                continue
            if role == "kernel" and text.startswith(DEBIAN_KERNEL_PREFIX):
                image = self.debian_kernel(d, text)
                if image is not None:
                    d.images.append(image)
                continue
            path = Path(text)
            path = path if path.is_absolute() else paths.REPO_ROOT / path
            rel_path = rel(path)
            products = build_products(role)
            build = products.get(rel_path)
            exists = path.is_file()
            if not exists and build is None:
                hint = build_hint(rel_path, products, role)
                self.error(d.label, f"{role} {text!r} does not exist and no build step produces it ({hint})")
                continue
            if exists and role in ("image", "kernel") and not self.check_arm64(d, role, text, path):
                continue
            d.images.append(Image(role, text, path, exists, build))
            if not exists:
                self.notes.append(f"{d.label}: {role} {text} is not built yet; `{build}` builds it")

    def debian_kernel(self, d: PartDraft, text: str) -> Image | None:
        flavour = text[len(DEBIAN_KERNEL_PREFIX) :]
        flavours = paths.LINUX_FLAVOURS
        if flavour not in flavours:
            known = ", ".join(DEBIAN_KERNEL_PREFIX + f for f in flavours)
            self.error(d.label, f"kernel {text!r} is not a Debian kernel flavour (known: {known})")
            return None
        path = self.find_kernel(flavour) if self.find_kernel is not None else None
        if path is None:
            self.notes.append(
                f"{d.label}: kernel {text} is not fetched yet; `{LINUX_FETCH_COMMAND}` fetches it"
            )
            return Image("kernel", text, paths.DEBIAN_CACHE / f"kernel-{flavour}", False, LINUX_FETCH_COMMAND)
        if not self.check_arm64(d, "kernel", text, path):
            return None
        return Image("kernel", text, path, True, LINUX_FETCH_COMMAND)

    def check_arm64(self, d: PartDraft, role: str, text: str, path: Path) -> bool:
        with path.open("rb") as f:
            if read_arm64_header(f.read(ARM64_HEADER.size)) is None:
                self.error(
                    d.label, f"{role} {text!r} is not an arm64 Image (no 'ARM\\x64' magic at offset 0x38)"
                )
                return False
        return True

    def load_devices(self, d: PartDraft, table: dict[str, Any], board: Board) -> None:
        raw = table.get("device", [])
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            self.wrong_type(d.label, "device", raw, "an array of tables ([[partition.device]])")
            return
        for i, dev in enumerate(raw):
            parsed = self.load_device(d, i, dev, board)
            if parsed is not None:
                if any(x.name == parsed.name for x in d.devices):
                    self.error(d.label, f"device name {parsed.name!r} is used twice")
                d.devices.append(parsed)
        if d.kind == KIND_RTOS and board.gic_version == 3:
            # The rtos takes its interrupts directly: its CPUs' redistributor frames are mapped into it
            # (on a GICv2 its CPU interface, which the hypervisor maps into every partition).
            for cpu in sorted(d.cpus):
                d.devices.append(
                    AssignedDevice(f"gicr.cpu{cpu}", None, (board.gicr_frame(cpu),), (), implicit=True)
                )
        if len(d.devices) > MAX_DEVICES:
            self.error(
                d.label,
                f"{len(d.devices)} devices (with the implicit GIC redistributor frames); "
                f"at most {MAX_DEVICES}",
            )
        irqs = {i for dev in d.devices for i in dev.interrupts}
        if len(irqs) > MAX_IRQS:
            self.error(d.label, f"{len(irqs)} interrupts; at most {MAX_IRQS} per partition")
        streams = [dev.streams for dev in d.devices if dev.dma == DMA_IOMMU and dev.streams is not None]
        if len(streams) > MAX_STREAMS:
            self.error(
                d.label, f"{len(streams)} devices behind the IOMMU; at most {MAX_STREAMS} per partition"
            )

    def load_device(self, d: PartDraft, i: int, table: dict[str, Any], board: Board) -> AssignedDevice | None:
        name = table.get("name")
        label = table.get("board")
        shown = name if isinstance(name, str) else label if isinstance(label, str) else None
        ctx = f"{d.label}: device {shown!r}" if shown is not None else f"{d.label}: device #{i + 1}"
        self.check_keys(ctx, table, DEVICE_KEYS)
        ok = True
        if name is not None and not isinstance(name, str):
            self.wrong_type(ctx, "name", name, "a string")
            ok = False
        bdev: Device | None = None
        if label is not None:
            if not isinstance(label, str):
                self.wrong_type(ctx, "board", label, "a string")
                ok = False
            else:
                bdev = board.device(label)
                if bdev is None:
                    close = difflib.get_close_matches(label, [x.name for x in board.all_devices()], n=1)
                    if boards.virtio_index(label) is not None:
                        hint = f"it has transports virtio-mmio.0..virtio-mmio.{boards.VIRTIO_MMIO_COUNT - 1}"
                    elif close:
                        hint = f"did you mean '{close[0]}'?"
                    else:
                        hint = "assignable: " + _assignable_text(board)
                    self.error(ctx, f"board {label!r} is not a device of {board.name} ({hint})")
                    ok = False
                elif not bdev.assignable:
                    self.error(ctx, f"board {label!r} cannot be assigned: {bdev.why_not}")
                    return None
        mmio: list[Region] = []
        if "mmio" in table:
            raw = table["mmio"]
            items = [raw] if isinstance(raw, dict) else raw
            if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
                self.wrong_type(ctx, "mmio", raw, "a table { base, size } or an array of them")
                ok = False
                items = []
            for item in items:
                self.check_keys(ctx, item, MMIO_KEYS, prefix="mmio.")
                base = self.get_address(ctx, item.get("base"), "mmio.base") if "base" in item else None
                size = self.get_size(ctx, item.get("size"), "mmio.size") if "size" in item else None
                if "base" not in item or "size" not in item:
                    self.error(ctx, "mmio needs both base and size")
                if base is None or size is None:
                    ok = False
                    continue
                if size == 0:
                    self.error(ctx, "mmio.size is 0")
                    ok = False
                    continue
                region = Region(base, size)
                if not self.check_mmio(ctx, region, bdev, board):
                    ok = False
                mmio.append(region)
        elif bdev is not None:
            mmio = list(bdev.regions)
        elif label is None:
            self.error(ctx, "needs board (a device of the board, e.g. 'virtio-mmio.31') or mmio")
            ok = False
        irqs: list[int] = []
        if "interrupts" in table:
            raw = table["interrupts"]
            if not isinstance(raw, list) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in raw
            ):
                self.wrong_type(ctx, "interrupts", raw, "an array of integers (GIC INTIDs; SPI n is 32 + n)")
                ok = False
            else:
                irqs = list(raw)
        elif bdev is not None:
            irqs = list(bdev.interrupts)
        owned = {bdev.name} if bdev is not None else set()
        for region in mmio:
            found = board.device_at(region)
            if found is not None:
                owned.add(found.name)
        # Bad interrupts are reported; the device keeps those that are SPIs so that the checks across
        # partitions see them too.
        seen: list[int] = []
        for intid in irqs:
            if intid in seen:
                self.error(ctx, f"interrupts: {intid_text(intid)} is listed twice")
                continue
            if not boards.SPI_BASE <= intid < boards.SPI_BASE + board.spi_count:
                last = boards.SPI_BASE + board.spi_count - 1
                self.error(
                    ctx,
                    f"interrupts: {intid_text(intid)} is not an SPI of {board.name}: only INTIDs "
                    f"{boards.SPI_BASE}..{last} can be assigned (SGIs and PPIs belong to each CPU)",
                )
                continue
            seen.append(intid)
            holder = board.device_of_interrupt(intid)
            if holder is not None and not holder.assignable:
                self.error(
                    ctx,
                    f"interrupts: {intid_text(intid)} belongs to {holder.name}, which cannot be assigned: "
                    f"{holder.why_not}",
                )
            elif holder is not None and holder.name not in owned:
                self.error(
                    ctx,
                    f"interrupts: {intid_text(intid)} belongs to {holder.name}, "
                    "which this device does not cover",
                )
        qemu_args: list[str] = []
        qtext = self.get_str(ctx, table, "qemu")
        if qtext is not None:
            try:
                qemu_args = shlex.split(qtext)
            except ValueError as exc:
                self.error(ctx, f"qemu {qtext!r} cannot be split into arguments: {exc}")
                ok = False
            self.check_qemu_bus(ctx, qemu_args, bdev)
        dma = self.load_dma(ctx, table, owned, board)
        if dma is None:
            return None
        mode, streams = dma
        if mode == DMA_IOMMU:
            self.check_qemu_iommu(ctx, qemu_args)
        if mode == DMA_UNRESTRICTED:
            self.notes.append(
                f'{ctx}: dma = "unrestricted": the device can read and write all RAM, the other '
                "partitions' and the hypervisor's included"
            )
        if not ok:
            return None
        dev_name = name if isinstance(name, str) else (label if isinstance(label, str) else f"dev{i}")
        return AssignedDevice(
            dev_name,
            bdev.name if bdev else None,
            tuple(mmio),
            tuple(seen),
            tuple(qemu_args),
            dma=mode,
            streams=streams,
        )

    def load_dma(
        self, ctx: str, table: dict[str, Any], owned: set[str], board: Board
    ) -> tuple[str, Region | None] | None:
        """The device's `dma` mode and, for "iommu", its stream IDs; None after an error.

        A device that can master DMA must say how its DMA is isolated: stage 2 confines the CPU, not
        the device. "iommu" needs a device behind the board's IOMMU; "unrestricted" is the explicit
        acceptance that it can reach all RAM (the honest setting on a board without an IOMMU)."""
        masters = [dev for n in sorted(owned) if (dev := board.device(n)) is not None and dev.dma]
        what = masters[0].name if masters else (min(owned) if owned else "this device")
        behind = [dev.name for dev in board.devices if dev.streams is not None]
        streams = next((dev.streams for dev in masters if dev.streams is not None), None)
        value = table.get("dma")
        if value is None:
            if not masters:
                return DMA_NONE, None
            if streams is not None:
                self.error(
                    ctx,
                    f"dma is missing: {what} can master DMA, which stage 2 does not confine; write dma = "
                    f'"{DMA_IOMMU}" to confine it to this partition\'s RAM through the IOMMU, or dma = '
                    f'"{DMA_UNRESTRICTED}" to accept that it can read and write all RAM',
                )
            else:
                self.error(
                    ctx,
                    f"dma is missing: {what} can master DMA and is not behind an IOMMU on {board.name} "
                    f'(only {", ".join(behind) or "nothing"} is); write dma = "{DMA_UNRESTRICTED}" to '
                    "accept that it can read and write all RAM (the other partitions' and the "
                    "hypervisor's included), or use a device behind the IOMMU with dma = "
                    f'"{DMA_IOMMU}"',
                )
            return None
        if not isinstance(value, str):
            self.wrong_type(ctx, "dma", value, "a string")
            return None
        if value not in DMA_MODES:
            close = difflib.get_close_matches(value, DMA_MODES, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"one of {', '.join(DMA_MODES)}"
            self.error(ctx, f"dma {value!r} is not a DMA isolation mode ({hint})")
            return None
        if value == DMA_NONE and masters:
            self.error(
                ctx,
                f"dma 'none': {what} can master DMA; write dma = \"{DMA_IOMMU}\" or "
                f'"{DMA_UNRESTRICTED}" (docs/configuration.md)',
            )
            return None
        if value != DMA_NONE and not masters:
            self.error(ctx, f'dma {value!r}: {what} cannot master DMA; leave dma out (or write "none")')
            return None
        if value == DMA_IOMMU and streams is None:
            self.error(
                ctx,
                f"dma 'iommu': {what} is not behind an IOMMU on {board.name} (only "
                f'{", ".join(behind) or "nothing"} is); write dma = "{DMA_UNRESTRICTED}" to accept that '
                "it can read and write all RAM, or use a device behind the IOMMU",
            )
            return None
        return value, streams if value == DMA_IOMMU else None

    def check_qemu_iommu(self, ctx: str, args: list[str]) -> None:
        """QEMU's virtio devices bypass the IOMMU unless they are told to use it (iommu_platform=on,
        which QEMU allows only on a modern-only device: disable-legacy=on)."""
        for i, arg in enumerate(args[:-1]):
            if arg not in ("-device", "--device"):
                continue
            spec = args[i + 1].split(",")
            driver = spec[0]
            if not (driver.startswith("virtio-") and driver.endswith("-pci")):
                continue
            opts = dict(o.split("=", 1) for o in spec[1:] if "=" in o)
            missing = [
                f"{key}=on" for key in ("disable-legacy", "iommu_platform") if opts.get(key) not in _QEMU_ON
            ]
            if missing:
                self.error(
                    ctx,
                    f'qemu: -device {driver} needs {" and ".join(missing)} with dma = "{DMA_IOMMU}": '
                    "without iommu_platform QEMU's virtio devices write to physical addresses directly, "
                    "past the IOMMU (and QEMU allows it only on a modern-only device)",
                )

    def check_mmio(self, ctx: str, region: Region, bdev: Device | None, board: Board) -> bool:
        if bdev is not None:
            if not any(r.contains(region) for r in bdev.regions):
                ranges = ", ".join(range_text(r) for r in bdev.regions)
                self.error(
                    ctx, f"mmio {range_text(region)} is not within board device '{bdev.name}' ({ranges})"
                )
                return False
            return True
        holders = [dev for dev in board.all_devices() if any(r.overlaps(region) for r in dev.regions)]
        if not holders:
            self.error(
                ctx,
                f"mmio {range_text(region)} is not a device of {board.name} "
                f"({_assignable_text(board)} can be assigned)",
            )
            return False
        if len(holders) > 1:
            names = ", ".join(h.name for h in holders)
            self.error(
                ctx, f"mmio {range_text(region)} spans several devices ({names}); give one range per device"
            )
            return False
        dev = holders[0]
        if not dev.assignable:
            self.error(
                ctx, f"mmio {range_text(region)} is {dev.name}, which cannot be assigned: {dev.why_not}"
            )
            return False
        if not any(r.contains(region) for r in dev.regions):
            ranges = ", ".join(range_text(r) for r in dev.regions)
            self.error(ctx, f"mmio {range_text(region)} extends beyond {dev.name} ({ranges})")
            return False
        return True

    def check_qemu_bus(self, ctx: str, args: list[str], bdev: Device | None) -> None:
        index = boards.virtio_index(bdev.name) if bdev is not None else None
        for i, arg in enumerate(args[:-1]):
            if arg not in ("-device", "--device"):
                continue
            spec = args[i + 1]
            driver = spec.split(",", 1)[0]
            if not (driver.startswith("virtio-") and driver.endswith("-device")):
                continue
            bus = re.search(r"(?:^|,)bus=virtio-mmio-bus\.(\d+)(?:,|$)", spec)
            if index is None:
                continue
            if bus is None:
                self.error(
                    ctx,
                    f"qemu: -device {driver} needs bus=virtio-mmio-bus.{index}; without it QEMU puts "
                    "the device on the highest free transport, whichever that is",
                )
            elif int(bus.group(1)) != index:
                self.error(
                    ctx,
                    f"qemu: -device {driver} is on virtio-mmio-bus.{bus.group(1)}, "
                    f"but the device is {bdev.name if bdev else ''}",
                )


_QEMU_ON = ("on", "true", "yes", "y")


def _other_kind_keys(kind: str) -> tuple[str, ...]:
    return tuple(
        k for other, keys in KIND_KEYS.items() if other != kind for k in keys if k not in KIND_KEYS[kind]
    )


def _assignable_text(board: Board) -> str:
    names = board.assignable_names()
    virtio = [n for n in names if boards.virtio_index(n) is not None]
    others = [n for n in names if boards.virtio_index(n) is None]
    parts = [f"{virtio[0]}..{virtio[-1]}"] if virtio else []
    return ", ".join(parts + others)


def _cpu_range(cpus: int) -> str:
    """The CPUs a board has, as an error message names them: `CPUs 0..3`, `only CPU 0`."""
    return f"CPUs 0..{cpus - 1}" if cpus > 1 else "only CPU 0"
