"""The resolved form of a system configuration (what `rtmux.config.load` returns) and the limits it is
checked against: the hypervisor's (hyp/include/hyp/hyp.h) and those of the blob's fixed-size records."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rtmux import board as boards
from rtmux import paths
from rtmux.board import KIB, MIB, Board, Region, hexa
from rtmux.errors import SetupError

DEFAULT_CONFIG = paths.REPO_ROOT / "configs" / "qemu-virt.toml"

KINDS = ("rtos", "linux")
KIND_RTOS = "rtos"
KIND_LINUX = "linux"
RAM_ALIGN = 2 * MIB  # partition RAM: base and size (stage-2 block size)
PAGE = boards.PAGE_SIZE  # stage 2 maps devices by whole pages
DTB_SLOT = 2 * MIB  # the top 2 MiB of a partition's RAM hold its DTB (arm64 boot protocol maximum)
INITRD_ALIGN = 4 * KIB
RTOS_IPA = 0x4000_0000  # where the rtos is linked to find its RAM (QEMU virt's RAM base)
DEFAULT_HYP_MEMORY = 128 * MIB
# The rtos's console ring (lib/conring.h): a 64-byte header and 16 KiB of data (the hypervisor drains it
# every 4 ms; the demo writes ~200 bytes a second), in the last 32 KiB of the rtos partition's RAM, inside
# its DTB slot above the small DTB.
CONRING_HEADER = 64
CONRING_DATA = 16 * KIB
CONRING_REGION = 32 * KIB

# The V-Bus (lib/include/lib/vbus.h, the one definition; tests/unit/python/test_vbus_header.py compiles it
# and compares these): channel limits, ring sizes and the layout of a region.
VBUS_MAX_CHANNELS = 32  # the pending masks are 32-bit
VBUS_NAME_SIZE = 32  # NUL-padded: at most 31 characters
VBUS_RING_MIN = 256  # data bytes per direction: a power of two in [MIN, MAX]
VBUS_RING_MAX = 1 * MIB
VBUS_ALIGN = 64  # every structure and ring in a region starts on a cache line
VBUS_REGION_HEADER = 64  # sizeof(struct vbus_region)
VBUS_CHAN_SIZE = 128  # sizeof(struct vbus_chan)
VBUS_RING_HEADER = 128  # VBUS_RING_HEADER_SIZE: struct vbus_ring before its data
VBUS_SGI_TO_RTOS = 14  # the doorbell the hypervisor rings on the rtos's CPU
VBUS_SGI_TO_HYP = 15  # the doorbell the rtos rings on the Linux CPU the DTB names
DEFAULT_CHANNEL_SIZE = 16 * KIB
# VBUS_STATS_PORT: the port the hypervisor serves itself (its counters); no channel may take its name.
VBUS_STATS_PORT = "rtmux-stats"
# Every channel name starting with this is rtmux's own (the counters, the services' channels below, those
# of services to come): a [[channel]] may not take one.
RESERVED_CHANNEL_PREFIX = "rtmux-"

# Linux's services for rtos threads ([services]; docs/architecture.md, "Linux's services"): files (9P2000.L,
# served in Linux by Debian's diod), logs (the rtos's lines kept by Linux), sockets (rtmux-netd) and the
# rtos's thread statistics (for rtmux-top). Each
# service has a channel of its own that the tools add, with these fixed names and sizes (the rtos finds
# them by name).
FILES_CHANNEL = "rtmux-files"
FILES_CHANNEL_SIZE = 16 * KIB  # each way: a 9P request or reply of a few KiB in flight
LOG_CHANNEL = "rtmux-log"
LOG_TO_LINUX = 4 * KIB  # the rtos's log lines
LOG_TO_RTOS = 256  # the smallest ring: Linux sends nothing back
NET_CHANNEL = "rtmux-net"
NET_CHANNEL_SIZE = 32 * KIB  # each way: a few 8 KiB sends or receives in flight (lib/netproto.h)
# The rtos's thread statistics for Linux's rtmux-top (rtos/threadstat.h): a snapshot of up to 64 threads
# is about 9 KiB to Linux; requests are lines of at most 80 bytes.
THREADS_CHANNEL = "rtmux-threads"
THREADS_TO_LINUX = 16 * KIB
THREADS_TO_RTOS = 256
SERVICE_CHANNELS = (FILES_CHANNEL, LOG_CHANNEL, NET_CHANNEL, THREADS_CHANNEL)
MAX_SERVICE_DIRS = 8
MAX_SERVICE_PATH = 128  # bytes of one exported directory's or the log file's path
LOG_OFF = "off"
LOG_SYSLOG = "syslog"
LOG_FILE_PREFIX = "file:"
# What Linux's init reads (guest/initramfs/services, /sbin/rtmux-services): the exported directories,
# comma-separated, ":ro" after a read-only one, and where the rtos's log goes.
FILES_BOOTARG = "rtmux.files"
LOG_BOOTARG = "rtmux.log"
NET_BOOTARG = "rtmux.net"  # rtmux.net=1: run rtmux-netd on the rtmux-net channel
SERVICES_BOOTARG_KEYS = (FILES_BOOTARG, LOG_BOOTARG, NET_BOOTARG)
READ_ONLY_SUFFIX = ":ro"

# The console's focus view (hyp/core/conmux.c, HOLD_SIZE and HOLD_STATUS_S): what the hypervisor keeps of
# each background partition's lines (the newest; older ones are dropped and counted) and how often it
# shows the latest of them. tests/unit/python/test_config.py compares them with the C source.
CONSOLE_HOLD_SIZE = 32 * 1024
CONSOLE_STATUS_S = 10
# A port name as Linux shows it (/dev/virtio-ports/NAME, /sys/class/virtio-ports/vportNpM/name): it
# becomes a file name, so no '/', no leading '.' (no "." or ".."), nothing a shell would need quoted.
VBUS_NAME_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
# Where an rtos partition's V-Bus region lies: right below its DTB slot (the top DTB_SLOT bytes of its
# RAM, whose last CONRING_REGION bytes hold the console ring), page aligned. The rtos uses its RAM as
# its image from text_offset up to the Image header's image_size: code, data, BSS and, inside BSS,
# every stack (lib/arm64/image.ld.S; the boot stack in rtos/arch/arm64/start.S, thread stacks are
# static RT_STACK_DEFINE arrays; no heap); then the DTB slot at the top. Nothing of its own lies
# between the end of its image and the DTB slot, so the region's place depends only on the RAM's size
# and the region's (not on the image, which changes with every build), and `payload_layout` refuses an
# image that would reach into it. The region keeps clear of the 2 MiB the boot protocol allows a DTB.

# Limits of the hypervisor (hyp/include/hyp/hyp.h) and of the blob's fixed-size records (rtmux.image.blob).
MAX_PARTITIONS = 4
MAX_CPUS = 8
# CPUs of an rtos partition: the rtos is single-core (it owns its CPU's physical GIC interface, which
# the hypervisor never touches, so it has no way to start a further CPU of the partition); a Linux
# partition may have any number of the board's CPUs (hyp/core/config.c checks the same at boot).
MAX_RTOS_CPUS = 1
MAX_DEVICES = 8
MAX_IRQS = 32
MAX_STREAMS = 2  # ranges of IOMMU stream IDs per partition (blob: BLOB_MAX_STREAMS)
MAX_NAME = 15  # name and tag: bytes, without the NUL

# How a device's DMA is isolated (`dma` of [[partition.device]]): "iommu" confines it to the partition's
# RAM through the board's IOMMU; "unrestricted" accepts that it can reach all RAM (a board without an
# IOMMU); "none": the device cannot master DMA.
DMA_IOMMU = "iommu"
DMA_UNRESTRICTED = "unrestricted"
DMA_NONE = "none"
DMA_MODES = (DMA_IOMMU, DMA_UNRESTRICTED, DMA_NONE)

# What a fault of a partition does (`fault` of [[partition]]; hyp/core/lifecycle.c): a Linux panic, an rtos
# fatal error, an SError or an unexpected trap either stops the partition or restarts it from its pristine
# images, at most max_restarts times within any window_s seconds (the next fault in the window stops it).
FAULT_STOP = "stop"
FAULT_RESTART = "restart"
FAULT_POLICIES = (FAULT_STOP, FAULT_RESTART)
MAX_RESTARTS = 16  # restarts the hypervisor remembers per partition (blob: BLOB_MAX_RESTARTS)
MAX_RESTART_WINDOW_S = 24 * 3600
# A Linux panic reaches the hypervisor as a warm PSCI SYSTEM_RESET2: with these arguments the kernel resets
# at once after a panic (panic=-1), and warm (reboot=panic_warm), while an ordinary reboot stays cold
# (SYSTEM_RESET). The tools append them to every Linux partition's command line.
LINUX_FAULT_BOOTARGS = "panic=-1 reboot=panic_warm"
LINUX_FAULT_BOOTARG_KEYS = ("panic", "reboot")


def linux_bootargs(bootargs: str, services: Services | None = None) -> str:
    """A Linux partition's command line as its DTB carries it: the configured one + the fault arguments +
    what the services tell Linux (Services.linux_bootargs)."""
    extra = services.linux_bootargs() if services is not None else ""
    return f"{bootargs} {LINUX_FAULT_BOOTARGS} {extra}".strip()


NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
TAG_RE = re.compile(r"^[!-~]+$")  # printable ASCII, no spaces

# Console escape keys that would break something: QEMU's own escape, signals, flow control, line editing.
ESCAPE_REFUSED = {
    "a": "QEMU -nographic uses Ctrl-A as its own escape",
    "c": "Ctrl-C must reach the focused partition (interrupt)",
    "d": "Ctrl-D must reach the focused partition (end of input)",
    "h": "Ctrl-H is backspace",
    "i": "Ctrl-I is Tab",
    "j": "Ctrl-J is newline",
    "m": "Ctrl-M is Enter",
    "q": "Ctrl-Q is XON flow control",
    "s": "Ctrl-S is XOFF flow control",
    "z": "Ctrl-Z must reach the focused partition (suspend)",
}
DEFAULT_ESCAPE = "ctrl-t"
# What the console shows (`[console] view`): every partition's lines as they come ("all"), or only the
# focused partition's, the others' held and replayed when they get the focus, with a status line every
# 10 s ("focus"). "auto": focus when a person watches (./rtmux run on a terminal), all otherwise (tests,
# --linux-cmd, benchmarks and pipes read every line).
VIEW_ALL = "all"
VIEW_FOCUS = "focus"
VIEW_AUTO = "auto"
VIEWS = (VIEW_AUTO, VIEW_ALL, VIEW_FOCUS)


def default_linux_bootargs(board: Board) -> str:
    uart = board.uart.regions[0].base
    return f"console=ttyAMA0 earlycon=pl011,mmio32,{uart:#x}"


def align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def page_round(r: Region) -> Region:
    base = r.base // PAGE * PAGE
    return Region(base, align_up(r.end, PAGE) - base)


def range_text(r: Region) -> str:
    return f"{hexa(r.base)}..{hexa(r.end)}"


# ------------------------------------------------------------------------------------------ resolved form
@dataclass(frozen=True)
class Image:
    """A file a partition boots from."""

    role: str  # "image" (rtos), "kernel", "initramfs"
    text: str  # as written in the configuration
    path: Path
    exists: bool
    build: str | None  # the command that produces it, when a build step does

    def status(self) -> str:
        if self.exists:
            return f"{self.path.stat().st_size} bytes"
        return f"not built yet: `{self.build}`"


@dataclass(frozen=True)
class Mapping:
    """A range a partition sees at `ipa`, backed by physical `pa`."""

    ipa: int
    pa: int
    size: int

    @property
    def ipa_region(self) -> Region:
        return Region(self.ipa, self.size)

    @property
    def pa_region(self) -> Region:
        return Region(self.pa, self.size)


@dataclass(frozen=True)
class AssignedDevice:
    name: str
    board_device: str | None  # the board's device name, when the range is one
    mmio: tuple[Region, ...]  # exact device ranges (what the device tree describes)
    interrupts: tuple[int, ...]  # INTIDs
    qemu_args: tuple[str, ...] = ()
    implicit: bool = False  # added by the tool (the rtos's own redistributor frames)
    dma: str = DMA_NONE  # one of DMA_MODES
    streams: Region | None = None  # with dma "iommu": its stream IDs at the board's IOMMU

    @property
    def pages(self) -> tuple[Region, ...]:
        """The ranges rounded out to whole 4 KiB pages: what stage 2 maps."""
        return tuple(page_round(r) for r in self.mmio)

    @property
    def network(self) -> bool:
        """Whether QEMU puts a network behind it (-netdev, -nic): its answers come from the host."""
        return any(a in ("-netdev", "-nic") for a in self.qemu_args)


@dataclass(frozen=True)
class FaultPolicy:
    policy: str  # one of FAULT_POLICIES
    max_restarts: int = 0  # FAULT_RESTART: 1..MAX_RESTARTS
    window_s: int = 0  # FAULT_RESTART: seconds

    def text(self) -> str:
        if self.policy == FAULT_RESTART:
            return f"restart, at most {self.max_restarts} in {self.window_s} s, then stop"
        return "stop"


# Linux restarts after a fault, as an embedded Linux with panic=N would; the rtos stops (a controller whose
# software failed should not come back by itself unless its configuration says so).
DEFAULT_FAULT = {
    KIND_LINUX: FaultPolicy(FAULT_RESTART, 3, 60),
    KIND_RTOS: FaultPolicy(FAULT_STOP),
}


@dataclass(frozen=True)
class Partition:
    index: int
    name: str
    kind: str
    cpus: tuple[int, ...]
    ram: Mapping
    base_given: bool
    tag: str
    bootargs: str
    images: tuple[Image, ...]
    devices: tuple[AssignedDevice, ...]
    fault: FaultPolicy = FaultPolicy(FAULT_STOP)
    vbus: Region | None = None  # rtos: its V-Bus region (IPAs), when it serves channels
    # rtos: its CPU also runs the Linux partition that lists it, while the rtos is idle (shared-core mode),
    # and how long Linux may go without running there before the hypervisor says so (ms; 0 unless shared)
    shared: bool = False
    starved_ms: int = 0

    @property
    def vbus_top(self) -> int:
        """The IPA below which the image (and a Linux initramfs) must end: the V-Bus region, else the
        DTB slot."""
        return self.vbus.base if self.vbus is not None else self.ram.ipa + self.ram.size - DTB_SLOT

    @property
    def cpu_mask(self) -> int:
        return sum(1 << c for c in self.cpus)

    @property
    def boot_cpu(self) -> int:
        return min(self.cpus)

    @property
    def interrupts(self) -> tuple[int, ...]:
        return tuple(sorted({i for d in self.devices for i in d.interrupts}))

    @property
    def streams(self) -> tuple[Region, ...]:
        """The IOMMU stream IDs whose DMA the hypervisor confines to this partition's RAM."""
        return tuple(d.streams for d in self.devices if d.dma == DMA_IOMMU and d.streams is not None)

    def image(self, role: str) -> Image | None:
        for img in self.images:
            if img.role == role:
                return img
        return None


