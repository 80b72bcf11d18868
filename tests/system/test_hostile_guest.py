"""Small malicious kernels in the Linux partition (tests/guests/hostile/, tests/system/configs/hostile.toml).

Each test boots the rtos demo on CPU 0 and the hostile guest on CPU 1 with one attack (attack=NAME in
its boot arguments), in icount mode, and checks three things:
  - the attack happened: the guest prints figures it computed (calls made, exceptions taken) and the
    hypervisor logs what it refused, so a test cannot pass by not attacking;
  - the hypervisor survived and kept its promise (the specific check of each attack);
  - the rtos never noticed: its demo keeps reporting after the attack with its code checksum unchanged
    and no control-loop overrun (`rtos_unharmed`).
The rtos's verdict rests on icount's guest time; a hypervisor fault (a hang, a panic, a storm at EL2 on
CPU 1 that kept the console tick from draining the rtos's output) shows as missing demo lines.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from rtmux import qemu
from rtmux.formats.hyp_console import el2_entries
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system import console_script
from tests.system.console_script import Script, until

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "system" / "configs" / "hostile.toml"
# The same system with the PL031 RTC (SPI 2, level-triggered) assigned to the hostile guest.
RTC_CONFIG = ROOT / "tests" / "system" / "configs" / "hostile-rtc.toml"
STOPPED = "rtmux: partition linux stopped"


@pytest.fixture(scope="module")
def hostile_image(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "hostile.img"


def attack(
    image: Path, name: str, script: Script, timeout_s: float = 300, args: str = "", config: Path = CONFIG
) -> qemu.RunResult:
    """Boots the hostile guest with attack=NAME; `script` (usually `until(...)`) says when it is over."""
    del image  # the fixture built it; the configuration names it
    built = system.build(config, bootargs={"linux": f"attack={name} seed=12345 {args}".strip()}, icount=True)
    r = console_script.run(built.argv, timeout_s, script)
    assert script.finished and r.stopped, f"attack {name} did not finish{describe(r)}"
    return r


def describe(r: qemu.RunResult) -> str:
    return console_script.describe(r, tail=12000)


def rtos_unharmed(r: qemu.RunResult, quiet_from: str | None = None) -> None:
    """The rtos kept running with its code intact; once the hostile CPU went quiet (`quiet_from`: the
    hypervisor's line for the partition's power-off), no control-loop period is missed any more.

    Overruns while the hostile guest computes are not judged here: in icount mode QEMU runs the vCPUs in
    turn from one host thread, and pure computation on CPU 1 with no trap at all (attack=spin, the
    reference in test_reference_spin) already makes the rtos miss periods. What a misbehaving
    hypervisor would add (a livelock or storm at EL2, a lost timer interrupt) does not end with the
    attack, so it shows in the quiet period and in the demo lines that stop coming.
    """
    demo = demo_reports(r.console)
    assert len(demo) >= 3, f"the rtos stopped reporting{describe(r)}"
    assert {d.checksum for d in demo} == {"unchanged"}, f"rtos code changed{describe(r)}"
    assert "rtmux: PANIC" not in r.console, describe(r)  # the hypervisor never panics
    if quiet_from is not None:
        # and the attack never brought the hypervisor onto the rtos's CPU (counted at every stop/reset)
        untouched = console_script.rtos_cpu_untouched(r.console)
        assert untouched is None, f"{untouched}{describe(r)}"
        at = r.console.find(quiet_from)
        assert at >= 0, f"{quiet_from!r} not found{describe(r)}"
        quiet = demo_reports(r.console[at:])
        assert len(quiet) >= 3, f"the rtos stopped reporting after the attack{describe(r)}"
        # The first report after the power-off may still count the attack's last second.
        counts = {d.overruns for d in quiet[1:]}
        assert len(counts) == 1, f"rtos overruns after the attack ended: {sorted(counts)}{describe(r)}"


def stats(r: qemu.RunResult, required: bool = True) -> dict[str, int]:
    """The hypervisor's last report of what it refused or emulated for the Linux partition. It prints
    none when there was nothing to report: all zero, accepted only when not `required`."""
    found = console_script.hyp_stats(r.console)
    if found is None and not required:
        return dict.fromkeys(console_script.STAT_NAMES, 0)
    assert found is not None, f"no hypervisor report for the partition{describe(r)}"
    return found


def number(r: qemu.RunResult, pattern: str, base: int = 10) -> list[int]:
    m = re.search(pattern, r.console, re.MULTILINE)
    assert m, f"{pattern!r} not found{describe(r)}"
    return [int(g, base) for g in m.groups()]


def test_reset_loop_leaks_nothing(hostile_image: Path) -> None:
    """A guest that only asks for SYSTEM_RESET, a thousand times: the hypervisor's stack is reset at every
    entry, so it never grows into the page tables below it."""
    resets = 1000
    r = attack(hostile_image, "reset", until(r"hostile: resetting", times=resets), timeout_s=900)
    assert r.console.count("[linux] hostile: resetting") >= resets, describe(r)
    # The hypervisor's line for each reset goes through the partition's line limit (16 at once, then one
    # a second, each after the count of those not shown): every reset is in the lines or in the counts.
    shown = r.console.count("rtmux: partition linux: reset requested")
    hidden = sum(
        int(n) for n in re.findall(r"partition linux: (\d+) lines it caused were not shown", r.console)
    )
    seconds = len(demo_reports(r.console)) + 2
    assert 16 <= shown <= 16 + seconds and hidden > 0, f"{shown} reset lines in {seconds} s{describe(r)}"
    assert shown + hidden <= r.console.count("[linux] hostile: resetting"), describe(r)
    rtos_unharmed(r)


def test_reset_clears_cpu_state(hostile_image: Path) -> None:
    """Every boot checks that the previous one left nothing behind (EL1 registers, FP/SIMD, timers,
    virtual CPU interface, an interrupt left active) and then leaves all of that dirty and resets."""
    r = attack(hostile_image, "state", until(r"hostile: state check: \d+ leaks", times=3))
    checks = re.findall(r"hostile: state check: (\d+) leaks", r.console)
    assert len(checks) >= 3 and set(checks) == {"0"}, describe(r)
    assert r.console.count("acknowledged INTID 27, left active") >= 2, describe(r)
    rtos_unharmed(r)


def test_poweroff_with_timer_firing(hostile_image: Path) -> None:
    """SYSTEM_OFF with the virtual timer asserted at the top priority: the partition's interrupts are
    quiesced when it stops, so its CPU (which also drains the console) does not livelock at EL2."""
    r = attack(hostile_image, "poweroff-timer", until(STOPPED, after=5))
    assert "virtual timer firing at top priority; powering off" in r.console, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_abort_flood_is_rate_limited(hostile_image: Path) -> None:
    n = 20000
    r = attack(hostile_image, "abort-flood", until(STOPPED, after=4), args=f"count={n}")
    iabt, dabt = number(r, r"abort-flood: (\d+) instruction aborts, (\d+) data aborts taken")
    assert iabt == n and dabt == n, describe(r)
    reports = len(re.findall(r"^rtmux: linux: (instruction fetch|access to IPA)", r.console, re.MULTILINE))
    assert 1 <= reports <= 40, f"{reports} abort reports for {2 * n} aborts{describe(r)}"
    assert stats(r)["aborts"] == 2 * n, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def hyp_symbol(name: str) -> int:
    """The address of one of the hypervisor's symbols (its ELF, built with the image)."""
    with (ROOT / "build" / "hyp" / "rtmux.elf").open("rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        assert isinstance(table, SymbolTableSection), "the hypervisor's ELF has no symbol table"
        (sym,) = table.get_symbol_by_name(name) or [None]
        assert sym is not None, f"{name} not in the hypervisor's ELF"
        return int(sym["st_value"])


def test_pmu_and_debug_aimed_at_the_hypervisor_reach_nothing(hostile_image: Path) -> None:
    """The PMU and self-hosted debug are Linux's own: nothing traps. A breakpoint on the hypervisor's trap
    handler and a watchpoint over its memory, both set to match at EL2, across 1000 HVCs: debug
    exceptions target EL1, so the hypervisor runs that handler for every HVC and takes nothing."""
    target = hyp_symbol("hyp_guest_sync")
    r = attack(hostile_image, "pmu-debug", until(STOPPED, after=4), args=f"target={target} count=1000")
    m = re.search(
        r"pmu-debug: (\d+) HVCs answered with a breakpoint at 0x([0-9a-f]+) and a watchpoint over the "
        r"hypervisor, (\d+) refused, (\d+) exceptions taken",
        r.console,
    )
    assert m, f"no pmu-debug report{describe(r)}"
    assert int(m[2], 16) == target, describe(r)
    assert (int(m[1]), int(m[3]), int(m[4])) == (1000, 0, 0), describe(r)
    assert stats(r, required=False)["sysregs"] == 0, describe(r)  # not one access trapped
    hvcs = [e.counts.get("hvc", 0) for e in el2_entries(r.console) if e.partition == "linux"]
    assert hvcs and max(hvcs) >= 1000, f"the HVCs never reached EL2{describe(r)}"
    rtos_unharmed(r, quiet_from=STOPPED)


def test_set_way_maintenance_is_trapped(hostile_image: Path) -> None:
    r = attack(hostile_image, "setway", until(STOPPED, after=4))
    ops, refused = number(r, r"setway: (\d+) operations, (\d+) refused")
    assert ops > 0 and refused == 0, describe(r)
    assert stats(r)["setway"] == ops, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_psci_fuzzing(hostile_image: Path) -> None:
    r = attack(hostile_image, "hvc-fuzz", until(STOPPED, after=4), args="count=20000")
    (answered,) = number(r, r"hvc-fuzz: (\d+) calls answered")
    assert answered > 10000, describe(r)
    assert re.findall(r"partition linux stopped: (.*)", r.console) == ["powered off (PSCI)"], describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_gic_system_register_misuse(hostile_image: Path) -> None:
    r = attack(hostile_image, "gic-sysreg", until(STOPPED, after=4), args="count=20000")
    (writes, _taken) = number(r, r"gic-sysreg: (\d+) writes, (\d+) interrupts taken")
    assert writes == 20000, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_top_priority_interrupt_storm(hostile_image: Path) -> None:
    r = attack(hostile_image, "irq-storm", until(STOPPED, after=4), args="ms=2000")
    taken, sgis, _ms = number(r, r"irq-storm: (\d+) interrupts taken, (\d+) SGIs sent in (\d+) ms")
    assert taken > 1000 and sgis > 1000, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_console_flood(hostile_image: Path) -> None:
    r = attack(hostile_image, "console-flood", until(STOPPED, after=4), args="ms=2000")
    (lines, _ms) = number(r, r"console-flood: (\d+) lines in (\d+) ms")
    assert lines > 100, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_reference_spin(hostile_image: Path) -> None:
    """Not an attack: 300 ms of computation on CPU 1 that never traps (the reference the other tests'
    rtos verdict is explained by). The hypervisor does nothing during it, and afterwards the rtos runs
    clean."""
    r = attack(hostile_image, "spin", until(STOPPED, after=4), args="ms=300 masked=1")
    assert "hostile: spin: 300 ms" in r.console, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_emulated_register_storm(hostile_image: Path) -> None:
    """Every emulated register window with every size and alignment, page-crossing included."""
    r = attack(hostile_image, "mmio", until(STOPPED, after=4), args="count=20000")
    (accesses, _aborts) = number(r, r"mmio: (\d+) accesses, (\d+) aborts")
    assert accesses > 50000, describe(r)
    assert re.findall(r"partition linux stopped: (.*)", r.console) == ["powered off (PSCI)"], describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_partition_high_in_a_large_ram(hostile_image: Path, tmp_path: Path) -> None:
    """A 3 GiB board with the guest's RAM at 3 GiB: the hypervisor maps all of the board's RAM (not just
    its first GiB), so loading and wiping a partition there works."""
    text = CONFIG.read_text()
    text = text.replace('memory = "1G"', 'memory = "3G"', 1)
    linux_ram = 'memory = "16M"\nkernel'
    assert linux_ram in text
    text = text.replace(linux_ram, 'memory = { size = "16M", base = "0xc0000000" }\nkernel', 1)
    config = tmp_path / "hostile-3g.toml"
    config.write_text(text)
    built = system.build(config, bootargs={"linux": "attack=spin ms=10"}, icount=True)
    r = console_script.run(built.argv, 300, until(STOPPED, after=3))
    assert "RAM IPA 0xc0000000 -> PA 0xc0000000" in r.console, describe(r)
    assert "hostile: spin: 10 ms" in r.console, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def test_assigned_spi_reaches_its_own_cpu(hostile_image: Path) -> None:
    """Issue 10 item 15: the PL031 assigned to the guest, which enables its SPI without ever writing
    GICD_IROUTER. The hypervisor routed the SPI to the partition's CPU, disabled, when it set the partition
    up, so every alarm interrupts the guest's own CPU (none reaches the rtos's). At the end the guest powers
    off with the alarm still asserted: the SPI is disabled at the stop, and the rtos runs on clean."""
    n = 20
    r = attack(hostile_image, "rtc-route", until(STOPPED, after=4), args=f"count={n}", config=RTC_CONFIG)
    route, mine = number(r, r"rtc-route: routed to 0x([0-9a-f]+) \(this CPU 0x([0-9a-f]+)\)", base=16)
    enabled, raised, taken, lost, spurious = number(
        r,
        r"rtc-route: routed .*, enabled at boot (\d+), (\d+) raised, (\d+) taken, (\d+) lost, "
        r"(\d+) spurious",
    )
    assert route == mine and enabled == 0, describe(r)
    assert raised == n and taken == n and lost == 0 and spurious == 0, describe(r)
    assert "rtc-route: alarm left asserted; powering off" in r.console, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)


