"""No hypervisor on the rtos's CPU once it runs, and no late rtos in `make run` (issue 11).

The hypervisor counts every entry into EL2 per CPU, and the rtos's count must not move after its
initialisation, whatever Linux does.

The rtos writes its console into a shared-memory ring that the hypervisor drains on Linux's CPU (no
trapped UART), and takes its interrupts directly; its initialisation traps a few times (its GIC
distributor set-up). The counts come from `rtmux: el2-entries` lines: on request (escape then e) and
when Linux powers off. icount: the run repeats.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux import cli
from rtmux import config as cfg
from rtmux.formats.hyp_console import el2_entries, mmio_accesses
from rtmux.formats.rtos_console import demo_reports
from rtmux.image import debian
from rtmux.run import system
from tests.system.console_script import PROMPT, Script, run_to_end

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
ENTRIES = "\x14e"  # the console escape (Ctrl-T), then e: the hypervisor prints its entries per CPU
REPORT = r"rtmux: el2-entries cpu=1 .*\n"


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
        ],
        after=2,
    )
    built = system.build(CONFIG, icount=True)
    r, why = run_to_end(built.argv, 180, script)
    out = r.console
    reports = el2_entries(out)
    rtos = [e for e in reports if e.partition == "rtos"]
    linux = [e for e in reports if e.partition == "linux"]
    assert len(rtos) == 3 and len(linux) == 3, why
    assert all(e.cpu == 0 for e in rtos) and all(e.cpu == 1 for e in linux), why
    # the rtos's initialisation trapped a few times (its distributor set-up), then never again
    assert 0 < rtos[0].total <= 16, why
    assert [e.counts for e in rtos[1:]] == [rtos[0].counts] * 2, why
    assert rtos[0].counts["irq"] == 0 and rtos[0].counts["el2irq"] == 0, why  # its interrupts: direct
    # every data abort of the rtos went to the emulated GIC distributor, none to a UART
    mmio = {m.partition: m.counts for m in mmio_accesses(out)[-2:]}
    assert mmio["rtos"]["gicd"] == rtos[0].counts["dabt"] and mmio["rtos"]["uart"] == 0, why
    assert mmio["linux"]["uart"] > 0, why  # Linux's console is the emulated PL011
    # the counters count: Linux's CPU traps all along (its UART, its interrupts, hackbench's IPIs-to-self)
    assert linux[0].total < linux[1].total < linux[2].total, why
    assert linux[1].counts["irq"] > linux[0].counts["irq"], why
    # and the rtos's output still arrives, through its ring, every second
    ticks = [d.t_s for d in demo_reports(out)]
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 4, why
    assert re.search(r"^\[rtos\] rtos: rtmux rtos \S+ entered at EL1$", out, re.MULTILINE), why


# ---- the first impression: `make run` ----------------------------------------------------------------

RESET_LINE = "rtmux: partition linux: reset requested; restarting from its pristine images"
READY = r"^\[linux\] rtmux-linux: ready: "
# The demo's worst wake-up beside a busy Linux in icount: 0.480 us (0.288 us beside an idle one), but
# QEMU's icount round-robin now and then delivers the timer to the rtos's waiting vCPU late: 4.784 us in
# make bench's Linux-load row, where a trace showed the rtos in WFI with nothing masked before the
# vector (BENCHMARKS.md, "The rtos at the limit"), and 4.592 us once here (not traced). The bound is
# far below a period: what it catches is a lost or held-back period, not the emulator's scheduling.
DEMO_WORST_US = 10.0


def test_default_run_misses_no_period_across_boot_and_reboot() -> None:
    """What `make run` shows (issue 11, item 3): the default system in the mode `./rtmux run` uses
    without flags, from the first second on, through Linux's boot, a `reboot` typed in its shell (the
    hypervisor wipes and reloads its 512 MiB), its second boot and a shell busy loop: the demo's
    control loop misses no period and wakes within DEMO_WORST_US every second."""
    icount = cli.build_parser().parse_args(["run"]).icount
    script = Script(
        [
            (PROMPT, "reboot\n"),
            (f"^{re.escape(RESET_LINE)}$", ""),
            (READY, ""),
            (PROMPT, "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo busy-$((6*7))\n"),
            (r"^\[linux\] busy-42", ""),
        ],
        after=3,
    )
    # Linux without IPv6: QEMU's user network sends router advertisements on a host timer, and the one
    # that lands while the rtos's timer is due costs the rtos 12-27 us in QEMU's round-robin
    # (BENCHMARKS.md, issue 23's and issue 31's sections: the emulator's, the same without our code).
    # Under make test's load, with more host time per guest second, one fell in this run's ~20 guest
    # seconds in two runs of two (12.304 and 14.416 us, 2026-11-27); alone, in none.
    linux = next(
        p for p in cfg.load(CONFIG, find_kernel=debian.cached_kernel_image).partitions if p.name == "linux"
    )
    built = system.build(CONFIG, bootargs={"linux": f"{linux.bootargs} ipv6.disable=1"}, icount=icount)
    r, why = run_to_end(built.argv, 300, script, tail=8000)
    out = r.console
    assert out.count(RESET_LINE) == 1, why
    reports = demo_reports(out)
    assert [d.t_s for d in reports] == list(range(1, len(reports) + 1)) and len(reports) >= 6, why
    late = [d for d in reports if d.overruns != 0 or d.worst_us > DEMO_WORST_US]
    assert not late, f"late seconds: {late}{why}"
    assert {d.checksum for d in reports} == {"unchanged"}, why
