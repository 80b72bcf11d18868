"""The rtos demo's files in Linux (rtos/apps/demo; docs/linux-services.md, "The demo uses it").

The telemetry CSV it appends to (/srv/rtos/demo/telemetry.csv in the default system):

    time_s,cycle,setpoint_mm,position_mm,overruns,worst_wakeup_us,source,profile_ms
    2.100,2000,10.000,8.008,0,0.624,profile,500

a header when the file is new, then a row a second: the rtos's time of the control step that made it
(seconds since its start), the control loop's cycles and missed periods so far, the set-point and the
position (millimetres, three decimals: micrometres), the second's worst wake-up (microseconds, three
decimals), where the set-point came from (`square`: the built-in square wave, `profile`: the profile file,
`setpoint`: a number on the V-Bus channel setpoint) and the time into the profile's cycle (empty without a
profile; it runs on under a `setpoint`).

The profile it follows (/srv/rtos/demo/profile.csv): "time_ms,setpoint_mm" points, the set-point in a
straight line between them, the cycle starting over after the last one (rtos/apps/demo/profile.h);
`setpoint_um` gives the set-point the demo computes from such points.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

HEADER = "time_s,cycle,setpoint_mm,position_mm,overruns,worst_wakeup_us,source,profile_ms"
SOURCES = ("square", "profile", "setpoint")

_MILLI = r"-?\d+\.\d{3}"
_ROW_RE = re.compile(
    rf"(?P<time>\d+\.\d{{3}}),(?P<cycle>\d+),(?P<setpoint>{_MILLI}),(?P<position>{_MILLI}),"
    rf"(?P<overruns>\d+),(?P<worst>\d+\.\d{{3}}),(?P<source>{'|'.join(SOURCES)}),(?P<profile_ms>\d*)"
)


class DemoFilesFormatError(ValueError):
    pass


@dataclass(frozen=True)
class TelemetryRow:
    time_ms: int  # the rtos's time, whole milliseconds
    cycle: int
    setpoint_um: int
    position_um: int
    overruns: int
    worst_ns: int
    source: str  # one of SOURCES
    profile_ms: int | None  # None: no profile


def _milli(text: str) -> int:
    """'-1.234' -> -1234, exactly."""
    neg = text.startswith("-")
    whole, frac = text.lstrip("-").split(".")
    value = int(whole) * 1000 + int(frac)
    return -value if neg else value


def parse_telemetry(text: str) -> list[TelemetryRow]:
    """Every row of a telemetry CSV, in order; DemoFilesFormatError naming the line for a file that does
    not begin with the header, a second header, or a row that is not exactly the format."""
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        raise DemoFilesFormatError(f"line 1: not the header {HEADER!r}: {lines[0] if lines else ''!r}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        m = _ROW_RE.fullmatch(line)
        if m is None:
            raise DemoFilesFormatError(f"line {number}: not a telemetry row: {line!r}")
        rows.append(
            TelemetryRow(
                time_ms=_milli(m["time"]),
                cycle=int(m["cycle"]),
                setpoint_um=_milli(m["setpoint"]),
                position_um=_milli(m["position"]),
                overruns=int(m["overruns"]),
                worst_ns=_milli(m["worst"]),
                source=m["source"],
                profile_ms=int(m["profile_ms"]) if m["profile_ms"] else None,
            )
        )
    return rows


def setpoint_um(points: Sequence[tuple[int, float]], at_ms: int) -> float:
    """The set-point (micrometres) at `at_ms` into the cycle of a profile of (time_ms, setpoint_mm)
    points, computed as the demo computes it (profile.c, profile_at): the last point at or before at_ms
    and the next, in a straight line; after the last point, its value."""
    if not points or points[0][0] != 0 or at_ms < 0:
        raise ValueError("a profile's first point is at 0 ms, and times are not negative")
    i = max(k for k, (t, _) in enumerate(points) if t <= at_ms)
    if i + 1 == len(points):
        return float(round(points[-1][1] * 1000))
    (ta, a_mm), (tb, b_mm) = points[i], points[i + 1]
    a, b = float(round(a_mm * 1000)), float(round(b_mm * 1000))
    return a + (b - a) * (float(at_ms) - ta) / (tb - ta)
