"""The hypervisor with the rtos alone in its partition (tests/system/configs/rtos-only.toml).

These check the partition mechanics the rtos depends on: stage-2 placement of its RAM, direct interrupt
delivery, the virtual PL011 with tags, boot arguments through its DTB, and PSCI SYSTEM_OFF stopping the
partition (and the machine, once no partition is left).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.hyp_console import el2_entries
from rtmux.run import system
from tests.system.boards import on_gic

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "system" / "configs" / "rtos-only.toml"
RTS = re.compile(r"RTS\|\s*(-?\d+\.\d{3})\|\s*(-?\d+\.\d{3})\|\s*(-?\d+\.\d{3})\|")


def boot(app: str, bootargs: str, timeout_s: float = 120) -> qemu.RunResult:
    built = system.build(
        CONFIG, rtos_image=ROOT / "build" / "rtos" / f"{app}.img", bootargs={"rtos": bootargs}, icount=True
    )
    return qemu.run_console(built.argv, timeout_s)


def describe(r: qemu.RunResult) -> str:
    return f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}\n{r.console}"


def test_rtos_selftest_in_partition(rtos_images: Path) -> None:
    r = boot("selftest", "")
    assert r.exited and r.returncode == 0, describe(r)
    out = r.console
    # The rtos ran as a guest (entered at EL1, below the hypervisor) and every one of its lines is tagged.
    assert "[rtos] rtos: rtmux rtos" in out and "entered at EL1" in out, describe(r)
    summary = re.search(r"^\[rtos\] (\d+) passed, (\d+) failed$", out, re.MULTILINE)
    assert summary and int(summary[1]) > 0 and summary[2] == "0", describe(r)
    assert "rtmux: partition rtos stopped: powered off (PSCI)" in out, describe(r)
    assert "rtmux: no partition left running; system off" in out, describe(r)
    untagged = [
        line
        for line in r.lines
        if line and not line.startswith(("[rtos] ", "rtmux: ", "qemu-system-aarch64:"))
    ]
    assert not untagged, f"untagged console lines {untagged}{describe(r)}"


# No report until the summary: alone under the hypervisor the rtos prints through its emulated UART (no
# console ring without a Linux CPU to drain it), one trap per character, and a timer that fires during
# one waits for its end, which the bare run, writing its PL011 directly, does not. With a report every
# second the partition's max followed the console's code instead of the interrupt path (0.640 us
# against 0.544 bare once the console's writes grew a room check).
LATENCY_ARGS = "samples=3000 load=1 report_ms=60000"


def test_partition_latency_equals_bare_metal(rtos_images: Path) -> None:
    """Direct delivery: the rtos's timer interrupt never traps to EL2, so its latency is unchanged."""
    part = boot("latency", LATENCY_ARGS)
    bare = qemu.run_console(qemu.qemu_command(rtos_images / "latency.img", LATENCY_ARGS, icount=True), 300)
    for r in (part, bare):
        assert r.exited and r.returncode == 0, describe(r)
    assert f"[rtos] rtos: bootargs: {LATENCY_ARGS}" in part.console, describe(part)
    # the partition's CPU never entered the hypervisor while it measured: a few traps at its start (its
    # GIC set-up, the banner) and the summary's characters, no interrupt
    entries = [e for e in el2_entries(part.console) if e.partition == "rtos"]
    assert entries and entries[-1].counts["irq"] == 0, describe(part)
    m_part, m_bare = RTS.search(part.console), RTS.search(bare.console)
    assert m_part and m_bare, describe(part) + describe(bare)
    part_max, bare_max = float(m_part[3]), float(m_bare[3])
    # icount mode repeats exactly; one counter tick (16 ns) of slack.
    assert part_max <= bare_max * 1.05 + 0.016, f"partition max {part_max} us vs bare {bare_max} us"


@pytest.mark.parametrize(("built_for", "board_has"), [(3, 2), (2, 3)], ids=["v3-on-v2", "v2-on-v3"])
def test_a_configuration_for_another_gic_is_refused_at_boot(
    rtos_images: Path, tmp_path: Path, built_for: int, board_has: int
) -> None:
    """A system image made for one GIC version booted on a board with the other: the hypervisor says so
    on the console and stops (QEMU exits), never a hang or a partition started on the wrong driver."""
    config = on_gic(CONFIG, built_for, tmp_path)
    built = system.build(config, icount=True)
    argv = [a.replace(f"gic-version={built_for}", f"gic-version={board_has}") for a in built.argv]
    assert argv != built.argv
    r = qemu.run_console(argv, 60)
    want = f"this board has a GICv{board_has}, but the configuration describes one with a GICv{built_for}"
    assert want in r.console and not r.timed_out, describe(r)
    assert "rtos: rtmux rtos" not in r.console, describe(r)
