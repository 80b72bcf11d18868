"""Latency and context-switch console records (Xenomai latmus format) and the gnuplot histogram file.

The record lines are specified in docs/rtos-console.md. Parsing is strict: a record line (a line starting
with `RT?|`, `HS?|`, `---|` or `CTX|`) that does not have exactly the expected fields, or records in the
wrong order, raise `LatmusFormatError` naming the line. Other console lines are free text and ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rtmux.errors import RtmuxError

_US = r"-?\d+\.\d{3}"  # microseconds with exactly 3 decimals
_HMS = r"\d{2,}:\d{2}:\d{2}"

RTT_RE = re.compile(rf"^RTT\|\s+(?P<elapsed>{_HMS})\s+\((?P<desc>[^()]*)\)$")
RTH_FIELDS = ("lat min", "lat avg", "lat max", "overrun", "msw", "lat best", "lat worst")
RTD_RE = re.compile(
    rf"^RTD\|\s*(?P<min>{_US})\|\s*(?P<avg>{_US})\|\s*(?P<max>{_US})\|\s*(?P<overruns>\d+)"
    rf"\|\s*(?P<msw>\d+)\|\s*(?P<best>{_US})\|\s*(?P<worst>{_US})$"
)
SEPARATOR_RE = re.compile(r"^---\|[-|]*$")
RTS_RE = re.compile(
    rf"^RTS\|\s*(?P<min>{_US})\|\s*(?P<avg>{_US})\|\s*(?P<max>{_US})\|\s*(?P<overruns>\d+)"
    rf"\|\s*(?P<msw>\d+)\|\s*(?P<elapsed>{_HMS})/(?P<requested>{_HMS})$"
)
HSH_RE = re.compile(r"^HSH\|\s*(?P<cell_us>\d+) us cells, (?P<samples>\d+) samples, (?P<cells>\d+) cells$")
HSD_RE = re.compile(r"^HSD\|\s*(?P<cell>-?\d+)\s+(?P<count>\d+)$")
HSE_RE = re.compile(r"^HSE\|$")
CTX_RE = re.compile(
    r"^CTX\|\s+switches\s+(?P<switches>\d+)\s+total_ns\s+(?P<total>\d+)"
    r"\s+ns_per_switch\s+(?P<per>\d+\.\d{3})$"
)
_RECORD_RE = re.compile(r"^(RT[A-Z]|HS[A-Z]|CTX|---)\|")
_PERIOD_RE = re.compile(r"\b(?P<period>\d+) us period\b")
_LOAD_RE = re.compile(r"\bload (?P<load>on|off)\b")


class LatmusFormatError(RtmuxError):
    """Malformed or out-of-order latency/context-switch output."""

    def __init__(self, reason: str, line_no: int | None = None, line: str | None = None) -> None:
        self.reason = reason
        self.line_no = line_no
        self.line = line
        where = f"console line {line_no}: " if line_no is not None else ""
        shown = f": {line!r}" if line is not None else ""
        super().__init__(f"{where}{reason}{shown}")


def hms_to_seconds(text: str) -> int:
    hours, minutes, seconds = (int(part) for part in text.split(":"))
    if minutes > 59 or seconds > 59:
        raise ValueError(f"not a HH:MM:SS time: {text!r}")
    return hours * 3600 + minutes * 60 + seconds


@dataclass(frozen=True)
class RttLine:
    """`RTT|  00:00:01  (description)`: the test header."""

    elapsed_s: int
    description: str
    period_us: int | None  # from "<N> us period" in the description, when present
    load: bool | None  # from "load on|off" in the description, when present


@dataclass(frozen=True)
class RtdLine:
    """One report interval, microseconds."""

    lat_min: float
    lat_avg: float
    lat_max: float
    overruns: int
    msw: int
    lat_best: float
    lat_worst: float


@dataclass(frozen=True)
class RtsLine:
    """The summary over the whole run, microseconds."""

    lat_min: float
    lat_avg: float
    lat_max: float
    overruns: int
    msw: int
    elapsed_s: int
    requested_s: int
    text: str  # the line as printed, for determinism comparisons


@dataclass
class Histogram:
    """Latency histogram: cell index -> sample count; cell i covers [i, i+1) * cell_us microseconds."""

    cell_us: int
    samples: int
    cells: int
    counts: dict[int, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class LatencyReport:
    header: RttLine
    intervals: list[RtdLine]
    summary: RtsLine
    histogram: Histogram


@dataclass(frozen=True)
class CtxLine:
    switches: int
    total_ns: int
    ns_per_switch: float


def _us(text: str) -> float:
    return float(text)


def parse_rtt(line: str, line_no: int | None = None) -> RttLine:
    m = RTT_RE.match(line)
    if not m:
        raise LatmusFormatError(
            "malformed RTT| line (expected `RTT|  HH:MM:SS  (description)`)", line_no, line
        )
    desc = m["desc"]
    period = _PERIOD_RE.search(desc)
    load = _LOAD_RE.search(desc)
    return RttLine(
        elapsed_s=_hms(m["elapsed"], line_no, line),
        description=desc,
        period_us=int(period["period"]) if period else None,
        load=(load["load"] == "on") if load else None,
    )


def check_rth(line: str, line_no: int | None = None) -> None:
    parts = line.split("|")
    names = tuple(part.strip("-") for part in parts[1:])
    if parts[0] != "RTH" or names != RTH_FIELDS:
        raise LatmusFormatError(
            f"malformed RTH| line (expected columns {', '.join(RTH_FIELDS)})", line_no, line
        )


def parse_rtd(line: str, line_no: int | None = None) -> RtdLine:
    m = RTD_RE.match(line)
    if not m:
        raise LatmusFormatError(
            "malformed RTD| line (expected 7 columns: 3 figures with 3 decimals, overruns, msw, 2 figures)",
            line_no,
            line,
        )
    rtd = RtdLine(
        lat_min=_us(m["min"]),
        lat_avg=_us(m["avg"]),
        lat_max=_us(m["max"]),
        overruns=int(m["overruns"]),
        msw=int(m["msw"]),
        lat_best=_us(m["best"]),
        lat_worst=_us(m["worst"]),
    )
    if not rtd.lat_min <= rtd.lat_avg <= rtd.lat_max:
        raise LatmusFormatError("RTD| line does not have min <= avg <= max", line_no, line)
    if not rtd.lat_best <= rtd.lat_worst:
        raise LatmusFormatError("RTD| line does not have best <= worst", line_no, line)
    return rtd


def parse_rts(line: str, line_no: int | None = None) -> RtsLine:
    m = RTS_RE.match(line)
    if not m:
        raise LatmusFormatError(
            "malformed RTS| line (expected min|avg|max|overruns|msw|HH:MM:SS/HH:MM:SS)", line_no, line
        )
    rts = RtsLine(
        lat_min=_us(m["min"]),
        lat_avg=_us(m["avg"]),
        lat_max=_us(m["max"]),
        overruns=int(m["overruns"]),
        msw=int(m["msw"]),
        elapsed_s=_hms(m["elapsed"], line_no, line),
        requested_s=_hms(m["requested"], line_no, line),
        text=line,
    )
    if not rts.lat_min <= rts.lat_avg <= rts.lat_max:
        raise LatmusFormatError("RTS| line does not have min <= avg <= max", line_no, line)
    return rts


def parse_ctx_line(line: str, line_no: int | None = None) -> CtxLine:
    m = CTX_RE.match(line)
    if not m:
        raise LatmusFormatError(
            "malformed CTX| line (expected `CTX| switches N total_ns N ns_per_switch N.NNN`)", line_no, line
        )
    ctx = CtxLine(int(m["switches"]), int(m["total"]), float(m["per"]))
    if ctx.switches == 0:
        raise LatmusFormatError("CTX| line reports 0 switches", line_no, line)
    if abs(ctx.total_ns / ctx.switches - ctx.ns_per_switch) > 0.0011:
        raise LatmusFormatError("CTX| ns_per_switch is not total_ns / switches", line_no, line)
    return ctx


def _hms(text: str, line_no: int | None, line: str) -> int:
    try:
        return hms_to_seconds(text)
    except ValueError as exc:
        raise LatmusFormatError(str(exc), line_no, line) from exc


def _records(text: str) -> Iterable[tuple[int, str]]:
    """(1-based line number, line without trailing blanks) of each record line."""
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if _RECORD_RE.match(line):
            yield line_no, line


def parse_latency(text: str) -> LatencyReport:
    """Parse the latency monitor's console output; see docs/rtos-console.md, section Latency."""
    header: RttLine | None = None
    seen_rth = False
    intervals: list[RtdLine] = []
    summary: RtsLine | None = None
    histogram: Histogram | None = None
    ended = False
    last_cell: int | None = None
    for line_no, line in _records(text):
        kind = line[:3]
        if ended:
            raise LatmusFormatError("latency record after the histogram end (HSE|)", line_no, line)
        if kind in ("RTT", "RTH", "RTD", "---") and summary is not None:
            raise LatmusFormatError(f"{kind}| line after the RTS| summary", line_no, line)
        if kind == "RTT":
            rtt = parse_rtt(line, line_no)
            header = header or rtt
        elif kind == "RTH":
            check_rth(line, line_no)
            seen_rth = True
        elif kind == "---":
            if not SEPARATOR_RE.match(line):
                raise LatmusFormatError("malformed separator line", line_no, line)
        elif kind == "RTD":
            if header is None or not seen_rth:
                raise LatmusFormatError("RTD| line before the RTT| and RTH| headers", line_no, line)
            intervals.append(parse_rtd(line, line_no))
        elif kind == "RTS":
            if header is None:
                raise LatmusFormatError("RTS| line before the RTT| header", line_no, line)
            summary = parse_rts(line, line_no)
        elif kind == "HSH":
            if summary is None:
                raise LatmusFormatError("HSH| histogram header before the RTS| summary", line_no, line)
            if histogram is not None:
                raise LatmusFormatError("second HSH| histogram header", line_no, line)
            m = HSH_RE.match(line)
            if not m:
                raise LatmusFormatError(
                    "malformed HSH| line (expected `HSH| N us cells, N samples, N cells`)", line_no, line
                )
            histogram = Histogram(int(m["cell_us"]), int(m["samples"]), int(m["cells"]))
            if histogram.cell_us <= 0 or histogram.cells <= 0:
                raise LatmusFormatError("HSH| cell width and cell count must be positive", line_no, line)
        elif kind == "HSD":
            if histogram is None:
                raise LatmusFormatError("HSD| line before the HSH| header", line_no, line)
            m = HSD_RE.match(line)
            if not m:
                raise LatmusFormatError("malformed HSD| line (expected `HSD| cell count`)", line_no, line)
            cell, count = int(m["cell"]), int(m["count"])
            if last_cell is not None and cell <= last_cell:
                raise LatmusFormatError("HSD| cells are not in increasing order", line_no, line)
            if cell >= histogram.cells:
                raise LatmusFormatError(
                    f"HSD| cell beyond the {histogram.cells} cells announced", line_no, line
                )
            if count == 0:
                raise LatmusFormatError("HSD| line for an empty cell", line_no, line)
            histogram.counts[cell] = count
            last_cell = cell
        elif kind == "HSE":
            if histogram is None:
                raise LatmusFormatError("HSE| line before the HSH| header", line_no, line)
            if not HSE_RE.match(line):
                raise LatmusFormatError("malformed HSE| line", line_no, line)
            ended = True
        else:
            raise LatmusFormatError(f"unknown record {kind}|", line_no, line)
    if header is None:
        raise LatmusFormatError("no RTT| header line in the latency output")
    if summary is None:
        raise LatmusFormatError("no RTS| summary line in the latency output")
    if not intervals:
        raise LatmusFormatError("no RTD| data line in the latency output")
    if histogram is None:
        raise LatmusFormatError("no HSH| histogram header in the latency output")
    if not ended:
        raise LatmusFormatError("the histogram is not terminated by an HSE| line")
    if histogram.total != histogram.samples:
        raise LatmusFormatError(
            f"histogram counts add up to {histogram.total}, but HSH| announces {histogram.samples} samples"
        )
    return LatencyReport(header, intervals, summary, histogram)


