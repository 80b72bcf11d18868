"""The output of examples/control-loop (control_loop.c): its lateness histogram and its result line.

    CTS| second S samples N ...            one a second, from its logger thread (not read here)
    CTH| LOWER_NS COUNT                    a non-empty cell of the histogram, cells of cell_ns ns
    CTH| beyond COUNT                      samples above the histogram's range
    CTL| periods N period_us P samples N min_us X avg_us X p99_us X p999_us X max_us X overruns K
         dropped D prio P cell_ns C        (one line)

Microseconds have three decimals (whole nanoseconds). The program's p99 and p99.9 are nearest-rank
percentiles from its histogram: the upper edge of the cell holding them, within [min, max]; `parse`
computes them again from the histogram lines and refuses an output where the two disagree. prio 0 says
the threads did not get SCHED_FIFO. Lines may carry a console tag (`[rtos] `) before the prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rtmux.formats import latstats

_TAG = r"^(?:\[[\w-]+\] )?"
_NS = r"-?\d+\.\d{3}"
_CTL_RE = re.compile(
    _TAG + r"CTL\| periods (?P<periods>\d+) period_us (?P<period_us>\d+) samples (?P<samples>\d+) "
    rf"min_us (?P<min>{_NS}) avg_us (?P<avg>{_NS}) p99_us (?P<p99>{_NS}) p999_us (?P<p999>{_NS}) "
    rf"max_us (?P<max>{_NS}) overruns (?P<overruns>\d+) dropped (?P<dropped>\d+) prio (?P<prio>\d+) "
    r"cell_ns (?P<cell_ns>\d+)\s*$"
)
_CTL_START_RE = re.compile(_TAG + r"CTL\|")
_CTH_RE = re.compile(_TAG + r"CTH\| (?:(?P<lower>\d+)|beyond) (?P<count>\d+)\s*$")
_CTH_START_RE = re.compile(_TAG + r"CTH\|")


class ControlLoopFormatError(ValueError):
    pass


def _ns(text: str) -> int:
    """'-1.234' (microseconds, three decimals) -> -1234 ns, exactly."""
    sign = -1 if text.startswith("-") else 1
    whole, frac = text.lstrip("-").split(".")
    return sign * (int(whole) * 1000 + int(frac))


@dataclass(frozen=True)
class Report:
    """One run of the control loop; times in nanoseconds."""

    periods: int
    period_us: int
    samples: int
    min_ns: int
    avg_ns: int
    p99_ns: int
    p999_ns: int
    max_ns: int
    overruns: int
    dropped: int  # per-second summaries the full queue refused
    prio: int  # the control thread's SCHED_FIFO priority; 0: it ran without one
    cell_ns: int
    cells: dict[int, int]  # lower edge (ns) -> samples
    beyond: int  # samples above the histogram

    @property
    def realtime(self) -> bool:
        return self.prio > 0

    def percentile_ns(self, fraction: float) -> int:
        """The nearest-rank percentile from the histogram, as the program computes it."""
        cell = latstats.quantile_cell(self.cells, fraction, self.beyond)
        if cell is None:
            return self.max_ns
        return max(min(cell + self.cell_ns, self.max_ns), self.min_ns)

    def us_counts(self) -> dict[int, int]:
        """The histogram in 1-us cells (the benchmark's plot); samples beyond it in the max's cell."""
        out: dict[int, int] = {}
        for lower, n in self.cells.items():
            out[lower // 1000] = out.get(lower // 1000, 0) + n
        if self.beyond:
            top = max(self.max_ns, 0) // 1000
            out[top] = out.get(top, 0) + self.beyond
        return out

    def stats(self) -> latstats.LatencyStats:
        """The benchmark's figures (microseconds; percentiles are upper bounds, to the cell)."""
        return latstats.from_ns(
            self.samples, self.min_ns, self.avg_ns, self.p99_ns, self.p999_ns, self.max_ns, self.overruns
        )


def _us(ns: int) -> str:
    return f"{'-' if ns < 0 else ''}{abs(ns) // 1000}.{abs(ns) % 1000:03d}"


def render(r: Report) -> str:
    """The histogram and result lines of `r`, as the program prints them (parse reads them back)."""
    lines = [f"CTH| {lower} {n}" for lower, n in sorted(r.cells.items())]
    lines += [f"CTH| beyond {r.beyond}"] * (r.beyond > 0)
    lines.append(
        f"CTL| periods {r.periods} period_us {r.period_us} samples {r.samples} min_us {_us(r.min_ns)} "
        f"avg_us {_us(r.avg_ns)} p99_us {_us(r.p99_ns)} p999_us {_us(r.p999_ns)} max_us {_us(r.max_ns)} "
        f"overruns {r.overruns} dropped {r.dropped} prio {r.prio} cell_ns {r.cell_ns}"
    )
    return "\n".join(lines) + "\n"


def parse(text: str) -> Report:
    """The run in `text` (a console or the program's stdout; other lines are ignored). Raises
    ControlLoopFormatError when the result line is missing, repeated or malformed, a histogram line is
    malformed, or the figures disagree with each other (histogram total, order, percentiles)."""
    results = []
    cells: dict[int, int] = {}
    beyond = 0
    for line in text.splitlines():
        if _CTL_START_RE.match(line):
            m = _CTL_RE.match(line)
            if m is None:
                raise ControlLoopFormatError(f"malformed CTL| line: {line!r}")
            results.append(m)
        elif _CTH_START_RE.match(line):
            h = _CTH_RE.match(line)
            if h is None:
                raise ControlLoopFormatError(f"malformed CTH| line: {line!r}")
            if h["lower"] is None:
                beyond += int(h["count"])
            else:
                lower = int(h["lower"])
                if lower in cells:
                    raise ControlLoopFormatError(f"histogram cell {lower} ns given twice")
                cells[lower] = int(h["count"])
    if not results:
        raise ControlLoopFormatError("no `CTL|` result line: the control loop did not finish")
    if len(results) > 1:
        raise ControlLoopFormatError(f"{len(results)} `CTL|` result lines, one expected")
    m = results[0]
    report = Report(
        periods=int(m["periods"]),
        period_us=int(m["period_us"]),
        samples=int(m["samples"]),
        min_ns=_ns(m["min"]),
        avg_ns=_ns(m["avg"]),
        p99_ns=_ns(m["p99"]),
        p999_ns=_ns(m["p999"]),
        max_ns=_ns(m["max"]),
        overruns=int(m["overruns"]),
        dropped=int(m["dropped"]),
        prio=int(m["prio"]),
        cell_ns=int(m["cell_ns"]),
        cells=cells,
        beyond=beyond,
    )
    _check(report)
    return report


def _check(r: Report) -> None:
    if r.cell_ns < 1 or any(lower % r.cell_ns for lower in r.cells):
        raise ControlLoopFormatError(f"histogram cells are not multiples of cell_ns {r.cell_ns}")
    counted = sum(r.cells.values()) + r.beyond
    if counted != r.samples:
        raise ControlLoopFormatError(
            f"the histogram holds {counted} samples, the result line says {r.samples}"
        )
    if r.samples < 1:
        raise ControlLoopFormatError("no samples")
    if not (r.min_ns <= r.avg_ns <= r.max_ns and r.min_ns <= r.p99_ns <= r.p999_ns <= r.max_ns):
        raise ControlLoopFormatError("the figures are out of order (min <= avg, p99 <= p99.9 <= max)")
    for name, fraction, value in (("p99", 0.99, r.p99_ns), ("p99.9", 0.999, r.p999_ns)):
        expected = r.percentile_ns(fraction)
        if expected != value:
            raise ControlLoopFormatError(
                f"{name} {value} ns disagrees with the histogram's {expected} ns (nearest rank)"
            )
