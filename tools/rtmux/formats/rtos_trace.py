"""The rtos's scheduler trace (rtos/include/rtos/trace.h): its ring read out of the rtos's memory, and the
files a viewer opens.

The layout is `struct k_trace_buf` of rtos/kernel/trace.h (its asserts fix the offsets used here):

    0   magic "RTTRACE1" (u64)     8  version (u32)     12 nevents (u32)     16 freq, Hz (u64)
    24  nnames (u32)               28 on (u32)
    32  names[nnames]: id (u32), prio (u8), 3 bytes, name (24 bytes, NUL-terminated)
    ..  ev[nevents]: ts (u64, the generic counter), word (u32: type | prio << 8 | small << 16), arg (u32)

The ring keeps no write index: events are written in timestamp order, so the oldest is the first after
the place where the timestamps go back (or the first one never written, ts 0, before the ring wrapped).

`to_chrome` writes the Chrome/Perfetto trace-event format (https://ui.perfetto.dev opens it, and so does
chrome://tracing): one track per thread with a slice for each turn it ran, its wake-ups as instants with
their cause, one track per interrupt nesting level with the handlers' slices, and the application's
markers. `plot_timeline` draws the last milliseconds as one picture.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAGIC = 0x3145434152545452  # "RTTRACE1"
VERSION = 1
HEADER = struct.Struct("<QIIQII")
NAME = struct.Struct("<IB3x24s")
EVENT = struct.Struct("<QII")

SWITCH, WAKE, IRQ_IN, IRQ_OUT, MARK = 1, 2, 3, 4, 5
TYPES = {SWITCH: "switch", WAKE: "wake", IRQ_IN: "irq-in", IRQ_OUT: "irq-out", MARK: "mark"}
LEFT = {0: "preempted", 1: "blocked", 2: "ended"}  # why the thread before a switch left the CPU
BY = {1: "timeout", 2: "thread", 3: "interrupt", 4: "created"}  # what made a thread ready
# The generic timer's INTIDs on QEMU virt and the boards rtmux knows (the rtos's timer is one of them).
TIMER_INTIDS = {27: "timer (virtual)", 30: "timer (physical)"}


class TraceError(ValueError):
    """The bytes are not an rtos trace buffer (wrong magic or version, or cut short)."""


@dataclass(frozen=True)
class Event:
    ts: int  # counter ticks
    type: int
    prio: int  # a priority, or an interrupt's nesting level
    small: int  # K_TR_LEFT_*, K_TR_BY_*, an INTID or a marker's id
    arg: int  # a thread id, or a marker's value

    @property
    def kind(self) -> str:
        return TYPES.get(self.type, f"type-{self.type}")


@dataclass
class Trace:
    freq: int  # counter frequency, Hz
    nevents: int  # the ring's size
    recording: bool  # still on when it was read
    names: dict[int, tuple[str, int]] = field(default_factory=dict)  # thread id -> (name, base priority)
    events: list[Event] = field(default_factory=list)  # oldest first

    def ns(self, ticks: int) -> float:
        return ticks * 1e9 / self.freq

    def thread_name(self, tid: int) -> str:
        known = self.names.get(tid)
        return known[0] if known is not None else f"thread#{tid}"

    @property
    def wrapped(self) -> bool:
        """The ring was full: older events were overwritten (the trace starts mid-way)."""
        return len(self.events) == self.nevents

    def span_ns(self) -> float:
        return self.ns(self.events[-1].ts - self.events[0].ts) if self.events else 0.0

    def last(self, window_ns: float) -> list[Event]:
        """The events of the last `window_ns` before the newest."""
        if not self.events:
            return []
        since = self.events[-1].ts - int(window_ns * self.freq / 1e9)
        return [e for e in self.events if e.ts >= since]


def parse(data: bytes) -> Trace:
    """The trace in `data`, the bytes of `k_trace_ring` (at least its header, names and events)."""
    if len(data) < HEADER.size:
        raise TraceError(f"{len(data)} bytes: shorter than the trace header ({HEADER.size})")
    magic, version, nevents, freq, nnames, on = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise TraceError(
            f"no trace buffer (magic {magic:#018x}, not {MAGIC:#018x}): was the rtos built with "
            "tracing, and did it boot?"
        )
    if version != VERSION:
        raise TraceError(f"trace format version {version}; these tools read version {VERSION}")
    if freq == 0 or nevents == 0 or nevents & (nevents - 1):
        raise TraceError(f"bad trace header: {nevents} events, counter at {freq} Hz")
    names_at = HEADER.size
    events_at = names_at + nnames * NAME.size
    need = events_at + nevents * EVENT.size
    if len(data) < need:
        raise TraceError(f"{len(data)} bytes: the trace buffer of {nevents} events needs {need}")
    trace = Trace(freq=freq, nevents=nevents, recording=on != 0)
    for i in range(nnames):
        tid, prio, raw = NAME.unpack_from(data, names_at + i * NAME.size)
        if tid != 0:
            trace.names[tid] = (raw.split(b"\0", 1)[0].decode("utf-8", "replace"), prio)
    raw_events = [EVENT.unpack_from(data, events_at + i * EVENT.size) for i in range(nevents)]
    trace.events = [
        Event(ts, word & 0xFF, (word >> 8) & 0xFF, word >> 16, arg)
        for ts, word, arg in ring_order(raw_events)
    ]
    return trace


def ring_order(raw: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The written entries of the ring, oldest first: they start after the one whose successor's
    timestamp goes back, or, before the ring wrapped, at 0 and end before the first never written."""
    n = len(raw)
    newest = None
    for i in range(n):
        nxt = raw[(i + 1) % n][0]
        if raw[i][0] != 0 and (nxt < raw[i][0] or nxt == 0):
            newest = i
            break
    if newest is None:
        return [] if not raw or raw[0][0] == 0 else list(raw)  # empty, or every slot in order (n wraps exact)
    start = (newest + 1) % n
    ordered = raw[start:] + raw[:start]
    return [e for e in ordered if e[0] != 0]


