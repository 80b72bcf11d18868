"""Root in the stock Linux of the default system attacks the hypervisor through /dev/mem.

The redistributor frames of CPUs the board does not have (on the 2-CPU default board, from IPA
0x080e_0000) are in the region the hypervisor emulates for every partition, and no Linux driver claims
them, so STRICT_DEVMEM lets `devmem` map them. A read there once made the hypervisor read that
unassigned space itself: a data abort at EL2, a hypervisor panic, the rtos stopped with it. The
emulation now reads such frames as zero and ignores writes (hyp/arch/arm64/vgicd.c).

The attack shows that it reached the hypervisor: the same command reads the identification register
(GICR_PIDR2) of the rtos CPU's frame, which is not mapped into Linux either, and gets the GIC's
architecture revision from the hypervisor's emulation, while the frame beyond the board reads as zero.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system import console_script
from tests.system.console_script import PROMPT, Script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
# On the default board (2 CPUs), frame n of the redistributor region starts at 0x080a0000 + n * 0x20000.
BEYOND = 0x080E0000  # CPU 2's frame: no such CPU
BEYOND_TYPER = BEYOND + 0x8
BEYOND_PIDR2 = BEYOND + 0xFFE8
BEYOND_ISENABLER0 = BEYOND + 0x10100
RTOS_PIDR2 = 0x080AFFE8  # CPU 0's frame: the rtos's, trapped and emulated for Linux
GICR_PIDR2_ARCH_V3 = 0x3  # ArchRev [7:4]


def value(console: str, name: str) -> int:
    """The number a `echo NAME=$(devmem ...)` printed (never matches the echoed command line)."""
    found = console_script.linux_value(console, name)
    assert found is not None and found.startswith("0x"), f"{name}= not found"
    return int(found, 16)


def test_redistributor_frames_beyond_the_board(rtos_images: Path) -> None:
    built = system.build(CONFIG, icount=True)
    attack = (
        f"echo rtos_pidr2=$(devmem 0x{RTOS_PIDR2:x} 32); "
        f"echo beyond32=$(devmem 0x{BEYOND_TYPER:x} 32); "
        f"echo beyond64=$(devmem 0x{BEYOND_TYPER:x} 64); "
        f"echo beyond_pidr2=$(devmem 0x{BEYOND_PIDR2:x} 32); "
        f"devmem 0x{BEYOND_ISENABLER0:x} 32 0xffffffff; "  # ignored
        f"echo after=$(devmem 0x{BEYOND_ISENABLER0:x} 32); "
        "echo attack=done-$((6*7))\n"
    )
    script = Script(
        [
            (PROMPT, attack),
            (r"attack=done-42", ""),
            # the rtos reports on: three more of its once-a-second lines after the attack
            (r"(\[rtos\] demo: t=\d+s.*\n(.*\n)*?){3}", ""),
        ]
    )
    r = console_script.run(built.argv, 300, script)
    out = r.console
    why = console_script.describe(r, script)
    assert "PANIC" not in out, why
    assert script.done == len(script.steps), why
    # the accesses reached the hypervisor's emulation: the rtos's frame shows the GIC's revision ...
    assert (value(out, "rtos_pidr2") >> 4) & 0xF == GICR_PIDR2_ARCH_V3, why
    # ... and the frames beyond the board read as zero, writes there are ignored
    for name in ("beyond32", "beyond64", "beyond_pidr2", "after"):
        assert value(out, name) == 0, f"{name}{why}"
    # the rtos never noticed: reports every second after the attack, no new overrun, code intact
    attack_at = out.index("attack=done-42")
    after = [(d.t_s, d.overruns, d.checksum) for d in demo_reports(out[attack_at:])]
    assert len(after) >= 3, why
    assert [t for t, _, _ in after] == list(range(after[0][0], after[0][0] + len(after))), why
    assert len({o for _, o, _ in after}) == 1 and all(c == "unchanged" for _, _, c in after), why
    assert "rtmux: partition rtos stopped" not in out, why

