"""The resolved placement of a configuration as `./rtmux check` prints it."""

from __future__ import annotations

from rtmux import paths
from rtmux.board import VIRTIO_MMIO_SIZE, hexa, intid_text, size_text
from rtmux.config.model import (
    CONSOLE_HOLD_SIZE,
    CONSOLE_STATUS_S,
    DMA_IOMMU,
    DMA_UNRESTRICTED,
    FILES_CHANNEL,
    KIND_LINUX,
    KIND_RTOS,
    LINUX_FAULT_BOOTARGS,
    LOG_CHANNEL,
    LOG_OFF,
    NET_CHANNEL,
    THREADS_CHANNEL,
    VBUS_STATS_PORT,
    AssignedDevice,
    Partition,
    SystemConfig,
    range_text,
)
from rtmux.config.payload import layout_for
from rtmux.config.place import free_ranges


def describe(config: SystemConfig) -> str:
    """The resolved placement, as `./rtmux check` prints it."""
    b = config.board
    lines = [
        f"{paths.display(config.path)}: valid",
        f"board {b.name}: {b.cpus} CPU{'s' if b.cpus > 1 else ''}, RAM {b.ram} ({size_text(b.ram.size)}); "
        f"QEMU {' '.join(b.qemu_args())}",
        f"hypervisor: RAM {config.hypervisor} ({size_text(config.hypervisor.size)})",
    ]
    for p in config.partitions:
        if p.shared:
            linux = [q.name for q in config.partitions if q is not p and set(q.cpus) & set(p.cpus)]
            lines.append(
                f"CPU {p.cpus[0]}: shared by {p.name!r} (first: runs whenever it has work) and "
                f"{', '.join(map(repr, linux))} (only while {p.name!r} is idle; its interrupts wait "
                f"meanwhile; reported after {p.starved_ms} ms without running)"
            )
    for p in config.partitions:
        cpus = ", ".join(str(c) for c in p.cpus)
        lines.append(
            f"partition {p.name!r}: kind {p.kind}, CPU{'s' if len(p.cpus) > 1 else ''} {cpus}, tag {p.tag!r}"
        )
        ram = p.ram
        if ram.ipa == ram.pa:
            lines.append(f"  RAM       {ram.pa_region} ({size_text(ram.size)}), IPA = PA")
        else:
            lines.append(f"  RAM       {ram.pa_region} ({size_text(ram.size)}), seen at IPA {ram.ipa_region}")
        for img in p.images:
            shown = (
                img.text
                if img.path.name in img.text or not img.exists
                else f"{img.text} = {paths.display(img.path)}"
            )
            lines.append(f"  {img.role:<9} {shown} ({img.status()})")
        layout = layout_for(p)
        if layout is not None:
            load = f"entry {hexa(layout.entry_ipa)}, image up to {hexa(layout.kernel_end)}"
            if layout.initrd_size:
                load += (
                    f", initramfs {hexa(layout.initrd_ipa)}..{hexa(layout.initrd_ipa + layout.initrd_size)}"
                )
            lines.append(f"  load      {load}, DTB {hexa(layout.dtb_ipa)} (IPAs)")
        if p.kind == KIND_LINUX:
            services = config.services.linux_bootargs() if config.services is not None else ""
            lines.append(
                f"  bootargs  {p.bootargs!r} + {LINUX_FAULT_BOOTARGS!r} (a panic reaches the fault policy)"
                + (f" + {services!r} ([services])" if services else "")
            )
        else:
            lines.append(f"  bootargs  {p.bootargs!r}")
        lines.append(f"  fault     {p.fault.text()}")
        ring = config.console_ring(p)
        if ring is not None:
            lines.append(
                f"  console   ring at IPA {hexa(ring.base)} ({size_text(ring.size)}): output without a trap, "
                "drained by the hypervisor on the Linux CPU"
            )
        lines += _vbus_lines(config, p)
        for dev in p.devices:
            where = ", ".join(range_text(r) for r in dev.mmio)
            what = f"board {dev.board_device}" if dev.board_device else ("direct" if dev.implicit else "mmio")
            irqs = ", ".join(intid_text(i) for i in dev.interrupts) or "no interrupts"
            lines.append(f"  device    {dev.name} ({what}): {where}, {irqs}{_dma_text(dev)}")
    for ch in config.channels:
        part = config.partition(ch.rtos)
        assert part.vbus is not None and config.vbus is not None
        lines.append(
            f"channel {ch.name!r}: /dev/virtio-ports/{ch.name} in {config.vbus.partition!r}"
            f", served by {ch.rtos!r} (channel {ch.index}): to_linux {size_text(ch.to_linux)} (ring at IPA "
            f"{hexa(part.vbus.base + ch.to_linux_off)}), to_rtos {size_text(ch.to_rtos)} (ring at IPA "
            f"{hexa(part.vbus.base + ch.to_rtos_off)})"
        )
    lines.append(_services_line(config))
    used = [config.hypervisor, *(p.ram.pa_region for p in config.partitions)]
    free = free_ranges(b.ram, used)
    lines.append("free RAM: " + (", ".join(f"{r} ({size_text(r.size)})" for r in free) or "none"))
    c = config.console
    keys = ", ".join(f"{i + 1} {p.name}" for i, p in enumerate(config.partitions))
    lines.append(
        f"console: tags {'on' if c.tags else 'off'}, input to {c.focus!r} at boot; "
        f"{_key_name(c.escape)} then a number switches ({keys}), {_key_name(c.escape)} twice sends it"
    )
    held = (
        f"the others' held (the newest {size_text(CONSOLE_HOLD_SIZE)} of each, replayed when it gets the "
        f"focus, saying how many older lines were dropped; a status line every {CONSOLE_STATUS_S} s of "
        "guest time shows its latest line when that changed)"
    )
    views = {
        "auto": f"on a terminal only the focused partition's lines, {held}; every line otherwise",
        "all": "every partition's lines as they come",
        "focus": f"only the focused partition's lines, {held}",
    }
    lines.append(f"console view: {c.view}: {views[c.view]}")
    lines += [f"note: {n}" for n in config.notes]
    return "\n".join(lines)


