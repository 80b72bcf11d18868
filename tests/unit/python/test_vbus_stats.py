"""The parser of the V-Bus counters port (rtmux.formats.vbus_stats)."""

from __future__ import annotations

import pytest

from rtmux.formats import vbus_stats

SNAPSHOT = """\
[linux] rtmux-stats 1 uptime_us=12345
[linux] device partition=linux status=0x0f needs_reset=0 resets=2 violations=0 control_errors=0
[rtos] demo: t=3s something else
[linux] channel name=echo rtos=rtos linux_open=1 rtos_open=1 to_rtos_bytes=100 to_rtos_writes=2 \
to_linux_bytes=100 to_linux_buffers=3 linux_full=0 rtos_full=4 discarded=0 rtos_discarded=0 errors=0
[linux] channel name=x.y-z rtos=rt2 linux_open=0 rtos_open=1 to_rtos_bytes=0 to_rtos_writes=0 \
to_linux_bytes=0 to_linux_buffers=0 linux_full=0 rtos_full=0 discarded=7 rtos_discarded=1 errors=0
rtmux-stats 1 uptime_us=99
device partition=linux status=0x4f needs_reset=1 resets=2 violations=1 control_errors=0
"""


def test_snapshots_device_and_channels() -> None:
    first, second = vbus_stats.parse(SNAPSHOT)
    assert first.uptime_us == 12345 and first.device["status"] == 0x0F and first.device["resets"] == 2
    assert list(first.channels) == ["echo", "x.y-z"]
    assert first.counter("echo", "rtos_full") == 4 and first.channels["x.y-z"]["rtos"] == "rt2"
    assert first.counter("x.y-z", "discarded") == 7
    assert second.device["needs_reset"] == 1 and second.channels == {}


def test_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version 2"):
        vbus_stats.parse("rtmux-stats 2 uptime_us=1\n")
