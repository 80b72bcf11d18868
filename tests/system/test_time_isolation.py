"""No hypervisor on the rtos's CPU once it runs (issue 11): the hypervisor counts every entry into EL2
per CPU, and the rtos's count must not move after its initialisation, whatever Linux does.

The rtos writes its console into a shared-memory ring that the hypervisor drains on Linux's CPU (no
trapped UART), and takes its interrupts directly; its initialisation traps a few times (its GIC
distributor set-up). The counts come from `rtmux: el2-entries` lines: on request (escape then e) and
when Linux powers off. icount: the run repeats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.hyp_console import el2_entries
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
PROMPT = r"rtmux-linux:~# "
ENTRIES = "\x14e"  # the console escape (Ctrl-T), then e: the hypervisor prints its entries per CPU
REPORT = r"rtmux: el2-entries cpu=1 .*\n"


# TEMP copy (to be shared)
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


def test_rtos_cpu_takes_no_el2_entry_while_linux_works() -> None:
    script = Script(
        [
            (PROMPT, ""),
            (r"\[rtos\] demo: t=\d+s.*\n", ENTRIES),  # the rtos is past its initialisation
            (REPORT, "hackbench -g 2 -f 10 -l 200; echo hackbench-$((6*7))\n"),
            (
                r"hackbench-42",
                "cat /proc/interrupts > /dev/null; dd if=/dev/zero of=/dev/null bs=64k count=200; "
                "echo load-$((6*7))\n",
            ),
            (r"load-42", ENTRIES),
            (REPORT, "poweroff -f\n"),
            (r"rtmux: partition linux stopped.*\n(.*\n)*?" + REPORT, ""),
            (r"(\[rtos\] demo: t=\d+s.*\n(.*\n)*?){2}", ""),
        ]
    )
    built = system.build(CONFIG, icount=True)
    r = qemu.run_console(built.argv, 180, respond=script)
    out = r.console
    why = (
        f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}; "
        f"script reached step {script.done} of {len(script.steps)}\n{out}"
    )
    assert script.done == len(script.steps), why
    reports = el2_entries(out)
    rtos = [e for e in reports if e.partition == "rtos"]
    linux = [e for e in reports if e.partition == "linux"]
    assert len(rtos) == 3 and len(linux) == 3, why
    assert all(e.cpu == 0 for e in rtos) and all(e.cpu == 1 for e in linux), why
    # the rtos's initialisation trapped a few times (its distributor set-up), then never again
    assert 0 < rtos[0].total <= 16, why
    assert [e.counts for e in rtos[1:]] == [rtos[0].counts] * 2, why
    assert rtos[0].counts["irq"] == 0 and rtos[0].counts["el2irq"] == 0, why  # its interrupts: direct
    # the counters count: Linux's CPU traps all along (its UART, its interrupts, hackbench's IPIs-to-self)
    assert linux[0].total < linux[1].total < linux[2].total, why
    assert linux[1].counts["irq"] > linux[0].counts["irq"], why
    # and the rtos's output still arrives, through its ring, every second
    ticks = [d.t_s for d in demo_reports(out)]
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 4, why
    assert re.search(r"^\[rtos\] rtos: rtmux rtos \S+ entered at EL1$", out, re.MULTILINE), why