@dataclass(frozen=True)
class Console:
    tags: bool
    escape: str  # "ctrl-t"
    focus: str  # name of the partition that has the input at boot
    view: str = VIEW_AUTO  # one of VIEWS

    def resolved(self, interactive: bool) -> Console:
        """The console with "auto" decided: focus view for a person at a terminal, all lines otherwise."""
        if self.view != VIEW_AUTO:
            return self
        return replace(self, view=VIEW_FOCUS if interactive else VIEW_ALL)

    @property
    def escape_byte(self) -> int:
        return ord(self.escape[-1]) - 0x60


@dataclass(frozen=True)
class Channel:
    """One V-Bus channel: a named virtio console port in the Linux partition, served by an rtos
    partition through two byte rings in that partition's V-Bus region (lib/vbus.h)."""

    name: str
    rtos: str  # the serving partition's name
    index: int  # n in its region: bit n of the pending masks, /rtmux-vbus/channel@n in the rtos's DTB
    to_linux: int  # data bytes of each ring (powers of two)
    to_rtos: int
    # Offsets from the region's start: its struct vbus_chan, then each ring's struct vbus_ring (the
    # data follows the ring's VBUS_RING_HEADER bytes).
    chan_off: int
    to_linux_off: int
    to_rtos_off: int


@dataclass(frozen=True)
class VbusDevice:
    """The V-Bus's virtio-mmio console device in the Linux partition (emulated by the hypervisor)."""

    partition: str  # the Linux partition's name
    mmio: Region  # its register page, an IPA range (its first board.VIRTIO_MMIO_SIZE bytes are registers)
    intid: int  # its interrupt as Linux sees it (an SPI, virtual)


