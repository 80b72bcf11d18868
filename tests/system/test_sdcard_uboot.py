"""The Raspberry Pi 4 card's boot script (`./rtmux sdcard --board rpi4`) run by Debian's U-Boot on QEMU.

Debian's u-boot-qemu (its qemu_arm64 build) is the same U-Boot release as u-boot-rpi's rpi_4 build on the
card, with the same distro boot. It boots QEMU virt at EL2 (as bl31 starts U-Boot on the Pi), with the
card's folder as a virtio disk (QEMU's vvfat: an MBR partition table, one FAT partition); distro boot finds
boot.scr on it, and the script loads rtmux.img, here the rtos's selftest image, and starts it with booti
and ${fdt_addr}. One step differs from the Pi: QEMU leaves its DTB (1 MiB) at the start of RAM, where
booti puts an image whose text_offset is 0x80000, so the test moves it and points fdt_addr at the copy
(on the Pi, fdt_addr is wherever the firmware put its DTB) before it lets distro boot run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.image import debian, sdcard

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
UBOOT_QEMU = "u-boot-qemu"
UBOOT_QEMU_FILE = "usr/lib/u-boot/qemu_arm64/u-boot.bin"
FDT_COPY = 0x4800_0000
TIMEOUT_S = 120


class UBootUser:
    """Types what a user would at U-Boot's prompt: stops the autoboot, moves the DTB, starts distro boot;
    ends the run once the image has powered off."""

    def __init__(self) -> None:
        self.seen = ""
        self.step = 0

    def __call__(self, text: str) -> qemu.Reply | None:
        self.seen += text
        if self.step == 0 and "Hit any key to stop autoboot" in self.seen:
            self.step = 1
            return qemu.Reply(send=b"\n")
        if self.step == 1 and "=> " in self.seen.split("Hit any key", 1)[1]:
            self.step = 2
            return qemu.Reply(
                send=f"fdt addr ${{fdt_addr}}; fdt move ${{fdt_addr}} {FDT_COPY:#x} 0x100000; "
                f"setenv fdt_addr {FDT_COPY:#x}; run distro_bootcmd\n".encode()
            )
        if self.step == 2 and ("rtos: system off" in self.seen or "SCRIPT FAILED" in self.seen):
            self.step = 3
            return qemu.Reply(stop_after_s=1.0)
        return None


def test_distro_boot_runs_the_card_script(rtos_images: Path, tmp_path: Path) -> None:
    card = tmp_path / "card"
    made = subprocess.run(
        [sys.executable, str(ROOT / "rtmux"), "sdcard", "--board", "rpi4", "-o", str(card)]
        + ["--image", str(rtos_images / "selftest.img")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert made.returncode == 0, made.stderr
    uboot = debian.ensure([UBOOT_QEMU])[UBOOT_QEMU].root / UBOOT_QEMU_FILE
    command = [
        qemu.QEMU_BIN,
        "-M", qemu.MACHINE,
        "-cpu", qemu.CPU,
        "-m", qemu.MEMORY,
        "-nographic",
        "-nic", "none",
        "-icount", qemu.ICOUNT,
        "-bios", str(uboot),
        "-drive", f"if=virtio,format=raw,readonly=on,file=fat:{card}",
    ]  # fmt: skip
    result = qemu.run_console(command, TIMEOUT_S, respond=UBootUser())
    console = result.console
    failure = f"U-Boot's console:\n{console}"
    assert not result.timed_out, failure
    assert "Found U-Boot script /boot.scr" in console, failure
    assert f"rtmux: loading {sdcard.IMAGE} from virtio 0:1" in console, failure
    assert "rtmux: booti 0x" in console and f" - {FDT_COPY:#x}" in console, failure
    assert "SCRIPT FAILED" not in console and f"{sdcard.IMAGE} did not start" not in console, failure
    # the image ran: the rtos's own test suite, all passed
    after = console.split("Starting kernel", 1)[-1]
    assert "rtos: rtmux rtos" in after and " passed, 0 failed" in after, failure
    assert "rtos: system off" in after, failure
