"""cyclictest (Debian's rt-tests) for the Linux benchmark cases: its command line, its histogram file, and
that histogram in the latmus gnuplot format the rtos's histograms use.

The command is the benchmark's `cyclictest -m -p98 -i1000`, one measuring thread pinned to CPU 0
(`-a 0 -t 1`; in QEMU's icount mode CPU 0 is free of the round-robin artifact), `-l N` samples, quiet,
and a histogram of HISTOGRAM_US 1-us cells written to a file (`-h`, `--histfile`) instead of stdout.

The histogram file of one thread reads (rt-tests 2.x):

    # Histogram
    000004 001528          latency (whole us) and samples; the guest prints only non-empty cells
    ...
    # Total: 000002000     samples inside the range
    # Min Latencies: 00004
    # Avg Latencies: 00004 (integer)
    # Max Latencies: 00016
    # Histogram Overflows: 00000
    # Histogram Overflow at cycle number:
    # Thread 0: ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rtmux.errors import RtmuxError
from rtmux.formats import latstats

PERIOD_US = 1000
HISTOGRAM_US = 20000  # cells: latencies up to 20 ms are binned, anything above only counted

_CELL_RE = re.compile(r"^(\d+)\s+(\d+)$")
_FIELD_RE = re.compile(
    r"^#\s*(Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):\s*(\d+)$"
)
_FIELDS = {
    "Total": "total",
    "Min Latencies": "min_us",
    "Avg Latencies": "avg_us",
    "Max Latencies": "max_us",
    "Histogram Overflows": "overflows",
}


class CyclictestFormatError(RtmuxError):
    """A cyclictest histogram that cannot be read or does not add up."""


def command(samples: int, histfile: str, *, histogram_us: int = HISTOGRAM_US) -> str:
    """The cyclictest command line of one measurement (run in the guest's shell)."""
    if samples < 1:
        raise RtmuxError("cyclictest needs at least one sample")
    return (
        f"cyclictest -m -p98 -i{PERIOD_US} -a 0 -t 1 -l {samples} -q -h {histogram_us} --histfile={histfile}"
    )


@dataclass
class Histogram:
    """One thread's cyclictest histogram: latency (us) -> samples, and its summary fields."""

    counts: dict[int, int] = field(default_factory=dict)
    total: int = 0
    min_us: int = 0
    avg_us: int = 0
    max_us: int = 0
    overflows: int = 0

    @property
    def samples(self) -> int:
        return self.total + self.overflows

    def stats(self) -> latstats.LatencyStats:
        return latstats.whole_us_stats(self.counts, self.overflows, self.min_us, self.avg_us, self.max_us)


def parse_histogram(text: str, *, samples: int | None = None) -> Histogram:
    """Read a histogram file (empty cells may be left out). Strict: every line must be a cell or a known
    comment, the cells must add up to `Total`, min and max must match the cells; with `samples`, the
    total including overflows must equal it."""
    hist = Histogram()
    seen: set[str] = set()
    last: int | None = None
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if m := _CELL_RE.match(line):
            cell, count = int(m[1]), int(m[2])
            if last is not None and cell <= last:
                raise CyclictestFormatError(f"histogram line {line_no}: cells out of order: {raw!r}")
            last = cell
            if count:
                hist.counts[cell] = count
            continue
        if m := _FIELD_RE.match(line):
            name = _FIELDS[m[1]]
            if name in seen:
                raise CyclictestFormatError(f"histogram line {line_no}: second `{m[1]}` line")
            seen.add(name)
            setattr(hist, name, int(m[2]))
            continue
        if line.startswith("#") and (
            line == "# Histogram" or line.startswith("# Histogram Overflow at") or line.startswith("# Thread")
        ):
            continue
        raise CyclictestFormatError(f"histogram line {line_no}: unexpected {raw!r}")
    missing = [k for k, v in _FIELDS.items() if v not in seen]
    if missing:
        raise CyclictestFormatError(f"histogram without {', '.join(f'`# {m}:`' for m in missing)} line(s)")
    if sum(hist.counts.values()) != hist.total:
        raise CyclictestFormatError(
            f"histogram cells add up to {sum(hist.counts.values())}, `# Total:` says {hist.total}"
        )
    if hist.samples == 0:
        raise CyclictestFormatError("histogram without samples")
    if samples is not None and hist.samples != samples:
        raise CyclictestFormatError(f"histogram holds {hist.samples} samples, {samples} were requested")
    if hist.counts:
        low, high = min(hist.counts), max(hist.counts)
        if hist.min_us != low or (hist.overflows == 0 and hist.max_us != high):
            raise CyclictestFormatError(
                f"histogram cells span {low}..{high} us but min/max say {hist.min_us}/{hist.max_us} us"
            )
    if hist.max_us < hist.min_us:
        raise CyclictestFormatError(f"max {hist.max_us} us below min {hist.min_us} us")
    return hist


def write_gnuplot(
    path: Path,
    hist: Histogram,
    *,
    title: str,
    started: datetime,
    mode: str,
    load: bool,
    command: str,
) -> None:
    """The histogram in the latmus gnuplot format of latmus.write_histogram: `#` header, `cell count`."""
    stats = hist.stats()
    lines = [
        f"# rtmux {title} latency histogram (latmus format)",
        f"# test started on: {started.strftime('%Y-%m-%d %H:%M:%S %z')} (host clock)",
        f"# sampling period: {PERIOD_US} us",
        f"# QEMU mode: {mode}",
        f"# load: {'on' if load else 'off'}",
        f"# command: {command}",
        f"# cell width: 1 us (whole microseconds, rounded down; {hist.overflows} samples above the range)",
        f"# min latency: {stats.min_us:.3f} us",
        f"# avg latency: {stats.avg_us:.3f} us",
        f"# max latency: {stats.max_us:.3f} us",
        "# overruns: not counted by cyclictest",
        f"# sample count: {hist.samples}",
        "# columns: cell (us) count",
    ]
    lines += [f"{cell} {count}" for cell, count in sorted(hist.counts.items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
