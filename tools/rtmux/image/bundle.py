"""The bootable system image: the hypervisor, then the configuration blob, then every partition's images.

Layout (offsets from the first byte, which QEMU or U-Boot loads at RAM base + text_offset):

    0                      build/hyp/rtmux.img (arm64 Image header; code and data)
    ...                    zeros up to the hypervisor's `_end` (its BSS, cleared at boot)
    align(image_size, 4K)  configuration blob (rtmux.image.blob): the hypervisor finds it at `_end`
    4 KiB aligned          each partition's kernel, initramfs and DTB, 4 KiB aligned, in config order

The Image header's image_size is rewritten to the whole bundle, so a loader keeps its DTB and initrd
clear of the payload.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rtmux import config as cfg
from rtmux.board import Region
from rtmux.errors import SetupError
from rtmux.formats import fdt
from rtmux.image import blob, dtgen

PAGE = 4096
IMAGE_SIZE_OFFSET = 16  # arm64 Image header: u64 image_size
LOAD_OFFSET = 0x80000  # the hypervisor's text_offset: loaded at RAM base + 512 KiB


def _align(value: int, align: int = PAGE) -> int:
    return (value + align - 1) & ~(align - 1)


@dataclass(frozen=True)
class PartitionImages:
    """What one partition boots: its kernel (rtos image or Linux Image), optional initramfs, boot args."""

    kernel: bytes
    initramfs: bytes = b""
    bootargs: str | None = None  # None: the configuration's


def rtos_dtb(
    part: cfg.Partition,
    bootargs: str,
    ring: Region | None = None,
    vbus: fdt.Node | None = None,
    services: fdt.Node | None = None,
) -> bytes:
    """The small DTB an rtos partition gets: its memory, /chosen/bootargs and, inside rtmux with a Linux
    partition, /chosen/rtmux,console-ring = <address-hi address-lo size>, when it serves channels,
    /rtmux-vbus (dtgen.vbus_region_node), and with [services], /rtmux-services (dtgen.services_node);
    the rtos reads only these."""
    root = fdt.Node(
        "",
        {
            "#address-cells": fdt.cells(2),
            "#size-cells": fdt.cells(2),
            "compatible": fdt.string("rtmux,rtos-partition"),
            "model": fdt.string(f"rtmux partition {part.name}"),
        },
    )
    root.children.append(
        fdt.Node(
            f"memory@{part.ram.ipa:x}",
            {"device_type": fdt.string("memory"), "reg": fdt.u64_cells(part.ram.ipa, part.ram.size)},
        )
    )
    chosen = {"bootargs": fdt.string(bootargs)}
    if ring is not None:
        chosen["rtmux,console-ring"] = fdt.cells(ring.base >> 32, ring.base & 0xFFFF_FFFF, ring.size)
    root.children.append(fdt.Node("chosen", chosen))
    root.children += [node for node in (vbus, services) if node is not None]
    return fdt.serialize(fdt.Tree(root, boot_cpuid_phys=part.boot_cpu))


def fixed_seed(number: int) -> Callable[[int], bytes]:
    """A `seed` for pack that gives the same bytes for the same number (SHAKE-256 of it): for measurement
    only (./rtmux run --seed), with fixed_seeds=True so that the hypervisor keeps them too. A Linux booted
    with them has the same KASLR offset and random pool at every boot."""
    return lambda n: hashlib.shake_256(f"rtmux fixed seed {number}".encode()).digest(n)


def seed_ranges(dtb: bytes, *values: bytes) -> tuple[blob.SeedRange, ...]:
    """Where each random value sits in `dtb`, for the hypervisor to change at every partition start."""
    out = []
    for value in values:
        at = dtb.find(value)
        if at < 0 or dtb.find(value, at + 1) >= 0:
            # random bytes that also occur elsewhere in the DTB: astronomically unlikely, but then the
            # hypervisor could not tell which bytes to change
            raise SetupError("a random seed is not unique in the generated DTB; pack the image again")
        out.append(blob.SeedRange(at, len(value)))
    return tuple(out)


def pack(
    config: cfg.SystemConfig,
    hypervisor: bytes,
    images: Mapping[str, PartitionImages],
    board_dtb: bytes,
    seed: Callable[[int], bytes] = secrets.token_bytes,
    *,
    fixed_seeds: bool = False,
    boot_report: bool = False,
) -> bytes:
    """The bundle bytes for `config`; SetupError when something does not fit or is missing. `seed(n)`
    gives each Linux partition's DTB its n random seed bytes (dtgen.RANDOM_SEED_BYTES); `fixed_seeds`
    tells the hypervisor to keep them at every start (measurement only, with fixed_seed); `boot_report`
    asks for its el2-entries report at its first console tick (blob.FLAG_BOOT_REPORT)."""
    header = cfg.read_arm64_header(hypervisor)
    if header is None or header.image_size == 0:
        raise SetupError(
            "build/hyp/rtmux.img has no arm64 Image header with an image size; rebuild with `make hyp`"
        )
    blob_offset = _align(header.image_size)
    blob_size = blob.size_of(config)
    cursor = _align(blob_offset + blob_size)
    chunks: list[tuple[int, bytes]] = []
    payloads: dict[str, blob.Payload] = {}

    def place(data: bytes, load_ipa: int) -> blob.ImageSlot:
        nonlocal cursor
        slot = blob.ImageSlot(cursor, len(data), load_ipa)
        chunks.append((cursor, data))
        cursor = _align(cursor + len(data))
        return slot

    for part in config.partitions:
        given = images.get(part.name)
        if given is None:
            raise SetupError(f"partition {part.name!r}: no image to boot")
        kernel_header = cfg.read_arm64_header(given.kernel)
        if kernel_header is None:
            raise SetupError(f"partition {part.name!r}: the image has no arm64 Image header")
        try:
            layout = cfg.payload_layout(part, kernel_header, len(given.kernel), len(given.initramfs))
        except ValueError as exc:
            raise SetupError(f"partition {part.name!r}: {exc}") from exc
        bootargs = part.bootargs if given.bootargs is None else given.bootargs
        if part.kind == cfg.KIND_LINUX:
            bootargs = cfg.linux_bootargs(bootargs, config.services)
            initrd = (
                (layout.initrd_ipa, layout.initrd_ipa + len(given.initramfs)) if given.initramfs else None
            )
            random = seed(dtgen.RANDOM_SEED_BYTES)
            device = dtgen.vbus_device_node(config, part)
            dtb = dtgen.generate(
                board_dtb,
                config.board,
                part,
                bootargs=bootargs,
                initrd=initrd,
                seed=random,
                extra_nodes=None if device is None else dtgen.append_nodes(device),
            )
            seeds = seed_ranges(dtb, random[: dtgen.KASLR_SEED_BYTES], random[dtgen.KASLR_SEED_BYTES :])
        else:
            ring = config.console_ring(part)
            dtb = rtos_dtb(
                part,
                bootargs,
                ring,
                dtgen.vbus_region_node(config, part),
                dtgen.services_node(config, part),
            )
            if ring is not None and layout.dtb_ipa + len(dtb) > ring.base:
                raise SetupError(f"partition {part.name!r}: its DTB reaches into its console ring")
            seeds = ()
        kernel_slot = place(given.kernel, layout.kernel_ipa)
        initrd_slot = place(given.initramfs, layout.initrd_ipa) if given.initramfs else blob.ImageSlot()
        dtb_slot = place(dtb, layout.dtb_ipa)
        payloads[part.name] = blob.Payload(
            kernel=kernel_slot, entry_ipa=layout.entry_ipa, dtb=dtb_slot, initrd=initrd_slot, seeds=seeds
        )
    try:
        config_blob = blob.pack(
            dataclasses.replace(
                blob.from_config(config, payloads), fixed_seeds=fixed_seeds, boot_report=boot_report
            )
        )
    except blob.BlobError as exc:
        raise SetupError(f"configuration blob: {exc}") from exc
    assert len(config_blob) == blob_size
    out = bytearray(cursor)
    out[: len(hypervisor)] = hypervisor
    out[blob_offset : blob_offset + blob_size] = config_blob
    for offset, data in chunks:
        out[offset : offset + len(data)] = data
    struct.pack_into("<Q", out, IMAGE_SIZE_OFFSET, len(out))
    if LOAD_OFFSET + len(out) > config.hypervisor.size:
        raise SetupError(
            f"the system image is {len(out) >> 20} MiB but [hypervisor] memory is only "
            f"{config.hypervisor.size >> 20} MiB: raise it in the configuration"
        )
    return bytes(out)
