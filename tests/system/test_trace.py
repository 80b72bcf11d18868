"""The rtos's scheduler trace (docs/tracing.md) end to end: `./rtmux trace` boots with trace=1, reads the
ring out of the rtos's memory through QEMU's monitor and writes the files; the trace must show a known
sequence, in order and with plausible times: a periodic thread's timer interrupt, its wake-up by its
timeout, the switch to it preempting a busy thread, and its switch away when it blocks, once a period.

Bare metal: the latency monitor's sampler (priority 255, 1 ms) over the latency application's load
(round-robin FP/SIMD threads and a ~21 kHz interrupt waking a worker). In a partition: the demo's sampler
over its `busy_pct` thread, which checks the physical address the tools compute from the placement.
Both in icount mode: the bare run ends by itself, so its ring is the same at every run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from rtmux.formats import rtos_trace as rt
from tests.system.conftest import CliResult, RunRtmux

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
PERIOD_US = 1000.0
TIMER_INTIDS = set(rt.TIMER_INTIDS)


@dataclass
class Preemption:
    irq_ts: int
    wake_ts: int
    switch_ts: int
    preempted: str  # the thread that ran before
    blocked_ts: int  # the periodic thread's switch away (it blocked again)


def preemptions(t: rt.Trace, periodic: str, busy_prefix: str) -> list[Preemption]:
    """Each period where the timer's interrupt woke `periodic` by its timeout while a thread named
    `busy_prefix...` ran, the switch to it preempting that thread, and its block: the events in that order."""
    found: list[Preemption] = []
    evs = t.events
    running: str | None = None
    for i, e in enumerate(evs):
        if e.type == rt.SWITCH:
            running = t.thread_name(e.arg)
        if not (
            e.type == rt.IRQ_IN and e.small in TIMER_INTIDS and running and running.startswith(busy_prefix)
        ):
            continue
        before = running
        wake = switch = blocked = None
        for f in evs[i + 1 :]:
            if wake is None:
                if f.type == rt.WAKE and t.thread_name(f.arg) == periodic:
                    assert f.small == 1, f"{periodic} woken by {rt.BY.get(f.small)}, not its timeout"
                    wake = f
                elif f.type == rt.SWITCH:
                    break  # the interrupt woke someone else
            elif switch is None:
                if f.type == rt.SWITCH:
                    if t.thread_name(f.arg) != periodic:
                        break
                    switch = f
            elif f.type == rt.SWITCH:
                blocked = f
                break
        if wake and switch and blocked:
            assert switch.small == 0, "the busy thread was preempted, not blocked"
            assert blocked.small == 1, f"{periodic} left the CPU {rt.LEFT.get(blocked.small)}, not blocked"
            found.append(Preemption(e.ts, wake.ts, switch.ts, before, blocked.ts))
    return found


def check_trace(t: rt.Trace, periodic: str, busy_prefix: str, at_least: int) -> list[Preemption]:
    ts = [e.ts for e in t.events]
    assert ts == sorted(ts), "events out of time order"
    got = preemptions(t, periodic, busy_prefix)
    assert len(got) >= at_least, (
        f"{len(got)} preemptions of {busy_prefix}* by {periodic} in the trace, expected {at_least}:\n"
        + "\n".join(rt.listing(t, t.events[-60:]))
    )
    for p in got:
        assert p.irq_ts <= p.wake_ts <= p.switch_ts < p.blocked_ts
        # Plausible: the interrupt's handler wakes the thread within microseconds and it runs at once.
        assert t.ns(p.switch_ts - p.irq_ts) < 20_000, (
            f"{t.ns(p.switch_ts - p.irq_ts):.0f} ns from IRQ to switch"
        )
    # Wake-ups of the periodic thread a whole number of periods apart (in a partition, while Linux boots
    # on the other vCPU, QEMU's icount round-robin makes it miss some: docs/tracing.md), most one apart.
    wakes = [
        e.ts for e in t.events if e.type == rt.WAKE and t.thread_name(e.arg) == periodic and e.small == 1
    ]
    gaps = [t.ns(b - a) / 1000 for a, b in zip(wakes, wakes[1:], strict=False)]
    assert gaps, "fewer than two wake-ups of the periodic thread"
    off = [g for g in gaps if round(g / PERIOD_US) < 1 or abs(g - round(g / PERIOD_US) * PERIOD_US) > 50]
    assert not off, f"wake-ups not whole periods apart (us): {off[:5]}"
    assert sum(1 for g in gaps if round(g / PERIOD_US) == 1) > len(gaps) / 2, "most wake-ups a period apart"
    return got


def load_outputs(prefix: Path, result: CliResult) -> rt.Trace:
    assert result.returncode == 0, f"./rtmux trace failed{result.describe()}"
    for suffix in (".bin", ".json"):
        assert prefix.with_suffix(suffix).is_file(), f"no {suffix} file{result.describe()}"
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert any(e.get("ph") == "X" for e in doc["traceEvents"]), "no slice in the trace-event file"
    return rt.parse(prefix.with_suffix(".bin").read_bytes())


def test_trace_bare_shows_the_sampler_preempting_the_load(run_rtmux: RunRtmux, tmp_path: Path) -> None:
    prefix = tmp_path / "bare"
    result = run_rtmux(
        "trace", "--rtos", "latency", "--icount", "--bootargs", "samples=2000 period_us=1000 load=1",
        "--seconds", "300", "-o", str(prefix), timeout=300,
    )  # fmt: skip
    assert "read after the guest stopped" in result.stderr, result.describe()
    t = load_outputs(prefix, result)
    assert prefix.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert t.wrapped, "a load run of 2 s fills the ring"
    got = check_trace(t, "latmon-sample", "load-busy", at_least=20)
    assert {p.preempted for p in got} >= {"load-busy"}
    # The load's own interrupt wakes its worker from the handler: the cause says so.
    assert any(e.type == rt.WAKE and t.thread_name(e.arg) == "load-worker" and e.small == 3 for e in t.events)


def test_trace_in_partition_reads_the_ring_through_the_placement(run_rtmux: RunRtmux, tmp_path: Path) -> None:
    prefix = tmp_path / "system"
    result = run_rtmux(
        "trace", str(CONFIG), "--icount", "--bootargs", "latmon=1 period_us=1000 busy_pct=50",
        "--seconds", "6", "-o", str(prefix), "--no-picture", timeout=400,
    )  # fmt: skip
    t = load_outputs(prefix, result)
    assert t.recording
    names = {n for n, _ in t.names.values()}
    assert {"latmon-sample", "busy", "idle"} <= names, names
    check_trace(t, "latmon-sample", "busy", at_least=3)


def test_trace_refuses_more_events_than_the_ring(run_rtmux: RunRtmux, tmp_path: Path) -> None:
    result = run_rtmux(
        "trace", "--rtos", "latency", "--events", "100000", "-o", str(tmp_path / "x"), timeout=60
    )
    assert result.returncode == 2, result.describe()
    assert "the ring holds 1 to 8192 events" in result.stderr, result.describe()


def test_trace_names_the_partitions_it_can_trace(run_rtmux: RunRtmux, tmp_path: Path) -> None:
    result = run_rtmux("trace", str(CONFIG), "--partition", "linux", "-o", str(tmp_path / "x"), timeout=60)
    assert result.returncode == 2, result.describe()
    assert "no rtos partition 'linux' (rtos partitions: rtos)" in result.stderr, result.describe()
