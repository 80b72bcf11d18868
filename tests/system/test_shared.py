"""Shared-core mode: the rtos and Linux on one CPU (QEMU -smp 1), the rtos always first.

configs/qemu-virt-1cpu.toml runs the rtos demo and Debian Linux on CPU 0; tests/system/configs/
shared-hostile.toml puts the small hostile kernel in Linux's place. Every run is in icount mode, where
-smp 1 has no round-robin between vCPUs: a control-loop overrun or a late wake-up of the rtos is the
hypervisor's doing, so the tests demand none at all, across Linux's boot, load, reboot and power-off.
The last test gives Linux a second CPU (-smp 2), where the round-robin is back (its docstring).

What each run shows, beside its own point:
  - the rtos's latency stream: every demo report consecutive, code checksum unchanged, zero overruns;
  - the rtos's EL2 entries: no interrupt of the rtos ever went through the hypervisor (irq=0: it takes
    them itself, whatever Linux does), and its idle WFI is where the CPU passed to Linux (wfi > 0);
  - the hypervisor's books for the shared CPU (`rtmux: share cpu=0 ...`): both worlds ran and switched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.hyp_console import El2Entries, ShareReport, el2_entries, share_reports, starvation_waits
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system import console_script
from tests.system.boards import gic_params, on_gic
from tests.system.console_script import PROMPT, Script, until

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt-1cpu.toml"
HOSTILE = ROOT / "tests" / "system" / "configs" / "shared-hostile.toml"
STOPPED = "rtmux: partition linux stopped: powered off"
RTD = re.compile(r"^\[rtos\] RTD\|(.*)$", re.MULTILINE)
# The demo's worst wake-up on a CPU of its own is 0.8 us in icount; on the shared CPU its timer
# interrupt may find Linux running and cost a world switch (about 0.4 us each way, the share report's
# figures). A generous bound far below a period: what an interrupt the hypervisor held back shows (800 us
# before the reload stepped aside, 39-115 us when a Linux stop's reports were printed at once) or lost.
WORST_WAKEUP_US = 25.0


def describe(r: qemu.RunResult, script: Script | None = None) -> str:
    return console_script.describe(r, script, tail=20000)


def value(console: str, name: str) -> str:
    found = console_script.linux_value(console, name)
    assert found, f"{name}= not found"
    return found


def rtos_kept_its_cpu(out: str, why: str, min_reports: int = 3) -> None:
    """The demo reported every second with its code intact, no overrun and no late wake-up; none of the
    rtos's interrupts went through the hypervisor."""
    reports = demo_reports(out)
    assert len(reports) >= min_reports, f"the rtos stopped reporting{why}"
    assert {d.checksum for d in reports} == {"unchanged"}, why
    seconds = [d.t_s for d in reports]
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), f"gap in {seconds}{why}"
    assert {d.overruns for d in reports} == {0}, f"control-loop overruns{why}"
    worst = max(d.worst_us for d in reports)
    assert worst <= WORST_WAKEUP_US, f"worst wake-up {worst} us{why}"
    # whole RTD lines only: QEMU may stop in the middle of the last one
    overruns = {line.split("|")[3].strip() for line in RTD.findall(out) if line.count("|") >= 6}
    assert overruns <= {"0"}, f"latency monitor overruns {overruns}{why}"
    assert "rtmux: PANIC" not in out and "rtmux: partition rtos stopped" not in out, why
    rtos = [e for e in el2_entries(out) if e.partition == "rtos"]
    assert rtos, f"no el2-entries report of the rtos{why}"
    assert all(e.counts["irq"] == 0 for e in rtos), f"an rtos interrupt went through EL2{why}"


def last_share(out: str, why: str) -> ShareReport:
    reports = share_reports(out)
    assert reports, f"no share report{why}"
    return reports[-1]


def rtos_entries(out: str) -> El2Entries:
    return [e for e in el2_entries(out) if e.partition == "rtos"][-1]