@dataclass(frozen=True)
class ServiceDir:
    """A Linux directory the files service exports: the rtos reaches it as /linux<path>."""

    path: str  # absolute, normalised, not "/"
    read_only: bool = False


@dataclass(frozen=True)
class Services:
    """[services]: what Linux offers the (one) rtos partition's threads, each over its own channel."""

    dirs: tuple[ServiceDir, ...] = ()  # in configuration order
    log: str = LOG_OFF  # LOG_OFF, LOG_SYSLOG or LOG_FILE_PREFIX + an absolute path
    network: bool = False  # sockets through Linux (rtmux-netd)
    threads: bool = False  # the rtos's thread statistics for rtmux-top

    @property
    def log_file(self) -> str | None:
        return self.log.removeprefix(LOG_FILE_PREFIX) if self.log.startswith(LOG_FILE_PREFIX) else None

    def channels(self) -> list[tuple[str, int, int]]:
        """(name, to_linux, to_rtos) of each service's channel, in the order the tools add them."""
        out = []
        if self.dirs:
            out.append((FILES_CHANNEL, FILES_CHANNEL_SIZE, FILES_CHANNEL_SIZE))
        if self.log != LOG_OFF:
            out.append((LOG_CHANNEL, LOG_TO_LINUX, LOG_TO_RTOS))
        if self.network:
            out.append((NET_CHANNEL, NET_CHANNEL_SIZE, NET_CHANNEL_SIZE))
        if self.threads:
            out.append((THREADS_CHANNEL, THREADS_TO_LINUX, THREADS_TO_RTOS))
        return out

    def files_bootarg(self) -> str:
        """rtmux.files's value: the directories, comma-separated, READ_ONLY_SUFFIX after a read-only one."""
        return ",".join(d.path + (READ_ONLY_SUFFIX if d.read_only else "") for d in self.dirs)

    def linux_bootargs(self) -> str:
        """What Linux's command line gets: rtmux.files= when a directory is exported, rtmux.log= when the
        log is not off (the check keeps spaces and commas out of every path), rtmux.net=1 with sockets."""
        args = []
        if self.dirs:
            args.append(f"{FILES_BOOTARG}={self.files_bootarg()}")
        if self.log != LOG_OFF:
            args.append(f"{LOG_BOOTARG}={self.log}")
        if self.network:
            args.append(f"{NET_BOOTARG}=1")
        return " ".join(args)


