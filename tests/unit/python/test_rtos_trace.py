"""The rtos scheduler trace's reader (rtmux.formats.rtos_trace) on buffers built here."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from rtmux.errors import UsageError
from rtmux.formats import rtos_trace as rt
from rtmux.run import trace as run_trace

FREQ = 62_500_000  # QEMU's counter: 16 ns a tick
NNAMES = 64


def buffer(
    events: list[tuple[int, int, int, int, int]],
    nevents: int = 8,
    names: dict[int, tuple[str, int]] | None = None,
    *,
    start: int = 0,
    magic: int = rt.MAGIC,
    version: int = rt.VERSION,
) -> bytes:
    """A k_trace_buf: `events` (ts, type, prio, small, arg) written from slot `start` on, wrapping."""
    head = rt.HEADER.pack(magic, version, nevents, FREQ, NNAMES, 1)
    table = bytearray(NNAMES * rt.NAME.size)
    for tid, (name, prio) in (names or {}).items():
        rt.NAME.pack_into(table, (tid % NNAMES) * rt.NAME.size, tid, prio, name.encode())
    ring = bytearray(nevents * rt.EVENT.size)
    for i, (ts, typ, prio, small, arg) in enumerate(events):
        slot = (start + i) % nevents
        rt.EVENT.pack_into(ring, slot * rt.EVENT.size, ts, typ | prio << 8 | small << 16, arg)
    return head + bytes(table) + bytes(ring)


NAMES = {1: ("idle", 0), 2: ("busy", 5), 3: ("periodic", 200)}
# The periodic thread preempts the busy one at every timer interrupt and blocks again.
PERIOD = [
    (100, rt.IRQ_IN, 0, 27, 0),
    (108, rt.WAKE, 200, 1, 3),
    (110, rt.IRQ_OUT, 0, 27, 0),
    (117, rt.SWITCH, 200, 0, 3),
    (140, rt.SWITCH, 5, 1, 2),
]


def test_parse_before_the_ring_wrapped() -> None:
    t = rt.parse(buffer(PERIOD, names=NAMES))
    assert [e.ts for e in t.events] == [100, 108, 110, 117, 140]
    assert not t.wrapped and t.recording
    assert t.thread_name(3) == "periodic" and t.names[2] == ("busy", 5)
    assert t.thread_name(9) == "thread#9"
    assert t.span_ns() == pytest.approx(40 * 16)


def test_parse_after_the_ring_wrapped_starts_at_the_oldest() -> None:
    evs = [(1000 + 10 * i, rt.MARK, 0, i, i) for i in range(11)]  # 11 events into 8 slots
    t = rt.parse(buffer(evs, nevents=8))
    assert [e.small for e in t.events] == list(range(3, 11))
    assert t.wrapped


@pytest.mark.parametrize("start", range(8))
def test_a_full_ring_reads_in_order_wherever_it_ends(start: int) -> None:
    evs = [(500 + i, rt.MARK, 0, i, 0) for i in range(8)]
    t = rt.parse(buffer(evs, nevents=8, start=start))
    assert [e.small for e in t.events] == list(range(8))


def test_an_empty_ring_has_no_events() -> None:
    assert rt.parse(buffer([])).events == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\0" * 10, "shorter than the trace header"),
        (buffer([], magic=0x1234), "no trace buffer"),
        (buffer([], version=7), "version 7"),
        (buffer(PERIOD)[:-1], "needs"),
    ],
)
def test_bad_buffers_are_refused_with_the_reason(data: bytes, message: str) -> None:
    with pytest.raises(rt.TraceError, match=message):
        rt.parse(data)


def test_listing_says_what_happened_in_order() -> None:
    t = rt.parse(buffer(PERIOD, names=NAMES))
    lines = rt.listing(t, t.events)
    assert lines[0].endswith("enter timer (virtual) (level 0)")
    assert lines[1].endswith("wake periodic (prio 200) by timeout")
    assert lines[3].endswith("switch to periodic (prio 200; the previous thread preempted)")
    assert lines[4].endswith("switch to busy (prio 5; the previous thread blocked)")
    assert lines[4].lstrip().startswith("0.640 us")  # 40 ticks of 16 ns after the first event


def test_chrome_trace_has_a_slice_per_turn_and_the_handlers() -> None:
    evs = PERIOD + [(e[0] + 1000, *e[1:]) for e in PERIOD]
    t = rt.parse(buffer(evs, nevents=16, names=NAMES))
    doc = rt.to_chrome(t)
    json.dumps(doc)  # serialisable
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == rt.THREAD_PID]
    # periodic 117..140, busy 140..1117, periodic 1117..1140 (the last turn, busy's, has no end yet)
    assert [(s["name"], s["args"]["left"]) for s in slices] == [
        ("periodic", "blocked"),
        ("busy", "preempted"),
        ("periodic", "blocked"),
    ]
    assert slices[0]["dur"] == pytest.approx(23 * 0.016)
    irqs = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == rt.IRQ_PID]
    assert len(irqs) == 2 and irqs[0]["name"] == "timer (virtual)"
    wakes = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"].startswith("wake")]
    assert [w["name"] for w in wakes] == ["wake (timeout)"] * 2
    assert doc["otherData"]["counter_hz"] == FREQ


def test_runs_and_the_last_window() -> None:
    evs = PERIOD + [(e[0] + 1000, *e[1:]) for e in PERIOD]
    t = rt.parse(buffer(evs, nevents=16, names=NAMES))
    turns = rt.runs(t, t.events)
    assert turns[3] == [(117, 140), (1117, 1140)]
    assert turns[2] == [(140, 1117), (1140, 1140)]  # its current turn, up to the last event
    assert [e.ts for e in t.last(50 * 16)] == [1100, 1108, 1110, 1117, 1140]


def test_plot_timeline_writes_a_png(tmp_path: Path) -> None:
    t = rt.parse(buffer(PERIOD, names=NAMES))
    out = tmp_path / "t.png"
    rt.plot_timeline(t, 1.0, out, "test")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_refuses_more_events_than_the_ring(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="the ring holds 8 events"):
        run_trace.write(buffer(PERIOD), tmp_path / "t", events=9, window_ms=1.0, picture=False, title="t")
    w = run_trace.write(
        buffer(PERIOD, names=NAMES), tmp_path / "t", events=2, window_ms=1.0, picture=False, title="t"
    )
    assert (
        w.exported == 2 and w.json_path.is_file() and w.raw_path.read_bytes() == buffer(PERIOD, names=NAMES)
    )


def test_the_ring_size_before_boot_follows_the_symbol_size() -> None:
    size = rt.HEADER.size + NNAMES * rt.NAME.size + 8192 * rt.EVENT.size
    ring = run_trace.Ring(address=0x4008_0000, size=size, physical=0x4008_0000)
    assert ring.events == 8192
    run_trace.check_events(8192, ring)
    with pytest.raises(UsageError, match="1 to 8192"):
        run_trace.check_events(8193, ring)


def test_header_layout_matches_the_c_struct() -> None:
    # rtos/kernel/trace.h: names at offset 32, a name 32 bytes, an event 16 bytes.
    assert rt.HEADER.size == 32 and rt.NAME.size == 32 and rt.EVENT.size == 16
    assert struct.calcsize("<QII") == rt.EVENT.size