def parse_ctxsw(text: str) -> CtxLine:
    """The one `CTX|` line of the context-switch benchmark's console."""
    found: CtxLine | None = None
    for line_no, line in _records(text):
        if not line.startswith("CTX|"):
            raise LatmusFormatError(f"unexpected record {line[:3]}| in context-switch output", line_no, line)
        if found is not None:
            raise LatmusFormatError("more than one CTX| line", line_no, line)
        found = parse_ctx_line(line, line_no)
    if found is None:
        raise LatmusFormatError("no CTX| line in the context-switch output")
    return found


def samples_for_duration(duration_s: float, period_us: int) -> int:
    """Samples that cover `duration_s` seconds at one sample per `period_us` microseconds."""
    if period_us <= 0:
        raise ValueError("the sampling period must be positive")
    if duration_s <= 0:
        raise ValueError("the duration must be positive")
    samples = round(duration_s * 1_000_000 / period_us)
    if samples < 1:
        raise ValueError(f"{duration_s} s is shorter than one {period_us} us period")
    return samples


def write_histogram(
    path: Path,
    report: LatencyReport,
    *,
    started: datetime,
    period_us: int,
    mode: str,
    load: bool,
    command: str | None = None,
) -> None:
    """Write the histogram in gnuplot form: `#` header comments, then one `cell count` line per cell.

    The cell value is the lower edge of the cell in microseconds; the last cell of the guest's histogram
    also collects everything above it.
    """
    hist, rts = report.histogram, report.summary
    lines = [
        "# rtmux rtos timer latency histogram (latmus format)",
        f"# test started on: {started.strftime('%Y-%m-%d %H:%M:%S %z')} (host clock)",
        f"# sampling period: {period_us} us",
        f"# QEMU mode: {mode}",
        f"# load: {'on' if load else 'off'}",
    ]
    if command:
        lines.append(f"# command: {command}")
    lines += [
        f"# cell width: {hist.cell_us} us ({hist.cells} cells, the last one collects everything above it)",
        f"# min latency: {rts.lat_min:.3f} us",
        f"# avg latency: {rts.lat_avg:.3f} us",
        f"# max latency: {rts.lat_max:.3f} us",
        f"# overruns: {rts.overruns}",
        f"# sample count: {hist.samples}",
        "# columns: cell (us) count",
    ]
    lines += [f"{cell * hist.cell_us} {count}" for cell, count in sorted(hist.counts.items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_histogram_file(path: Path) -> tuple[dict[str, str], dict[int, int]]:
    """Read a file written by `write_histogram`: header fields (`# key: value`) and cell -> count."""
    header: dict[str, str] = {}
    counts: dict[int, int] = {}
    for line_no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                header[key.strip()] = value.strip()
            continue
        parts = line.split()
        if len(parts) != 2:
            raise LatmusFormatError(f"{path}: expected `cell count`", line_no, raw)
        counts[int(parts[0])] = int(parts[1])
    return header, counts
