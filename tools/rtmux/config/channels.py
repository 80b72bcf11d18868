"""The V-Bus: [[channel]] entries checked, each rtos partition's region laid out and placed, the device
given to the Linux partition (lib/include/lib/vbus.h has the layout and the protocol).

A channel is a named port of one virtio console device (MULTIPORT) that the hypervisor emulates in the
(one) Linux partition; an rtos partition serves it through two byte rings in its V-Bus region. Every
rtos partition that serves channels gets one region, laid out by `vbus_layout` and placed right below
its DTB slot (model.py says why there); the channels of a region are numbered in configuration order,
the services' channels ([services]: rtmux-files, rtmux-log) after the [[channel]] entries. Names
starting with "rtmux-" are rtmux's own: no [[channel]] may take one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtmux.board import Board, Region, size_text
from rtmux.config.fields import Fields, show
from rtmux.config.model import (
    DEFAULT_CHANNEL_SIZE,
    DTB_SLOT,
    KIND_LINUX,
    KIND_RTOS,
    RESERVED_CHANNEL_PREFIX,
    SERVICE_CHANNELS,
    VBUS_MAX_CHANNELS,
    VBUS_NAME_RE,
    VBUS_NAME_SIZE,
    VBUS_RING_MAX,
    VBUS_RING_MIN,
    VBUS_STATS_PORT,
    Channel,
    Services,
    VbusDevice,
    is_power_of_two,
    vbus_layout,
)
from rtmux.config.partitions import PartDraft

CHANNEL_KEYS = ("name", "rtos", "size", "to_linux", "to_rtos")


@dataclass
class VbusPlan:
    """The channels, the device and each serving partition's region (by partition index, IPAs)."""

    channels: list[Channel] = field(default_factory=list)
    device: VbusDevice | None = None
    regions: dict[int, Region] = field(default_factory=dict)


@dataclass
class _Draft:
    label: str
    name: str | None = None
    rtos: PartDraft | None = None
    to_linux: int | None = None
    to_rtos: int | None = None


