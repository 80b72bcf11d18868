"""`./rtmux sdcard --board rpi4 -o DIR`: a Raspberry Pi 4 boot partition laid out from Debian packages, as
a folder whose contents the user copies onto the card's FAT32 partition (no disk image is written).

How the board starts from the card: its boot EEPROM loads the Raspberry Pi firmware (start4.elf,
fixup4.dat) from the partition; the firmware reads config.txt, loads the board's device tree (applying
the overlays config.txt names), bl31.bin (`armstub`) and u-boot.bin (`kernel`), and starts bl31 in
AArch64 at EL3. bl31 (Arm Trusted Firmware's rpi4 port, from Debian's `arm-trusted-firmware`) provides
PSCI; it adds a /psci node, PSCI enable-methods for the CPUs and a reserved-memory node for itself
(0 to 0x80000) to that device tree and starts U-Boot at EL2 with it in x0. U-Boot (Debian's
`u-boot-rpi`, its rpi_4 build) runs its distro boot: it finds boot.scr on the partition and runs it, and
the script loads rtmux.img and starts it with `booti`, giving it the device tree the firmware made
(U-Boot's `fdt_addr`).

What comes from where:
  u-boot.bin, bl31.bin         Debian bookworm main (u-boot-rpi, arm-trusted-firmware), through the
                               package cache of rtmux.image.debian
  config.txt, boot.cmd,        written here; boot.scr is boot.cmd behind U-Boot's script header
  boot.scr, README.txt         (rtmux.formats.uimage, the bytes `mkimage -T script` makes)
  start4.elf, fixup4.dat,      the Raspberry Pi firmware: a folder the user names (--firmware), else
  overlays/disable-bt.dtbo     Debian's `raspi-firmware` when apt's sources reach the non-free-firmware
                               component; otherwise listed in README.txt and by the command
  bcm2711-rpi-4-b.dtb          the firmware's when it has one, else Debian's arm64 kernel package's
                               (which has no /__symbols__ node, so the firmware cannot apply
                               overlays to it: said in README.txt and by the command)
  rtmux.img                    --image FILE (an arm64 Image), else listed: rtmux is not built for the
                               Raspberry Pi 4 yet (docs/boards.md)

A file of the last three kinds that is already in the folder (the user copied it there) is kept and
counted as present. Running the command again writes the same bytes: only files whose contents differ
are replaced (each through a temporary file and a rename), nothing else in the folder is touched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rtmux.config import read_arm64_header
from rtmux.errors import SetupError
from rtmux.formats import fdt, uimage
from rtmux.image import debian

BOARDS = ("rpi4",)

UBOOT_PACKAGE = "u-boot-rpi"
UBOOT_FILE = "usr/lib/u-boot/rpi_4/u-boot.bin"  # the package also has rpi_3 and rpi_arm64 (3 and 4)
TFA_PACKAGE = "arm-trusted-firmware"
BL31_FILE = "usr/lib/arm-trusted-firmware/rpi4/bl31.bin"
FIRMWARE_PACKAGE = "raspi-firmware"  # Debian's non-free-firmware component
KERNEL_FLAVOUR = "std"

CONFIG_TXT = "config.txt"
BOOT_CMD = "boot.cmd"
BOOT_SCR = "boot.scr"
README = "README.txt"
UBOOT = "u-boot.bin"
BL31 = "bl31.bin"
DTB = "bcm2711-rpi-4-b.dtb"
DTB_IN_KERNEL = f"broadcom/{DTB}"
START = "start4.elf"
FIXUP = "fixup4.dat"
OVERLAY = "overlays/disable-bt.dtbo"
IMAGE = "rtmux.img"
FIRMWARE_FILES = (START, FIXUP, DTB, OVERLAY)
SCRIPT_NAME = "rtmux boot script"

PURPOSE = {
    CONFIG_TXT: "the firmware's settings: 64-bit, UART0 on GPIO 14/15, the GIC-400, bl31, U-Boot",
    BOOT_CMD: "U-Boot's boot script, the text (for reading and editing)",
    BOOT_SCR: "the same script behind U-Boot's script header: what U-Boot runs",
    UBOOT: "U-Boot, Debian's rpi_4 build: the firmware's `kernel`",
    BL31: "Arm Trusted Firmware's bl31 (EL3, PSCI): the firmware's `armstub`",
    START: "the Raspberry Pi 4's firmware",
    FIXUP: "the fixup file that goes with start4.elf",
    DTB: "the board's device tree, which the firmware completes and hands on",
    OVERLAY: "the overlay that moves UART0 (the PL011) to GPIO 14/15 and takes it from Bluetooth",
    IMAGE: "the rtmux image U-Boot starts with booti",
    README: "this file",
}

# config.txt, in order: (key, value, why). The firmware reads `key=value` lines; `#` starts a comment.
CONFIG = (
    ("arm_64bit", "1", "start the ARM cores in AArch64"),
    ("enable_gic", "1", "interrupts through the GIC-400, not the legacy interrupt controller"),
    ("enable_uart", "1", "a serial console on GPIO 14 (TXD, header pin 8) and 15 (RXD, pin 10)"),
    ("dtoverlay", "disable-bt", "that console is UART0, the PL011 (Bluetooth loses its UART)"),
    ("armstub", BL31, "EL3 firmware: TF-A's bl31, which provides PSCI"),
    ("kernel", UBOOT, "what the firmware loads and bl31 starts at EL2: U-Boot"),
)

BOOT_SCRIPT = f"""\
# rtmux's boot script for U-Boot on the Raspberry Pi 4, written by ./rtmux sdcard --board rpi4.
# {BOOT_SCR} is this text behind U-Boot's script header. U-Boot's distro boot finds {BOOT_SCR} on the
# card, sets devtype, devnum and distro_bootpart to where it found it and runs it. fdt_addr is the
# device tree the firmware handed on: {DTB} with the RAM filled in and config.txt's
# overlays applied, then given PSCI by bl31.
echo rtmux: loading {IMAGE} from ${{devtype}} ${{devnum}}:${{distro_bootpart}}
if load ${{devtype}} ${{devnum}}:${{distro_bootpart}} ${{kernel_addr_r}} {IMAGE}; then
  echo rtmux: booti ${{kernel_addr_r}} - ${{fdt_addr}}
  booti ${{kernel_addr_r}} - ${{fdt_addr}}
