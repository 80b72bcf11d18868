"""System configurations (configs/*.toml): load, validate, place, describe.

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
reads is built by `rtmux.blob`.
"""

from __future__ import annotations

import difflib
import re
import shlex
import struct
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtmux import board as boards
from rtmux import paths
from rtmux.board import GIB, KIB, MIB, Board, Device, Region, hexa, intid_text, size_text
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

# Limits of the hypervisor (hyp/include/hyp/hyp.h) and of the blob's fixed-size records (rtmux.blob).
MAX_PARTITIONS = 4
MAX_CPUS = 8
# The hypervisor gives each partition one CPU (hyp/core/config.c refuses more at boot): no SMP
# partition yet (no vCPU start/stop, no cross-CPU vGIC state).
MAX_PARTITION_CPUS = 1
MAX_DEVICES = 8
MAX_IRQS = 32
MAX_NAME = 15  # name and tag: bytes, without the NUL

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
TAG_RE = re.compile(r"^[!-~]+$")  # printable ASCII, no spaces

# Console escape keys that would break something: QEMU's own escape, signals, flow control, line editing.
_ESCAPE_REFUSED = {
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

ARM64_MAGIC = b"ARM\x64"
ARM64_HEADER = struct.Struct("<IIQQQQQQ4sI")  # code0 code1 text_offset image_size flags res2-4 magic res5


def default_linux_bootargs(board: Board) -> str:
    uart = board.uart.regions[0].base
    return f"console=ttyAMA0 earlycon=pl011,mmio32,{uart:#x}"


# ------------------------------------------------------------------------------------------ build steps
def build_products() -> dict[str, str]:
    """Files a build step produces (path relative to the repository root) -> the command that builds them."""
    products = {f"build/rtos/{app}.img": "make rtos" for app in paths.RTOS_APPS}
    for rel, command in _linux_products().items():
        products[rel] = command
    return products


# The ./rtmux commands that fetch the Debian kernel and build the initramfs (tools/rtmux/debian.py,
# initramfs.py, linux.py).
LINUX_FETCH_COMMAND = "./rtmux linux fetch"
DEBIAN_KERNEL_PREFIX = "debian:"  # kernel = "debian:std": Debian's current kernel of that flavour


def linux_initramfs_command(flavour: str) -> str:
    return f"./rtmux linux initramfs --kernel {flavour}"


def _linux_flavours() -> tuple[str, ...]:
    try:
        from rtmux import debian
    except ImportError:
        return ()
    return tuple(debian.FLAVOURS)


def _linux_products() -> dict[str, str]:
    try:
        from rtmux import initramfs
    except ImportError:
        return {}
    return {_rel(initramfs.output_path(f)): linux_initramfs_command(f) for f in _linux_flavours()}


def resolve_debian_kernel(flavour: str) -> Path | None:
    """The Image of Debian's kernel `flavour` in the package cache, or None while it is not fetched."""
    from rtmux import debian

    unpacked = debian.cached(debian.kernel_role(flavour))
    if unpacked is None:
        return None
    try:
        return debian.kernel_from(flavour, unpacked).image
    except SetupError:
        return None


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.REPO_ROOT))
    except ValueError:
        return str(path)


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

    @property
    def pages(self) -> tuple[Region, ...]:
        """The ranges rounded out to whole 4 KiB pages: what stage 2 maps."""
        return tuple(_page_round(r) for r in self.mmio)


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

    @property
    def cpu_mask(self) -> int:
        return sum(1 << c for c in self.cpus)

    @property
    def boot_cpu(self) -> int:
        return min(self.cpus)

    @property
    def interrupts(self) -> tuple[int, ...]:
        return tuple(sorted({i for d in self.devices for i in d.interrupts}))

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

    @property
    def escape_byte(self) -> int:
        return ord(self.escape[-1]) - 0x60


@dataclass(frozen=True)
class SystemConfig:
    path: Path
    board: Board
    hypervisor: Region
    console: Console
    partitions: tuple[Partition, ...]
    notes: tuple[str, ...] = ()

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