def _vbus_lines(config: SystemConfig, p: Partition) -> list[str]:
    """Where the V-Bus region (an rtos partition) or the V-Bus device (the Linux partition) lands."""
    if p.vbus is not None:
        names = ", ".join(c.name for c in config.channels_of(p))
        pa = p.ram.pa + p.vbus.base - p.ram.ipa
        return [
            f"  vbus      region at IPA {range_text(p.vbus)} ({size_text(p.vbus.size)}, PA {hexa(pa)}): "
            f"channels {names}"
        ]
    dev = config.vbus
    if dev is not None and dev.partition == p.name:
        names = ", ".join(c.name for c in config.channels)
        return [
            f"  vbus      virtio-mmio console at IPA {hexa(dev.mmio.base)} (0x{VIRTIO_MMIO_SIZE:x} bytes of "
            f"a {size_text(dev.mmio.size)} page, emulated), {intid_text(dev.intid)}: ports {names}, and "
            f"{VBUS_STATS_PORT} (the counters)"
        ]
    return []


def _services_line(config: SystemConfig) -> str:
    """What Linux offers the rtos's threads ([services]), and over which channels."""
    services = config.services
    if services is None:
        return "services: none (no [services])"
    offered = []
    if services.dirs:
        dirs = ", ".join(f"{d.path} ({'read-only' if d.read_only else 'read-write'})" for d in services.dirs)
        offered.append(
            f"files {dirs}, served by diod (9P2000.L) on channel {FILES_CHANNEL}, seen by the rtos under "
            "/linux"
        )
    if services.log_file is not None:
        offered.append(f"log appended to {services.log_file} by Linux, from channel {LOG_CHANNEL}")
    elif services.log != LOG_OFF:
        offered.append(f"log to Linux's syslog (tag rtos), from channel {LOG_CHANNEL}")
    if services.network:
        offered.append(f"sockets (TCP, UDP) through Linux's network by rtmux-netd, on channel {NET_CHANNEL}")
    if services.threads:
        offered.append(f"the rtos's threads seen from Linux (rtmux-top), on channel {THREADS_CHANNEL}")
    if not offered:
        return 'services: none ([services] exports no directory, log is "off", no network, no threads)'
    rtos = next(p.name for p in config.partitions if p.kind == KIND_RTOS)
    return f"services for {rtos!r}: " + "; ".join(offered)


def _dma_text(dev: AssignedDevice) -> str:
    if dev.dma == DMA_IOMMU and dev.streams is not None:
        last = dev.streams.end - 1
        return (
            f"; DMA through the IOMMU, streams {dev.streams.base:#06x}..{last:#06x}: this partition's RAM "
            "only"
        )
    if dev.dma == DMA_UNRESTRICTED:
        return "; DMA unrestricted: all RAM"
    return ""


def _key_name(escape: str) -> str:
    return "Ctrl-" + escape[-1].upper()
