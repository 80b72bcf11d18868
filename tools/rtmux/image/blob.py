"""The configuration blob: the resolved system configuration in the binary form the hypervisor reads.

Its layout is defined in C, in hyp/include/hyp/blob.h (the structs the hypervisor reads, with every offset
asserted); the struct formats below write the same bytes. tests/unit/python/test_hyp_blob.py runs the
hypervisor's own parser on what `pack` makes, and test_blob.py pins each offset here.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from rtmux import config as cfg
from rtmux.board import PAGE_SIZE, Region

MAGIC = b"RMXC"
VERSION_MAJOR = 2
VERSION_MINOR = 4
KIND_CODES = {cfg.KIND_RTOS: 1, cfg.KIND_LINUX: 2}
FLAG_CONSOLE_TAGS = 1 << 0
FLAG_FIXED_SEEDS = 1 << 1  # since 2.1, measurement only: the hypervisor keeps the DTB's seeds as written
FLAG_BOOT_REPORT = 1 << 2  # since 2.1: el2-entries report at the hypervisor's first console tick
FLAG_CONSOLE_VIEW = 1 << 3  # since 2.1: the focus view (hyp/core/conmux.c)
PART_FLAG_SHARED = 1 << 0  # since 2.3, an rtos partition's: its CPU is shared with a Linux partition
NAME_SIZE = 16
IMAGE_SLOTS = 3  # kernel, initramfs, DTB
IMAGE_KERNEL, IMAGE_INITRD, IMAGE_DTB = range(IMAGE_SLOTS)

HEADER = struct.Struct("<4sHHIIIIIIIIQQQQBBHI16sIII20x")  # ... board, channel count/size/offset (2.2)
PART_FIXED = struct.Struct("<16s16sIIQQQQQQIIII")
IMAGE = struct.Struct("<QQQ")
DEVICE = struct.Struct("<QQQ")
IRQS = struct.Struct(f"<{cfg.MAX_IRQS}I")
SEED_SLOTS = 2
SEED = struct.Struct("<II")
STREAM = struct.Struct("<II")
FAULT = struct.Struct("<BBHI")  # policy, max_restarts, reserved, window_s (since 2.1)
FAULT_CODES = {cfg.FAULT_STOP: 0, cfg.FAULT_RESTART: 1}
CONRING = struct.Struct("<QII")  # ipa, size, reserved (since 2.1)
VBUS = struct.Struct("<QII")  # ipa, size, intid (since 2.2)
PART_RESERVED = 8
# A V-Bus channel (since 2.2): name, rtos partition index, chan_off, to_linux off/size, to_rtos off/size.
CHANNEL = struct.Struct(f"<{cfg.VBUS_NAME_SIZE}sIIIIII8x")
PART_SIZE = (
    PART_FIXED.size
    + IMAGE_SLOTS * IMAGE.size
    + cfg.MAX_DEVICES * DEVICE.size
    + IRQS.size
    + SEED_SLOTS * SEED.size
    + cfg.MAX_STREAMS * STREAM.size
    + FAULT.size
    + CONRING.size
    + VBUS.size
    + PART_RESERVED
)
CRC_OFFSET = 16

assert HEADER.size == 128 and PART_FIXED.size == 104 and PART_SIZE == 576 and CHANNEL.size == 64


class BlobError(ValueError):
    """Bytes that are not a configuration blob of a revision we read."""


@dataclass(frozen=True)
class ImageSlot:
    offset: int = 0  # bytes from the start of the bundle
    size: int = 0  # 0: absent
    load_ipa: int = 0


@dataclass(frozen=True)
class SeedRange:
    """Random bytes at `offset` in the partition's DTB image, changed by the hypervisor at each start."""

    offset: int
    size: int


@dataclass(frozen=True)
class StreamRange:
    """IOMMU stream IDs [first, first + count) whose DMA reaches the partition's RAM only."""

    first: int
    count: int


@dataclass(frozen=True)
class FaultRecord:
    """The partition's fault policy: FAULT_CODES value, and its restart rate for restart."""

    policy: int = 0
    max_restarts: int = 0
    window_s: int = 0


@dataclass(frozen=True)
class ConringRecord:
    """The partition's console ring (lib/conring.h): its header's IPA and its data bytes; size 0: none."""

    ipa: int = 0
    size: int = 0