# ---- Chrome / Perfetto trace-event JSON ----

IRQ_PID = 2  # the interrupts' "process": one track (tid) per nesting level
THREAD_PID = 1


def to_chrome(trace: Trace, events: Iterable[Event] | None = None) -> dict[str, Any]:
    """The trace (or the given part of it) in the trace-event format: times in us from its first event."""
    evs = list(trace.events if events is None else events)
    out: list[dict[str, Any]] = []
    if not evs:
        return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": _meta(trace, evs)}
    t0 = evs[0].ts

    def us(ts: int) -> float:
        return round((ts - t0) * 1e6 / trace.freq, 3)

    out.append({"ph": "M", "pid": THREAD_PID, "name": "process_name", "args": {"name": "rtos threads"}})
    out.append({"ph": "M", "pid": IRQ_PID, "name": "process_name", "args": {"name": "rtos interrupts"}})
    seen: set[int] = set()

    def thread_track(tid: int) -> None:
        if tid not in seen:
            seen.add(tid)
            name = trace.thread_name(tid)
            prio = trace.names.get(tid, ("", 0))[1]
            out.append(
                {"ph": "M", "pid": THREAD_PID, "tid": tid, "name": "thread_name", "args": {"name": name}}
            )
            # Most urgent on top, as the scheduler ranks them.
            out.append(
                {
                    "ph": "M",
                    "pid": THREAD_PID,
                    "tid": tid,
                    "name": "thread_sort_index",
                    "args": {"sort_index": -prio},
                }
            )

    running: tuple[int, int, int] | None = None  # (thread id, since ts, priority)
    open_irqs: dict[int, tuple[int, int]] = {}  # nesting level -> (INTID, since ts)
    for e in evs:
        if e.type == SWITCH:
            if running is not None:
                tid, since, prio = running
                thread_track(tid)
                out.append(
                    {
                        "ph": "X", "pid": THREAD_PID, "tid": tid, "name": trace.thread_name(tid),
                        "ts": us(since), "dur": round(us(e.ts) - us(since), 3),
                        "args": {"priority": prio, "left": LEFT.get(e.small, str(e.small))},
                    }
                )  # fmt: skip
            running = (e.arg, e.ts, e.prio)
        elif e.type == WAKE:
            thread_track(e.arg)
            out.append(
                {
                    "ph": "i", "s": "t", "pid": THREAD_PID, "tid": e.arg, "ts": us(e.ts),
                    "name": f"wake ({BY.get(e.small, e.small)})", "args": {"priority": e.prio},
                }
            )  # fmt: skip
        elif e.type == IRQ_IN:
            open_irqs[e.prio] = (e.small, e.ts)
        elif e.type == IRQ_OUT:
            begun = open_irqs.pop(e.prio, None)
            if begun is not None and begun[0] == e.small:
                out.append(
                    {
                        "ph": "X", "pid": IRQ_PID, "tid": e.prio, "name": irq_name(e.small),
                        "ts": us(begun[1]), "dur": round(us(e.ts) - us(begun[1]), 3),
                        "args": {"intid": e.small, "level": e.prio},
                    }
                )  # fmt: skip
        elif e.type == MARK:
            tid = running[0] if running is not None else 0
            out.append(
                {
                    "ph": "i", "s": "t", "pid": THREAD_PID, "tid": tid, "ts": us(e.ts),
                    "name": f"mark {e.small}", "args": {"id": e.small, "value": e.arg},
                }
            )  # fmt: skip
    for level in sorted({ev["tid"] for ev in out if ev.get("pid") == IRQ_PID and "tid" in ev}):
        out.append(
            {
                "ph": "M",
                "pid": IRQ_PID,
                "tid": level,
                "name": "thread_name",
                "args": {"name": f"level {level}"},
            }
        )
    return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": _meta(trace, evs)}


