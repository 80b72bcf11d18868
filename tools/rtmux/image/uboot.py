"""Booting the system image through U-Boot's `booti` on QEMU virt (`./rtmux run --firmware u-boot`).

The firmware is Debian's `u-boot-qemu` (its qemu_arm64 build, fetched into cache/debian/ by
rtmux.image.debian as the role `u-boot-qemu`), which QEMU runs with `-bios` in place of `-kernel`. The
system image reaches it over QEMU's user-mode network: a folder with the image and a boot script is
QEMU's built-in TFTP server (`-netdev user,tftp=DIR`), seen through a virtio-net device of U-Boot's own
on a virtio-mmio transport that no partition has (`free_transport`). Nothing is typed: U-Boot's default
`bootcmd` (distro boot) tries its boot targets in turn, the last one `dhcp`, which asks the TFTP server
for `boot.scr.uimg` and runs it (`source`). The script loads the image at `${kernel_addr_r}` and starts it
with `booti ${kernel_addr_r} - ${fdtcontroladdr}`. U-Boot's DTB is the board's own (QEMU's, as
`-machine dumpdtb` writes it) given back with `-dtb`, plus U-Boot's `/config` node with `bootdelay = <0>`
(`control_dtb`): Debian's build waits 2 s for a key before it boots, which under icount is 2e9
instructions of busy waiting, about 16 s of wall time.

What the hypervisor then gets (checked with QEMU 7.2 and U-Boot 2023.01, docs/boards.md):
- booti moves the image to RAM base + text_offset = 0x4008_0000, its link address: the Image header's
  flags leave bit 3 (placement anywhere) clear, and its image_size is the whole bundle
  (rtmux.image.bundle), so the move takes the payload along. Nothing U-Boot still needs lies in the way:
  it runs and keeps its DTB at the top of RAM, and `source` runs a copy of the script (in U-Boot's heap),
  so the move over `${scriptaddr}` (0x4020_0000) leaves the script's failure path intact (tried: a booti
  that fails after the move still prints its message and powers off).
- x0 = a DTB: U-Boot's copy of QEMU's (`${fdtcontroladdr}`), which booti relocates once more. Not
  `${fdt_addr}`: QEMU's own blob at RAM base is 1 MiB long (its totalsize), so the image at 0x4008_0000
  overwrites its upper half before booti reads it. The hypervisor does not read it anyway (the
  configuration blob describes the board).
- EL2 (QEMU runs the firmware at EL2 with virtualization=on and no EL3), MMU and caches off (booti cleans
  and disables them), the other CPUs off: QEMU's built-in PSCI (conduit SMC) stays, since the firmware
  does not replace it without EL3 (secure=off).
U-Boot removes its devices before it jumps (its virtio-net device is reset), so nothing of it is live.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from rtmux import board as boards
from rtmux import config as cfg
from rtmux.errors import SetupError
from rtmux.formats import fdt, uimage
from rtmux.image import debian

ROLE = "u-boot-qemu"  # the Debian package, and its role in the package cache
FIRMWARE = Path("usr/lib/u-boot/qemu_arm64/u-boot.bin")  # in the package
# The file U-Boot's distro boot fetches by TFTP once DHCP gave it an address (its boot_script_dhcp).
SCRIPT_NAME = "boot.scr.uimg"
SCRIPT_TITLE = "rtmux boot script"
CONTROL_DTB = "u-boot.dtb"  # U-Boot's DTB (control_dtb), in the same folder, for QEMU's -dtb
BOOTDELAY_S = 0  # seconds U-Boot waits for a key before it boots (a key pressed before still stops it)
# The script's lines start with this, so that a runner and a person can tell them from U-Boot's own.
SAY = "rtmux-uboot:"
NETDEV = "rtmux-uboot"  # QEMU id of U-Boot's network (no configuration's device may use it)
_BUS = re.compile(r"(?:^|,)bus=virtio-mmio-bus\.(\d+)(?:,|$)")


@dataclass(frozen=True)
class Firmware:
    """U-Boot for QEMU virt, unpacked: the file QEMU's -bios takes and the package it came from."""

    package: debian.Package
    path: Path

    def describe(self) -> str:
        return f"U-Boot from Debian's {self.package.name} {self.package.version}"


def firmware(*, refresh: bool = False) -> Firmware:
    """Debian's u-boot-qemu in the package cache (fetched on first use; SetupError with what to do when
    apt cannot give it), and its qemu_arm64 u-boot.bin."""
    unpacked = debian.ensure([ROLE], refresh=refresh)[ROLE]
    path = unpacked.root / FIRMWARE
    if not path.is_file():
        raise SetupError(
            f"{unpacked.package.name} {unpacked.package.version} has no {FIRMWARE} (QEMU virt's U-Boot); "
            "`./rtmux linux fetch --refresh` fetches the current package again"
        )
    return Firmware(unpacked.package, path)


