"""Linux's CPU's debug and PMU hardware is Linux's: a conformance guest gives the same results bare and
in its partition.

tests/guests/debug/ checks what a kernel that owns its CPU can do with the self-hosted debug architecture
and the PMU (breakpoints, watchpoints, software step over an emulated MMIO access and an HVC, event and
cycle counters, the overflow interrupt), and prints one `debug:` line per check with the figures it
computed. It runs three times in icount mode: bare on QEMU (entered at EL1, no hypervisor), as the Linux
partition on a CPU of its own beside the rtos demo, and on the CPU it shares with the rtos (-smp 1). The
three must print the same lines, and the bare run must be right in itself (every breakpoint and
watchpoint hit, one step per instruction, the loop's instructions counted exactly, one overflow
interrupt), so that a run which fails everywhere alike cannot pass.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.board import QEMU_VIRT_MACHINE
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system import console_script
from tests.system.console_script import until

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "system" / "configs"
DONE = "debug: done"
TIMEOUT_S = 120


@pytest.fixture(scope="module")
def debug_image(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "debug.img"


def debug_lines(console: str) -> list[str]:
    return [m[1] for m in re.finditer(r"^(?:\[linux\] )?(debug: .*?)\r?$", console, re.MULTILINE)]


@pytest.fixture(scope="module")
def bare(debug_image: Path) -> list[str]:
    """The guest alone on QEMU without EL2 (entered at EL1; QEMU answers its PSCI calls)."""
    argv = qemu.qemu_command(debug_image, "seed=1", icount=True)
    argv[argv.index("-M") + 1] = QEMU_VIRT_MACHINE.replace("virtualization=on,", "")
    r = qemu.run_console(argv, TIMEOUT_S)
    lines = debug_lines(r.console)
    assert r.exited and DONE in lines, console_script.describe(r)
    return lines


def in_partition(image: Path, config: str, tmp_path: Path) -> tuple[list[str], qemu.RunResult]:
    """The guest as the Linux partition of `config` (a hostile-guest configuration) beside the rtos demo."""
    text = (CONFIGS / config).read_text().replace("build/guests/hostile.img", "build/guests/debug.img")
    assert "debug.img" in text
    path = tmp_path / f"debug-{config}"
    path.write_text(text)
    built = system.build(path, bootargs={"linux": "seed=1"}, icount=True, no_build=True)
    r, why = console_script.run_to_end(
        built.argv, TIMEOUT_S, until("rtmux: partition linux stopped", after=2)
    )
    assert DONE in debug_lines(r.console), why
    return debug_lines(r.console), r


def test_bare_results_are_right(bare: list[str]) -> None:
    """The reference itself: what Armv8.0 debug and PMUv3 give on QEMU's Cortex-A72."""
    text = "\n".join(bare)
    ids = re.search(
        r"debug: ids debugver=\d+ brps=(\d+) wrps=(\d+) ctx_cmps=\d+ pmuver=(\d+) counters=(\d+)", text
    )
    assert ids, text
    brps, wrps, pmuver, counters = (int(g) for g in ids.groups())
    assert brps >= 2 and wrps >= 2 and pmuver >= 1 and counters >= 1, text
    assert f"debug: breakpoints: {brps} of {brps} hit, {brps} in order" in bare
    assert f"debug: watchpoints: {wrps} of {wrps} hit, FAR right {wrps}, stores done {wrps}" in bare
    assert re.search(r"debug: step: 7 steps over 7 instructions, 7 in order, psci version 0x1000[0-9]", text)
    for name in ("pmu", "pmu-long"):
        pmu = re.search(
            rf"debug: {name}: \d+ counters, counter 0 counted (\d+) instructions for a (\d+)-instruction "
            r"loop, (\d+) counters agree, cycle counter moved yes",
            text,
        )
        assert pmu and int(pmu[3]) == counters, text
        # the loop plus the few instructions between enabling and disabling the counters
        assert int(pmu[2]) <= int(pmu[1]) <= int(pmu[2]) + 16, text
    assert "debug: overflow: PMU interrupt 23 taken 1 times, overflow flags 0x1" in bare


def long_count(lines: list[str]) -> tuple[int, int]:
    """pmu-long's (counted, loop) instructions."""
    m = re.search(r"pmu-long: .* counted (\d+) instructions for a (\d+)-instruction loop", "\n".join(lines))
    assert m, lines
    return int(m[1]), int(m[2])


def test_partition_on_its_own_cpu_is_bare_metal(debug_image: Path, bare: list[str], tmp_path: Path) -> None:
    """Every line as bare but pmu-long's count: with -smp 2 under icount, QEMU's counters also count
    the rtos's instructions on CPU 0 during the 6 ms loop (the guest's ticker=1 shows the same without
    any hypervisor: tests/guests/debug/main.c). The surplus is bounded by the rtos's work in 6 ms."""
    lines, r = in_partition(debug_image, "hostile.toml", tmp_path)
    assert [x for x in lines if "pmu-long" not in x] == [x for x in bare if "pmu-long" not in x], (
        console_script.describe(r)
    )
    counted, _ = long_count(lines)
    exact, _ = long_count(bare)
    assert exact <= counted <= exact + exact // 100, console_script.describe(r)
    # Nothing of it trapped: no PMU or debug register access reached the hypervisor.
    stats = console_script.hyp_stats(r.console)
    assert stats is None or stats["sysregs"] == 0, console_script.describe(r)


def test_partition_on_the_rtos_cpu_is_bare_metal(debug_image: Path, bare: list[str], tmp_path: Path) -> None:
    """Shared-core mode (-smp 1): Linux's PMU counters stop and its MDSCR_EL1 leaves with it while the
    rtos runs (six times inside pmu-long's loop), and come back when Linux does: every line as bare,
    pmu-long's count included; the rtos never misses a period."""
    lines, r = in_partition(debug_image, "shared-hostile.toml", tmp_path)
    assert lines == bare, console_script.describe(r)
    reports = demo_reports(r.console)
    assert len(reports) >= 2, console_script.describe(r)
    assert {(d.checksum, d.overruns) for d in reports} == {("unchanged", 0)}, console_script.describe(r)
