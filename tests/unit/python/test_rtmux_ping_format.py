"""rtmux.formats.rtmux_ping: rtmux-ping's final lines."""

from __future__ import annotations

import pytest

from rtmux.formats import rtmux_ping


def test_round_trips() -> None:
    r = rtmux_ping.parse_rtt("rtt_us min=18.5 avg=18.9 p99=21.4 max=91.6 n=10000\n")
    assert r == rtmux_ping.RoundTrips(18.5, 18.9, 21.4, 91.6, 10000)


def test_throughput() -> None:
    assert rtmux_ping.parse_throughput("throughput_MBps tx=29.04 rx=29.03") == rtmux_ping.Throughput(
        29.04, 29.03
    )


@pytest.mark.parametrize(
    "line",
    [
        "",
        "rtt_us min=1 avg=2 p99=3 max=4",
        "rtt_us min=5 avg=2 p99=3 max=4 n=10",  # min above avg
        "rtt_us min=1 avg=2 p99=9 max=4 n=10",  # p99 above max
        "rtt_us min=0 avg=0 p99=0 max=0 n=10",
        "throughput_MBps tx=1 rx=2",
    ],
)
def test_bad_round_trip_lines(line: str) -> None:
    with pytest.raises(rtmux_ping.RtmuxPingFormatError):
        rtmux_ping.parse_rtt(line)


def test_bad_throughput_line() -> None:
    with pytest.raises(rtmux_ping.RtmuxPingFormatError):
        rtmux_ping.parse_throughput("throughput_MBps tx=1")


def test_parse_hist() -> None:
    h = rtmux_ping.parse_hist("100 185:600 190:399 916:1\n")
    assert (h.cell_ns, h.counts, h.n) == (100, {185: 600, 190: 399, 916: 1}, 1000)
    for bad in ("", "100", "100 5:1 5:2", "100 6:1 5:2", "100 5:0", "0 5:1", "x 5:1"):
        with pytest.raises(rtmux_ping.RtmuxPingFormatError):
            rtmux_ping.parse_hist(bad)


def test_render_hists() -> None:
    text = rtmux_ping.render_hists(
        {"vbus": rtmux_ping.parse_hist("100 185:2 190:1"), "pipe": rtmux_ping.parse_hist("100 175:3")}
    )
    assert text.splitlines()[1:] == ["# cell_us vbus(3) pipe(3)", "17.5 0 3", "18.5 2 0", "19.0 1 0"]
    with pytest.raises(ValueError, match="different cell widths"):
        rtmux_ping.render_hists({"a": rtmux_ping.parse_hist("100 1:1"), "b": rtmux_ping.parse_hist("50 1:1")})
