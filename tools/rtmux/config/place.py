"""The checks across partitions (unique names and tags, CPUs, interrupts and device pages owned once) and
the placement of every partition's RAM: fixed `memory.base` first, then the others in file order at the
lowest 2 MiB-aligned free address above the hypervisor."""

from __future__ import annotations

from collections.abc import Callable

from rtmux.board import Board, Region, hexa, intid_text, size_text
from rtmux.config.fields import Fields
from rtmux.config.model import KIND_RTOS, RAM_ALIGN, RTOS_IPA, Mapping, align_up, range_text
from rtmux.config.partitions import PartDraft


class Placement(Fields):
    """The checks across partitions and the memory placement, reporting through Fields."""

    def cross_check(self, drafts: list[PartDraft], board: Board, hyp: Region) -> None:
        self.check_unique(drafts, "name", lambda d: d.name, "partition names")
        self.check_unique(drafts, "console.tag", lambda d: d.tag or d.name, "console tags")
        # CPUs: each in one partition, or in a shared rtos partition and one Linux partition
        holders: dict[int, list[PartDraft]] = {}
        for d in drafts:
            for cpu in d.cpus:
                holders.setdefault(cpu, []).append(d)
        for cpu, ds in sorted(holders.items()):
            if len(ds) == 1:
                continue
            rtos = [d for d in ds if d.kind == KIND_RTOS]
            if len(ds) == 2 and len(rtos) == 1 and rtos[0].shared and ds[0].kind != ds[1].kind:
                continue
            first, later = ds[0], ds[1:]
            hint = (
                "; to run Linux on the rtos's CPU while the rtos is idle (the rtos always first), add "
                "shared = true to the rtos partition"
                if len(ds) == 2 and len(rtos) == 1 and ds[0].kind != ds[1].kind
                else " (only an rtos partition with shared = true and one Linux partition may share a CPU)"
            )
            for d in later:
                self.error(d.label, f"cpus: CPU {cpu} is already in {first.label}{hint}")
        for d in drafts:
            if d.shared and not any(len(holders.get(c, [])) == 2 for c in d.cpus):
                cpus = ", ".join(map(str, d.cpus))
                self.error(
                    d.label,
                    f"shared = true but no Linux partition lists CPU {cpus}: nothing to share it with "
                    "(list the CPU in the Linux partition's cpus too, or leave shared out)",
                )
        # interrupts
        irq_owner: dict[int, str] = {}
        for d in drafts:
            for intid in sorted({i for dev in d.devices for i in dev.interrupts}):
                if intid in irq_owner:
                    self.error(d.label, f"interrupts: {intid_text(intid)} is already in {irq_owner[intid]}")
                else:
                    irq_owner[intid] = d.label
        # device pages (stage 2 maps whole 4 KiB pages, so two partitions cannot share one)
        page_owner: list[tuple[Region, str, str]] = []
        for d in drafts:
            for dev in d.devices:
                if dev.implicit:
                    continue
                for exact, page in zip(dev.mmio, dev.pages, strict=True):
                    for other_page, other_label, other_dev in page_owner:
                        if other_label != d.label and page.overlaps(other_page):
                            self.error(
                                f"{d.label}: device {dev.name!r}",
                                f"mmio {range_text(exact)} is in a page already assigned to {other_label} "
                                f"(device {other_dev!r}, {range_text(other_page)}); "
                                "stage 2 maps whole 4 KiB pages",
                            )
                            break
                    page_owner.append((page, d.label, dev.name))
        self.place_memory(drafts, board, hyp)

    def check_unique(
        self, drafts: list[PartDraft], what: str, key: Callable[[PartDraft], str | None], plural: str
    ) -> None:
        seen: dict[str, int] = {}
        for d in drafts:
            value = key(d)
            if value is None:
                continue
            if value in seen:
                self.error(
                    f"partition #{d.index + 1}",
                    f"{what} {value!r} is already used by partition #{seen[value] + 1} "
                    f"({plural} must be unique)",
                )
            else:
                seen[value] = d.index

    def place_memory(self, drafts: list[PartDraft], board: Board, hyp: Region) -> None:
        ram = board.ram
        taken: list[tuple[Region, str]] = [(hyp, "the hypervisor area")]
        fixed = [d for d in drafts if d.size is not None and d.base is not None]
        for d in fixed:
            assert d.size is not None and d.base is not None
            region = Region(d.base, d.size)
            if d.base < ram.base:
                self.error(d.label, f"memory.base {hexa(d.base)} is below RAM ({ram})")
                continue
            if region.end > ram.end:
                self.error(
                    d.label,
                    f"memory {region} ({size_text(d.size)}) ends beyond RAM "
                    f"({ram}, -m {size_text(ram.size)})",
                )
                continue
            clash = [what for r, what in taken if r.overlaps(region)]
            if clash:
                self.error(
                    d.label,
                    f"memory {region} overlaps {clash[0]} ({next(r for r, w in taken if w == clash[0])})",
                )
                continue
            taken.append((region, d.label))
            d.ram = self.mapping(d, region, board)
        for d in drafts:
            if d.size is None or d.base is not None:
                continue
            if d.size > ram.size - hyp.size:
                self.error(
                    d.label,
                    f"memory {size_text(d.size)} is more than the board's RAM above the hypervisor "
                    f"({size_text(ram.size - hyp.size)})",
                )
                continue
            base = first_fit(d.size, ram, [r for r, _ in taken])
            if base is None:
                free = free_ranges(ram, [r for r, _ in taken])
                biggest = max((r.size for r in free), default=0)
                self.error(
                    d.label,
                    f"memory {size_text(d.size)} does not fit in the free RAM (largest free range: "
                    f"{size_text(biggest) if biggest else 'none'})",
                )
                continue
            region = Region(base, d.size)
            taken.append((region, d.label))
            d.ram = self.mapping(d, region, board)

    @staticmethod
    def mapping(d: PartDraft, region: Region, board: Board) -> Mapping:
        ipa = RTOS_IPA if d.kind == KIND_RTOS else region.base
        return Mapping(ipa=ipa, pa=region.base, size=region.size)


def first_fit(size: int, ram: Region, taken: list[Region]) -> int | None:
    for free in free_ranges(ram, taken):
        base = align_up(free.base, RAM_ALIGN)
        if base + size <= free.end:
            return base
    return None


def free_ranges(ram: Region, taken: list[Region]) -> list[Region]:
    free: list[Region] = []
    cursor = ram.base
    for r in sorted(taken):
        if r.base > cursor:
            free.append(Region(cursor, r.base - cursor))
        cursor = max(cursor, r.end)
    if cursor < ram.end:
        free.append(Region(cursor, ram.end - cursor))
    return free