@pytest.fixture(scope="module")
def shared_system(
    rtos_images: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> system.System:
    """Shared-core mode on GICv3, or on the GIC version a test asks for (indirect parametrization)."""
    gic = getattr(request, "param", 3)
    return system.build(on_gic(CONFIG, gic, tmp_path_factory.mktemp("gic")), icount=True)


@pytest.mark.parametrize("shared_system", gic_params(), indirect=True)
def test_linux_shell_network_reboot_panic_poweroff(shared_system: system.System) -> None:
    script = Script(
        [
            (
                PROMPT,
                "echo cpus=$(grep -c ^processor /proc/cpuinfo); "
                "echo bad=$(dmesg | grep -cE 'BUG|WARNING|Oops'); "
                "ping -c 1 -W 5 10.0.2.2 >/dev/null; echo ping=$?; "
                "rtmux-debugcheck all; echo debugcheck=$?; "
                "hackbench -g 2 -f 10 -l 300 >/dev/null; echo hackbench=$?\n",
            ),
            (r"hackbench=\d+\n(.*\n)*?.*" + PROMPT, "reboot -f\n"),
            (r"partition linux: reset requested", ""),
            (r"rtmux-linux: ready", ""),
            (PROMPT, "echo rebooted=$((40+2))\n"),
            # a fault: root panics the kernel (sysrq crash); Linux's default policy restarts it
            (r"rebooted=42\n(.*\n)*?.*" + PROMPT, "echo c > /proc/sysrq-trigger\n"),
            (r"policy restart: restarting", ""),
            (r"rtmux-linux: ready", ""),
            (PROMPT, "echo back=$((40+3))\n"),
            (r"back=43\n(.*\n)*?.*" + PROMPT, "poweroff -f\n"),
            (STOPPED, ""),
        ],
        after=3,
    )
    r, why = console_script.run_to_end(shared_system.argv, 600, script, tail=20000)
    out = r.console
    ready = re.findall(r"^\[linux\] rtmux-linux: ready: .*$", out, re.MULTILINE)
    assert len(ready) == 3 and all("1 CPU(s), eth0 10.0.2.15/24" in line for line in ready), why
    assert value(out, "cpus") == "1" and value(out, "bad") == "0", why
    assert value(out, "ping") == "0" and value(out, "hackbench") == "0", why
    # a debugger and a profiler on the shared CPU, as on bare metal (Linux's PMU counters stop while
    # the rtos runs: with -smp 1 nothing else is counted, so the loop's count is all but exact)
    assert value(out, "debugcheck") == "0", why
    assert console_script.debugcheck_lines(out) == console_script.DEBUGCHECK, why
    counted = re.search(r"perf: instructions (\d+) for a (\d+)-instruction loop", out)
    assert counted and 0 <= int(counted[1]) - int(counted[2]) <= 64, why
    assert "rtmux: partition linux: fault 1: kernel panic" in out, why
    # reboot, the panic's restart and power-off were Linux's only: the rtos reported on after each
    rtos_kept_its_cpu(out, why)
    after = demo_reports(out[out.index(STOPPED) :])
    assert len(after) >= 3, why
    entries = rtos_entries(out)
    assert entries.counts["wfi"] > 0, f"the rtos never idled into Linux{why}"
    share = last_share(out, why)
    c = share.counts
    assert (share.rtos, share.linux) == ("rtos", "linux"), why
    assert c["linux_ms"] > 0 and c["to_linux"] > 0 and c["to_rtos"] > 0, why
    assert 0 < c["switch_ns_to_linux"] < 10_000 and 0 < c["switch_ns_to_rtos"] < 10_000, why
    assert c["starved"] == 0, why  # the demo needs a few us a period: Linux never waits long


def test_selftest_while_linux_runs_hackbench(rtos_images: Path) -> None:
    # The selftest starts 4 s (guest time) after boot, by when Linux is at its shell (about 2 s) and runs
    # hackbench in a loop; its figures count the rounds, so that the rounds done while the tests ran show.
    built = system.build(
        CONFIG, rtos_image=rtos_images / "selftest.img", bootargs={"rtos": "start_ms=4000"}, icount=True
    )
    loop = "n=0; while hackbench -g 2 -f 10 -l 50 >/dev/null; do n=$((n+1)); echo $n >/tmp/rounds; done"
    script = Script(
        [
            (PROMPT, f"({loop}) & echo started=$((1+1))\n"),
            (r"started=2", ""),
            (r"^\[rtos\] selftest: \d+ tests$", ""),
            # the shell waits at its prompt meanwhile (the loop runs in the background)
            (r"^\[rtos\] \d+ passed, \d+ failed$", "echo rounds=$(cat /tmp/rounds)\n"),
            (r"rounds=\d+", ""),
        ]
    )
    r, why = console_script.run_to_end(built.argv, 600, script, tail=20000)
    out = r.console
    summary = re.search(r"^\[rtos\] (\d+) passed, (\d+) failed$", out, re.MULTILINE)
    assert summary and int(summary[1]) > 0 and summary[2] == "0", why
    start = re.search(r"^\[rtos\] selftest: \d+ tests$", out, re.MULTILINE)
    assert start and out.index("started=2") < start.start(), why
    assert int(value(out, "rounds")) > 0, why


def test_linux_sleep_is_one_second_while_the_rtos_is_half_busy(rtos_images: Path) -> None:
    built = system.build(CONFIG, bootargs={"rtos": "latmon=1 period_us=1000 busy_pct=50"}, icount=True)
    # Linux's clock and the rtos's read the same counter: /proc/uptime is guest time.
    cmd = (
        "a=$(cut -d' ' -f1 /proc/uptime); sleep 1; b=$(cut -d' ' -f1 /proc/uptime); "
        'echo slept_ms=$(echo "$a $b" | awk \'{printf "%d", ($2 - $1) * 1000}\')\n'
    )
    script = Script([(PROMPT, cmd), (r"slept_ms=\d+\n(.*\n)*?.*" + PROMPT, "poweroff -f\n"), (STOPPED, "")])
    r, why = console_script.run_to_end(built.argv, 600, script, tail=20000)
    out = r.console
    assert "demo: busy_pct=50: computing 5 ms of every 10 ms" in out, why
    slept = int(value(out, "slept_ms"))
    # /proc/uptime has 10 ms steps; the rtos may hold the CPU 5 ms when Linux's timer fires
    assert 990 <= slept <= 1030, f"sleep 1 took {slept} ms{why}"
    c = last_share(out, why).counts
    busy = c["rtos_ms"] / (c["rtos_ms"] + c["linux_ms"] + c["idle_ms"])
    assert 0.4 <= busy <= 0.6, f"the rtos had {busy:.0%} of the CPU, not about half{why}"
    rtos_kept_its_cpu(out, why, min_reports=2)


@pytest.mark.parametrize(
    ("attack", "done"),
    [
        # pure computation with IRQs masked at EL1, never a trap: the CPU is still the rtos's at each
        # of its interrupts
        ("spin ms=3000 masked=1", r"hostile: spin: 3000 ms"),
        # interrupts as fast as the guest can raise and take them (virtual SGIs, its timer)
        ("irq-storm", r"hostile: irq-storm: \d+ interrupts taken"),
    ],
)
def test_hostile_guest_delays_nothing(rtos_images: Path, attack: str, done: str) -> None:
    built = system.build(HOSTILE, bootargs={"linux": f"attack={attack}"}, icount=True)
    script = until(STOPPED, after=3)
    r = console_script.run(built.argv, 300, script)
    why = describe(r, script)
    assert script.finished, why
    assert re.search(done, r.console), why
    rtos_kept_its_cpu(r.console, why)
    c = last_share(r.console, why).counts
    assert c["to_rtos"] > 0 and c["to_linux"] > 0, why


def test_starvation_is_reported(rtos_images: Path) -> None:
    # The rtos computes 9 ms of every 10 (busy_pct=90) and the report threshold is 5 ms: every time
    # Linux (the hostile guest, computing) gets the CPU back, it had waited about 9 ms.
    config = ROOT / "tests" / "system" / "configs" / "shared-starved.toml"
    built = system.build(config, bootargs={"linux": "attack=spin ms=500 masked=0"}, icount=True)
    script = until(STOPPED, after=2)
    r = console_script.run(built.argv, 300, script)
    why = describe(r, script)
    assert script.finished, why
    waits = starvation_waits(r.console)
    assert len(waits) >= 10 and all(5 <= w <= 10 for w in waits), f"waits {waits}{why}"
    c = last_share(r.console, why).counts
    assert c["starved"] >= len(waits) and 5 <= c["longest_wait_ms"] <= 10, why
    assert c["rtos_ms"] > 4 * c["linux_ms"], why
    rtos_kept_its_cpu(r.console, why, min_reports=2)


def test_two_cpu_linux_shares_the_rtos_cpu(rtos_images: Path) -> None:
    """Linux on CPUs 0 and 1 (-smp 2), the rtos sharing CPU 0: Linux runs on both CPUs and stops alone.

    Latency is judged only where the emulator lets it be: in icount mode QEMU runs the two vCPUs round-
    robin, and a vCPU that is busy when its own timer fires waits for the other's whole time slice. The
    same happens without any hypervisor (the latency app with busy threads on CPU 0 and a copy loop on
    CPU 1, `-append 'period_us=1000 samples=3000 cpu1=copy load=1 timer=phys'`: max 1000 us, 44 % of
    the samples late; with CPU 0 idle, 0.608 us; BENCHMARKS.md). So the rtos may miss periods while
    Linux's CPU 0 is busy (boot, hackbench), and must not once Linux idles or has stopped, when CPU 0
    waits in WFI at the rtos's deadlines as on a CPU of its own.
    """
    config = ROOT / "tests" / "system" / "configs" / "shared-smp.toml"
    built = system.build(config, icount=True)
    script = Script(
        [
            (
                PROMPT,
                "echo cpus=$(grep -c ^processor /proc/cpuinfo); "
                "hackbench -g 2 -f 10 -l 100 >/dev/null; echo hackbench=$?; sleep 3; echo idle=$((6*7))\n",
            ),
            (r"idle=42\n(.*\n)*?.*" + PROMPT, "poweroff -f\n"),
            (STOPPED, ""),
        ],
        after=3,
    )
    r, why = console_script.run_to_end(built.argv, 600, script, tail=20000)
    out = r.console
    assert re.search(r"^\[linux\] rtmux-linux: ready: .*, 2 CPU\(s\)", out, re.MULTILINE), why
    assert value(out, "cpus") == "2" and value(out, "hackbench") == "0", why
    reports = demo_reports(out)
    seconds = [d.t_s for d in reports]
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), f"gap in {seconds}{why}"
    assert {d.checksum for d in reports} == {"unchanged"}, why
    # Linux idle at its shell (the reports wholly inside `sleep 3`), then stopped: no overrun, no late
    # wake-up (WORST_WAKEUP_US)
    idle = demo_reports(out[out.index("hackbench=0") : out.index("idle=42")])[1:]
    after = demo_reports(out[out.index(STOPPED) :])
    assert len(idle) >= 2 and len(after) >= 3, why
    for window, name in ((idle, "Linux idle"), (after, "Linux stopped")):
        base = window[0].overruns
        assert all(d.overruns == base for d in window), f"overruns with {name}{why}"
        worst = max(d.worst_us for d in window[1:])
        assert worst <= WORST_WAKEUP_US, f"worst wake-up {worst} us with {name}{why}"
    assert "rtmux: PANIC" not in out and "rtmux: partition rtos stopped" not in out, why
    assert all(e.counts["irq"] == 0 for e in el2_entries(out) if e.partition == "rtos"), why
    c = last_share(out, why).counts
    assert c["to_linux"] > 0 and c["to_rtos"] > 0 and c["linux_ms"] > 0, why
    # No bound on the switches' cost here: its counter also runs while the other vCPU has its round-
    # robin slice (Linux's CPU lock's WFE is a yield in QEMU), so the averages swing from a few us to a
    # hundred between runs; the -smp 1 tests and make bench measure it (~0.4 us each way).


