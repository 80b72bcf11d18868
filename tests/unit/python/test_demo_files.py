"""The rtos demo's telemetry CSV and set-point profile as the host reads them (rtmux.formats.demo_files)."""

from __future__ import annotations

import pytest

from rtmux.formats import demo_files
from rtmux.formats.demo_files import DemoFilesFormatError, TelemetryRow

# The start of a run's CSV (the default system, icount): the square wave before Linux's files came,
# then the example profile.
CSV = """\
time_s,cycle,setpoint_mm,position_mm,overruns,worst_wakeup_us,source,profile_ms
1.100,1000,0.000,0.000,0,0.624,square,
2.100,2000,10.000,8.008,0,1.040,profile,500
3.100,3000,-2.500,-0.026,3,12.345,setpoint,1500
"""


def test_rows_are_read_exactly() -> None:
    rows = demo_files.parse_telemetry(CSV)
    assert rows == [
        TelemetryRow(1100, 1000, 0, 0, 0, 624, "square", None),
        TelemetryRow(2100, 2000, 10000, 8008, 0, 1040, "profile", 500),
        TelemetryRow(3100, 3000, -2500, -26, 3, 12345, "setpoint", 1500),
    ]
    assert demo_files.parse_telemetry(demo_files.HEADER + "\n") == []


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("1.100,1000,0.000,0.000,0,0.624,square,\n", 1),  # no header
        (CSV + demo_files.HEADER + "\n", 5),  # a second header
        (CSV + "4.100,4000,0.000,0.000,0,0.624,square\n", 5),  # a field missing
        (CSV + "4.100,4000,0.00,0.000,0,0.624,square,\n", 5),  # two decimals
        (CSV + "4.100,4000,0.000,0.000,0,0.624,sine,\n", 5),  # no such source
        (CSV + "4.100,4000,0.000,0.000,0,0.624,profile,x\n", 5),
        (CSV + "4.100,4000,0.000,0.000,0,0.624,square,,\n", 5),
        (CSV + "4.1", 5),  # a row cut short
    ],
)
def test_anything_else_is_refused_with_its_line(text: str, line: int) -> None:
    with pytest.raises(DemoFilesFormatError, match=f"^line {line}: "):
        demo_files.parse_telemetry(text)


def test_the_setpoint_between_points() -> None:
    # ramps and a step, as in tests/unit/c/test_demo_profile.c
    points = [(0, 0.0), (1000, 10.0), (1000, -4.0), (3000, 6.0)]
    assert [demo_files.setpoint_um(points, t) for t in (0, 500, 999, 1000, 2000)] == [
        0.0, 5000.0, 9990.0, -4000.0, 1000.0,
    ]  # fmt: skip
    assert demo_files.setpoint_um(points, 3000) == 6000.0  # the last point (the cycle ends there)
    assert demo_files.setpoint_um([(0, 1.5)], 0) == 1500.0
    with pytest.raises(ValueError):
        demo_files.setpoint_um([(5, 1.0)], 5)
