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

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
PROMPT = r"rtmux-linux:~# "
# On the default board (2 CPUs), frame n of the redistributor region starts at 0x080a0000 + n * 0x20000.
BEYOND = 0x080E0000  # CPU 2's frame: no such CPU
BEYOND_TYPER = BEYOND + 0x8
BEYOND_PIDR2 = BEYOND + 0xFFE8
BEYOND_ISENABLER0 = BEYOND + 0x10100
RTOS_PIDR2 = 0x080AFFE8  # CPU 0's frame: the rtos's, trapped and emulated for Linux
GICR_PIDR2_ARCH_V3 = 0x3  # ArchRev [7:4]


@dataclass
class Script:
    """A run_console responder: waits for each pattern in turn (searched after the previous match), then
    types its text; stops the run shortly after the last pattern. Patterns match computed output (e.g.
    `$((6*7))`), never the command line the shell echoes back."""

    steps: list[tuple[str, str]]
    text: str = ""
    pos: int = 0
    done: int = 0
    log: list[str] = field(default_factory=list)

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        reply = None
        while self.done < len(self.steps):
            pattern, send = self.steps[self.done]
            m = re.compile(pattern, re.MULTILINE).search(self.text, self.pos)
            if m is None:
                break
            self.pos = m.end()
            self.done += 1
            reply = qemu.Reply(send=send.encode(), stop_after_s=1.0 if self.done == len(self.steps) else None)
            if send:
                break
        return reply


def value(console: str, name: str) -> int:
    """The number a `echo NAME=$(devmem ...)` printed (never matches the echoed command line)."""
    m = re.search(rf"^\[linux\] {name}=(0x[0-9A-Fa-f]+)$", console, re.MULTILINE)
    assert m, f"{name}= not found"
    return int(m[1], 16)


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
    r = qemu.run_console(built.argv, 300, respond=script)
    out = r.console
    why = (
        f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}; "
        f"script reached step {script.done} of {len(script.steps)}\n{out}"
    )
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
