"""Percentiles (latstats) and cyclictest's histogram file (cyclictest)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtmux.formats import cyclictest, latmus, latstats

# A real histogram file of `cyclictest -m -p98 -i1000 -a 0 -t 1 -l 2000 -q -h 20000` (Debian's standard
# kernel under QEMU icount), empty cells left out as the benchmark's guest script does.
HIST = """\
# Histogram
000004 001528
000005 000417
000006 000006
000007 000040
000008 000008
000016 000001
# Total: 000002000
# Min Latencies: 00004
# Avg Latencies: 00004
# Max Latencies: 00016
# Histogram Overflows: 00000
# Histogram Overflow at cycle number:
# Thread 0:
"""


def test_nearest_rank() -> None:
    assert latstats.nearest_rank(1000, 0.99) == 990
    assert latstats.nearest_rank(1000, 0.999) == 999, "0.999 * 1000 is not rounded up to 1000"
    assert latstats.nearest_rank(10000, 0.999) == 9990
    assert latstats.nearest_rank(1, 0.99) == 1
    assert latstats.nearest_rank(3, 0.5) == 2
    with pytest.raises(ValueError):
        latstats.nearest_rank(0, 0.99)
    with pytest.raises(ValueError):
        latstats.nearest_rank(10, 1.5)


def test_quantile_cell() -> None:
    counts = {4: 989, 5: 10, 30: 1}
    assert latstats.quantile_cell(counts, 0.99) == 5
    assert latstats.quantile_cell(counts, 0.989) == 4
    assert latstats.quantile_cell(counts, 0.999) == 5
    assert latstats.quantile_cell(counts, 1.0) == 30
    # Two samples above every cell: the last 2 of 1002 ranks.
    assert latstats.quantile_cell(counts, 0.999, extra=2) is None
    assert latstats.quantile_cell(counts, 0.99, extra=2) == 5
    with pytest.raises(ValueError):
        latstats.quantile_cell({1: -1}, 0.5)


def test_whole_us_stats() -> None:
    counts = {4: 1528, 5: 417, 6: 6, 7: 40, 8: 8, 16: 1}
    s = latstats.whole_us_stats(counts, 0, 4, 4, 16)
    assert (s.samples, s.min_us, s.max_us, s.p99_us, s.p999_us) == (2000, 4.0, 16.0, 7.0, 8.0)
    assert s.avg_us == pytest.approx((4 * 1528 + 5 * 417 + 6 * 6 + 7 * 40 + 8 * 8 + 16) / 2000)
    assert s.overruns is None and s.whole_us
    # With overflows the histogram's average is unknown: cyclictest's own (integer) one is used, and a
    # percentile among the overflows is shown as the max.
    s = latstats.whole_us_stats({4: 990}, 10, 4, 250, 25000)
    assert (s.samples, s.avg_us, s.p99_us, s.p999_us) == (1000, 250.0, 4.0, 25000.0)
    with pytest.raises(ValueError):
        latstats.whole_us_stats({}, 0, 0, 0, 0)


def _report(
    counts: dict[int, int], lat_min: float, lat_max: float, cells: int = 1000
) -> latmus.LatencyReport:
    n = sum(counts.values())
    rts = latmus.RtsLine(lat_min, (lat_min + lat_max) / 2, lat_max, 3, 0, 1, 1, "RTS|...")
    hist = latmus.Histogram(1, n, cells, dict(counts))
    return latmus.LatencyReport(SimpleNamespace(), [], rts, hist)  # type: ignore[arg-type]


def test_rtos_stats_upper_edge_capped_by_max() -> None:
    s = latstats.rtos_stats(_report({0: 10000}, 0.4, 0.72))
    assert (s.p99_us, s.p999_us, s.max_us, s.overruns, s.whole_us) == (0.72, 0.72, 0.72, 3, False)
    s = latstats.rtos_stats(_report({0: 9900, 1: 90, 1833: 10}, 0.4, 1834.0))
    assert s.p99_us == 1.0, "upper edge of cell 0"
    assert s.p999_us == 2.0, "upper edge of cell 1"
    s = latstats.rtos_stats(_report({0: 9980, 1833: 20}, 0.4, 1834.0))
    assert s.p999_us == 1834.0


def test_rtos_stats_last_cell_collects_everything_above() -> None:
    s = latstats.rtos_stats(_report({0: 990, 9: 10}, 0.4, 55.5, cells=10))
    assert s.p999_us == 55.5, "a quantile in the last (open) cell is the max"
    assert s.p99_us == 1.0, "cell 0's upper edge"


def test_percentile_bounds() -> None:
    rt = latstats.rtos_stats(_report({0: 9980, 2: 20}, 0.4, 2.5))
    assert (rt.p99_us, rt.p999_us) == (1.0, 2.5)
    assert latstats.fmt_percentile(rt, rt.p99_us) == "≤1.000"
    exact = latstats.rtos_stats(_report({0: 10}, 0.4, 0.4))
    assert latstats.fmt_percentile(exact, exact.p99_us) == "0.400", "min = max: exact"
    whole = latstats.whole_us_stats({4: 9, 30: 1}, 0, 4, 6, 30)
    assert latstats.fmt_percentile(whole, whole.p999_us) == "30" and not latstats.is_bound(whole, 30.0)


def test_fmt_value() -> None:
    whole = latstats.whole_us_stats({4: 1}, 0, 4, 4, 4)
    rt = latstats.rtos_stats(_report({0: 1}, 0.4, 0.4))
    assert latstats.fmt_value(whole, 4.0) == "4"
    assert latstats.fmt_value(whole, 4.294, average=True) == "4.29"
    assert latstats.fmt_value(rt, 0.4) == "0.400"
    assert latstats.fmt_value(rt, 0.4111, average=True) == "0.411"


# ----------------------------------------------------------------------------------------- cyclictest


def test_command() -> None:
    assert cyclictest.command(1000, "/tmp/x.hist") == (
        "cyclictest -m -p98 -i1000 -a 0 -t 1 -l 1000 -q -h 20000 --histfile=/tmp/x.hist"
    )
    with pytest.raises(Exception, match="at least one sample"):
        cyclictest.command(0, "/tmp/x")


def test_parse_histogram() -> None:
    h = cyclictest.parse_histogram(HIST, samples=2000)
    assert h.counts == {4: 1528, 5: 417, 6: 6, 7: 40, 8: 8, 16: 1}
    assert (h.total, h.min_us, h.avg_us, h.max_us, h.overflows, h.samples) == (2000, 4, 4, 16, 0, 2000)
    assert h.stats().max_us == 16.0


def test_parse_histogram_keeps_empty_cells_out_and_reads_overflows() -> None:
    text = HIST.replace("000016 000001", "000015 000000").replace("Total: 000002000", "Total: 000001999")
    text = text.replace("Overflows: 00000", "Overflows: 00001").replace(
        "Max Latencies: 00016", "Max Latencies: 25000"
    )
    h = cyclictest.parse_histogram(text, samples=2000)
    assert 15 not in h.counts and h.overflows == 1 and h.samples == 2000 and h.max_us == 25000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("000005 000417", "000005 000416"), "add up to 1999"),
        (("# Total: 000002000\n", ""), "Total"),
        (("000016 000001", "000003 000001"), "out of order"),
        (("000016 000001", "garbage"), "unexpected 'garbage'"),
        (("Max Latencies: 00016", "Max Latencies: 00017"), "min/max say 4/17"),
        (("# Min Latencies: 00004", "# Min Latencies: 00004\n# Min Latencies: 00004"), "second"),
    ],
)
def test_parse_histogram_refuses(change: tuple[str, str], message: str) -> None:
    with pytest.raises(cyclictest.CyclictestFormatError, match=message):
        cyclictest.parse_histogram(HIST.replace(*change))


def test_parse_histogram_checks_the_sample_count() -> None:
    with pytest.raises(cyclictest.CyclictestFormatError, match="2000 samples, 1000 were requested"):
        cyclictest.parse_histogram(HIST, samples=1000)


def test_write_gnuplot_reads_back(tmp_path: Path) -> None:
    h = cyclictest.parse_histogram(HIST)
    path = tmp_path / "sub" / "linux.dat"
    started = datetime(2025, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    cyclictest.write_gnuplot(
        path, h, title="Linux std", started=started, mode="icount", load=True, command="cyclictest ..."
    )
    header, counts = latmus.read_histogram_file(path)
    assert counts == h.counts
    assert header["sample count"] == "2000"
    assert header["max latency"] == "16.000 us"
    assert header["load"] == "on"
    assert header["test started on"].startswith("2025-03-01 12:00:00 +0100")
    assert path.read_text().splitlines()[0] == "# rtmux Linux std latency histogram (latmus format)"