# ------------------------------------------------------------------------------------------ arm64 images
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
    initramfs right below the DTB (4 KiB aligned), above everything the kernel occupies.
    """
    ram = part.ram
    kernel_ipa = ram.ipa + header.text_offset
    kernel_end = kernel_ipa + max(header.image_size, kernel_file_size)
    dtb_ipa = ram.ipa + ram.size - DTB_SLOT
    initrd_ipa = (dtb_ipa - initrd_size) & ~(INITRD_ALIGN - 1) if initrd_size else 0
    top = initrd_ipa if initrd_size else dtb_ipa
    if kernel_end > top:
        what = f"{part.kind} image of {size_text(kernel_end - kernel_ipa)}"
        if initrd_size:
            what += f" + initramfs of {size_text(initrd_size)}"
        need = kernel_end - ram.ipa + (dtb_ipa - top) + DTB_SLOT
        raise ValueError(
            f"memory.size {size_text(ram.size)} is too small for the {what} + {size_text(DTB_SLOT)} DTB slot "
            f"(needs at least {size_text(_align_up(need, RAM_ALIGN))})"
        )
    return PayloadLayout(kernel_ipa, kernel_end, initrd_ipa, initrd_size, dtb_ipa)


# ------------------------------------------------------------------------------------------ loading
def load(path: Path | str) -> SystemConfig:
    """Read, validate and place a configuration; ConfigError lists every problem."""
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
    return _Loader(where, path).load(data)


def loads(text: str, where: str = "<config>") -> SystemConfig:
    """`load` for a string (tests)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(where, [f"{where}: TOML syntax error: {exc}"]) from None
    return _Loader(where, Path(where)).load(data)


TOP_KEYS = ("description", "board", "hypervisor", "console", "partition")
BOARD_KEYS = ("name", "cpus", "memory")
HYP_KEYS = ("memory",)
CONSOLE_KEYS = ("tags", "escape", "focus")
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
    "device",
)
KIND_KEYS = {KIND_RTOS: ("image",), KIND_LINUX: ("kernel", "initramfs")}
MEMORY_KEYS = ("size", "base")
PART_CONSOLE_KEYS = ("tag",)
DEVICE_KEYS = ("name", "board", "mmio", "interrupts", "qemu")
MMIO_KEYS = ("base", "size")

_SIZE_RE = re.compile(r"^\s*(0x[0-9a-f_]+|[0-9][0-9_]*)\s*(k|m|g|kib|mib|gib|kb|mb|gb)?\s*$", re.IGNORECASE)
_UNITS = {"k": KIB, "m": MIB, "g": GIB}


def parse_size(value: object) -> int:
    """ "16M", "512 KiB", "0x100_0000", 4096 -> bytes; ValueError otherwise (negative included)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError("is negative")
        return value
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError("is not a size (examples: 16M, 512K, 1G, 0x100_0000)")
    digits = m.group(1).replace("_", "").lower()
    number = int(digits, 16) if digits.startswith("0x") else int(digits, 10)
    unit = m.group(2)
    return number * (_UNITS[unit[0].lower()] if unit else 1)


def parse_address(value: object) -> int:
    """ "0x4800_0000", 1207959552 -> int; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError("is negative")
        return value
    text = value.strip().replace("_", "")
    try:
        number = int(text, 16) if text.lower().startswith("0x") else int(text, 10)
    except ValueError:
        raise ValueError("is not an address (write it as hex, e.g. 0x4800_0000)") from None
    if number < 0:
        raise ValueError("is negative")
    return number


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date/time"