VBUS_HOSTILE = ROOT / "tests" / "system" / "configs" / "shared-vbus-hostile.toml"
# The rtos's figures on the shared CPU (issue 23's target: worst wake-up <= 2 us, no overrun). Measured
# in icount with each storm: 0.98 to 1.81 us (the most with the same-head storm, whose guest traps about
# 100 times a round, half a million a second: the rtos's timer nearly always fires in one of those traps
# and waits for its end, as with the hostile kernel's interrupt storm, 1.26 us). With nested interrupts
# in the rtos (issue 27) the ready-0 storm's worst rose to 2.5-3.7 us across that work's commits (3.68 at
# the first, 2.544 at the last; not traced), and a 32-instruction cut of the hypervisor's UART trap put
# the same-head storm's at 5.6 us (that cut is not in: BENCHMARKS.md, "What the hypervisor costs
# Linux"). The bound leaves the figure a little room; the 2 us target is missed there.
STORM_WORST_US = 3.0
# Hypervisor lines a partition can cause in the storm's 3 s: a burst of 16, then one a second, each
# after a line saying how many were not shown (PART_LINES_BURST, hyp/partition.h), for 3 to 4 seconds.
STORM_LINES_MAX = 16 + 2 * 4
STORM = re.compile(
    r"^\[linux\] vbus-guest: storm (\S+): (\d+) rounds in \d+ ms, (\d+) refused \(needs reset\), longest "
    r"register write (\d+) us; after a reset: (\S+)$",
    re.M,
)