@dataclass(frozen=True)
class VbusRecord:
    """The partition's V-Bus place: an rtos partition's region (ipa, size; intid 0), or the Linux
    partition's device (its register page: ipa, size = one page; intid). size 0: none."""

    ipa: int = 0
    size: int = 0
    intid: int = 0


@dataclass(frozen=True)
class ChannelRecord:
    """One V-Bus channel: offsets from the start of its rtos partition's region."""

    name: str
    rtos: int  # index of the serving partition
    chan_off: int
    to_linux_off: int
    to_linux_size: int
    to_rtos_off: int
    to_rtos_size: int


@dataclass(frozen=True)
class DeviceRecord:
    ipa: int
    pa: int
    size: int


@dataclass(frozen=True)
class PartitionRecord:
    name: str
    tag: str
    kind: int
    cpu_mask: int
    ram_ipa: int
    ram_pa: int
    ram_size: int
    entry_ipa: int
    dtb_ipa: int
    boot_cpu: int
    images: tuple[ImageSlot, ...] = (ImageSlot(), ImageSlot(), ImageSlot())
    devices: tuple[DeviceRecord, ...] = ()
    irqs: tuple[int, ...] = ()
    flags: int = 0
    seeds: tuple[SeedRange, ...] = ()
    streams: tuple[StreamRange, ...] = ()
    fault: FaultRecord = FaultRecord()
    conring: ConringRecord = ConringRecord()
    vbus: VbusRecord = VbusRecord()
    starved_ms: int = 0  # since 2.3: with PART_FLAG_SHARED, Linux's wait the hypervisor reports


@dataclass(frozen=True)
class Blob:
    board: str
    board_cpus: int
    ram_base: int
    ram_size: int
    hyp_base: int
    hyp_size: int
    console_tags: bool
    console_escape: int
    console_focus: int
    partitions: tuple[PartitionRecord, ...] = field(default_factory=tuple)
    channels: tuple[ChannelRecord, ...] = ()
    fixed_seeds: bool = False  # FLAG_FIXED_SEEDS (measurement only: every start replays the same seeds)
    boot_report: bool = False  # FLAG_BOOT_REPORT
    console_focus_view: bool = False
    gic_version: int = 3  # since 2.4 (a 2.3 blob has 0 there: a GICv3)
    version_major: int = VERSION_MAJOR
    version_minor: int = VERSION_MINOR


@dataclass(frozen=True)
class Payload:
    """Where one partition's images sit in the bundle and where they go (from config.payload_layout)."""

    kernel: ImageSlot
    entry_ipa: int
    dtb: ImageSlot
    initrd: ImageSlot = ImageSlot()
    seeds: tuple[SeedRange, ...] = ()


def _name(text: str, what: str, size: int = NAME_SIZE) -> bytes:
    raw = text.encode("ascii")
    if len(raw) >= size:
        raise BlobError(f"{what} {text!r} is longer than {size - 1} bytes")
    return raw


