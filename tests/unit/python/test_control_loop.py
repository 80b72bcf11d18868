"""examples/control-loop: the parser of its output (rtmux.formats.control_loop), and the program built for
the host (its own Makefile's `host` target) and run for a few periods, its output read by that parser."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rtmux import paths
from rtmux.formats import control_loop

# A PREEMPT_RT run's tail (icount, 2,000 periods at 1 kHz), the shape the program prints.
PREEMPT_RT = """\
rtmux-linux: run: /etc/rtmux/script
CTS| second 1 samples 1000 min_us 5.040 avg_us 5.408 max_us 18.688 overruns 0 total 1000 max_us 18.688 \
setpoint 0.000 output 0.000
CTH| 5000 1975
CTH| 9100 23
CTH| 18600 2
CTL| periods 2000 period_us 1000 samples 2000 min_us 5.040 avg_us 5.403 p99_us 9.200 p999_us 9.200 \
max_us 18.688 overruns 0 dropped 0 prio 98 cell_ns 100
"""


def test_a_run_is_read_with_its_histogram() -> None:
    r = control_loop.parse(PREEMPT_RT)
    assert (r.periods, r.period_us, r.samples, r.prio, r.cell_ns) == (2000, 1000, 2000, 98, 100)
    assert (r.min_ns, r.avg_ns, r.p99_ns, r.p999_ns, r.max_ns) == (5040, 5403, 9200, 9200, 18688)
    assert r.cells == {5000: 1975, 9100: 23, 18600: 2} and r.beyond == 0 and r.realtime
    assert r.us_counts() == {5: 1975, 9: 23, 18: 2}
    s = r.stats()
    assert (s.samples, s.min_us, s.avg_us, s.p999_us, s.max_us, s.overruns) == (
        2000, 5.04, 5.403, 9.2, 18.688, 0,
    )  # fmt: skip
    assert not s.whole_us


def test_render_gives_back_the_lines_parse_read() -> None:
    r = control_loop.parse(PREEMPT_RT)
    text = control_loop.render(r)
    assert text.splitlines() == [x for x in PREEMPT_RT.splitlines() if x.startswith(("CTH", "CTL"))]
    assert control_loop.parse(text) == r


def test_console_tags_and_samples_beyond_the_histogram() -> None:
    text = (
        "[rtos] CTH| 300 8\n[linux] noise\n[rtos] CTH| beyond 2\n"
        "[rtos] CTL| periods 10 period_us 1000 samples 10 min_us 0.368 avg_us 200.400 p99_us 1500.000 "
        "p999_us 1500.000 max_us 1500.000 overruns 1 dropped 0 prio 254 cell_ns 100\n"
    )
    r = control_loop.parse(text)
    assert r.beyond == 2 and r.overruns == 1 and r.p99_ns == 1_500_000
    assert r.us_counts() == {0: 8, 1500: 2}
    assert control_loop.parse(control_loop.render(r)) == r


def test_percentiles_are_the_upper_edge_of_their_cell_within_min_and_max() -> None:
    # 1,000 samples: rank 990 and 999; the 999th is in the cell [400, 500) whose edge is above the max.
    text = (
        "CTH| 300 990\nCTH| 400 10\n"
        "CTL| periods 1000 period_us 1000 samples 1000 min_us 0.368 avg_us 0.370 p99_us 0.400 p999_us 0.432 "
        "max_us 0.432 overruns 0 dropped 0 prio 254 cell_ns 100\n"
    )
    r = control_loop.parse(text)
    assert (r.p99_ns, r.p999_ns) == (400, 432)
    with pytest.raises(control_loop.ControlLoopFormatError, match="p99.9 400 ns disagrees .* 432 ns"):
        control_loop.parse(text.replace("p999_us 0.432", "p999_us 0.400", 1))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CTH| 300 1\n", "no `CTL|` result line"),
        ("CTL| periods 1\n", "malformed CTL"),
        ("CTH| 300 x\n", "malformed CTH"),
        (PREEMPT_RT + PREEMPT_RT.splitlines()[-1] + "\n", "2 `CTL|` result lines"),
        (PREEMPT_RT.replace("CTH| 9100 23", "CTH| 9100 22"), "holds 1999 samples"),
        (PREEMPT_RT.replace("p99_us 9.200", "p99_us 9.100"), "p99 9100 ns disagrees .* 9200 ns"),
        (PREEMPT_RT.replace("avg_us 5.403", "avg_us 19.000"), "out of order"),
        (PREEMPT_RT.replace("CTH| 9100 23", "CTH| 9150 23"), "not multiples of cell_ns"),
        (PREEMPT_RT.replace("CTH| 9100 23", "CTH| 5000 23"), "given twice"),
    ],
)
def test_inconsistent_output_is_refused(text: str, message: str) -> None:
    with pytest.raises(control_loop.ControlLoopFormatError, match=message):
        control_loop.parse(text)


def test_the_host_build_runs_and_reports(tmp_path: Path) -> None:
    """The same source as the rtos's and the guest's, built by its Makefile for this machine: 50 periods
    of 2 ms (SCHED_FIFO when allowed; the result line says whether), read back by the parser."""
    folder = paths.REPO_ROOT / "examples" / "control-loop"
    build = subprocess.run(
        ["make", "-s", "-C", str(folder), "host", f"OUT={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(
        [str(tmp_path / "host" / "control-loop"), "50", "2000"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    r = control_loop.parse(run.stdout)
    assert (r.periods, r.period_us, r.samples, r.cell_ns) == (50, 2000, 50, 100)
    assert "CTS| second 1 samples 50 " in run.stdout
    usage = subprocess.run([str(tmp_path / "host" / "control-loop"), "0"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage: control-loop" in usage.stderr