def boot_script(image_name: str) -> str:
    """The U-Boot script that loads `image_name` from the TFTP server and boots it with booti; when either
    fails, it says so and powers the board off (so that a run ends at once instead of at its timeout)."""
    if not re.fullmatch(r"[A-Za-z0-9._+-]+", image_name):
        raise ValueError(f"image name {image_name!r}: only letters, digits and ._+- are safe in a script")
    return (
        f"# {SCRIPT_TITLE}: the system image from QEMU's TFTP server, started by booti at RAM base +\n"
        "# text_offset, with U-Boot's copy of the board's DTB in x0\n"
        f"echo {SAY} loading {image_name} by TFTP\n"
        f"if tftpboot ${{kernel_addr_r}} {image_name}; then\n"
        f"    echo {SAY} booti ${{kernel_addr_r}} - ${{fdtcontroladdr}}\n"
        "    booti ${kernel_addr_r} - ${fdtcontroladdr}\n"
        "fi\n"
        f"echo {SAY} boot failed\n"
        "poweroff\n"
    )


def control_dtb(board_dtb: bytes) -> bytes:
    """U-Boot's DTB: the board's (`board_dtb`, as QEMU generates it) with U-Boot's /config bootdelay set to
    BOOTDELAY_S (U-Boot's device-tree binding; it overrides the environment's bootdelay)."""
    tree = fdt.parse(board_dtb)
    node = tree.root.child("config")
    if node is None:
        node = fdt.Node("config")
        tree.root.children.append(node)
    node.props["bootdelay"] = fdt.cells(BOOTDELAY_S)
    return fdt.serialize(tree)


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` (atomically), unless it holds them already."""
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def boot_folder(image: Path, board_dtb: bytes, root: Path, stale_s: float) -> Path:
    """ROOT/<image's stem>/, what one boot through U-Boot needs: the image (a hard link, or a copy where
    links fail) and its boot script (SCRIPT_NAME), which QEMU serves by TFTP, and U-Boot's DTB
    (CONTROL_DTB, from `board_dtb`). Named after the image, whose name carries its content's hash, so
    that runs in parallel never serve each other's; folders unused for `stale_s` seconds are removed."""
    folder = root / image.stem
    folder.mkdir(parents=True, exist_ok=True)
    served = folder / image.name
    if not (served.is_file() and os.path.samefile(served, image)):
        tmp = folder / f"{image.name}.{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)
        try:
            os.link(image, tmp)
        except OSError:
            shutil.copyfile(image, tmp)
        tmp.replace(served)
    _write(folder / SCRIPT_NAME, uimage.script(boot_script(image.name).encode("ascii"), SCRIPT_TITLE))
    _write(folder / CONTROL_DTB, control_dtb(board_dtb))
    os.utime(folder)
    now = time.time()
    for old in root.iterdir():
        try:
            if old != folder and old.is_dir() and now - old.stat().st_mtime > stale_s:
                shutil.rmtree(old)
        except FileNotFoundError:
            pass  # another run removed it first
    return folder


def free_transport(config: cfg.SystemConfig) -> int:
    """The lowest virtio-mmio transport that no partition owns and no configured QEMU device sits on:
    U-Boot's network device goes there, out of every partition's sight (their DTBs and stage-2 tables
    have only what they own)."""
    used = {
        index
        for part in config.partitions
        for dev in part.devices
        if dev.board_device is not None and (index := boards.virtio_index(dev.board_device)) is not None
    }
    used |= {int(m[1]) for arg in config.qemu_args() if (m := _BUS.search(arg))}
    for index in range(boards.VIRTIO_MMIO_COUNT):
        if index not in used:
            return index
    raise SetupError(
        f"--firmware u-boot needs a virtio-mmio transport for U-Boot's network, but the configuration "
        f"uses all {boards.VIRTIO_MMIO_COUNT}"
    )


def _qemu_value(text: str) -> str:
    """A value inside a QEMU option list, where a comma is written twice."""
    return text.replace(",", ",,")


def qemu_args(fw: Firmware, folder: Path, transport: int) -> list[str]:
    """QEMU's options that replace `-kernel IMAGE`: the firmware and its DTB (boot_folder), and U-Boot's
    network (DHCP and TFTP from QEMU, `restrict=on`: nothing beyond QEMU's own services)."""
    return [
        "-bios", str(fw.path),
        "-dtb", str(folder / CONTROL_DTB),
        "-netdev", f"user,id={NETDEV},restrict=on,tftp={_qemu_value(str(folder))}",
        "-device", f"virtio-net-device,netdev={NETDEV},bus=virtio-mmio-bus.{transport}",
    ]  # fmt: skip
