"""What `/dev/virtio-ports/rtmux-stats` reads in Linux: the V-Bus device's counters, one snapshot per
open (hyp/core/vbus.c, stats_snapshot_step; the format is docs/architecture.md's "V-Bus counters").

    rtmux-stats 1 uptime_us=N
    device partition=NAME status=0xNN needs_reset=0|1 resets=N violations=N control_errors=N
    channel name=NAME rtos=NAME linux_open=0|1 rtos_open=0|1 to_rtos_bytes=N ... errors=N   (one per channel)

Lines may carry a console tag (`[linux] `) before them; anything else on the console is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER_RE = re.compile(r"rtmux-stats (?P<version>\d+) uptime_us=(?P<uptime>\d+)$")
_LINE_RE = re.compile(r"(?P<kind>device|channel) (?P<fields>(?:\w+=\S+ ?)+)$")
_FIELD_RE = re.compile(r"(\w+)=(\S+)")


@dataclass
class VbusStats:
    uptime_us: int
    device: dict[str, int | str] = field(default_factory=dict)
    channels: dict[str, dict[str, int | str]] = field(default_factory=dict)

    def counter(self, channel: str, name: str) -> int:
        value = self.channels[channel][name]
        assert isinstance(value, int), f"{channel}.{name} is not a counter"
        return value


def _value(text: str) -> int | str:
    if text.isdigit():
        return int(text)
    if text.startswith("0x"):
        return int(text, 16)
    return text


def _untag(line: str) -> str:
    line = line.strip()
    return line.split("] ", 1)[1] if line.startswith("[") and "] " in line else line


def parse(text: str) -> list[VbusStats]:
    """Every snapshot in `text`, in order (a snapshot starts at its header line)."""
    out: list[VbusStats] = []
    for raw in text.splitlines():
        line = _untag(raw)
        if m := _HEADER_RE.match(line):
            if m["version"] != "1":
                raise ValueError(f"rtmux-stats version {m['version']} is not understood: {line!r}")
            out.append(VbusStats(int(m["uptime"])))
        elif out and (m := _LINE_RE.match(line)):
            fields = {k: _value(v) for k, v in _FIELD_RE.findall(m["fields"])}
            if m["kind"] == "device":
                out[-1].device = fields
            else:
                out[-1].channels[str(fields.pop("name"))] = fields
    return out