@pytest.fixture(scope="module")
def vbus_guest(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "vbus.img"


@pytest.mark.parametrize(
    ("storm", "name"),
    [
        # a reset, every queue loaded with 64 entries naming its whole 64-descriptor chain, DRIVER_OK
        (1, "reset-load-driver-ok"),
        # 64 control messages naming one 64-descriptor chain (a head the device already has)
        (2, "same-head"),
        # 64 distinct heads whose chains share the descriptor table's tail (2,080 descriptors)
        (3, "shared-chains"),
        # 32 opens and 32 closes of the counters port in one notification
        (4, "stats-opens"),
        # DEVICE_READY(0) and PORT_READY(0), 32 of each per notification: a hypervisor line each
        (5, "ready-0"),
    ],
)
def test_vbus_storm_delays_nothing(vbus_guest: Path, storm: int, name: str) -> None:
    """A hostile V-Bus driver on the CPU the rtos shares (issue 23 part 2): each storm makes every
    register write as expensive as the device allows, for 3 s of guest time. The device does bounded
    work per trap and steps aside for the rtos, so the rtos keeps its shared-core figures throughout;
    the device still works after a reset, and the storm's hypervisor lines are rate limited."""
    del vbus_guest  # built; the configuration names it
    built = system.build(VBUS_HOSTILE, bootargs={"linux": f"storm={storm} ms=3000"}, icount=True)
    script = until(STOPPED, after=2)
    r = console_script.run(built.argv, 300, script)
    why = describe(r, script)
    assert script.finished, why
    out = r.console
    m = STORM.search(out)
    assert m is not None and m[1] == name and int(m[2]) > 0 and m[5] == "works", why
    start = out.index("[linux] vbus-guest: round trip before the attacks: ok")
    during = demo_reports(out[start : m.start()])
    assert len(during) >= 2, why
    worst = max(d.worst_us for d in during)
    assert worst <= STORM_WORST_US and {d.overruns for d in during} == {0}, (
        f"storm {name}: worst wake-up {worst} us, overruns {during[-1].overruns}{why}"
    )
    lines = re.findall(r"^rtmux: .*$", out[start : m.start()], re.M)
    assert len(lines) <= STORM_LINES_MAX, f"{len(lines)} hypervisor lines during the storm{why}"
    rtos_kept_its_cpu(out, why)
    print(
        f"storm {name}: {m[2]} rounds, {m[3]} refused, rtos worst {worst} us, {len(lines)} hypervisor lines"
    )


# The two-CPU storm's bound on the rtos's worst wake-up while it runs: icount's round-robin between the two
# vCPUs makes that figure the emulator's as much as the hypervisor's (test_two_cpu_linux_shares_the_rtos_cpu),
# so it is loose; measured 0.83 to 11.7 us, and 105.8 us before the passes were bounded (a pass on CPU 1
# held the device's lock that the shared CPU's doorbell waited for, interrupts masked).
SMP_STORM_WORST_US = 50.0


def test_vbus_storm_from_the_other_cpu(vbus_guest: Path) -> None:
    """The hostile V-Bus driver with two CPUs, the rtos sharing the first (-smp 2): the storm of chains
    sharing the descriptor table runs on CPU 1, so the hypervisor's passes for it run beside the shared
    CPU, whose doorbells and traps take the same lock. Nothing the rtos's CPU waits for is held long:
    the rtos reports every second, no overrun, and its worst wake-up stays far below what a lock held
    for a whole unbounded pass cost it; the device works after, and the rtos is clean once Linux is off."""
    del vbus_guest  # built; the configuration names it
    config = ROOT / "tests" / "system" / "configs" / "shared-smp-vbus-hostile.toml"
    built = system.build(config, bootargs={"linux": "storm=3 ms=3000 cpu=1"}, icount=True)
    script = until(STOPPED, after=3)
    r = console_script.run(built.argv, 300, script)
    why = describe(r, script)
    assert script.finished, why
    out = r.console
    assert "[linux] vbus-guest: storm on CPU 1 (CPU_ON 0)" in out, why
    m = STORM.search(out)
    assert m is not None and m[1] == "shared-chains" and int(m[2]) > 0 and m[5] == "works", why
    start = out.index("[linux] vbus-guest: round trip before the attacks: ok")
    during = demo_reports(out[start : m.start()])
    assert len(during) >= 2, why
    worst = max(d.worst_us for d in during)
    assert worst <= SMP_STORM_WORST_US and {d.overruns for d in during} == {0}, f"worst {worst} us{why}"
    rtos_kept_its_cpu(out, why)
    print(f"two-CPU storm: {m[2]} rounds on CPU 1, rtos worst {worst} us while it ran")