def rtc_level(hostile_image: Path, order: str, n: int) -> tuple[qemu.RunResult, dict[str, int]]:
    r = attack(
        hostile_image,
        "rtc-level",
        until(STOPPED, after=4),
        args=f"order={order} count={n}",
        config=RTC_CONFIG,
    )
    raised, runs, asserted, spurious, lost = number(
        r,
        rf"rtc-level {order}: (\d+) raised, (\d+) handler runs, (\d+) asserted, (\d+) spurious, "
        r"(\d+) lost",
    )
    assert raised == n, describe(r)
    rtos_unharmed(r, quiet_from=STOPPED)
    return r, {"runs": runs, "asserted": asserted, "spurious": spurious, "lost": lost}


def test_level_interrupt_ended_before_its_device_is_not_delivered_again(hostile_image: Path) -> None:
    """Issue 10 item 16: the guest's handler EOIs the PL031's level interrupt first and clears the device
    after. The line is still up at the EOI, so the interrupt is taken again at EL2 and listed while the
    guest has IRQs masked; before the fix the guest got it once more after clearing the device (one
    spurious run per event: 200 of 200). The hypervisor re-checks the line at the guest's next IAR read
    and withdraws it: no spurious run, none lost, and its report shows the path ran."""
    n = 200
    r, got = rtc_level(hostile_image, "eoi-first", n)
    assert got == {"runs": n, "asserted": n, "spurious": 0, "lost": 0}, describe(r)
    s = stats(r)
    assert s["withdrawn"] == n and s["resamples"] >= n, describe(r)


def test_level_interrupt_still_asserted_is_delivered_again(hostile_image: Path) -> None:
    """The control of the test above: a handler that EOIs without clearing the device (and clears it on
    its second run) leaves the line really asserted, so the interrupt must come again every time; the
    re-check at the IAR keeps it."""
    n = 200
    r, got = rtc_level(hostile_image, "held", n)
    assert got == {"runs": 2 * n, "asserted": 2 * n, "spurious": 0, "lost": 0}, describe(r)
    s = stats(r)
    assert s["withdrawn"] == 0 and s["resamples"] >= n, describe(r)


def test_level_interrupt_handled_in_order_takes_no_extra_trap(hostile_image: Path) -> None:
    """A handler that clears its device before the EOI (what drivers do) with IRQs unmasked when the
    interrupt arrives: every event is one handler run, and the re-check costs no trap at all."""
    n = 200
    r, got = rtc_level(hostile_image, "clear-first", n)
    assert got == {"runs": n, "asserted": n, "spurious": 0, "lost": 0}, describe(r)
    assert stats(r, required=False)["resamples"] == 0, describe(r)
