"""The hypervisor with the rtos in its partition (build/hyp/rtmux-APP.img: the rtos app is the payload).

These images use the hypervisor's built-in configuration (rtos alone on CPU 0); they check the partition
mechanics the rtos depends on: stage-2 isolation of its RAM, direct interrupt delivery, the virtual
PL011 with tags and PSCI SYSTEM_OFF stopping the partition.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rtmux import qemu

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
RTS = re.compile(r"RTS\|\s*(-?\d+\.\d{3})\|\s*(-?\d+\.\d{3})\|\s*(-?\d+\.\d{3})\|")


@pytest.fixture(scope="module")
def hyp_images(rtos_images: Path) -> Path:
    if os.environ.get("RTMUX_NO_BUILD") != "1":
        proc = subprocess.run(
            ["make", "-s", "hyp", "build/hyp/rtmux-latency.img"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"make hyp failed:\n{proc.stdout}\n{proc.stderr}"
    return ROOT / "build" / "hyp"


def boot(image: Path, smp: int, timeout_s: float = 120) -> qemu.RunResult:
    cmd = qemu.qemu_command(image, icount=True, smp=smp)
    return qemu.run_console(cmd, timeout_s)


def describe(r: qemu.RunResult) -> str:
    return f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}\n{r.console}"


def test_rtos_selftest_in_partition(hyp_images: Path) -> None:
    r = boot(hyp_images / "rtmux-selftest.img", smp=2)
    assert r.exited and r.returncode == 0, describe(r)
    out = r.console
    # The rtos ran as a guest (entered at EL1, below the hypervisor) and every one of its lines is tagged.
    assert "[rtos] rtos: rtmux rtos" in out and "entered at EL1" in out, describe(r)
    summary = re.search(r"^\[rtos\] (\d+) passed, (\d+) failed$", out, re.MULTILINE)
    assert summary and int(summary[1]) > 0 and summary[2] == "0", describe(r)
    assert "rtmux: partition rtos stopped: powered off (PSCI)" in out, describe(r)
    untagged = [
        line
        for line in r.lines
        if line and not line.startswith(("[rtos] ", "rtmux: ", "qemu-system-aarch64:"))
    ]
    assert not untagged, f"untagged console lines {untagged}{describe(r)}"


def test_partition_latency_equals_bare_metal(hyp_images: Path, rtos_images: Path) -> None:
    """Direct delivery: the rtos's timer interrupt never traps to EL2, so its latency is unchanged."""
    part = boot(hyp_images / "rtmux-latency.img", smp=2)
    bare = boot(rtos_images / "latency.img", smp=1)
    for r in (part, bare):
        assert r.exited and r.returncode == 0, describe(r)
    m_part, m_bare = RTS.search(part.console), RTS.search(bare.console)
    assert m_part and m_bare, describe(part) + describe(bare)
    part_max, bare_max = float(m_part[3]), float(m_bare[3])
    # icount mode repeats exactly; one counter tick (16 ns) of slack.
    assert part_max <= bare_max * 1.05 + 0.016, f"partition max {part_max} us vs bare {bare_max} us"
