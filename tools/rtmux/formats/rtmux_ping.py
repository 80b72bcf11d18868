"""The final line of `rtmux-ping` (guest/rtmux-ping): round-trip times or throughput.

rtt_us min=A avg=B p99=C max=D n=N      microseconds (CLOCK_MONOTONIC), p99 nearest-rank
throughput_MBps tx=A rx=B               10^6 bytes per second
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RTT_RE = re.compile(
    r"^rtt_us min=(?P<min>[\d.]+) avg=(?P<avg>[\d.]+) p99=(?P<p99>[\d.]+) max=(?P<max>[\d.]+) n=(?P<n>\d+)$"
)
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