fi
echo rtmux: {IMAGE} did not start
"""

Log = Callable[[str], None]


def _log_stderr(message: str) -> None:
    print(f"rtmux: sdcard: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Provided:
    """A file to copy onto the card and where it comes from, in words (README.txt says it)."""

    path: Path
    origin: str


@dataclass(frozen=True)
class Inputs:
    """Everything the card is made of that is not written here."""

    uboot: Provided
    bl31: Provided
    firmware: Mapping[str, Provided]  # name on the card -> file, for those of FIRMWARE_FILES found
    firmware_note: str  # where the firmware files were looked for, and how to get the missing ones
    kernel_dtb: Provided | None  # Debian's kernel package's DTB: used when the firmware gives none
    image: Provided | None = None


@dataclass(frozen=True)
class Entry:
    name: str  # path on the card
    origin: str  # "" for a file that is still missing
    changed: bool = False  # written (or replaced) by this run

    @property
    def missing(self) -> bool:
        return not self.origin


@dataclass(frozen=True)
class Card:
    folder: Path
    entries: tuple[Entry, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries if e.missing)


def config_txt() -> str:
    lines = [
        "# Raspberry Pi 4 firmware settings for rtmux, written by `./rtmux sdcard --board rpi4`.",
        "# The firmware (start4.elf) reads this file at power-on; README.txt says what each file is for.",
    ]
    for key, value, why in CONFIG:
        lines += [f"# {why}", f"{key}={value}"]
    return "\n".join(lines) + "\n"


def boot_script() -> tuple[str, bytes]:
    """boot.cmd's text and boot.scr's bytes."""
    return BOOT_SCRIPT, uimage.script(BOOT_SCRIPT.encode("ascii"), SCRIPT_NAME)


def has_symbols(dtb: bytes) -> bool:
    """Whether a device tree carries the /__symbols__ node that overlays need (FdtError: not a DTB)."""
    return fdt.parse(dtb).root.child("__symbols__") is not None


# ---------------------------------------------------------------------------------------------- inputs


def _package_file(unpacked: debian.Unpacked, relative: str) -> Provided:
    path = unpacked.root / relative
    if not path.is_file():
        raise SetupError(
            f"Debian's {unpacked.package.name} {unpacked.package.version} has no {relative} "
            "(the package's layout changed?)"
        )
    return Provided(path, f"Debian {unpacked.package.name} {unpacked.package.version}: {relative}")


def firmware_from_folder(folder: Path) -> dict[str, Provided]:
    """The firmware files from the user's folder (the Raspberry Pi firmware's boot/ folder or a copy of a
    Raspberry Pi OS boot partition); SetupError naming each one it lacks."""
    if not folder.is_dir():
        raise SetupError(f"--firmware {folder}: not a folder")
    found = {name: folder / name for name in FIRMWARE_FILES}
    absent = [name for name, path in found.items() if not path.is_file()]
    if absent:
        raise SetupError(
            f"--firmware {folder}: no {', '.join(absent)} in it (expected: {', '.join(FIRMWARE_FILES)})"
        )
    return {name: Provided(path, f"your firmware folder: {name}") for name, path in found.items()}


def firmware_from_tree(unpacked: debian.Unpacked) -> dict[str, Provided]:
    """Those of the firmware files that an unpacked package holds, wherever it keeps them (the shortest
    path that ends with the file's name on the card)."""
    out = {}
    for name in FIRMWARE_FILES:
        candidates = sorted(
            (p for p in unpacked.root.rglob(Path(name).name) if p.is_file() and p.as_posix().endswith(name)),
            key=lambda p: (len(p.parts), p.as_posix()),
        )
        if candidates:
            relative = candidates[0].relative_to(unpacked.root).as_posix()
            out[name] = Provided(
                candidates[0], f"Debian {unpacked.package.name} {unpacked.package.version}: {relative}"
            )
    return out


def debian_inputs(
    firmware_dir: Path | None,
    image: Path | None,
    *,
    refresh: bool = False,
    log: Log = _log_stderr,
) -> Inputs:
    """The inputs from Debian's packages (fetched into the cache when not there yet), the user's firmware
    folder and image."""
    got = debian.ensure([UBOOT_PACKAGE, TFA_PACKAGE], refresh=refresh, log=log)
    uboot = _package_file(got[UBOOT_PACKAGE], UBOOT_FILE)
    bl31 = _package_file(got[TFA_PACKAGE], BL31_FILE)
    if firmware_dir is not None:
        firmware = firmware_from_folder(firmware_dir)
        note = f"from {firmware_dir}"
    elif debian.cached(FIRMWARE_PACKAGE) is not None or debian.apt_show(FIRMWARE_PACKAGE) is not None:
        firmware = firmware_from_tree(
            debian.ensure([FIRMWARE_PACKAGE], refresh=refresh, log=log)[FIRMWARE_PACKAGE]
        )
        note = f"from Debian's {FIRMWARE_PACKAGE} (non-free-firmware)"
    else:
        firmware = {}
        note = (
            f"apt knows no {FIRMWARE_PACKAGE} package: Debian's non-free-firmware component is not in its "
            "sources"
        )
    kernel_dtb = None
    if DTB not in firmware:
        kernel = debian.kernel(KERNEL_FLAVOUR, refresh=refresh, log=log)
        path = kernel.dtb_dir / DTB_IN_KERNEL
        if path.is_file():
            kernel_dtb = Provided(
                path, f"Debian {kernel.package.name} {kernel.package.version}: {DTB_IN_KERNEL}"
            )
    return Inputs(uboot, bl31, firmware, note, kernel_dtb, image_input(image) if image is not None else None)


def image_input(image: Path) -> Provided:
    """The user's rtmux image, refused unless it is a file with the arm64 Image header booti needs."""
    try:
        with open(image, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise SetupError(f"--image {image}: {exc.strerror}") from exc
    if read_arm64_header(head) is None:
        raise SetupError(f"--image {image}: no arm64 Image header (booti starts only such an image)")
    return Provided(image, f"your image {image.name}")


# --------------------------------------------------------------------------------------------- writing


def _put(path: Path, data: bytes) -> bool:
    """Make `path` hold `data`; False when it already did (the file is not touched then)."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.rtmux-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def _read(provided: Provided) -> bytes:
    try:
        return provided.path.read_bytes()
    except OSError as exc:
        raise SetupError(f"{provided.path}: {exc.strerror}") from exc


def write(folder: Path, inputs: Inputs) -> Card:
    """Lay the card out in `folder` (created if needed); SetupError when it cannot."""
    if folder.exists() and not folder.is_dir():
        raise SetupError(f"{folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SetupError(f"cannot create {folder}: {exc.strerror}") from exc
    entries: list[Entry] = []
    notes: list[str] = []

    def put(name: str, data: bytes, origin: str) -> None:
        entries.append(Entry(name, origin, _put(folder / name, data)))

    script, scr = boot_script()
    put(CONFIG_TXT, config_txt().encode("ascii"), "written by rtmux")
    put(BOOT_CMD, script.encode("ascii"), "written by rtmux")
    put(BOOT_SCR, scr, "written by rtmux from boot.cmd")
    put(UBOOT, _read(inputs.uboot), inputs.uboot.origin)
    put(BL31, _read(inputs.bl31), inputs.bl31.origin)

    def copy_or_keep(name: str, provided: Provided | None) -> None:
        if provided is not None:
            put(name, _read(provided), provided.origin)
        elif (folder / name).is_file():
            entries.append(Entry(name, "already in the folder (your copy)"))
        else:
            entries.append(Entry(name, ""))

    for name in (START, FIXUP, OVERLAY):
        copy_or_keep(name, inputs.firmware.get(name))
    dtb_source = inputs.firmware.get(DTB)
    if dtb_source is None and inputs.kernel_dtb is not None:
        # Debian's DTB unless the folder holds another one (the user's, kept); a copy of Debian's from an
        # earlier run is still Debian's
        existing = folder / DTB
        if not existing.is_file() or existing.read_bytes() == _read(inputs.kernel_dtb):
            dtb_source = inputs.kernel_dtb
    copy_or_keep(DTB, dtb_source)
    copy_or_keep(IMAGE, inputs.image)

    if (folder / DTB).is_file():
        try:
            symbols = has_symbols((folder / DTB).read_bytes())
        except fdt.FdtError as exc:
            raise SetupError(f"{folder / DTB}: not a device tree ({exc})") from exc
        if not symbols:
            notes.append(
                f"{DTB} has no /__symbols__ node (Debian's kernel package builds its device trees without "
                "one), and the firmware resolves an overlay's targets through it: `dtoverlay=disable-bt` "
                "cannot be applied to this DTB. Expected then (not tried on a board): UART0 stays with "
                "Bluetooth and GPIO 14/15 carry the mini UART, where U-Boot, which drives either, still "
                f"prints, but not rtmux's PL011 console. The Raspberry Pi firmware's own {DTB} has the "
                "node: copy it over this one, or give --firmware."
            )

    card = Card(folder, tuple(entries), tuple(notes))
    readme = readme_text(card, inputs)
    entries.append(Entry(README, "written by rtmux", _put(folder / README, readme.encode("utf-8"))))
    return Card(folder, tuple(entries), tuple(notes))


def readme_text(card: Card, inputs: Inputs) -> str:
    """README.txt: the files, where each came from, what is missing and where to get it. The same card
    gives the same text (nothing in it depends on the time or on what this run replaced)."""
    width = max(len(e.name) for e in card.entries) + 2
    lines = [
        "Raspberry Pi 4 boot partition for rtmux, written by `./rtmux sdcard --board rpi4`.",
        "",
        "Copy everything in this folder, the overlays/ folder included, onto the first partition of a",
        "microSD card (MBR partition table, FAT32). Running the command again rewrites only what changed",
        "and keeps the files you added.",
        "",
        "Files:",
    ]
    for e in card.entries:
        lines.append(f"  {e.name:<{width}}{PURPOSE[e.name]}")
        lines.append(f"  {'':<{width}}  {e.origin or 'MISSING: to add by hand (below)'}")
    lines.append(f"  {README:<{width}}{PURPOSE[README]}")
    missing = card.missing
    lines.append("")
    if missing:
        lines.append("Still to add (the card does not boot without them):")
        for name in missing:
            lines.append(f"  {name}")
        firmware_missing = [n for n in missing if n in FIRMWARE_FILES]
        if firmware_missing:
            lines += [
                "",
                *_wrap(
                    f"Firmware: {inputs.firmware_note}. {', '.join(firmware_missing)} come from the "
                    "Raspberry Pi firmware: the boot/ folder of the raspberrypi/firmware repository, or "
                    "the boot partition of a Raspberry Pi OS image (the same names, overlays/ included). "
                    "Copy them here, or run the command again with --firmware DIR, or once apt's sources "
                    "include Debian's non-free-firmware component.",
                    100,
                ),
            ]
        if IMAGE in missing:
            lines += [
                "",
                *_wrap(
                    f"{IMAGE}: rtmux cannot build its image for the Raspberry Pi 4 yet (docs/boards.md says "
                    "what is missing); ./rtmux sdcard --image FILE copies one in.",
                    100,
                ),
            ]
    else:
        lines.append("Nothing is missing.")
    for note in card.notes:
        lines += ["", *_wrap(f"Note: {note}", 100)]
    lines += [
        "",
        "Serial console: 3.3 V TTL, 115200 baud 8N1; GPIO 14 (TXD) is header pin 8, GPIO 15 (RXD) pin 10,",
        "ground pin 6.",
        "",
        "What was checked and what was not: the files, config.txt and the boot script are checked by",
        "rtmux's unit tests; boot.scr is byte for byte what mkimage makes of boot.cmd, and the script's",
        "commands were run by Debian's U-Boot on QEMU (docs/boards.md). Nothing of this card has been",
        "booted on a Raspberry Pi 4.",
    ]
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def summary(card: Card) -> Sequence[str]:
    """What the command prints: one line per file, then what is missing and the notes."""
    out = []
    for e in card.entries:
        state = "missing" if e.missing else ("written" if e.changed else "unchanged")
        out.append(f"  {e.name:<26}{state:<10}{e.origin}")
    return out