def vbus_layout(sizes: Sequence[tuple[int, int]]) -> tuple[list[tuple[int, int, int]], int]:
    """A region's layout for channels with (to_linux, to_rtos) data sizes: per channel (chan_off,
    to_linux_off, to_rtos_off), and the region's size, a whole number of pages. struct vbus_region
    first, then every channel's struct vbus_chan (the control blocks together), then the rings in
    channel order; every piece a multiple of VBUS_ALIGN, so every offset is aligned."""
    off = VBUS_REGION_HEADER + len(sizes) * VBUS_CHAN_SIZE
    out = []
    for i, (to_linux, to_rtos) in enumerate(sizes):
        to_linux_off = off
        to_rtos_off = to_linux_off + VBUS_RING_HEADER + to_linux
        off = to_rtos_off + VBUS_RING_HEADER + to_rtos
        out.append((VBUS_REGION_HEADER + i * VBUS_CHAN_SIZE, to_linux_off, to_rtos_off))
    return out, align_up(off, PAGE)


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class SystemConfig:
    path: Path
    board: Board
    hypervisor: Region
    console: Console
    partitions: tuple[Partition, ...]
    notes: tuple[str, ...] = ()
    channels: tuple[Channel, ...] = ()  # in configuration order
    vbus: VbusDevice | None = None  # present when there are channels
    services: Services | None = None  # [services]; None without the table

    def channels_of(self, part: Partition) -> list[Channel]:
        """The channels an rtos partition serves, in region order (index 0, 1, ...)."""
        return sorted((c for c in self.channels if c.rtos == part.name), key=lambda c: c.index)

    def console_ring(self, part: Partition) -> Region | None:
        """Where an rtos partition's console ring lies (base: its header, at an IPA; size: its data
        bytes), or None. Only a system with a Linux partition has one: the hypervisor drains the ring on
        a Linux CPU; alone, the rtos writes to its emulated PL011 (the hypervisor prints from its CPU)."""
        if part.kind != KIND_RTOS or not self.of_kind(KIND_LINUX):
            return None
        return Region(part.ram.ipa + part.ram.size - CONRING_REGION, CONRING_DATA)

    def partition(self, name: str) -> Partition:
        for p in self.partitions:
            if p.name == name:
                return p
        raise KeyError(name)

    def of_kind(self, kind: str) -> list[Partition]:
        return [p for p in self.partitions if p.kind == kind]

    def qemu_args(self) -> list[str]:
        """The board's QEMU options followed by those of every device (e.g. a user-mode network)."""
        args = self.board.qemu_args()
        for p in self.partitions:
            for d in p.devices:
                args += d.qemu_args
        return args


class ConfigError(SetupError):
    """An invalid configuration: every problem found, one message each."""

    def __init__(self, path: str, errors: Sequence[str]) -> None:
        self.path = path
        self.errors = list(errors)
        count = f"{len(self.errors)} error{'s' if len(self.errors) != 1 else ''}"
        super().__init__(f"{count} in {path}:\n" + "\n".join(f"  {e}" for e in self.errors))
