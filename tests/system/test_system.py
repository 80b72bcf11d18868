"""The whole default system (configs/qemu-virt.toml): hypervisor, rtos demo on CPU 0, Debian Linux on CPU 1.

One scripted boot exercises, in order: Linux's view of its CPUs and memory, a clean dmesg, the network,
/dev/mem attacks on the rtos's RAM and on the GIC, console focus switching, `reboot` (Linux restarts from
its pristine images) and `poweroff` (Linux stops); the rtos's latency stream and its code checksum are
checked across all of it. A second boot runs the rtos selftest while Linux runs hackbench; a third
boots Linux alone on CPU 0 (tests/system/configs/linux-cpu0.toml).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.run import system
from tests.system import console_script
from tests.system.boards import gic_params, on_gic
from tests.system.console_script import PROMPT, Script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
TEXT = "$(awk '$3 == \"_stext\" {print $1; exit}' /proc/kallsyms)"  # where KASLR put the kernel
RTD = re.compile(r"^\[rtos\] RTD\|(.*)$", re.MULTILINE)


def describe(r: qemu.RunResult, script: Script) -> str:
    return console_script.describe(r, script)


def value(console: str, name: str) -> str:
    found = console_script.linux_value(console, name)
    assert found, f"{name}= not found"
    return found


@pytest.fixture(scope="module", params=gic_params())
def default_system(
    rtos_images: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> system.System:
    """The default system on each GIC version (tests/system/boards.py)."""
    return system.build(on_gic(CONFIG, request.param, tmp_path_factory.mktemp("gic")), icount=True)


# Root's writes to the GIC, for the rtos's interrupts. GICv3: the rtos CPU's redistributor (disable every
# SGI/PPI, its timer included); the distributor: disable and re-route SPIs (Linux's own GICv3 driver
# claims the distributor, so /dev/mem refuses these before the hypervisor sees them). GICv2: Linux's
# driver claims nothing, the writes reach the hypervisor's filter: disable every SPI 32..63 but Linux's
# own (its UART 33, its PCIe INTx 35..38: disabling those is Linux's business, as on bare metal), route
# SPIs 32..35 to CPU 0 (the rtos's) and send SGIs 0..15 to every other CPU.
GIC_ATTACKS = {
    3: "devmem 0x080b0180 32 0xffffffff; devmem 0x08000184 32 0xffffffff; devmem 0x08006108 64 1",
    2: "devmem 0x08000184 32 0xffffff85; devmem 0x08000820 32 0x01010101; "
    "for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do devmem 0x08000f00 32 $((0x1000000 + i)); done",
}


def test_linux_beside_the_rtos(default_system: system.System) -> None:
    attacks = (
        "echo cpus=$(grep -c ^processor /proc/cpuinfo); "
        "echo memkb=$(sed -n 's/^MemTotal: *\\([0-9]*\\) kB/\\1/p' /proc/meminfo); "
        "echo bad=$(dmesg | grep -cE 'BUG|WARNING|Oops'); "
        f"echo text1={TEXT}; "
        "ping -c 1 -W 5 10.0.2.2 >/dev/null; echo ping=$?; "
        # the rtos partition's RAM (PA 0x4800_0000): not Linux's, so STRICT_DEVMEM lets it try
        "devmem 0x48000000 32; echo devmem_read=$?; "
        "devmem 0x48080000 32 0xdeadbeef; echo devmem_write=$?; "
        f"{GIC_ATTACKS[default_system.config.board.gic_version]}; "
        # a debugger and a profiler, as on bare metal: its CPU's debug and PMU hardware is Linux's
        "echo perfevents=$(dmesg | grep -c 'hw perfevents: enabled'); "
        "rtmux-debugcheck all; echo debugcheck=$?; "
        "echo attacks=done\n"
    )
    script = Script(
        [
            (PROMPT, attacks),
            (r"attacks=done", ""),
            # three more rtos reports after the attacks, then hand the input to the rtos and back
            (
                r"\[rtos\] demo: t=\d+s.*\n(.*\n)*?\[rtos\] demo: t=\d+s.*\n(.*\n)*?\[rtos\] demo: t=\d+s",
                "\x141",
            ),
            (r"rtmux: console input now goes to rtos", "echo focus=wrong\n"),
            (r"\[rtos\] demo: t=\d+s", "\x142"),
            (r"rtmux: console input now goes to linux", "echo focus=back\n"),
            (r"focus=back\n(.*\n)*?.*" + PROMPT, "reboot -f\n"),
            (r"partition linux: reset requested", ""),
            (r"rtmux-linux: ready", ""),
            (PROMPT, f"echo rebooted=yes text2={TEXT}\n"),
            (r"rebooted=yes.*\n(.*\n)*?.*" + PROMPT, "poweroff -f\n"),
            (r"rtmux: partition linux stopped: powered off", ""),
            (r"\[rtos\] RTD(.*\n)*?\[rtos\] RTD(.*\n)*?\[rtos\] RTD", ""),
        ]
    )
    r = qemu.run_console(default_system.argv, 600, respond=script)
    out = r.console
    assert script.done == len(script.steps), describe(r, script)
    why = describe(r, script)
    # Linux sees exactly its partition: one CPU, its 512 MiB (less what the kernel reserves)
    assert value(out, "cpus") == "1", why
    assert 400_000 < int(value(out, "memkb")) <= 512 * 1024, why
    assert value(out, "bad") == "0", why
    assert value(out, "ping") == "0", why
    # /dev/mem on the rtos's RAM: the access is refused (bus error in the process) and logged
    assert value(out, "devmem_read") != "0" and value(out, "devmem_write") != "0", why
    assert "rtmux: linux: access to IPA 0x48000000 (read)" in out, why
    assert "rtmux: linux: access to IPA 0x48080000 (write)" in out, why
    # the rtos never noticed: its code is intact, it kept its timer interrupt, no overrun ever
    reports = re.findall(r"^\[rtos\] demo: t=(\d+)s .*checksum (\w+)$", out, re.MULTILINE)
    assert len(reports) >= 5 and all(c == "unchanged" for _, c in reports), why
    seconds = [int(t) for t, _ in reports]
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), (
        f"gap in rtos reports {seconds}{why}"
    )
    rtd = RTD.findall(out)
    assert len(rtd) >= len(reports) - 1, why
    overruns = {line.split("|")[3].strip() for line in rtd}
    assert overruns == {"0"}, f"rtos overruns {overruns}{why}"
    # ptrace's single step, hardware breakpoint and watchpoint, perf's hardware counters
    assert value(out, "perfevents") == "1" and value(out, "debugcheck") == "0", why
    assert console_script.debugcheck_lines(out) == console_script.DEBUGCHECK, why
    # focus: input typed while the rtos had it never reached Linux
    assert "focus=wrong" not in out and value(out, "focus") == "back", why
    # reboot restarted Linux only; poweroff stopped Linux only, the rtos reported on
    assert out.count("rtmux-linux: ready") == 2, why
    m = re.search(r"^\[linux\] rebooted=yes text2=(\S+)$", out, re.MULTILINE)
    assert m, why
    # KASLR placed the kernel from /chosen kaslr-seed: the hypervisor gave the restart a new seed
    assert re.fullmatch("[0-9a-f]{16}", value(out, "text1")) and m[1] != value(out, "text1"), why
    tail = out[out.index("rtmux: partition linux stopped") :]
    assert len(RTD.findall(tail)) >= 3, why
    assert "rtmux: partition rtos stopped" not in out, why


def test_rtos_selftest_while_linux_runs_hackbench(rtos_images: Path) -> None:
    # The tests start 2 s (guest time) after boot: Linux is at its shell by then (~1 s) and busy with
    # hackbench (~2.4 s of guest time) until about 3.5 s.
    built = system.build(
        CONFIG, rtos_image=rtos_images / "selftest.img", bootargs={"rtos": "start_ms=2000"}, icount=True
    )
    script = Script(
        [
            (PROMPT, "hackbench -g 2 -f 10 -l 2000; echo hackbench=$?\n"),
            (r"hackbench=\d+", ""),
        ]
    )
    r = qemu.run_console(built.argv, 600, respond=script)
    why = describe(r, script)
    assert script.done == len(script.steps), why
    assert value(r.console, "hackbench") == "0", why
    out = r.console
    start = re.search(r"^\[rtos\] selftest: \d+ tests$", out, re.MULTILINE)
    summary = re.search(r"^\[rtos\] (\d+) passed, (\d+) failed$", out, re.MULTILINE)
    assert start and summary and int(summary[1]) > 0 and summary[2] == "0", why
    # the tests started while hackbench ran: after the command was typed, before it finished
    assert out.index("hackbench -g 2") < start.start() < out.index("hackbench=0"), why


def test_linux_alone_on_cpu0() -> None:
    built = system.build(ROOT / "tests" / "system" / "configs" / "linux-cpu0.toml", icount=True)
    script = Script(
        [
            (
                PROMPT,
                "echo cpus=$(grep -c ^processor /proc/cpuinfo); "
                "echo bad=$(dmesg | grep -cE 'BUG|WARNING|Oops'); "
                "echo crng=$(dmesg | grep -c 'crng init done'); "
                "hackbench -g 2 -f 10 -l 500; echo hackbench=$?\n",
            ),
            (r"hackbench=\d+", ""),
        ]
    )
    r = qemu.run_console(built.argv, 300, respond=script)
    why = describe(r, script)
    assert script.done == len(script.steps), why
    assert value(r.console, "cpus") == "1", why
    assert value(r.console, "bad") == "0", why
    # /chosen/rng-seed reaches the kernel: its random pool is ready at boot
    assert value(r.console, "crng") == "1", why
    assert value(r.console, "hackbench") == "0", why
    # icount (deterministic): 0.6 s bare and under rtmux; 2.6 s when the random pool was never ready
    m = re.search(r"^\[linux\] Time: (\d+\.\d+)$", r.console, re.MULTILINE)
    assert m and float(m[1]) < 1.0, why