def _show(value: object) -> str:
    """A value as it appears in messages: strings quoted, tables and arrays abbreviated."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, list):
        return "[...]"
    return str(value)


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _page_round(r: Region) -> Region:
    base = r.base // PAGE * PAGE
    return Region(base, _align_up(r.end, PAGE) - base)


def _range_text(r: Region) -> str:
    return f"{hexa(r.base)}..{hexa(r.end)}"


@dataclass
class _PartDraft:
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


class _Loader:
    def __init__(self, where: str, path: Path) -> None:
        self.where = where
        self.path = path
        self.errors: list[str] = []
        self.notes: list[str] = []

    # ---- reporting
    def error(self, ctx: str, message: str) -> None:
        self.errors.append(f"{self.where}: {ctx}: {message}" if ctx else f"{self.where}: {message}")

    def check_keys(self, ctx: str, table: dict[str, Any], known: Iterable[str], prefix: str = "") -> None:
        known = list(known)
        for key in table:
            if key in known:
                continue
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"did you mean '{prefix}{close[0]}'?" if close else "known keys: " + ", ".join(known)
            self.error(ctx, f"unknown key '{prefix}{key}' ({hint})")

    def wrong_type(self, ctx: str, key: str, value: object, expected: str) -> None:
        self.error(ctx, f"{key} must be {expected}, not {_show(value)} ({_type_name(value)})")

    def get_table(self, ctx: str, table: dict[str, Any], key: str) -> dict[str, Any] | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.wrong_type(ctx, key, value, "a table")
            return None
        return value

    def get_str(self, ctx: str, table: dict[str, Any], key: str, name: str | None = None) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong_type(ctx, name or key, value, "a string")
            return None
        return value

    def get_size(self, ctx: str, value: object, name: str) -> int | None:
        try:
            return parse_size(value)
        except TypeError:
            self.wrong_type(ctx, name, value, 'a size (a string such as "16M", or an integer)')
        except ValueError as exc:
            self.error(ctx, f"{name} {_show(value)} {exc}")
        return None

    def get_address(self, ctx: str, value: object, name: str) -> int | None:
        try:
            return parse_address(value)
        except TypeError:
            self.wrong_type(
                ctx, name, value, 'an address (a hex string such as "0x4800_0000", or an integer)'
            )
        except ValueError as exc:
            self.error(ctx, f"{name} {_show(value)} {exc}")
        return None

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
        if self.errors:
            raise ConfigError(self.where, self.errors)
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
            )
            for d in drafts
        )
        config = SystemConfig(self.path, board, hyp, console, parts, tuple(self.notes))
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
        return boards.qemu_virt(cpus=cpus, memory=memory or GIB)

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

    def load_console(self, data: dict[str, Any], drafts: list[_PartDraft]) -> Console:
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
            elif m.group(1) in _ESCAPE_REFUSED:
                self.error(ctx, f"escape {text!r} cannot be used: {_ESCAPE_REFUSED[m.group(1)]}")
            else:
                escape = f"ctrl-{m.group(1)}"
        names = [d.name for d in drafts if d.name]
        focus = self.get_str(ctx, table, "focus")
        if focus is not None and focus not in names:
            self.error(ctx, f"focus {focus!r} is not a partition (partitions: {', '.join(names) or 'none'})")
        if focus is None or focus not in names:
            linux = [d.name for d in drafts if d.kind == KIND_LINUX and d.name]
            focus = linux[0] if linux else (names[0] if names else "")
        return Console(tags=tags, escape=escape, focus=focus)

    # ---- partitions
    def load_partitions(self, data: dict[str, Any], board: Board) -> list[_PartDraft]:
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

    def load_partition(self, index: int, table: dict[str, Any], board: Board) -> _PartDraft:
        d = _PartDraft(index, f"partition #{index + 1}")
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

    def load_cpus(self, d: _PartDraft, table: dict[str, Any], board: Board) -> None:
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
                    ctx, f"cpus: CPU {cpu} is beyond the board ({board.name} has CPUs 0..{board.cpus - 1})"
                )
            elif cpu in d.cpus:
                self.error(ctx, f"cpus: CPU {cpu} is listed twice")
            else:
                d.cpus.append(cpu)
        if len(d.cpus) > MAX_PARTITION_CPUS:
            self.error(
                ctx,
                f"cpus: {len(d.cpus)} CPUs ({', '.join(map(str, d.cpus))}) but the hypervisor runs "
                f"{MAX_PARTITION_CPUS} CPU per partition so far; give the partition one CPU",
            )

    def load_memory(self, d: _PartDraft, table: dict[str, Any]) -> None:
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
                f"{size_name} {_show(size_value)} ({size_text(size) if size else '0'}) "
                "is not a non-zero multiple of 2 MiB",
            )
            return
        d.size = size

    def load_images(self, d: _PartDraft, table: dict[str, Any]) -> None:
        if d.kind is None:
            return
        required = {KIND_RTOS: ("image",), KIND_LINUX: ("kernel",)}[d.kind]
        products = build_products()
        for role in KIND_KEYS[d.kind]:
            text = self.get_str(d.label, table, role)
            if text is None:
                if role in required and role not in table:
                    self.error(d.label, f"{role} is missing (the file to boot, e.g. {_example_image(role)})")
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
            rel = _rel(path)
            build = products.get(rel)
            exists = path.is_file()
            if not exists and build is None:
                hint = _build_hint(rel, products)
                self.error(d.label, f"{role} {text!r} does not exist and no build step produces it ({hint})")
                continue
            if exists and role in ("image", "kernel") and not self.check_arm64(d, role, text, path):
                continue
            d.images.append(Image(role, text, path, exists, build))
            if not exists:
                self.notes.append(f"{d.label}: {role} {text} is not built yet; `{build}` builds it")

    def debian_kernel(self, d: _PartDraft, text: str) -> Image | None:
        flavour = text[len(DEBIAN_KERNEL_PREFIX) :]
        flavours = _linux_flavours()
        if flavour not in flavours:
            known = (
                ", ".join(DEBIAN_KERNEL_PREFIX + f for f in flavours)
                or "none: tools/rtmux/debian.py is missing"
            )
            self.error(d.label, f"kernel {text!r} is not a Debian kernel flavour (known: {known})")
            return None
        path = resolve_debian_kernel(flavour)
        if path is None:
            self.notes.append(
                f"{d.label}: kernel {text} is not fetched yet; `{LINUX_FETCH_COMMAND}` fetches it"
            )
            return Image("kernel", text, paths.DEBIAN_CACHE / f"kernel-{flavour}", False, LINUX_FETCH_COMMAND)
        if not self.check_arm64(d, "kernel", text, path):
            return None
        return Image("kernel", text, path, True, LINUX_FETCH_COMMAND)

    def check_arm64(self, d: _PartDraft, role: str, text: str, path: Path) -> bool:
        with path.open("rb") as f:
            if read_arm64_header(f.read(ARM64_HEADER.size)) is None:
                self.error(
                    d.label, f"{role} {text!r} is not an arm64 Image (no 'ARM\\x64' magic at offset 0x38)"
                )
                return False
        return True

    def load_devices(self, d: _PartDraft, table: dict[str, Any], board: Board) -> None:
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
        if d.kind == KIND_RTOS:
            # The rtos takes its interrupts directly: its CPUs' redistributor frames are mapped into it.
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

    def load_device(
        self, d: _PartDraft, i: int, table: dict[str, Any], board: Board
    ) -> AssignedDevice | None:
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
        if not ok:
            return None
        dev_name = name if isinstance(name, str) else (label if isinstance(label, str) else f"dev{i}")
        return AssignedDevice(
            dev_name, bdev.name if bdev else None, tuple(mmio), tuple(seen), tuple(qemu_args)
        )

    def check_mmio(self, ctx: str, region: Region, bdev: Device | None, board: Board) -> bool:
        if bdev is not None:
            if not any(r.contains(region) for r in bdev.regions):
                ranges = ", ".join(_range_text(r) for r in bdev.regions)
                self.error(
                    ctx, f"mmio {_range_text(region)} is not within board device '{bdev.name}' ({ranges})"
                )
                return False
            return True
        holders = [dev for dev in board.all_devices() if any(r.overlaps(region) for r in dev.regions)]
        if not holders:
            self.error(
                ctx,
                f"mmio {_range_text(region)} is not a device of {board.name} "
                f"({_assignable_text(board)} can be assigned)",
            )
            return False
        if len(holders) > 1:
            names = ", ".join(h.name for h in holders)
            self.error(
                ctx, f"mmio {_range_text(region)} spans several devices ({names}); give one range per device"
            )
            return False
        dev = holders[0]
        if not dev.assignable:
            self.error(
                ctx, f"mmio {_range_text(region)} is {dev.name}, which cannot be assigned: {dev.why_not}"
            )
            return False
        if not any(r.contains(region) for r in dev.regions):
            ranges = ", ".join(_range_text(r) for r in dev.regions)
            self.error(ctx, f"mmio {_range_text(region)} extends beyond {dev.name} ({ranges})")
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

    # ---- across partitions
    def cross_check(self, drafts: list[_PartDraft], board: Board, hyp: Region) -> None:
        self.check_unique(drafts, "name", lambda d: d.name, "partition names")
        self.check_unique(drafts, "console.tag", lambda d: d.tag or d.name, "console tags")
        # CPUs
        owner: dict[int, str] = {}
        for d in drafts:
            for cpu in d.cpus:
                if cpu in owner:
                    self.error(d.label, f"cpus: CPU {cpu} is already in {owner[cpu]}")
                else:
                    owner[cpu] = d.label
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
                                f"mmio {_range_text(exact)} is in a page already assigned to {other_label} "
                                f"(device {other_dev!r}, {_range_text(other_page)}); "
                                "stage 2 maps whole 4 KiB pages",
                            )
                            break
                    page_owner.append((page, d.label, dev.name))
        self.place_memory(drafts, board, hyp)

    def check_unique(
        self, drafts: list[_PartDraft], what: str, key: Callable[[_PartDraft], str | None], plural: str
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

    def place_memory(self, drafts: list[_PartDraft], board: Board, hyp: Region) -> None:
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
            base = _first_fit(d.size, ram, [r for r, _ in taken])
            if base is None:
                free = _free_ranges(ram, [r for r, _ in taken])
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
    def mapping(d: _PartDraft, region: Region, board: Board) -> Mapping:
        ipa = RTOS_IPA if d.kind == KIND_RTOS else region.base
        return Mapping(ipa=ipa, pa=region.base, size=region.size)

    # ---- images against memory
    def check_payloads(self, config: SystemConfig) -> None:
        for part in config.partitions:
            try:
                layout_for(part)
            except ValueError as exc:
                self.error(f"partition {part.name!r}", str(exc))


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


def _other_kind_keys(kind: str) -> tuple[str, ...]:
    return tuple(
        k for other, keys in KIND_KEYS.items() if other != kind for k in keys if k not in KIND_KEYS[kind]
    )


def _example_image(role: str) -> str:
    return {
        "image": "build/rtos/demo.img",
        "kernel": "debian:std",
        "initramfs": "build/linux/initramfs-std.cpio.gz",
    }.get(role, "")


def _build_hint(rel: str, products: dict[str, str]) -> str:
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    near = sorted(p for p in products if p.rsplit("/", 1)[0] == folder)
    if near:
        by_cmd: dict[str, list[str]] = {}
        for p in near:
            by_cmd.setdefault(products[p], []).append(p)
        return "; ".join(f"`{cmd}` builds {', '.join(files)}" for cmd, files in by_cmd.items())
    commands = sorted(set(products.values()))
    return "build steps: " + ", ".join(f"`{c}`" for c in commands)


def _assignable_text(board: Board) -> str:
    names = board.assignable_names()
    virtio = [n for n in names if boards.virtio_index(n) is not None]
    others = [n for n in names if boards.virtio_index(n) is None]
    parts = [f"{virtio[0]}..{virtio[-1]}"] if virtio else []
    return ", ".join(parts + others)


def _first_fit(size: int, ram: Region, taken: list[Region]) -> int | None:
    for free in _free_ranges(ram, taken):
        base = _align_up(free.base, RAM_ALIGN)
        if base + size <= free.end:
            return base
    return None


def _free_ranges(ram: Region, taken: list[Region]) -> list[Region]:
    free: list[Region] = []
    cursor = ram.base
    for r in sorted(taken):
        if r.base > cursor:
            free.append(Region(cursor, r.base - cursor))
        cursor = max(cursor, r.end)
    if cursor < ram.end:
        free.append(Region(cursor, ram.end - cursor))
    return free


# ------------------------------------------------------------------------------------------ description
def describe(config: SystemConfig) -> str:
    """The resolved placement, as `./rtmux check` prints it."""
    b = config.board
    lines = [
        f"{paths.display(config.path)}: valid",
        f"board {b.name}: {b.cpus} CPUs, RAM {b.ram} ({size_text(b.ram.size)}); "
        f"QEMU {' '.join(b.qemu_args())}",
        f"hypervisor: RAM {config.hypervisor} ({size_text(config.hypervisor.size)})",
    ]
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
        lines.append(f"  bootargs  {p.bootargs!r}")
        for dev in p.devices:
            where = ", ".join(_range_text(r) for r in dev.mmio)
            what = f"board {dev.board_device}" if dev.board_device else ("direct" if dev.implicit else "mmio")
            irqs = ", ".join(intid_text(i) for i in dev.interrupts) or "no interrupts"
            lines.append(f"  device    {dev.name} ({what}): {where}, {irqs}")
    used = [config.hypervisor, *(p.ram.pa_region for p in config.partitions)]
    free = _free_ranges(b.ram, used)
    lines.append("free RAM: " + (", ".join(f"{r} ({size_text(r.size)})" for r in free) or "none"))
    c = config.console
    keys = ", ".join(f"{i + 1} {p.name}" for i, p in enumerate(config.partitions))
    lines.append(
        f"console: tags {'on' if c.tags else 'off'}, input to {c.focus!r} at boot; "
        f"{_key_name(c.escape)} then a number switches ({keys}), {_key_name(c.escape)} twice sends it"
    )
    lines += [f"note: {n}" for n in config.notes]
    return "\n".join(lines)


def _key_name(escape: str) -> str:
    return "Ctrl-" + escape[-1].upper()