def _unname(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", errors="replace")


def pack(blob: Blob) -> bytes:
    """The blob's bytes (with its CRC)."""
    count = len(blob.partitions)
    nchan = len(blob.channels)
    channels_at = HEADER.size + count * PART_SIZE
    total = channels_at + nchan * CHANNEL.size
    header = HEADER.pack(
        MAGIC,
        blob.version_major,
        blob.version_minor,
        HEADER.size,
        total,
        0,
        (FLAG_CONSOLE_TAGS if blob.console_tags else 0)
        | (FLAG_FIXED_SEEDS if blob.fixed_seeds else 0)
        | (FLAG_BOOT_REPORT if blob.boot_report else 0)
        | (FLAG_CONSOLE_VIEW if blob.console_focus_view else 0),
        count,
        PART_SIZE,
        HEADER.size,
        blob.board_cpus,
        blob.ram_base,
        blob.ram_size,
        blob.hyp_base,
        blob.hyp_size,
        blob.console_escape,
        blob.console_focus,
        blob.gic_version,
        0,
        _name(blob.board, "board"),
        nchan,
        CHANNEL.size if nchan else 0,
        channels_at if nchan else 0,
    )
    out = bytearray(header)
    for p in blob.partitions:
        out += _pack_partition(p)
    for c in blob.channels:
        out += CHANNEL.pack(
            _name(c.name, "channel name", cfg.VBUS_NAME_SIZE),
            c.rtos,
            c.chan_off,
            c.to_linux_off,
            c.to_linux_size,
            c.to_rtos_off,
            c.to_rtos_size,
        )
    struct.pack_into("<I", out, CRC_OFFSET, zlib.crc32(out))
    return bytes(out)


def _pack_partition(p: PartitionRecord) -> bytes:
    if len(p.images) != IMAGE_SLOTS:
        raise BlobError(f"partition {p.name!r}: {len(p.images)} image slots, expected {IMAGE_SLOTS}")
    dtb_size = p.images[IMAGE_DTB].size
    if len(p.seeds) > SEED_SLOTS or any(r.size == 0 or r.offset + r.size > dtb_size for r in p.seeds):
        raise BlobError(f"partition {p.name!r}: seed ranges {p.seeds} do not fit its {dtb_size}-byte DTB")
    if len(p.devices) > cfg.MAX_DEVICES or len(p.irqs) > cfg.MAX_IRQS or len(p.streams) > cfg.MAX_STREAMS:
        raise BlobError(
            f"partition {p.name!r}: {len(p.devices)} devices / {len(p.irqs)} interrupts / "
            f"{len(p.streams)} stream ranges: too many"
        )
    if any(r.count == 0 for r in p.streams):
        raise BlobError(f"partition {p.name!r}: empty stream range in {p.streams}")
    out = bytearray(
        PART_FIXED.pack(
            _name(p.name, "name"),
            _name(p.tag, "tag"),
            p.kind,
            p.flags,
            p.cpu_mask,
            p.ram_ipa,
            p.ram_pa,
            p.ram_size,
            p.entry_ipa,
            p.dtb_ipa,
            p.boot_cpu,
            len(p.devices),
            len(p.irqs),
            p.starved_ms,
        )
    )
    for slot in p.images:
        out += IMAGE.pack(slot.offset, slot.size, slot.load_ipa)
    for i in range(cfg.MAX_DEVICES):
        d = p.devices[i] if i < len(p.devices) else DeviceRecord(0, 0, 0)
        out += DEVICE.pack(d.ipa, d.pa, d.size)
    out += IRQS.pack(*p.irqs, *([0] * (cfg.MAX_IRQS - len(p.irqs))))
    for i in range(SEED_SLOTS):
        r = p.seeds[i] if i < len(p.seeds) else SeedRange(0, 0)
        out += SEED.pack(r.offset, r.size)
    for i in range(cfg.MAX_STREAMS):
        s = p.streams[i] if i < len(p.streams) else StreamRange(0, 0)
        out += STREAM.pack(s.first, s.count)
    out += FAULT.pack(p.fault.policy, p.fault.max_restarts, 0, p.fault.window_s)
    out += CONRING.pack(p.conring.ipa, p.conring.size, 0)
    out += VBUS.pack(p.vbus.ipa, p.vbus.size, p.vbus.intid)
    out += bytes(PART_RESERVED)
    assert len(out) == PART_SIZE
    return bytes(out)


def unpack(data: bytes) -> Blob:
    """Parse and check a blob (magic, major revision, sizes, CRC); BlobError says what is wrong."""
    if len(data) < HEADER.size:
        raise BlobError(f"{len(data)} bytes is shorter than the {HEADER.size}-byte header")
    (magic, major, minor, hsize, total, crc, flags, count, psize, poff, cpus, ram_base, ram_size, hyp_base,
     hyp_size, escape, focus, gic, _r1, board, nchan, csize, coff) = HEADER.unpack_from(data)  # fmt: skip
    if magic != MAGIC:
        raise BlobError(f"bad magic {magic!r} (expected {MAGIC!r})")
    if major != VERSION_MAJOR:
        raise BlobError(f"revision {major}.{minor}; this reader handles {VERSION_MAJOR}.x")
    if (
        hsize < HEADER.size
        or psize < PART_SIZE
        or total > len(data)
        or poff + count * psize > total
        or (nchan and (csize < CHANNEL.size or coff + nchan * csize > total))
    ):
        raise BlobError(
            f"inconsistent sizes: header {hsize}, partitions {count} x {psize} at {poff}, channels {nchan} x "
            f"{csize} at {coff}, total {total}"
        )
    check = bytearray(data[:total])
    struct.pack_into("<I", check, CRC_OFFSET, 0)
    if zlib.crc32(check) != crc:
        raise BlobError(f"CRC mismatch: stored 0x{crc:08x}, computed 0x{zlib.crc32(check):08x}")
    parts = tuple(_unpack_partition(data, poff + i * psize) for i in range(count))
    channels = tuple(_unpack_channel(data, coff + i * csize) for i in range(nchan))
    return Blob(
        board=_unname(board),
        board_cpus=cpus,
        ram_base=ram_base,
        ram_size=ram_size,
        hyp_base=hyp_base,
        hyp_size=hyp_size,
        console_tags=bool(flags & FLAG_CONSOLE_TAGS),
        fixed_seeds=bool(flags & FLAG_FIXED_SEEDS),
        boot_report=bool(flags & FLAG_BOOT_REPORT),
        console_focus_view=bool(flags & FLAG_CONSOLE_VIEW),
        console_escape=escape,
        console_focus=focus,
        partitions=parts,
        channels=channels,
        gic_version=gic or 3,
        version_major=major,
        version_minor=minor,
    )


def _unpack_partition(data: bytes, off: int) -> PartitionRecord:
    (name, tag, kind, flags, mask, ram_ipa, ram_pa, ram_size, entry, dtb, boot_cpu, ndev, nirq, starved) = (
        PART_FIXED.unpack_from(data, off)
    )
    if ndev > cfg.MAX_DEVICES or nirq > cfg.MAX_IRQS:
        raise BlobError(f"partition {_unname(name)!r}: {ndev} devices, {nirq} interrupts: beyond the record")
    pos = off + PART_FIXED.size
    images = tuple(ImageSlot(*IMAGE.unpack_from(data, pos + i * IMAGE.size)) for i in range(IMAGE_SLOTS))
    pos += IMAGE_SLOTS * IMAGE.size
    devices = tuple(DeviceRecord(*DEVICE.unpack_from(data, pos + i * DEVICE.size)) for i in range(ndev))
    pos += cfg.MAX_DEVICES * DEVICE.size
    irqs = IRQS.unpack_from(data, pos)[:nirq]
    pos += IRQS.size
    seeds = tuple(
        r
        for r in (SeedRange(*SEED.unpack_from(data, pos + i * SEED.size)) for i in range(SEED_SLOTS))
        if r.size
    )
    pos += SEED_SLOTS * SEED.size
    streams = tuple(
        r
        for r in (
            StreamRange(*STREAM.unpack_from(data, pos + i * STREAM.size)) for i in range(cfg.MAX_STREAMS)
        )
        if r.count
    )
    pos += cfg.MAX_STREAMS * STREAM.size
    policy, max_restarts, _r2, window_s = FAULT.unpack_from(data, pos)
    ring_ipa, ring_size, _r3 = CONRING.unpack_from(data, pos + FAULT.size)
    vbus = VbusRecord(*VBUS.unpack_from(data, pos + FAULT.size + CONRING.size))
    return PartitionRecord(
        name=_unname(name),
        tag=_unname(tag),
        kind=kind,
        cpu_mask=mask,
        ram_ipa=ram_ipa,
        ram_pa=ram_pa,
        ram_size=ram_size,
        entry_ipa=entry,
        dtb_ipa=dtb,
        boot_cpu=boot_cpu,
        images=images,
        devices=devices,
        irqs=tuple(irqs),
        flags=flags,
        seeds=seeds,
        streams=streams,
        fault=FaultRecord(policy, max_restarts, window_s),
        conring=ConringRecord(ring_ipa, ring_size),
        vbus=vbus,
        starved_ms=starved,
    )


def _unpack_channel(data: bytes, off: int) -> ChannelRecord:
    name, rtos, chan_off, tl_off, tl_size, tr_off, tr_size = CHANNEL.unpack_from(data, off)
    return ChannelRecord(_unname(name), rtos, chan_off, tl_off, tl_size, tr_off, tr_size)


def device_pages(part: cfg.Partition) -> tuple[DeviceRecord, ...]:
    """The partition's MMIO as stage 2 maps it: whole pages, merged where they touch, IPA = PA."""
    pages = sorted(page for dev in part.devices for page in dev.pages)
    merged: list[Region] = []
    for page in pages:
        if merged and page.base <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Region(last.base, max(last.end, page.end) - last.base)
        else:
            merged.append(page)
    assert all(r.base % PAGE_SIZE == 0 and r.size % PAGE_SIZE == 0 for r in merged)
    return tuple(DeviceRecord(r.base, r.base, r.size) for r in merged)


def from_config(config: cfg.SystemConfig, payloads: Mapping[str, Payload] | None = None) -> Blob:
    """The blob of a configuration; `payloads` (by partition name) fill in images, entry and DTB.

    Without payloads (e.g. for `check`), images are absent and entry/DTB addresses are zero.
    """
    records = []
    for p in config.partitions:
        devices = device_pages(p)
        if len(devices) > cfg.MAX_DEVICES:
            raise BlobError(f"partition {p.name!r}: {len(devices)} device ranges; at most {cfg.MAX_DEVICES}")
        record = PartitionRecord(
            name=p.name,
            tag=p.tag,
            kind=KIND_CODES[p.kind],
            cpu_mask=p.cpu_mask,
            ram_ipa=p.ram.ipa,
            ram_pa=p.ram.pa,
            ram_size=p.ram.size,
            entry_ipa=0,
            dtb_ipa=0,
            boot_cpu=p.boot_cpu,
            devices=devices,
            irqs=p.interrupts,
            streams=tuple(StreamRange(r.base, r.size) for r in p.streams),
            fault=FaultRecord(FAULT_CODES[p.fault.policy], p.fault.max_restarts, p.fault.window_s),
            conring=ConringRecord(ring.base, ring.size)
            if (ring := config.console_ring(p))
            else ConringRecord(),
            vbus=_vbus_record(config, p),
            flags=PART_FLAG_SHARED if p.shared else 0,
            starved_ms=p.starved_ms,
        )
        payload = (payloads or {}).get(p.name)
        if payload is not None:
            for slot in (payload.kernel, payload.initrd, payload.dtb):
                if (
                    slot.size
                    and not p.ram.ipa <= slot.load_ipa <= slot.load_ipa + slot.size <= p.ram.ipa + p.ram.size
                ):
                    raise BlobError(
                        f"partition {p.name!r}: image at IPA 0x{slot.load_ipa:x} is outside its RAM"
                    )
            record = replace(
                record,
                entry_ipa=payload.entry_ipa,
                dtb_ipa=payload.dtb.load_ipa,
                images=(payload.kernel, payload.initrd, payload.dtb),
                seeds=payload.seeds,
            )
        records.append(record)
    focus = next(i for i, p in enumerate(config.partitions) if p.name == config.console.focus)
    index = {p.name: i for i, p in enumerate(config.partitions)}
    channels = tuple(
        ChannelRecord(
            c.name,
            index[c.rtos],
            c.chan_off,
            c.to_linux_off,
            c.to_linux,
            c.to_rtos_off,
            c.to_rtos,
        )
        for c in config.channels
    )
    return Blob(
        board=config.board.name,
        board_cpus=config.board.cpus,
        gic_version=config.board.gic_version,
        ram_base=config.board.ram.base,
        ram_size=config.board.ram.size,
        hyp_base=config.hypervisor.base,
        hyp_size=config.hypervisor.size,
        console_tags=config.console.tags,
        console_escape=config.console.escape_byte,
        console_focus=focus,
        partitions=tuple(records),
        channels=channels,
        console_focus_view=config.console.view == cfg.VIEW_FOCUS,
    )


def _vbus_record(config: cfg.SystemConfig, part: cfg.Partition) -> VbusRecord:
    if part.vbus is not None:
        return VbusRecord(part.vbus.base, part.vbus.size, 0)
    if config.vbus is not None and config.vbus.partition == part.name:
        return VbusRecord(config.vbus.mmio.base, config.vbus.mmio.size, config.vbus.intid)
    return VbusRecord()


def size_of(config: cfg.SystemConfig) -> int:
    """The bytes of the configuration's blob."""
    return HEADER.size + len(config.partitions) * PART_SIZE + len(config.channels) * CHANNEL.size