class ChannelReader(Fields):
    """Reads the [[channel]] array, reporting through Fields."""

    def load_channels(
        self, data: dict[str, Any], drafts: list[PartDraft], board: Board, services: Services | None = None
    ) -> VbusPlan:
        """The [[channel]] entries, then the channels of `services` (checked: one rtos partition serves
        them)."""
        raw = data.get("channel", [])
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            self.wrong_type("", "channel", raw, "an array of tables ([[channel]])")
            return VbusPlan()
        rtos_parts = [d for d in drafts if d.kind == KIND_RTOS]
        chans = [self.load_channel(i, table, drafts, rtos_parts) for i, table in enumerate(raw)]
        if services is not None:
            for name, to_linux, to_rtos in services.channels():
                chans.append(_Draft(f"channel {name!r} ([services])", name, rtos_parts[0], to_linux, to_rtos))
        if not chans:
            return VbusPlan()
        seen: dict[str, int] = {}
        for i, c in enumerate(chans):
            if c.name is None:
                continue
            if c.name in seen:
                self.error(
                    f"channel #{i + 1}",
                    f"name {c.name!r} is already used by channel #{seen[c.name] + 1} "
                    "(channel names must be unique: each is a port name in Linux)",
                )
            else:
                seen[c.name] = i
        if len(chans) > VBUS_MAX_CHANNELS:
            self.error(
                "[[channel]]",
                f"{len(chans)} channels; at most {VBUS_MAX_CHANNELS} (VBUS_MAX_CHANNELS in lib/vbus.h: "
                "a region's pending masks are 32-bit)",
            )
        device = self.vbus_device(drafts, board, len(chans))
        if self.errors:
            return VbusPlan()
        plan = VbusPlan(device=device)
        for part in rtos_parts:
            mine = [c for c in chans if c.rtos is part]
            if not mine:
                continue
            sizes = [(c.to_linux or 0, c.to_rtos or 0) for c in mine]
            offsets, size = vbus_layout(sizes)
            region = self.place_region(part, size, [c.name or "" for c in mine])
            if region is None:
                continue
            plan.regions[part.index] = region
            for index, (c, (chan_off, tl_off, tr_off)) in enumerate(zip(mine, offsets, strict=True)):
                plan.channels.append(
                    Channel(
                        name=c.name or "",
                        rtos=part.name or "",
                        index=index,
                        to_linux=c.to_linux or 0,
                        to_rtos=c.to_rtos or 0,
                        chan_off=chan_off,
                        to_linux_off=tl_off,
                        to_rtos_off=tr_off,
                    )
                )
        order = {c.name: i for i, c in enumerate(chans)}
        plan.channels.sort(key=lambda c: order[c.name])
        return plan

    def load_channel(
        self, i: int, table: dict[str, Any], drafts: list[PartDraft], rtos_parts: list[PartDraft]
    ) -> _Draft:
        c = _Draft(f"channel #{i + 1}")
        name = table.get("name")
        if name is None:
            self.error(c.label, 'name is missing (the port name Linux shows, e.g. name = "echo")')
        elif not isinstance(name, str):
            self.wrong_type(c.label, "name", name, "a string")
        elif not VBUS_NAME_RE.match(name) or len(name) >= VBUS_NAME_SIZE:
            self.error(
                c.label,
                f"name {name!r} must be 1..{VBUS_NAME_SIZE - 1} characters of A-Z a-z 0-9 . _ -, not "
                "starting with '.' (Linux makes the file /dev/virtio-ports/NAME of it)",
            )
        elif name == VBUS_STATS_PORT:
            self.error(
                c.label,
                f"name {name!r} is the hypervisor's own port (the V-Bus counters, "
                f"/dev/virtio-ports/{VBUS_STATS_PORT}); choose another",
            )
        elif name in SERVICE_CHANNELS:
            self.error(
                c.label,
                f"name {name!r} is a service's channel, which the tools add for [services] "
                "(docs/configuration.md); choose another",
            )
        elif name.startswith(RESERVED_CHANNEL_PREFIX):
            self.error(
                c.label,
                f"name {name!r} starts with '{RESERVED_CHANNEL_PREFIX}', which is kept for rtmux's own "
                f"channels ({', '.join((VBUS_STATS_PORT, *SERVICE_CHANNELS))}, and those to come); "
                "choose another",
            )
        else:
            c.name = name
            c.label = f"channel {name!r}"
        self.check_keys(c.label, table, CHANNEL_KEYS)
        c.rtos = self.serving_partition(c.label, table, drafts, rtos_parts)
        self.load_sizes(c, table)
        return c

    def serving_partition(
        self, ctx: str, table: dict[str, Any], drafts: list[PartDraft], rtos_parts: list[PartDraft]
    ) -> PartDraft | None:
        rtos_names = ", ".join(d.name for d in rtos_parts if d.name) or "none"
        if "rtos" not in table:
            if len(rtos_parts) == 1:
                return rtos_parts[0]
            if not rtos_parts:
                self.error(ctx, "no partition of kind 'rtos' serves it (the system has none)")
            else:
                self.error(
                    ctx,
                    f"rtos is missing: the system has {len(rtos_parts)} rtos partitions ({rtos_names}); "
                    "name the one that serves the channel",
                )
            return None
        value = self.get_str(ctx, table, "rtos")
        if value is None:
            return None
        found = next((d for d in drafts if d.name == value), None)
        if found is None:
            self.error(ctx, f"rtos {value!r} is not a partition (rtos partitions: {rtos_names})")
            return None
        if found.kind != KIND_RTOS:
            self.error(
                ctx,
                f"rtos {value!r} is a partition of kind '{found.kind}': an rtos partition serves a channel "
                f"(rtos partitions: {rtos_names})",
            )
            return None
        return found

    def load_sizes(self, c: _Draft, table: dict[str, Any]) -> None:
        """`size` for both directions (default DEFAULT_CHANNEL_SIZE), `to_linux`/`to_rtos` for one."""
        if "size" in table and "to_linux" in table and "to_rtos" in table:
            self.error(c.label, "size has no effect when both to_linux and to_rtos are given; remove it")
        both = self.ring_size(c.label, table, "size")
        if both is None and "size" in table:
            both = 0  # reported; keep the other checks quiet
        default = both if both is not None else DEFAULT_CHANNEL_SIZE
        to_linux = self.ring_size(c.label, table, "to_linux")
        to_rtos = self.ring_size(c.label, table, "to_rtos")
        c.to_linux = to_linux if to_linux is not None else default
        c.to_rtos = to_rtos if to_rtos is not None else default

    def ring_size(self, ctx: str, table: dict[str, Any], key: str) -> int | None:
        if key not in table:
            return None
        value = self.get_size(ctx, table[key], key)
        if value is None:
            return None
        if not is_power_of_two(value) or not VBUS_RING_MIN <= value <= VBUS_RING_MAX:
            self.error(
                ctx,
                f"{key} {show(table[key])} must be a power of two from {size_text(VBUS_RING_MIN)} to "
                f"{size_text(VBUS_RING_MAX)} (data bytes per direction; lib/vbus.h)",
            )
            return None
        return value

    def vbus_device(self, drafts: list[PartDraft], board: Board, count: int) -> VbusDevice | None:
        linux = [d for d in drafts if d.kind == KIND_LINUX]
        if not linux:
            self.error(
                "[[channel]]",
                f"{count} channel{'s' if count != 1 else ''} but no partition of kind 'linux': the V-Bus "
                "device (its ports) goes into the Linux partition",
            )
            return None
        if len(linux) > 1:
            names = ", ".join(d.name or f"#{d.index + 1}" for d in linux)
            self.error(
                "[[channel]]",
                f"the V-Bus device goes into one Linux partition, but the system has {len(linux)} "
                f"({names}); channels need exactly one",
            )
            return None
        if board.vbus is None:
            self.error("[[channel]]", f"the board {board.name} has no place for the V-Bus device")
            return None
        # No device of the Linux partition covers the page, nor claims the interrupt: the board lists
        # both as its "vbus" device, which no [[partition.device]] may be given.
        return VbusDevice(linux[0].name or "", board.vbus.regions[0], board.vbus.interrupts[0])

    def place_region(self, part: PartDraft, size: int, names: list[str]) -> Region | None:
        """Right below the DTB slot; the RAM must hold it with the slot (the image is checked against it
        once it is built: payload_layout)."""
        if part.ram is None:
            return None  # its memory was reported
        ram = part.ram
        if size + DTB_SLOT > ram.size:
            self.error(
                part.label,
                f"memory {size_text(ram.size)} cannot hold its V-Bus region of {size_text(size)} "
                f"(channels {', '.join(names)}) and the {size_text(DTB_SLOT)} DTB slot",
            )
            return None
        return Region(ram.ipa + ram.size - DTB_SLOT - size, size)
