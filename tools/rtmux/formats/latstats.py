"""Latency statistics shared by the benchmark cases: min / avg / p99 / p99.9 / max from a histogram.

Both latency sources give a histogram of 1-us cells, cell i holding the samples in [i, i+1) us:
- the rtos's latency monitor measures with the counter's resolution (16 ns on QEMU virt) and prints
  min / avg / max to the nanosecond; its last cell also collects everything above it;
- cyclictest measures whole microseconds (rounded down), so cell i holds samples of exactly i us;
  samples beyond its histogram range are only counted (`Histogram Overflows`).

Percentiles use the nearest-rank method: the p-quantile is the sample of rank ceil(p * n). From a 1-us
histogram that sample is known to the cell: for cyclictest the cell is the value; for the rtos the value
shown is the cell's upper edge (an upper bound), or the measured max when that is lower. A quantile that
falls among the samples no cell describes (above the range) is shown as the max, also an upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rtmux.formats import latmus

PERCENTILES = (0.99, 0.999)


@dataclass(frozen=True)
class LatencyStats:
    """One case's figures, microseconds. `overruns` is None where the tool does not count them."""

    samples: int
    min_us: float
    avg_us: float
    p99_us: float
    p999_us: float
    max_us: float
    overruns: int | None
    whole_us: bool  # True: the tool measures whole microseconds (cyclictest), shown without decimals


def from_ns(
    samples: int, min_ns: int, avg_ns: int, p99_ns: int, p999_ns: int, max_ns: int, overruns: int | None
) -> LatencyStats:
    """The figures of a tool that reports nanoseconds."""
    return LatencyStats(
        samples=samples,
        min_us=min_ns / 1000,
        avg_us=avg_ns / 1000,
        p99_us=p99_ns / 1000,
        p999_us=p999_ns / 1000,
        max_us=max_ns / 1000,
        overruns=overruns,
        whole_us=False,
    )


def nearest_rank(total: int, fraction: float) -> int:
    """The 1-based rank of the `fraction` quantile among `total` samples (nearest-rank method)."""
    if total < 1:
        raise ValueError("a percentile needs at least one sample")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction {fraction} is not in (0, 1]")
    # round() first: 0.999 * 1000 is 998.9999999999999 in binary floating point.
    return max(1, math.ceil(round(fraction * total, 9)))


def quantile_cell(counts: Mapping[int, int], fraction: float, extra: int = 0) -> int | None:
    """The cell holding the `fraction` quantile of the samples in `counts` plus `extra` samples above
    every cell; None when the quantile is one of those `extra` samples."""
    if any(n < 0 for n in counts.values()) or extra < 0:
        raise ValueError("negative sample count")
    rank = nearest_rank(sum(counts.values()) + extra, fraction)
    seen = 0
    for cell in sorted(counts):
        seen += counts[cell]
        if seen >= rank:
            return cell
    return None


def rtos_stats(report: latmus.LatencyReport) -> LatencyStats:
    """The figures of an rtos latency run: min / avg / max from its RTS| summary, percentiles from its
    histogram (upper edge of the quantile's cell, at most the max; the last cell collects everything
    above it, so a quantile there is shown as the max)."""
    hist, rts = report.histogram, report.summary

    def pct(fraction: float) -> float:
        cell = quantile_cell(hist.counts, fraction)
        if cell is None or cell >= hist.cells - 1:
            return rts.lat_max
        return max(min(float((cell + 1) * hist.cell_us), rts.lat_max), rts.lat_min)

    return LatencyStats(
        samples=hist.samples,
        min_us=rts.lat_min,
        avg_us=rts.lat_avg,
        p99_us=pct(PERCENTILES[0]),
        p999_us=pct(PERCENTILES[1]),
        max_us=rts.lat_max,
        overruns=rts.overruns,
        whole_us=False,
    )


def whole_us_stats(
    counts: Mapping[int, int], overflows: int, min_us: int, avg_us: int, max_us: int
) -> LatencyStats:
    """The figures of a whole-microsecond histogram (cyclictest): `counts` maps a latency to its samples,
    `overflows` samples lie above the histogram's range. The average comes from the histogram when it
    holds every sample (two decimals), else it is the tool's own integer average."""
    in_range = sum(counts.values())
    total = in_range + overflows
    if total < 1:
        raise ValueError("no samples")

    def pct(fraction: float) -> float:
        cell = quantile_cell(counts, fraction, overflows)
        return float(max_us if cell is None else cell)

    avg = sum(v * n for v, n in counts.items()) / in_range if overflows == 0 else float(avg_us)
    return LatencyStats(
        samples=total,
        min_us=float(min_us),
        avg_us=avg,
        p99_us=pct(PERCENTILES[0]),
        p999_us=pct(PERCENTILES[1]),
        max_us=float(max_us),
        overruns=None,
        whole_us=True,
    )


def is_bound(stats: LatencyStats, percentile: float) -> bool:
    """Whether a percentile of `stats` is only an upper bound: an rtos figure above the min (a cell's
    upper edge, or the max); cyclictest's are exact."""
    return not stats.whole_us and percentile > stats.min_us


def fmt_percentile(stats: LatencyStats, value: float) -> str:
    """A percentile as the tables show it: `≤` before an upper bound (see is_bound)."""
    return ("≤" if is_bound(stats, value) else "") + fmt_value(stats, value)


def fmt_value(stats: LatencyStats, value: float, *, average: bool = False) -> str:
    """A figure as the tables show it: 3 decimals for the rtos (ns resolution); whole microseconds for
    cyclictest, except its histogram average (2 decimals)."""
    if not stats.whole_us:
        return f"{value:.3f}"
    return f"{value:.2f}" if average else f"{value:.0f}"
