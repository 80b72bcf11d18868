"""Where the hypervisor puts a partition's images inside its RAM: the arm64 Image header and the layout
of kernel, initramfs and DTB (the same rule hyp/core/payload uses)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rtmux.board import KIB, MIB, size_text
from rtmux.config.model import DTB_SLOT, INITRD_ALIGN, RAM_ALIGN, Partition, align_up

ARM64_MAGIC = b"ARM\x64"
ARM64_HEADER = struct.Struct("<IIQQQQQQ4sI")  # code0 code1 text_offset image_size flags res2-4 magic res5


@dataclass(frozen=True)
class Arm64Header:
    text_offset: int
    image_size: int  # bytes from the load address the image needs (BSS included); 0: unknown


def read_arm64_header(data: bytes) -> Arm64Header | None:
    """The arm64 Image header of `data`, or None when it has none."""
    if len(data) < ARM64_HEADER.size:
        return None
    fields = ARM64_HEADER.unpack_from(data)
    if fields[8] != ARM64_MAGIC:
        return None
    return Arm64Header(text_offset=fields[2], image_size=fields[3])


@dataclass(frozen=True)
class PayloadLayout:
    """Where the hypervisor copies a partition's images, as IPAs of that partition."""

    kernel_ipa: int  # load address = entry point
    kernel_end: int  # load address + image_size (BSS included)
    initrd_ipa: int  # 0 when none
    initrd_size: int
    dtb_ipa: int  # start of the DTB slot (the top DTB_SLOT bytes of RAM)

    @property
    def entry_ipa(self) -> int:
        return self.kernel_ipa


def payload_layout(
    part: Partition, header: Arm64Header, kernel_file_size: int, initrd_size: int
) -> PayloadLayout:
    """Place kernel, initramfs and DTB inside a partition's RAM; ValueError when they do not fit.

    kernel at RAM + text_offset (the Image header's; 2 MiB-aligned base), DTB in the top 2 MiB of RAM,
    an rtos partition's V-Bus region right below it (placed by the configuration), initramfs right below
    the DTB (4 KiB aligned), above everything the kernel occupies (its BSS and, for the rtos, its stacks).
    """
    ram = part.ram
    kernel_ipa = ram.ipa + header.text_offset
    kernel_end = kernel_ipa + max(header.image_size, kernel_file_size)
    dtb_ipa = ram.ipa + ram.size - DTB_SLOT
    below = part.vbus_top
    initrd_ipa = (below - initrd_size) & ~(INITRD_ALIGN - 1) if initrd_size else 0
    top = initrd_ipa if initrd_size else below
    if kernel_end > top:
        parts = [(f"{part.kind} image of ", kernel_end - kernel_ipa)]
        if initrd_size:
            parts.append(("initramfs of ", initrd_size))
        if part.vbus is not None:
            parts.append(("V-Bus region of ", part.vbus.size))
        parts.append(("", DTB_SLOT))
        terms = [
            f"{name}{text}" for (name, _), text in zip(parts, sizes_text([n for _, n in parts]), strict=True)
        ]
        need = kernel_end - ram.ipa + (dtb_ipa - top) + DTB_SLOT
        raise ValueError(
            f"memory.size {size_text(ram.size)} is too small for the {' + '.join(terms)} DTB slot "
            f"(needs at least {size_text(align_up(need, RAM_ALIGN))})"
        )
    return PayloadLayout(kernel_ipa, kernel_end, initrd_ipa, initrd_size, dtb_ipa)


def sizes_text(sizes: list[int]) -> list[str]:
    """Sizes to be added up, in one unit: MiB when each is whole MiB, else KiB (a part of one counted as
    a whole): `32832 KiB + 2785 KiB`, never `32832 KiB + 2851636 bytes`."""
    if all(n % MIB == 0 for n in sizes):
        return [f"{n // MIB} MiB" for n in sizes]
    return [f"{-(-n // KIB)} KiB" for n in sizes]


def layout_for(part: Partition) -> PayloadLayout | None:
    """The payload layout from the partition's image files; None while one is not built yet."""
    main = part.image("image") or part.image("kernel")
    initrd = part.image("initramfs")
    if main is None or not main.exists or (initrd is not None and not initrd.exists):
        return None
    with main.path.open("rb") as f:
        header = read_arm64_header(f.read(ARM64_HEADER.size))
    if header is None:
        return None
    initrd_size = initrd.path.stat().st_size if initrd else 0
    return payload_layout(part, header, main.path.stat().st_size, initrd_size)
