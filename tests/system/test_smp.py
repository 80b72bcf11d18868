"""Linux on several CPUs beside the rtos (configs/qemu-virt-4cpu.toml: rtos on CPU 0, Linux on CPUs 1-3),
and the multi-CPU check guest (tests/guests/smp/, tests/system/configs/smp-guest.toml).

Every run is in icount mode. There QEMU runs the vCPUs in turn from one host thread, so while Linux
computes on three vCPUs the rtos's timer interrupt waits for their slices and the demo misses periods:
an emulator artifact (BENCHMARKS.md, "The rtos beside a busy vCPU", says how it was checked). What
the hypervisor could do to the rtos does not end with the load, so: the rtos's code checksum is checked
in every report, every second must be reported, its CPU must never enter the hypervisor after its
start, its worst wake-up stays below WORST_WAKEUP_US, and no period may be missed once Linux is quiet
again (four reports in a row).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rtmux.formats.hyp_console import el2_entries
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system import console_script
from tests.system.boards import gic_params, on_gic
from tests.system.console_script import PROMPT, Script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt-4cpu.toml"
GUEST_CONFIG = ROOT / "tests" / "system" / "configs" / "smp-guest.toml"
READY = r"^\[linux\] rtmux-linux: ready: "
RESET_LINE = "rtmux: partition linux: reset requested; restarting from its pristine images"
STOPPED = "rtmux: partition linux stopped: powered off (PSCI)"
# Four rtos reports in a row (four seconds of guest time): Linux quiet meanwhile.
QUIET = r"(\[rtos\] demo: t=\d+s.*\n(.*\n)*?){4}"
# Far above icount's round-robin wait with three busy Linux vCPUs (8.5 ms measured under hackbench) and
# far below what a hypervisor that stalled the rtos would show.
WORST_WAKEUP_US = 50_000.0
HOTPLUG_CYCLES = 50
REBOOTS = 3
# Per-CPU sums: of the IPI rows of /proc/interrupts, of user + nice + system time in /proc/stat.
IPIS = (
    '$(awk \'/^IPI/{for(i=2;i<=NF&&$i~/^[0-9]+$/;i++)s[i-1]+=$i} END{print s[1]","s[2]","s[3]}\' '
    "/proc/interrupts)"
)
BUSY = '$(awk \'/^cpu[0-9]/{printf "%s%d", (n++ ? "," : ""), $2+$3+$4}\' /proc/stat)'
TIMER = '$(awk \'/arch_timer/{print $2","$3","$4}\' /proc/interrupts)'
DMESG_BAD = "$(dmesg | grep -cE 'BUG|WARNING|Oops|rcu.*stall|soft lockup|hard LOCKUP')"


@pytest.fixture(scope="module")
def linux_system(
    rtos_images: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> system.System:
    """The 4-CPU system on GICv3, or on the GIC version a test asks for (indirect parametrization)."""
    gic = getattr(request, "param", 3)
    return system.build(on_gic(CONFIG, gic, tmp_path_factory.mktemp("gic")), icount=True)


def value(console: str, name: str, why: str) -> str:
    """What Linux printed for NAME= on a line of several (the first such value); the command line the
    shell echoes has `$(...)` there, never a computed value."""
    m = re.search(rf"^\[linux\] (?:.* )?{re.escape(name)}=([^\s$]\S*)(?: |$)", console, re.MULTILINE)
    assert m is not None, f"{name}= not found{why}"
    return m[1]


def per_cpu(console: str, name: str, why: str) -> list[int]:
    text = value(console, name, why)
    assert re.fullmatch(r"\d+,\d+,\d+", text), f"{name}={text}: not three CPUs' counts{why}"
    return [int(x) for x in text.split(",")]


def rtos_unharmed(out: str, why: str, quiet_from: str) -> None:
    """The rtos throughout (module docstring): checksum, every second, its CPU untouched, its wake-ups
    bounded, and no missed period from `quiet_from` (computed text Linux printed) on."""
    reports = console_script.rtos_reported_unharmed(out, why, quiet_from=quiet_from, quiet_reports=4)
    worst = max(d.worst_us for d in reports)
    assert worst <= WORST_WAKEUP_US, f"rtos woke up {worst} us late{why}"
    assert "rtmux: partition rtos stopped" not in out, why


@pytest.mark.parametrize("linux_system", gic_params(), indirect=True)
def test_linux_uses_its_three_cpus(linux_system: system.System) -> None:
    """Linux sees CPUs 1-3 as its three, hackbench runs on each of them and every one takes IPIs (the
    vGIC's SGIs between CPUs), dmesg stays clean, and the rtos never notices."""
    steps = [
        (
            PROMPT,
            "echo cpus=$(nproc) cpuinfo=$(grep -c ^processor /proc/cpuinfo) "
            f"online=$(cat /sys/devices/system/cpu/online); echo ipis0={IPIS} busy0={BUSY}; "
            "hackbench -g 6 -f 10 -l 200 >/dev/null; echo hackbench=$?; "
            f"echo ipis1={IPIS} busy1={BUSY}; echo bad={DMESG_BAD}; echo quiet-$((40+2))\n",
        ),
        (r"^\[linux\] quiet-42$", ""),
        (QUIET, "poweroff -f\n"),
        (re.escape(STOPPED), ""),
    ]
    script = Script(steps, after=3)
    r, why = console_script.run_to_end(linux_system.argv, 600, script, tail=20000)
    out = r.console
    assert value(out, "cpus", why) == "3" and value(out, "cpuinfo", why) == "3", why
    assert value(out, "online", why) == "0-2", why
    assert "smp: Brought up 1 node, 3 CPUs" in out, why
    assert value(out, "hackbench", why) == "0", why
    ipis0, ipis1 = per_cpu(out, "ipis0", why), per_cpu(out, "ipis1", why)
    busy0, busy1 = per_cpu(out, "busy0", why), per_cpu(out, "busy1", why)
    # every CPU took IPIs during hackbench, and ran it: at least 10 ticks (40 ms at HZ=250) each (Linux's
    # balancing gave one CPU 18 in a GICv2 run; an unused CPU shows 0-2)
    assert all(b > a for a, b in zip(ipis0, ipis1, strict=True)), f"IPIs {ipis0} -> {ipis1}{why}"
    assert all(b - a >= 10 for a, b in zip(busy0, busy1, strict=True)), f"busy {busy0} -> {busy1}{why}"
    assert value(out, "bad", why) == "0", why
    rtos_unharmed(out, why, quiet_from="quiet-42")
    print(f"IPIs per CPU during hackbench: {[b - a for a, b in zip(ipis0, ipis1, strict=True)]}")


def test_cpu_hotplug_loop_under_load(linux_system: system.System) -> None:
    """Linux takes CPUs 2 and 3 (its cpu1, cpu2) offline and back HOTPLUG_CYCLES times while hackbench
    runs in a loop (PSCI CPU_OFF, AFFINITY_INFO, CPU_ON each time); afterwards every CPU is back and takes
    its timer and its IPIs again, and dmesg is clean."""
    loop = (
        "(while :; do hackbench -g 2 -f 5 -l 50 >/dev/null; done) & L=$!; n=0; "
        f"for i in $(seq {HOTPLUG_CYCLES}); do "
        "for c in 1 2; do echo 0 > /sys/devices/system/cpu/cpu$c/online || break 2; done; "
        "for c in 1 2; do echo 1 > /sys/devices/system/cpu/cpu$c/online || break 2; done; "
        "n=$((n+1)); done; kill $L; wait $L 2>/dev/null; echo cycles=$n\n"
    )
    after = (
        f"echo online=$(cat /sys/devices/system/cpu/online) cpus=$(nproc); echo timer0={TIMER} ipis0={IPIS}; "
        f"hackbench -g 6 -f 10 -l 100 >/dev/null; echo timer1={TIMER} ipis1={IPIS}; echo bad={DMESG_BAD}; "
        # a CPU turned off and on again: its debug and PMU hardware work as at boot (reset at CPU_ON)
        "taskset -c 2 rtmux-debugcheck all; echo debugcheck=$?; "
        "echo quiet-$((40+2))\n"
    )
    steps = [
        (PROMPT, loop),
        (r"^\[linux\] cycles=\d+$", ""),
        (PROMPT, after),
        (r"^\[linux\] quiet-42$", ""),
        (QUIET, "poweroff -f\n"),
        (re.escape(STOPPED), ""),
    ]
    script = Script(steps, after=3)
    r, why = console_script.run_to_end(linux_system.argv, 900, script, tail=20000)
    out = r.console
    assert value(out, "cycles", why) == str(HOTPLUG_CYCLES), why
    assert value(out, "online", why) == "0-2" and value(out, "cpus", why) == "3", why
    timer0, timer1 = per_cpu(out, "timer0", why), per_cpu(out, "timer1", why)
    ipis0, ipis1 = per_cpu(out, "ipis0", why), per_cpu(out, "ipis1", why)
    assert all(b > a for a, b in zip(timer0, timer1, strict=True)), f"timer {timer0} -> {timer1}{why}"
    assert all(b > a for a, b in zip(ipis0, ipis1, strict=True)), f"IPIs {ipis0} -> {ipis1}{why}"
    assert value(out, "bad", why) == "0", why
    assert value(out, "debugcheck", why) == "0", why
    assert console_script.debugcheck_lines(out) == console_script.DEBUGCHECK, why
    # each cycle is two CPU_OFF and two CPU_ON calls (HVC) on Linux's CPUs
    hvc = sum(e.counts["hvc"] for e in el2_entries(out) if e.partition == "linux")
    assert hvc >= 4 * HOTPLUG_CYCLES, f"{hvc} HVCs for {HOTPLUG_CYCLES} hotplug cycles{why}"
    rtos_unharmed(out, why, quiet_from="quiet-42")


@pytest.mark.parametrize("linux_system", gic_params(), indirect=True)
def test_reboot_loop_brings_every_cpu_back(linux_system: system.System) -> None:
    """`reboot -f` (PSCI SYSTEM_RESET from one CPU) REBOOTS times: each time all of Linux's CPUs stop,
    the partition restarts on its boot CPU, and Linux brings the other two up again."""
    steps: list[tuple[str, str]] = []
    for i in range(REBOOTS + 1):
        steps += [
            (READY, ""),
            (PROMPT, f"echo boot{i}=$(nproc)-$(cat /sys/devices/system/cpu/online)\n"),
            (rf"^\[linux\] boot{i}=\S+$", ""),
            (PROMPT, "reboot -f\n" if i < REBOOTS else f"echo bad={DMESG_BAD}; echo quiet-$((40+2))\n"),
        ]
        if i < REBOOTS:
            steps.append((f"^{re.escape(RESET_LINE)}$", ""))
    steps += [(r"^\[linux\] quiet-42$", ""), (QUIET, "poweroff -f\n"), (re.escape(STOPPED), "")]
    script = Script(steps, after=3)
    r, why = console_script.run_to_end(linux_system.argv, 900, script, tail=20000)
    out = r.console
    assert out.count(RESET_LINE) == REBOOTS, why
    for i in range(REBOOTS + 1):
        assert value(out, f"boot{i}", why) == "3-0-2", why
    assert value(out, "bad", why) == "0", why
    rtos_unharmed(out, why, quiet_from="quiet-42")


# ---------------------------------------------------------------- the multi-CPU check guest


@pytest.fixture(scope="module")
def smp_guest(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "smp.img"


def guest_line(out: str, what: str, why: str) -> dict[str, str]:
    """The key=value fields of the guest's first `smp: WHAT: ...` line."""
    m = re.search(rf"^\[linux\] smp: {what}: (.*)$", out, re.MULTILINE)
    assert m, f"no 'smp: {what}:' line{why}"
    return dict(f.split("=", 1) for f in m[1].split() if "=" in f)


def guest_lines(out: str, what: str) -> list[str]:
    return re.findall(rf"^\[linux\] smp: {what}: (.*)$", out, re.MULTILINE)


def check_guest_run(out: str, why: str, rounds: int, cycles: int) -> None:
    """What the guest reports (tests/guests/smp/main.c) against what the GIC and PSCI specify."""
    # CPU_ON: the rtos's CPU refused (DENIED), a CPU nobody has or an affinity with Aff1 (INVALID
    # PARAMETERS), an entry point in the rtos's RAM or unaligned (INVALID_ADDRESS), itself (ALREADY_ON);
    # AFFINITY_INFO: only its own CPUs exist (INVALID_PARAMETERS otherwise), itself on, 2 and 3 off
    psci = guest_lines(out, "psci")
    assert psci and psci[0] == (
        "cpu_on rtos=-3 absent=-2 aff1=-2 outside=-9 unaligned=-9 self=-4 "
        "affinity rtos=-2 absent=-2 self=0 cpu2=1 cpu3=1"
    ), why
    for cpu in (2, 3):
        on = re.search(
            rf"smp: cpu_on cpu{cpu}=(\S+) again=(\S+) started=(\S+) mpidr=(\S+) ctx=(\S+) affinity=(\S+)", out
        )
        assert on, why
        # started, at its own entry with its context id; a second CPU_ON: ON_PENDING or ALREADY_ON
        assert on[1] == "0" and on[2] in ("-5", "-4") and on[3] == "1", why
        assert on[4] == str(cpu) and on[5] == str(cpu) and on[6] == "0", why
    ipi = guest_line(out, "ipi", why)
    n = str(rounds)
    # SGIs 2..8 taken per CPU (main.c, ipis()): by list, by IRM (never the sender), none at the rtos's CPU
    assert ipi["lost"] == "0" and ipi["sent"] == str(7 * rounds), why
    assert ipi["cpu1"] == f"0,0,0,{n},{n},0,{n}", why
    assert ipi["cpu2"] == f"{n},{n},{n},{n},0,0,{n}", why
    assert ipi["cpu3"] == f"0,{n},{n},{n},{n},0,0", why
    redist = guest_line(out, "redist", why)
    assert redist == {
        "set": "1",
        "cleared": "0",
        "taken-after-clear": "0",
        "taken-after-set": "1",
        "sent-pending": "1",
        "sent-cleared": "0",
        "sent-taken": "0",
        "active": "1",
        "inactive": "0",
        "handler-active": "1",
        "handler-pending": "0",
        "after-eoi": "0",
    }, why
    prio = guest_line(out, "priority", why)
    # SGI 12 (priority 0x40) before 11 (0xa0); the mask 0x70 holds 11 back until it opens; 12 preempts 11
    assert prio == {
        "first": "12",
        "second": "11",
        "masked-low": "0",
        "masked-high": "1",
        "opened-low": "1",
        "nested": "11,12",
        "inside": "1",
    }, why
    levels = guest_lines(out, "level")
    assert levels[:2] == [
        "routed=cpu2 irouter=2 taken cpu1=0 cpu2=3 cpu3=0 limit=3",
        "routed=cpu3 irouter=3 taken cpu1=0 cpu2=0 cpu3=2 limit=2",
    ], why
    hotplug = guest_line(out, "hotplug", why)
    c = str(cycles)
    assert hotplug == {"cycles": c, "ok": c, "off-seen": c, "stale": "0"}, why


def test_guest_checks_psci_and_the_vgic_across_cpus(smp_guest: Path) -> None:
    """The check guest's whole run (tests/guests/smp/main.c), ended by SYSTEM_OFF from its CPU 3: the
    partition stops with all its CPUs; the rtos never noticed (nor the SGIs aimed at its CPU)."""
    del smp_guest
    rounds, cycles = 20, 20
    built = system.build(
        GUEST_CONFIG, bootargs={"linux": f"end=off rounds={rounds} hotplug={cycles}"}, icount=True
    )
    script = Script(
        [(r"^\[linux\] smp: done; CPU 3 asks for SYSTEM_OFF$", ""), (re.escape(STOPPED), "")], after=4
    )
    r, why = console_script.run_to_end(built.argv, 600, script, tail=20000)
    out = r.console
    assert out.count("smp: start cpu=1 others-off=1") == 1, why
    check_guest_run(out, why, rounds, cycles)
    # SYSTEM_OFF from CPU 3 stopped the partition, its CPUs 1 and 2 with it, and nothing else
    assert out.count(STOPPED) == 1 and "rtmux: partition rtos stopped" not in out, why
    console_script.rtos_reported_unharmed(out, why, quiet_from=STOPPED, quiet_reports=4)


def test_guest_reset_from_another_cpu_restarts_the_boot_cpu_only(smp_guest: Path) -> None:
    """SYSTEM_RESET from the guest's CPU 3, twice: each time the partition restarts on its boot CPU
    alone (its CPUs 2 and 3 off at the start), and every check passes again."""
    del smp_guest
    rounds, cycles = 2, 2
    built = system.build(
        GUEST_CONFIG, bootargs={"linux": f"end=reset rounds={rounds} hotplug={cycles}"}, icount=True
    )
    start = r"^\[linux\] smp: start cpu=1 others-off=1$"
    steps = [(start, ""), (f"^{re.escape(RESET_LINE)}$", "")] * 2
    # the third run's checks, then the hypervisor's entries per CPU (escape, then e)
    steps += [(start, ""), (r"^\[linux\] smp: done", "\x14e"), (r"^rtmux: el2-entries cpu=3 ", "")]
    script = Script(steps, after=2, linger_s=0.0)
    r, why = console_script.run_to_end(built.argv, 600, script, tail=20000)
    out = r.console
    runs = out.split(RESET_LINE)
    assert len(runs) >= 3, why
    for run in runs[:3]:
        check_guest_run(run, why, rounds, cycles)
    reports = demo_reports(out)
    assert {d.checksum for d in reports} == {"unchanged"} and len(reports) >= 2, why
    untouched = console_script.rtos_cpu_untouched(out)
    assert untouched is None, f"{untouched}{why}"
    assert max(d.worst_us for d in reports) <= WORST_WAKEUP_US, why