def irq_name(intid: int) -> str:
    return TIMER_INTIDS.get(intid, f"IRQ {intid}")


def _meta(trace: Trace, evs: list[Event]) -> dict[str, Any]:
    return {
        "source": "rtmux rtos scheduler trace",
        "counter_hz": trace.freq,
        "ring_events": trace.nevents,
        "events": len(evs),
        "wrapped": trace.wrapped,
        "recording_when_read": trace.recording,
    }


# ---- a text listing (for a terminal and for tests) ----


def describe(trace: Trace, e: Event) -> str:
    """One event as a line of text (without its time)."""
    if e.type == SWITCH:
        left = LEFT.get(e.small, "?")
        return f"switch to {trace.thread_name(e.arg)} (prio {e.prio}; the previous thread {left})"
    if e.type == WAKE:
        return f"wake {trace.thread_name(e.arg)} (prio {e.prio}) by {BY.get(e.small, '?')}"
    if e.type in (IRQ_IN, IRQ_OUT):
        return f"{'enter' if e.type == IRQ_IN else 'leave'} {irq_name(e.small)} (level {e.prio})"
    if e.type == MARK:
        return f"mark {e.small} = {e.arg}"
    return f"unknown event type {e.type}"


def listing(trace: Trace, events: Iterable[Event]) -> list[str]:
    """`+TIME_US  description` lines, times from the first event listed."""
    evs = list(events)
    if not evs:
        return []
    t0 = evs[0].ts
    return [f"{trace.ns(e.ts - t0) / 1000:12.3f} us  {describe(trace, e)}" for e in evs]


# ---- one picture ----


def runs(trace: Trace, events: list[Event]) -> dict[int, list[tuple[int, int]]]:
    """Each thread's turns on the CPU within `events`: thread id -> [(start ts, end ts)]. The thread
    running before the first switch is unknown, so the first turn starts at the first switch."""
    turns: dict[int, list[tuple[int, int]]] = {}
    running: tuple[int, int] | None = None
    for e in events:
        if e.type == SWITCH:
            if running is not None:
                turns.setdefault(running[0], []).append((running[1], e.ts))
            running = (e.arg, e.ts)
    if running is not None and events:
        turns.setdefault(running[0], []).append((running[1], events[-1].ts))
    return turns


def plot_timeline(trace: Trace, window_ms: float, path: Path, title: str) -> None:
    """A PNG of the last `window_ms`: a row per thread (most urgent on top) with its turns on the CPU and
    its wake-ups, a row of interrupt handlers, the markers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    events = trace.last(window_ms * 1e6)
    if not events:
        raise TraceError("the trace holds no event: was it on (boot argument trace=1)?")
    t0 = events[0].ts

    def ms(ts: int) -> float:
        return trace.ns(ts - t0) / 1e6

    turns = runs(trace, events)
    tids = sorted(
        turns | {e.arg: [] for e in events if e.type == WAKE}, key=lambda t: trace.names.get(t, ("", 0))[1]
    )
    rows = {tid: i + 1 for i, tid in enumerate(tids)}
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * (len(rows) + 1)))
    for tid, spans in turns.items():
        ax.broken_barh(
            [(ms(a), max(ms(b) - ms(a), 1e-4)) for a, b in spans], (rows[tid] - 0.35, 0.7), color="tab:blue"
        )
    wakes = [(ms(e.ts), rows[e.arg]) for e in events if e.type == WAKE and e.arg in rows]
    if wakes:
        ax.plot(
            [w[0] for w in wakes],
            [w[1] + 0.42 for w in wakes],
            "v",
            color="tab:red",
            markersize=4,
            label="wake-up",
        )
    irq_spans: list[tuple[float, float]] = []
    begun: dict[int, int] = {}
    for e in events:
        if e.type == IRQ_IN:
            begun[e.prio] = e.ts
        elif e.type == IRQ_OUT and e.prio in begun:
            a = begun.pop(e.prio)
            irq_spans.append((ms(a), max(ms(e.ts) - ms(a), 1e-4)))
    if irq_spans:
        ax.broken_barh(irq_spans, (-0.35, 0.7), color="tab:orange")
    marks = [ms(e.ts) for e in events if e.type == MARK]
    for m in marks:
        ax.axvline(m, color="tab:green", linewidth=0.6)
    labels = ["interrupts"] + [f"{trace.thread_name(t)} ({trace.names.get(t, ('', '?'))[1]})" for t in tids]
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel(
        f"ms (the last {ms(events[-1].ts):.3f} ms of the trace; counter at {trace.freq / 1e6:g} MHz)"
    )
    ax.set_title(title)
    if wakes:
        ax.legend(loc="upper right", fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
