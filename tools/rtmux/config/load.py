"""Loading a system configuration (configs/*.toml): the whole file, its sections and partitions.

`load(path)` reads a TOML file, checks every field and returns a `SystemConfig` in which everything is
decided: each partition's CPUs, RAM (IPA and PA), devices (page-aligned MMIO ranges and SPIs), images and
boot arguments. It raises `ConfigError` carrying *every* problem found, each naming the file, the
partition or section, the field and the value, e.g.

    configs/x.toml: partition 'linux': memory.base 0x3000_0000 is below RAM (0x4000_0000..0x8000_0000)

Placement: the hypervisor keeps the start of RAM ([hypervisor] memory, 128 MiB by default: the
hypervisor, its payload and QEMU's DTB, which QEMU writes 128 MiB above the start of RAM). Partitions with
`memory.base` are placed there; the others, in file order, at the lowest 2 MiB-aligned free address above
the hypervisor. An rtos partition sees its RAM at IPA 0x4000_0000 (the rtos is linked there); a Linux
partition sees its RAM at IPA = PA (devices it drives do DMA to the addresses Linux gives them).

docs/configuration.md documents every key; keep it and `load` in step. The binary form the hypervisor
reads is built by `rtmux.image.blob`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from rtmux import board as boards
from rtmux import paths
from rtmux.board import GIB, MIB, Board, Region, size_text
from rtmux.config.channels import ChannelReader
from rtmux.config.images import KernelLookup
from rtmux.config.model import (
    DEFAULT_ESCAPE,
    DEFAULT_FAULT,
    DEFAULT_HYP_MEMORY,
    DMA_IOMMU,
    ESCAPE_REFUSED,
    KIND_LINUX,
    KIND_RTOS,
    KINDS,
    MAX_CPUS,
    MAX_PARTITIONS,
    RAM_ALIGN,
    VIEW_AUTO,
    VIEWS,
    ConfigError,
    Console,
    Mapping,
    Partition,
    SystemConfig,
)
from rtmux.config.partitions import PartDraft, PartitionReader
from rtmux.config.payload import layout_for
from rtmux.config.place import Placement
from rtmux.config.services import ServicesReader


def load(path: Path | str, *, find_kernel: KernelLookup | None = None) -> SystemConfig:
    """Read, validate and place a configuration; ConfigError lists every problem. `find_kernel` finds
    the fetched Image of a `debian:FLAVOUR` kernel (rtmux.image.debian.cached_kernel_image)."""
    path = Path(path)
    where = paths.display(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(where, [f"{where}: cannot read: {exc.strerror or exc}"]) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(where, [f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(where, [f"{where}: TOML syntax error: {exc}"]) from None
    return _Loader(where, path, find_kernel).load(data)


def loads(text: str, where: str = "<config>", *, find_kernel: KernelLookup | None = None) -> SystemConfig:
    """`load` for a string (tests)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(where, [f"{where}: TOML syntax error: {exc}"]) from None
    return _Loader(where, Path(where), find_kernel).load(data)


TOP_KEYS = ("description", "board", "hypervisor", "console", "partition", "channel", "services")
BOARD_KEYS = ("name", "cpus", "memory")
HYP_KEYS = ("memory",)
CONSOLE_KEYS = ("tags", "escape", "focus", "view")


