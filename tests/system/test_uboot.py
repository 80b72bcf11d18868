"""The default system (configs/qemu-virt.toml) booted by U-Boot instead of QEMU's -kernel: Debian's
u-boot-qemu (qemu_arm64) is the board's firmware, its distro boot fetches rtmux's boot script from QEMU's
TFTP server, and the script loads the system image and starts it with booti (rtmux.image.uboot). One
boot: the hypervisor starts at EL2 from U-Boot, the rtos demo runs, Linux comes up and runs a command.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux.formats.rtos_console import demo_reports
from rtmux.image import uboot
from rtmux.run import system
from tests.system import console_script
from tests.system.console_script import PROMPT, Script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"


def first(pattern: str, text: str, why: str) -> int:
    """Where `pattern` (multi-line) first matches in `text`; fails the test when it does not."""
    m = re.search(pattern, text, re.MULTILINE)
    assert m, f"{pattern!r} not found{why}"
    return m.start()


def test_default_system_boots_through_u_boot(rtos_images: Path) -> None:
    built = system.build(CONFIG, icount=True, firmware=system.FIRMWARE_UBOOT)
    assert "-bios" in built.argv and "-kernel" not in built.argv
    script = Script(
        [
            (PROMPT, "echo ok-$((6*7))\n"),
            (r"^\[linux\] ok-42$", ""),
        ],
        after=2,  # two more seconds of the rtos demo's reports
    )
    r, why = console_script.run_to_end(built.argv, 300, script)
    out = r.console
    # U-Boot ran first, found rtmux's boot script by DHCP and TFTP, loaded the whole image and ran booti
    firmware = first(r"^U-Boot \d{4}\.\d{2}", out, why)
    booti = first(rf"^{uboot.SAY} booti ", out, why)
    sizes = [int(n) for n in re.findall(r"^Bytes transferred = (\d+) ", out, re.MULTILINE)]
    assert built.image.stat().st_size in sizes, f"no TFTP transfer of the image's size in {sizes}{why}"
    assert f"{uboot.SAY} boot failed" not in out, why
    # ... which moved the image to its link address and entered the hypervisor at EL2
    hypervisor = first(r"^rtmux: hypervisor \S+ at EL2$", out, why)
    assert firmware < booti < hypervisor, why
    first(r"^Moving Image from 0x[0-9a-f]+ to 0x40080000,", out, why)
    # the whole system came up: the rtos demo in its partition, intact and on time
    first(r"^\[rtos\] rtos: rtmux rtos \S+ entered at EL1$", out, why)
    reports = demo_reports(out)
    assert len(reports) >= 3 and all(rep.checksum == "unchanged" for rep in reports), why
    assert [rep.overruns for rep in reports] == [0] * len(reports), why
    # Linux on its CPU, ready with its network and V-Bus ports, and running what was typed
    ready = re.findall(r"^\[linux\] rtmux-linux: ready: .*$", out, re.MULTILINE)
    assert len(ready) == 1 and "V-Bus ports: echo" in ready[0], why
    assert hypervisor < out.index(ready[0]), why
    assert re.search(r"^\[linux\] ok-42$", out, re.MULTILINE), why
    assert not re.search(r"^rtmux: partition \S+ stopped", out, re.MULTILINE), why
