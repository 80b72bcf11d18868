"""The final line of `rtmux-ping` (guest/rtmux-ping): round-trip times or throughput.

rtt_us min=A avg=B p99=C max=D n=N      microseconds (CLOCK_MONOTONIC), p99 nearest-rank
throughput_MBps tx=A rx=B               10^6 bytes per second
and, with --hist, the line before the round trips' (the prefix `rtt_hist_ns ` is the caller's to strip):
rtt_hist_ns W C:N C:N ...               cells of W ns, cell C holding N round trips; non-empty, in order
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RTT_RE = re.compile(
    r"^rtt_us min=(?P<min>[\d.]+) avg=(?P<avg>[\d.]+) p99=(?P<p99>[\d.]+) max=(?P<max>[\d.]+) n=(?P<n>\d+)$"
)
_HIST_RE = re.compile(r"^(?P<width>\d+)(?P<cells>( \d+:\d+)+)$")
_THROUGHPUT_RE = re.compile(r"^throughput_MBps tx=(?P<tx>[\d.]+) rx=(?P<rx>[\d.]+)$")


class RtmuxPingFormatError(ValueError):
    pass


@dataclass(frozen=True)
class RoundTrips:
    min_us: float
    avg_us: float
    p99_us: float
    max_us: float
    n: int


@dataclass(frozen=True)
class Throughput:
    tx_mbps: float
    rx_mbps: float


def parse_rtt(line: str) -> RoundTrips:
    m = _RTT_RE.match(line.strip())
    if m is None:
        raise RtmuxPingFormatError(f"not an `rtt_us min=A avg=B p99=C max=D n=N` line: {line!r}")
    rtt = RoundTrips(float(m["min"]), float(m["avg"]), float(m["p99"]), float(m["max"]), int(m["n"]))
    ordered = 0 < rtt.min_us <= rtt.avg_us <= rtt.max_us and rtt.min_us <= rtt.p99_us <= rtt.max_us
    if not ordered or rtt.n < 1:
        raise RtmuxPingFormatError(f"inconsistent round-trip figures: {line!r}")
    return rtt


def parse_throughput(line: str) -> Throughput:
    m = _THROUGHPUT_RE.match(line.strip())
    if m is None:
        raise RtmuxPingFormatError(f"not a `throughput_MBps tx=A rx=B` line: {line!r}")
    return Throughput(float(m["tx"]), float(m["rx"]))


@dataclass(frozen=True)
class RttHistogram:
    cell_ns: int
    counts: dict[int, int]  # cell -> round trips in [cell, cell + 1) * cell_ns

    @property
    def n(self) -> int:
        return sum(self.counts.values())


def parse_hist(text: str) -> RttHistogram:
    """The part of an `rtt_hist_ns` line after its prefix: `W C:N C:N ...`."""
    m = _HIST_RE.match(text.strip())
    if m is None:
        raise RtmuxPingFormatError(f"not an `rtt_hist_ns W C:N ...` line: {text[:80]!r}")
    cells = [tuple(int(x) for x in pair.split(":")) for pair in m["cells"].split()]
    order = [c for c, _ in cells]
    if int(m["width"]) < 1 or order != sorted(set(order)) or any(n < 1 for _, n in cells):
        raise RtmuxPingFormatError(f"inconsistent round-trip histogram: {text[:80]!r}")
    return RttHistogram(int(m["width"]), {c: n for c, n in cells})


def render_hists(hists: dict[str, RttHistogram]) -> str:
    """Histograms of one cell width side by side, for gnuplot: `#` header lines, then one line per cell
    that any of them fills: the cell's lower edge in microseconds and each histogram's round trips."""
    widths = {h.cell_ns for h in hists.values()}
    if len(widths) != 1:
        raise ValueError(f"histograms of different cell widths: {sorted(widths)}")
    width = widths.pop()
    cells = sorted({c for h in hists.values() for c in h.counts})
    lines = [
        f"# round trips (rtmux-ping --hist), {width} ns cells: [edge, edge + {width / 1000:g}) us",
        "# " + " ".join(["cell_us", *(f"{name}({h.n})" for name, h in hists.items())]),
    ]
    lines += [
        " ".join([f"{c * width / 1000:.1f}", *(str(h.counts.get(c, 0)) for h in hists.values())])
        for c in cells
    ]
    return "\n".join(lines) + "\n"