class _Loader(PartitionReader, Placement, ChannelReader, ServicesReader):
    # ---- the whole file
    def load(self, data: dict[str, Any]) -> SystemConfig:
        self.check_keys("", data, TOP_KEYS)
        if "description" in data and not isinstance(data["description"], str):
            self.wrong_type("", "description", data["description"], "a string")
        board = self.load_board(data)
        hyp = self.load_hypervisor(data, board)
        drafts = self.load_partitions(data, board)
        self.cross_check(drafts, board, hyp)
        console = self.load_console(data, drafts)
        services = self.load_services(data, drafts)
        vbus = self.load_channels(data, drafts, board, services)
        if self.errors:
            raise ConfigError(self.where, self.errors)
        if any(dev.dma == DMA_IOMMU for d in drafts for dev in d.devices):
            board = board.with_iommu()  # QEMU: the machine option that creates the SMMU
        parts = tuple(
            Partition(
                index=d.index,
                name=d.name or "",
                kind=d.kind or "",
                cpus=tuple(sorted(d.cpus)),
                ram=d.ram or Mapping(0, 0, 0),
                base_given=d.base is not None,
                tag=d.tag or d.name or "",
                bootargs=d.bootargs,
                images=tuple(d.images),
                devices=tuple(d.devices),
                fault=d.fault or DEFAULT_FAULT[d.kind or KIND_RTOS],
                vbus=vbus.regions.get(d.index),
                shared=d.shared,
                starved_ms=d.starved_ms,
            )
            for d in drafts
        )
        config = SystemConfig(
            self.path,
            board,
            hyp,
            console,
            parts,
            tuple(self.notes),
            tuple(vbus.channels),
            vbus.device,
            services,
        )
        self.check_payloads(config)
        if self.errors:
            raise ConfigError(self.where, self.errors)
        return config

    def load_board(self, data: dict[str, Any]) -> Board:
        ctx = "[board]"
        table = self.get_table("", data, "board") or {}
        self.check_keys(ctx, table, BOARD_KEYS)
        name = self.get_str(ctx, table, "name") or "qemu-virt"
        if name not in boards.BOARDS:
            self.error(ctx, f"name {name!r} is not a known board (known: {', '.join(boards.BOARDS)})")
        cpus = table.get("cpus", 2)
        if isinstance(cpus, bool) or not isinstance(cpus, int):
            self.wrong_type(ctx, "cpus", cpus, "an integer")
            cpus = 2
        elif not 1 <= cpus <= MAX_CPUS:
            self.error(ctx, f"cpus {cpus} is out of range (1..{MAX_CPUS}: the hypervisor's limit)")
            cpus = max(1, min(cpus, MAX_CPUS))
        gic = boards.BOARD_GIC.get(name, 3)
        if gic == 2 and cpus > boards.QEMU_VIRT_GICV2_MAX_CPUS:
            self.error(
                ctx, f"cpus {cpus}: {name}'s GICv2 serves at most {boards.QEMU_VIRT_GICV2_MAX_CPUS} CPUs"
            )
            cpus = boards.QEMU_VIRT_GICV2_MAX_CPUS
        memory = self.get_size(ctx, table.get("memory", "1G"), "memory")
        if memory is not None and (
            memory < 256 * MIB or memory > boards.QEMU_VIRT_MAX_RAM or memory % RAM_ALIGN
        ):
            self.error(
                ctx,
                f"memory {size_text(memory)} must be a multiple of 2 MiB from 256 MiB to "
                f"{size_text(boards.QEMU_VIRT_MAX_RAM)}",
            )
            memory = None
        try:
            return boards.qemu_virt(cpus=cpus, memory=memory or GIB, gic=gic)
        except boards.BoardError as exc:
            # the board's description (platform/NAME/board.toml): nothing can be placed without it
            for line in str(exc).splitlines():
                self.error(ctx, f"name {name!r}: its description {line}")
            raise ConfigError(self.where, self.errors) from None

    def load_hypervisor(self, data: dict[str, Any], board: Board) -> Region:
        ctx = "[hypervisor]"
        table = self.get_table("", data, "hypervisor") or {}
        self.check_keys(ctx, table, HYP_KEYS)
        size = DEFAULT_HYP_MEMORY
        if "memory" in table:
            value = self.get_size(ctx, table["memory"], "memory")
            if value is not None:
                if value == 0 or value % RAM_ALIGN or value >= board.ram.size:
                    self.error(
                        ctx,
                        f"memory {size_text(value) if value else '0'} must be a non-zero multiple of 2 MiB "
                        f"smaller than RAM ({size_text(board.ram.size)})",
                    )
                else:
                    size = value
        return Region(board.ram.base, size)

    def load_console(self, data: dict[str, Any], drafts: list[PartDraft]) -> Console:
        ctx = "[console]"
        table = self.get_table("", data, "console") or {}
        self.check_keys(ctx, table, CONSOLE_KEYS)
        tags = table.get("tags", True)
        if not isinstance(tags, bool):
            self.wrong_type(ctx, "tags", tags, "true or false")
            tags = True
        escape = DEFAULT_ESCAPE
        text = self.get_str(ctx, table, "escape")
        if text is not None:
            m = re.fullmatch(r"(?:ctrl-|\^)([a-z])", text.strip().lower())
            if not m:
                self.error(ctx, f"escape {text!r} is not a control key (write it as ctrl-t or ^T)")
            elif m.group(1) in ESCAPE_REFUSED:
                self.error(ctx, f"escape {text!r} cannot be used: {ESCAPE_REFUSED[m.group(1)]}")
            else:
                escape = f"ctrl-{m.group(1)}"
        names = [d.name for d in drafts if d.name]
        focus = self.get_str(ctx, table, "focus")
        if focus is not None and focus not in names:
            self.error(ctx, f"focus {focus!r} is not a partition (partitions: {', '.join(names) or 'none'})")
        if focus is None or focus not in names:
            linux = [d.name for d in drafts if d.kind == KIND_LINUX and d.name]
            focus = linux[0] if linux else (names[0] if names else "")
        view = self.get_str(ctx, table, "view") or VIEW_AUTO
        if view not in VIEWS:
            self.error(ctx, f"view {view!r} is not a console view (one of {', '.join(VIEWS)})")
            view = VIEW_AUTO
        return Console(tags=tags, escape=escape, focus=focus, view=view)

    # ---- partitions
    def load_partitions(self, data: dict[str, Any], board: Board) -> list[PartDraft]:
        raw = data.get("partition", [])
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            self.wrong_type("", "partition", raw, "an array of tables ([[partition]])")
            raw = []
        drafts = [self.load_partition(i, table, board) for i, table in enumerate(raw)]
        if not any(d.kind in KINDS for d in drafts):
            self.error(
                "", "no partition of kind 'rtos' or 'linux': a system needs at least one [[partition]]"
            )
        if len(drafts) > MAX_PARTITIONS:
            self.error("", f"{len(drafts)} partitions; the hypervisor supports at most {MAX_PARTITIONS}")
        return drafts

    # ---- images against memory
    def check_payloads(self, config: SystemConfig) -> None:
        for part in config.partitions:
            try:
                layout_for(part)
            except ValueError as exc:
                self.error(f"partition {part.name!r}", str(exc))
