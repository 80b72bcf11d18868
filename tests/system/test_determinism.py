"""The measurement mode (issue 11, item 4): the whole system booted twice with `./rtmux run --icount
--seed 1 --linux-script FILE` gives the same console, byte for byte: Linux's boot log (KASLR and the
random pool from the fixed seeds, which the hypervisor keeps), the figures its script prints (hackbench,
a loaded cyclictest histogram), the rtos partition's latency records and the hypervisor's entry counts.

The configuration is the default one without its network device (whose answers come from the host), as
the benchmark runs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux.bench import linux_script
from rtmux.run import system

pytestmark = pytest.mark.system

SCRIPT = """\
cut -d' ' -f1 /proc/uptime
hackbench -g 2 -f 10 -l 20 | grep Time
(while :; do dd if=/dev/zero of=/dev/null bs=1M count=16 2>/dev/null; done) & pid=$!
cyclictest -m -p98 -i1000 -a 0 -t 1 -l 300 -q -h 200 --histfile=/tmp/h >/dev/null
kill $pid
grep -v ' 000000$' /tmp/h
cut -d' ' -f1 /proc/uptime
"""
TIMEOUT_S = 240


def test_two_boots_in_the_measurement_mode_are_identical(
    run_rtmux: Callable[..., Any], tmp_path: Path
) -> None:
    config = tmp_path / "determinism.toml"
    config.write_text(linux_script.without_devices(system.DEFAULT_CONFIG.read_text()))
    script = tmp_path / "script.sh"
    script.write_text(SCRIPT)
    args = ["run", str(config), "--icount", "--seed", "1", "--linux-script", str(script)]
    args += ["--rtos-app", "latency", "--bootargs", "rtos=period_us=1000 samples=500"]
    first = run_rtmux(*args, timeout=TIMEOUT_S)
    assert first.returncode == 0, first.describe()
    out = first.stdout
    # what is compared holds the figures: Linux's script ran and printed them, the rtos measured
    assert "rtmux-linux: run: exit status 0" in out, first.describe()
    assert re.search(r"^\[linux\] Time: \d+\.\d+$", out, re.MULTILINE), first.describe()
    assert re.search(r"^\[linux\] # Max Latencies: \d+$", out, re.MULTILINE), first.describe()
    assert "[rtos] HSH| 1 us cells, 500 samples" in out, first.describe()
    assert out.count("rtmux: el2-entries cpu=1 partition=linux ") == 3, (
        first.describe()
    )  # boot, rtos stop, end
    second = run_rtmux(*args, timeout=TIMEOUT_S)
    assert second.returncode == 0, second.describe()
    assert second.stdout == out, (
        "the two boots differ:\n"
        + "\n".join(
            f"{a!r}\n  vs {b!r}"
            for a, b in zip(out.splitlines(), second.stdout.splitlines(), strict=False)
            if a != b
        )[:4000]
    )
