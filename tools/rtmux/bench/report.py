"""What `./rtmux bench` writes: its section of BENCHMARKS.md, the CSV beside it and the figures.

Files, for the Markdown file OUT (BENCHMARKS.md by default) and MODE icount or realtime:
  OUT: the section between `<!-- bench-MODE:begin -->` and `<!-- bench-MODE:end -->` (created or
       replaced; the rest of the file is kept)
  <OUT's folder>/<OUT's stem>[-realtime].csv: one line per case
  <figures>/bench-{headline,latency,vbus,shared}[-realtime].png: the figures the section shows, each
       beside its table (relative links); <figures> is docs/img/ beside OUT, or the data folder's img/
       for a quick run into the repository's BENCHMARKS.md (figure_dir), which never replaces the
       committed pictures
The gnuplot histograms are written by the runs themselves (build/bench/MODE/*.dat). `redraw` draws the
headline figure again from OUT's CSV and section alone.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rtmux import paths, qemu
from rtmux.bench import linux_script, plot
from rtmux.bench.model import (
    CONTROL_ROWS,
    FILES_ROWS,
    MODE_ICOUNT,
    PARTITION_WARMUP,
    PERIOD_US,
    BenchResults,
    Determinism,
    Row,
    fmt_duration,
)
from rtmux.errors import RtmuxError
from rtmux.formats import cyclictest, latstats, rtmux_ping

# Targets of the benchmark issue (icount guest time).
TARGET_RTOS_MAX_US = 2.0
TARGET_NS_PER_SWITCH = 500.0
# Issue 27, "the rtos at the limit": the timer's interrupt to its thread (the idle row: nothing else
# runs), a switch between two FP/SIMD threads (ctxsw's default), the rtos under its own interrupt load
# against the same run's idle row.
TARGET_TIMER_TO_THREAD_US = 0.25
TARGET_NS_PER_SWITCH_LIMIT = 300.0
TARGET_RTOS_LOAD_VS_IDLE = 1.05
# Issue 29: the scheduler trace, recording, against the same case without it (its worst case).
TARGET_TRACE_VS_OFF = 1.05
# The POSIX layer over the native rtos calls, each measurement (issue 24).
TARGET_POSIX_RATIO = 1.1
TARGET_PARTITION_VS_BARE = 1.05
TARGET_PARTITION_VS_RT = 0.1
TARGET_LINUX_UNDER_RTMUX = 1.10
TARGET_VBUS_RTT_VS_PIPE = 1.5
TARGET_VBUS_RTT_US = 20.0
TARGET_VBUS_MBPS = 100.0
TARGET_VBUS_RTOS_VS_IDLE = 1.05
TARGET_SMP_RTOS_VS_1CPU = 1.05
TARGET_SHARED_RTOS_IRQ_ENTRIES = 0
# Linux's files from rtos threads (issue 25): the remote pread's round trip against the V-Bus echo's of
# the same run, the periodic thread's worst case beside remote I/O against its worst alone.
TARGET_FILES_PREAD_VS_VBUS = 1.5
TARGET_FILES_LATENCY_VS_ALONE = 1.05
# The reference for a remote pread's round trip (cRTOS, on a Xeon): a line of text, not a target.
CRTOS_PREAD_US = 27.7

CSV_FIELDS = (
    "mode", "case", "label", "system", "load", "samples", "min_us", "avg_us", "p99_us", "p99_9_us", "max_us",
    "overruns", "percentiles", "histogram", "rtos_el2_entries",
)  # fmt: skip
TARGET_RTOS_EL2_ENTRIES = 0


def markers(mode: str) -> tuple[str, str]:
    return f"<!-- bench-{mode}:begin -->", f"<!-- bench-{mode}:end -->"


def suffix(mode: str) -> str:
    return "" if mode == MODE_ICOUNT else f"-{mode}"


def csv_path(output: Path, mode: str) -> Path:
    return output.parent / f"{output.stem}{suffix(mode)}.csv"


def plot_path(output: Path, mode: str) -> Path:
    """The histogram figure's default place (docs/img/ beside `output`)."""
    return figure_path(output.parent / "docs" / "img", "histograms", mode)


# -------------------------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    name: str
    measured: str
    met: bool
    # A bound on one case's worst case, which the headline figure marks on that case's row: the case,
    # the bound in microseconds and a short name.
    case: str | None = None
    limit_us: float | None = None
    short: str = ""
    measured_here: bool = True  # False: what it compares with is not in this run ("not measured")


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("inf")


def _hackbench_target(r: BenchResults, under_id: str, bare_id: str, who: str, bare: str) -> list[Target]:
    """`who`'s hackbench (run `under_id`) within TARGET_LINUX_UNDER_RTMUX of `bare` (run `bare_id`), when
    both runs timed it."""
    u, b = _linux(r, under_id), _linux(r, bare_id)
    if not (u and b and u.hackbench_s and b.hackbench_s):
        return []
    ratio = _ratio(u.hackbench_s, b.hackbench_s)
    return [
        Target(
            f"{who}: `{linux_script.hackbench(r.hackbench_loops)}` within "
            f"{TARGET_LINUX_UNDER_RTMUX - 1:.0%} of {bare}",
            f"{u.hackbench_s:.3f} vs {b.hackbench_s:.3f} s = {ratio:.2f} x",
            ratio <= TARGET_LINUX_UNDER_RTMUX,
        )
    ]


def _boot_hackbench_rows(
    r: BenchResults, under: linux_script.LinuxResult, bare: linux_script.LinuxResult
) -> list[str]:
    """The table rows boot to shell and hackbench: bare, under rtmux, and their ratio."""
    lines = []
    hackbench = f"`{linux_script.hackbench(r.hackbench_loops)}` (guest s)"
    for name, a, b, fmt in (
        ("boot to shell (guest s, /proc/uptime)", under.boot_s, bare.boot_s, ".2f"),
        (hackbench, under.hackbench_s, bare.hackbench_s, ".3f"),
    ):
        ratio = f"{a / b:.2f}" if a is not None and b else "–"
        cells = ["–" if v is None else format(v, fmt) for v in (b, a)]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {ratio} |")
    return lines


def _partition_targets(r: BenchResults, part_id: str, on: str) -> list[Target]:
    """The rtos partition's worst under Linux's load against the bare rtos and PREEMPT_RT (row part_id;
    `on` names the board variant in the target's text)."""
    out: list[Target] = []
    part = r.row(part_id)
    if part is None:
        return out
    pmax = part.stats.max_us
    for row_id, what in (
        ("rtos-bare-idle", "idle: the same rtos work"),
        ("rtos-bare-load", "under its own load"),
    ):
        bare = r.row(row_id)
        kind = row_id.rsplit("-", 1)[-1]
        if bare is not None:
            ratio = _ratio(pmax, bare.stats.max_us)
            out.append(
                Target(
                    f"rtos in partition{on}, Linux load: max <= {TARGET_PARTITION_VS_BARE:g} x rtos bare max "
                    f"({what})",
                    f"{pmax:.3f} us = {ratio:.2f} x {bare.stats.max_us:.3f} us",
                    ratio <= TARGET_PARTITION_VS_BARE,
                    part_id,
                    TARGET_PARTITION_VS_BARE * bare.stats.max_us,
                    f"{TARGET_PARTITION_VS_BARE:g} x bare {'loaded' if kind == 'load' else 'idle'}",
                )
            )
    rt = r.row("linux-rt-load")
    if rt is not None:
        ratio = _ratio(pmax, rt.stats.max_us)
        out.append(
            Target(
                f"rtos in partition{on}, Linux load: max <= {TARGET_PARTITION_VS_RT:g} x PREEMPT_RT "
                "cyclictest max, same Linux load",
                f"{pmax:.3f} us = {ratio:.3f} x {rt.stats.max_us:.0f} us",
                ratio <= TARGET_PARTITION_VS_RT,
                part_id,
                TARGET_PARTITION_VS_RT * rt.stats.max_us,
                f"{TARGET_PARTITION_VS_RT:g} x PREEMPT_RT",
            )
        )
    return out


def targets(r: BenchResults) -> list[Target]:
    """Every target whose cases are in the results."""
    out: list[Target] = []
    f = latstats.fmt_value
    for row_id, what in (("rtos-bare-idle", "idle"), ("rtos-bare-load", "with its own load")):
        row = r.row(row_id)
        if row is not None:
            s = row.stats
            out.append(
                Target(
                    f"rtos bare metal max {what} <= {TARGET_RTOS_MAX_US:g} us",
                    f"{f(s, s.max_us)} us",
                    s.max_us <= TARGET_RTOS_MAX_US,
                    row_id,
                    TARGET_RTOS_MAX_US,
                    "",
                )
            )
    for on_id, off_id, what in (
        ("rtos-bare-trace-idle", "rtos-bare-idle", "idle"),
        ("rtos-bare-trace-load", "rtos-bare-load", "with its own load"),
    ):
        traced, plain = r.row(on_id), r.row(off_id)
        if traced is not None and plain is not None:
            a, b = traced.stats, plain.stats
            ratio = _ratio(a.max_us, b.max_us)
            out.append(
                Target(
                    f"rtos bare metal {what}: max, scheduler trace on <= {TARGET_TRACE_VS_OFF:g} x off",
                    f"{f(a, a.max_us)} vs {f(b, b.max_us)} us = {ratio:.2f} x",
                    ratio <= TARGET_TRACE_VS_OFF,
                )
            )
    for c in r.posix_cost:
        out.append(
            Target(
                f"POSIX {c.name} <= {TARGET_POSIX_RATIO:g} x native",
                f"x{c.ratio:.3f} ({c.posix_ns:.3f} / {c.native_ns:.3f} ns)",
                c.ratio <= TARGET_POSIX_RATIO,
            )
        )
    idle, load = r.row("rtos-bare-idle"), r.row("rtos-bare-load")
    if idle is not None:
        out.append(
            Target(
                f"rtos bare metal idle: timer interrupt to its thread <= {TARGET_TIMER_TO_THREAD_US:g} us",
                f"{f(idle.stats, idle.stats.max_us)} us",
                idle.stats.max_us <= TARGET_TIMER_TO_THREAD_US,
            )
        )
        if load is not None:
            ratio = _ratio(load.stats.max_us, idle.stats.max_us)
            lmax, imax = f(load.stats, load.stats.max_us), f(idle.stats, idle.stats.max_us)
            out.append(
                Target(
                    f"rtos bare metal, rtos load: max <= {TARGET_RTOS_LOAD_VS_IDLE:g} x idle max, same run",
                    f"{lmax} us = {ratio:.2f} x {imax} us",
                    ratio <= TARGET_RTOS_LOAD_VS_IDLE,
                )
            )
    if r.ctxsw is not None:
        per = r.ctxsw.ns_per_switch
        out.append(
            Target(
                f"rtos context switch <= {TARGET_NS_PER_SWITCH:g} ns",
                f"{per:.3f} ns",
                per <= TARGET_NS_PER_SWITCH,
            )
        )
        out.append(
            Target(
                f"rtos context switch, FP/SIMD in both threads, <= {TARGET_NS_PER_SWITCH_LIMIT:g} ns",
                f"{per:.3f} ns",
                per <= TARGET_NS_PER_SWITCH_LIMIT,
            )
        )
    for row_id, what in (
        ("rtos-rtmux-idle", "Linux idle"),
        ("rtos-rtmux-load", "Linux load"),
        ("rtos-rtmux-vbus", "V-Bus traffic"),
        ("rtos-rtmux-smp-load", "3-CPU Linux load"),
        ("rtos-rtmux-gicv2-load", "GICv2, Linux load"),
    ):
        row = r.row(row_id)
        if row is not None and row.el2_entries is not None:
            out.append(
                Target(
                    f"rtos in partition, {what}: EL2 entries of the rtos CPU while it measures "
                    f"= {TARGET_RTOS_EL2_ENTRIES}",
                    str(row.el2_entries),
                    row.el2_entries == TARGET_RTOS_EL2_ENTRIES,
                )
            )
    for part_id, on in (("rtos-rtmux-load", ""), ("rtos-rtmux-gicv2-load", " on GICv2")):
        out += _partition_targets(r, part_id, on)
    within = f"{TARGET_LINUX_UNDER_RTMUX - 1:.0%}"
    pairs = (
        ("linux-rtmux-idle", "linux-std-idle", "Linux under rtmux", "idle"),
        ("linux-rtmux-load", "linux-std-load", "Linux under rtmux", "Linux load"),
        ("linux-rtmux-gicv2-load", "linux-std-load", "Linux under rtmux on GICv2", "Linux load"),
        ("linux-rtmux0-load", "linux-std-load", "Linux under rtmux on CPU 0 (artifact check)", "Linux load"),
    )
    for under_id, bare_id, who, what in pairs:
        under, bare = r.row(under_id), r.row(bare_id)
        if under is None or bare is None:
            continue
        for stat, name in (("avg_us", "avg"), ("max_us", "max")):
            a, b = getattr(under.stats, stat), getattr(bare.stats, stat)
            ratio = _ratio(a, b)
            avg = name == "avg"
            out.append(
                Target(
                    f"{who}: cyclictest {name}, {what}, within {within} of bare",
                    f"{f(under.stats, a, average=avg)} vs {f(bare.stats, b, average=avg)} us = {ratio:.2f} x",
                    ratio <= TARGET_LINUX_UNDER_RTMUX,
                    *(
                        (under_id, TARGET_LINUX_UNDER_RTMUX * b, f"{TARGET_LINUX_UNDER_RTMUX:g} x bare")
                        if name == "max"
                        else ()
                    ),
                )  # fmt: skip
            )
    out += _hackbench_target(r, "rtmux-linux", "linux-std", "Linux under rtmux", "bare")
    out += _vbus_targets(r)
    out += _files_targets(r)
    out += _smp_targets(r)
    out += _shared_targets(r)
    return out


def _shared_targets(r: BenchResults) -> list[Target]:
    """Shared-core mode (configs/qemu-virt-1cpu.toml, -smp 1)."""
    out = []
    f = latstats.fmt_value
    for run_id, what in (("rtmux-shared-idle", "Linux idle"), ("rtmux-shared-loaded", "Linux load")):
        res = _linux(r, run_id)
        if res is not None and res.rtos_el2_by_cause:
            irq = res.rtos_el2_by_cause.get("irq", 0)
            out.append(
                Target(
                    f"rtos sharing its CPU with Linux, {what}: its interrupts taken through EL2 while it "
                    f"measures = {TARGET_SHARED_RTOS_IRQ_ENTRIES}",
                    str(irq),
                    irq == TARGET_SHARED_RTOS_IRQ_ENTRIES,
                )
            )
    load = r.row("rtos-shared-load")
    if load is not None:
        s = load.stats
        out.append(
            Target(
                f"rtos sharing its CPU with Linux, Linux load: max <= {TARGET_RTOS_MAX_US:g} us",
                f"{f(s, s.max_us)} us",
                s.max_us <= TARGET_RTOS_MAX_US,
                "rtos-shared-load",
                TARGET_RTOS_MAX_US,
                "",
            )
        )
        rt = r.row("linux-rt-load")
        if rt is not None:
            ratio = _ratio(s.max_us, rt.stats.max_us)
            out.append(
                Target(
                    f"rtos sharing its CPU with Linux, Linux load: max <= {TARGET_PARTITION_VS_RT:g} x "
                    "PREEMPT_RT cyclictest max (-smp 1, same Linux load)",
                    f"{s.max_us:.3f} us = {ratio:.3f} x {rt.stats.max_us:.0f} us",
                    ratio <= TARGET_PARTITION_VS_RT,
                    "rtos-shared-load",
                    TARGET_PARTITION_VS_RT * rt.stats.max_us,
                    f"{TARGET_PARTITION_VS_RT:g} x PREEMPT_RT",
                )
            )
    out += _hackbench_target(
        r,
        "rtmux-shared-hackbench",
        "linux-std",
        "Linux on the CPU it shares with an idle rtos",
        "bare -smp 1",
    )
    return out


def _shared_table(r: BenchResults) -> list[str]:
    runs = [(what, _linux(r, f"rtmux-shared-{what}")) for what in ("idle", "loaded")]
    found = [(what, res) for what, res in runs if res is not None and res.share is not None]
    lines: list[str] = []
    if found:
        lines += [
            "Shared-core mode (configs/qemu-virt-1cpu.toml, `-smp 1`): the rtos partition measuring on",
            "the CPU it shares with Linux; the hypervisor's books of that CPU over the whole boot",
            "(`rtmux: share` report at the rtos's stop; a switch's cost runs from the hypervisor's entry",
            "to the new world's state loaded, in counter ticks of 16 ns), and the rtos CPU's EL2 entries",
            "while it measured (`wfi`: its idle thread handing the CPU to Linux; `irq`: its interrupts",
            "through EL2):",
            "",
            "| Linux | switch to Linux (ns) | switch to the rtos (ns) | switches each way | rtos / Linux / "
            "neither (guest ms) | rtos EL2 entries: wfi, irq |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for what, res in found:
            assert res is not None and res.share is not None
            c, e = res.share.counts, res.rtos_el2_by_cause
            lines.append(
                f"| {what} | {c['switch_ns_to_linux']} | {c['switch_ns_to_rtos']} | {c['to_linux']} / "
                f"{c['to_rtos']} | {c['rtos_ms']} / {c['linux_ms']} / {c['idle_ms']} | "
                f"{e.get('wfi', 0)}, {e.get('irq', 0)} |"
            )
    shared, bare = _linux(r, "rtmux-shared-hackbench"), _linux(r, "linux-std")
    if shared is not None and bare is not None:
        lines += [
            *([""] if lines else []),
            "Linux on the CPU it shares with an idle rtos (the latency app waking once a second) against the",
            "same kernel bare (`-smp 1`), guest time:",
            "",
            "| Linux, 1 CPU | std bare | std sharing the rtos's CPU | shared / bare |",
            "|---|---:|---:|---:|",
        ]
        lines += _boot_hackbench_rows(r, shared, bare)
    return lines


def _smp_targets(r: BenchResults) -> list[Target]:
    out = _hackbench_target(r, "rtmux-smp", "linux-std-smp3", "Linux on 3 CPUs under rtmux", "bare -smp 3")
    smp, one = r.row("rtos-rtmux-smp-load"), r.row("rtos-rtmux-load")
    if smp is not None and one is not None:
        ratio = _ratio(smp.stats.max_us, one.stats.max_us)
        out.append(
            Target(
                f"rtos in partition, 3-CPU Linux load: max <= {TARGET_SMP_RTOS_VS_1CPU:g} x its max with a "
                "1-CPU Linux load",
                f"{smp.stats.max_us:.3f} us = {ratio:.2f} x {one.stats.max_us:.3f} us",
                ratio <= TARGET_SMP_RTOS_VS_1CPU,
            )
        )
    return out


def _smp_table(r: BenchResults) -> list[str]:
    under, bare = _linux(r, "rtmux-smp"), _linux(r, "linux-std-smp3")
    if under is None or bare is None:
        return []
    lines = [
        "Linux on three CPUs, bare (`-smp 3`) and as the rtmux partition on CPUs 1-3 of `-smp 4`",
        "(configs/qemu-virt-4cpu.toml, the rtos partition measuring on CPU 0), guest time:",
        "",
        "| Linux, 3 CPUs | std bare (-smp 3) | std under rtmux (CPUs 1-3) | rtmux / bare |",
        "|---|---:|---:|---:|",
        f"| CPUs Linux counted | {bare.cpus} | {under.cpus} | |",
    ]
    return lines + _boot_hackbench_rows(r, under, bare)


def _vbus_targets(r: BenchResults) -> list[Target]:
    res = _linux(r, "rtmux-vbus")
    if res is None or res.vbus is None:
        return _vbus_rtos_target(r)
    v = res.vbus
    ratio = _ratio(v.rtt.avg_us, v.pipe_rtt.avg_us)
    return [
        Target(
            f"V-Bus round trip avg <= {TARGET_VBUS_RTT_VS_PIPE:g} x the pipe reference, same run",
            f"{v.rtt.avg_us:.1f} vs {v.pipe_rtt.avg_us:.1f} us = {ratio:.2f} x",
            ratio <= TARGET_VBUS_RTT_VS_PIPE,
        ),
        Target(
            f"V-Bus round trip avg <= {TARGET_VBUS_RTT_US:g} us",
            f"{v.rtt.avg_us:.1f} us",
            v.rtt.avg_us <= TARGET_VBUS_RTT_US,
        ),
        Target(
            f"V-Bus throughput >= {TARGET_VBUS_MBPS:g} MB/s each way (4 KiB writes)",
            f"{v.bulk.tx_mbps:.1f} / {v.bulk.rx_mbps:.1f} MB/s (pipe {v.pipe_bulk.tx_mbps:.1f} / "
            f"{v.pipe_bulk.rx_mbps:.1f})",
            min(v.bulk.tx_mbps, v.bulk.rx_mbps) >= TARGET_VBUS_MBPS,
        ),
        *_vbus_rtos_target(r),
    ]


def _vbus_rtos_target(r: BenchResults) -> list[Target]:
    """The rtos partition's worst case under V-Bus traffic against its worst without (its rows only)."""
    out = []
    traffic, idle = r.row("rtos-rtmux-vbus"), r.row("rtos-rtmux-idle")
    if traffic is not None and idle is not None:
        ratio = _ratio(traffic.stats.max_us, idle.stats.max_us)
        out.append(
            Target(
                f"rtos in partition, V-Bus traffic: max <= {TARGET_VBUS_RTOS_VS_IDLE:g} x its max without "
                "(Linux idle)",
                f"{traffic.stats.max_us:.3f} us = {ratio:.2f} x {idle.stats.max_us:.3f} us",
                ratio <= TARGET_VBUS_RTOS_VS_IDLE,
                "rtos-rtmux-vbus",
                TARGET_VBUS_RTOS_VS_IDLE * idle.stats.max_us,
                f"{TARGET_VBUS_RTOS_VS_IDLE:g} x no traffic",
            )
        )
    return out


def _vbus_table(r: BenchResults) -> list[str]:
    res = _linux(r, "rtmux-vbus")
    if res is None or res.vbus is None:
        return []
    v = res.vbus
    plan = linux_script.VbusPlan(v.rtt.n, 0)
    lines = [
        _para(f"""
            V-Bus, Linux program to rtos thread and back (`rtmux-ping`, guest time), against the same
            program through a pipe pair to a second Linux process (the floor for any Linux program talking
            to anything), in the same boot: {v.rtt.n} round trips of {linux_script.VBUS_MESSAGE_SIZE} B
            (`{plan.commands()["vbus_rtt"]}`), and throughput with 4 KiB writes each way at once:"""),
        "",
        "| | rtt min | rtt avg | rtt p99 | rtt max (us) | tx MB/s | rx MB/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rtt, bulk in (("V-Bus (`echo`)", v.rtt, v.bulk), ("pipe pair", v.pipe_rtt, v.pipe_bulk)):
        lines.append(
            f"| {name} | {rtt.min_us:.1f} | {rtt.avg_us:.1f} | {rtt.p99_us:.1f} | {rtt.max_us:.1f} "
            f"| {bulk.tx_mbps:.1f} | {bulk.rx_mbps:.1f} |"
        )
    return lines


def _files_targets(r: BenchResults) -> list[Target]:
    """Linux's files from an rtos thread (the case rtmux-files)."""
    res = _linux(r, "rtmux-files")
    files = None if res is None else getattr(res, "files", None)
    if res is None or files is None:
        return []
    out = []
    pread = files.rtos.pread.avg_ns / 1000
    name = (
        f"Linux's files: remote pread of 64 B, avg <= {TARGET_FILES_PREAD_VS_VBUS:g} x the V-Bus echo "
        "round trip avg, same run"
    )
    vbus = _linux(r, "rtmux-vbus")
    if vbus is not None and vbus.vbus is not None:
        echo = vbus.vbus.rtt.avg_us
        ratio = _ratio(pread, echo)
        out.append(
            Target(name, f"{pread:.1f} vs {echo:.1f} us = {ratio:.2f} x", ratio <= TARGET_FILES_PREAD_VS_VBUS)
        )
    else:
        out.append(Target(name, f"{pread:.1f} us; the V-Bus case did not run", False, measured_here=False))
    alone, busy, beside = (files.rtos.latency[k] for k in ("alone", "linux_busy", "remote_io"))
    ratio = _ratio(beside.max_ns, alone.max_ns)
    out.append(
        Target(
            f"Linux's files: 1 kHz POSIX thread's max beside a thread on remote preads <= "
            f"{TARGET_FILES_LATENCY_VS_ALONE:g} x its max alone, same boot",
            f"{beside.max_ns / 1000:.3f} us = {ratio:.2f} x {alone.max_ns / 1000:.3f} us",
            ratio <= TARGET_FILES_LATENCY_VS_ALONE,
        )
    )
    # Against the fair baseline, p99.9s: in icount a lone sample of either run may wait for the busy
    # vCPU beside the rtos's, by tens of microseconds (FILES_TEXT), which the maxima would compare.
    ratio = _ratio(beside.p999_ns, busy.p999_ns)
    out.append(
        Target(
            f"Linux's files: 1 kHz POSIX thread's p99.9 beside a thread on remote preads <= "
            f"{TARGET_FILES_LATENCY_VS_ALONE:g} x its p99.9 alone beside a busy Linux (no remote I/O), "
            "same boot",
            f"{beside.p999_ns / 1000:.3f} us = {ratio:.2f} x {busy.p999_ns / 1000:.3f} us",
            ratio <= TARGET_FILES_LATENCY_VS_ALONE,
        )
    )
    if res.rtos_el2 is not None:
        out.append(
            Target(
                "Linux's files: EL2 entries of the rtos CPU from 4 ms after boot to the program's exit "
                f"(its wait for Linux, remote calls, the latency runs) = {TARGET_RTOS_EL2_ENTRIES}",
                str(res.rtos_el2),
                res.rtos_el2 == TARGET_RTOS_EL2_ENTRIES,
            )
        )
    return out


FILES_TEXT = """
Linux's files from an rtos thread (issue 25): `rtos/linuxsvc/bench/remote.c`, a POSIX program built with
the rtos SDK, as the rtos partition of the default system (its `/srv/rtos` exported to the rtos, served
by Debian's `diod` over the V-Bus channel `rtmux-files`). Linux's boot-time script writes the 4 KiB file
it reads and tells it to start; the program then measures, one after the other: {n} remote `pread`s of
64 B (after 100 not counted), each from the call to its return, one 9P round trip; 4 MiB of remote
`write`s of 8 KiB and an `fsync`; a 1 kHz SCHED_FIFO thread's lateness ({n} periods of
`clock_nanosleep(TIMER_ABSTIME)`, measured as the control loop's) alone with Linux idle, alone while
Linux keeps its CPU busy (its script reads the same file locally in a loop and the V-Bus's counters'
port, which the hypervisor serves on Linux's CPU: the remote-I/O run's Linux without the rtos's remote
I/O), then while a less urgent thread loops on 8 KiB remote `pread`s. Then Linux's script times a local
`dd` of the same writes to the same file. Guest time; percentiles nearest-rank and exact (the program
keeps every sample; the latency table marks them `≤` as the other rtos rows)."""


def _files_table(r: BenchResults) -> list[str]:
    res = _linux(r, "rtmux-files")
    files = None if res is None else getattr(res, "files", None)
    if res is None or files is None:
        return []
    p, w, dd = files.rtos.pread, files.rtos.write, files.dd
    us = "{:.1f}".format
    lines = [
        "### Linux's files from an rtos thread",
        "",
        _para(FILES_TEXT.format(n=p.samples)),
        "",
        "| round trip (us) | min | avg | p99 | max |",
        "|---|---:|---:|---:|---:|",
        f"| remote `pread` of 64 B: rtos thread to Linux's `diod` and back ({p.samples} calls) "
        f"| {us(p.min_ns / 1000)} | {us(p.avg_ns / 1000)} | {us(p.p99_ns / 1000)} | {us(p.max_ns / 1000)} |",
    ]
    vbus = _linux(r, "rtmux-vbus")
    if vbus is not None and vbus.vbus is not None:
        e = vbus.vbus.rtt
        lines.append(
            f"| V-Bus echo of 64 B, same run: Linux program to rtos thread and back ({e.n} round trips, "
            f"above) | {us(e.min_us)} | {us(e.avg_us)} | {us(e.p99_us)} | {us(e.max_us)} |"
        )
    dd_cmd = linux_script.files_dd(linux_script.FILES_DD_COUNT)
    lines += [
        "",
        _para(f"""
            Reference, not a target: issue 25 quotes cRTOS's {CRTOS_PREAD_US:g} us on a Xeon; real
            hardware, where these figures are QEMU guest time, so it bounds nothing here."""),
        "",
        "| 4 MiB in 8 KiB writes, then `fsync` | time (ms) | MB/s |",
        "|---|---:|---:|",
        f"| rtos thread, remote (`write`, `fsync`; open and close not timed) | {w.ns / 1e6:.3f} "
        f"| {w.mbps:.1f} |",
        f"| Linux, local: `{dd_cmd}` (its start, open, sync and close subtracted: a dd of no block took "
        f"{files.dd_empty_ns / 1e6:.3f} ms) | {dd.ns / 1e6:.3f} | {dd.mbps:.1f} |",
        "",
        f"The rtos's remote writes reach {_ratio(w.mbps, dd.mbps):.2f} x Linux's local rate.",
        "",
        *table_rows(r, files=True),
        "",
        _para(f"""
            The EL2 entries of these rows are one count: the rtos CPU's, from the hypervisor's report 4 ms
            after the boot to the program's exit (its wait for Linux, every remote call and the three
            latency runs). Linux's rounds of its load while the rtos asked for it:
            {files.busy_rounds}; the other thread's remote preads during the last run:
            {files.rtos.latency["remote_io"].reads}. In QEMU's icount mode a busy vCPU delays the rtos
            CPU's timer interrupt by itself (the round-robin of vCPUs: BENCHMARKS.md, "The rtos beside a
            busy vCPU"), so the Linux-busy run is the remote-I/O run's fair baseline; its target compares
            p99.9s, because a lone sample of either run can wait tens of microseconds for the busy vCPU
            (the Linux-busy run, where the rtos runs nothing but the measuring thread, once had one of
            26 us in 10,000)."""),
    ]
    return lines


def _linux(r: BenchResults, run_id: str) -> linux_script.LinuxResult | None:
    return r.linux.get(run_id)


def verdict(met: bool, measured_here: bool = True) -> str:
    if not measured_here:
        return "not measured"
    return "met" if met else "**missed**"


# ------------------------------------------------------------------------------------------------ CSV


def render_csv(r: BenchResults) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for row in r.rows:
        s = row.stats
        f = latstats.fmt_value
        w.writerow([
            r.mode, row.id, row.label, row.system, int(row.load), s.samples, f(s, s.min_us),
            f(s, s.avg_us, average=True), f(s, s.p99_us), f(s, s.p999_us), f(s, s.max_us),
            "" if s.overruns is None else s.overruns,
            "upper bound" if latstats.is_bound(s, s.p99_us) or latstats.is_bound(s, s.p999_us) else "exact",
            paths.display(row.data_file), "" if row.el2_entries is None else row.el2_entries,
        ])  # fmt: skip
    return buf.getvalue()


def read_csv(text: str) -> list[dict[str, str]]:
    """The CSV's lines as dictionaries (for tests and tools reading the results back)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and tuple(rows[0].keys()) != CSV_FIELDS:
        raise RtmuxError(f"unexpected CSV columns {tuple(rows[0].keys())}")
    return rows


# ------------------------------------------------------------------------------------------- Markdown


def table_rows(r: BenchResults, control: bool = False, files: bool = False) -> list[str]:
    """The latency table: every row but the POSIX control loop's and the Linux's-files case's, or
    (`control`, `files`) those only."""
    lines = [
        "| case | min | avg | p99 | p99.9 | max | overruns | EL2 entries | samples |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    f, p = latstats.fmt_value, latstats.fmt_percentile
    for row in r.rows:
        if (row.id in CONTROL_ROWS) != control or (row.id in FILES_ROWS) != files:
            continue
        s = row.stats
        overruns = "–" if s.overruns is None else str(s.overruns)
        el2 = "–" if row.el2_entries is None else str(row.el2_entries)
        lines.append(
            f"| {row.label} | {f(s, s.min_us)} | {f(s, s.avg_us, average=True)} | {p(s, s.p99_us)} "
            f"| {p(s, s.p999_us)} | {f(s, s.max_us)} | {overruns} | {el2} | {s.samples} |"
        )
    return lines


CONTROL_TEXT = """
The same C file, `examples/control-loop/control_loop.c` (C11 and POSIX.1-2008 only: a SCHED_FIFO thread
waking at absolute deadlines of `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` every {period} us, a
priority-inheritance mutex shared with a lower-priority logger thread fed through a message queue),
built with the rtos SDK (picolibc) and with Debian's aarch64 gcc and glibc (static, in the initramfs), on
each system. Lateness of each wake-up as the program itself measures it (`clock_gettime(CLOCK_MONOTONIC)`
right after it, minus the deadline; microseconds to the nanosecond, percentiles from its 0.1-us
histogram, the upper edge of their cell). The rtos partition runs it from the system's boot, {warmup}
periods longer than the other cases (as the latency app's partition rows), so its figures include
Linux's boot, about the first second, before the load starts; PREEMPT_RT runs it after its loaded
cyclictest, the load still running (`{command}`)."""


def _control_table(r: BenchResults) -> list[str]:
    rows = {row.id: row for row in r.rows if row.id in CONTROL_ROWS}
    if not rows:
        return []
    lines = [
        "### Same source, two systems: a POSIX control loop",
        "",
        _para(
            CONTROL_TEXT.format(
                period=PERIOD_US,
                warmup=PARTITION_WARMUP,
                command=linux_script.control_command(r.samples),
            )
        ),
        "",
        *table_rows(r, control=True),
    ]
    bare, part, rt = (rows.get(k) for k in CONTROL_ROWS)
    if part is not None and rt is not None:
        f = latstats.fmt_value
        ps, rs = part.stats, rt.stats
        lines += [
            "",
            _para(f"""
                What it shows: the same source, unchanged, wakes up at worst {f(ps, ps.max_us)} us late
                in the rtos partition while Linux runs the load beside it (EL2 entries of its CPU:
                {part.el2_entries if part.el2_entries is not None else "–"}), and
                {f(rs, rs.max_us)} us late on PREEMPT_RT under that same load
                ({_ratio(rs.max_us, ps.max_us):.0f} x; p99.9 {latstats.fmt_percentile(ps, ps.p999_us)}
                against {latstats.fmt_percentile(rs, rs.p999_us)} us)""")
            + (
                f"; on the bare rtos its worst is {f(bare.stats, bare.stats.max_us)} us."
                if bare is not None
                else "."
            ),
        ]
    return lines


def _linux_table(r: BenchResults) -> list[str]:
    cols = [("linux-std", "std bare (-smp 1)"), ("linux-rt", "PREEMPT_RT bare (-smp 1)"),
            ("rtmux-linux", "std under rtmux")]  # fmt: skip
    present = [(k, t) for k, t in cols if k in r.linux]
    if not present:
        return []
    lines = [
        "| Linux | " + " | ".join(t for _, t in present) + " | rtmux / std bare |",
        "|---|" + "---:|" * (len(present) + 1),
    ]

    def line(name: str, get: object, fmt: str) -> None:
        vals = {k: get(r.linux[k]) for k, _ in present}  # type: ignore[operator]
        cells = ["–" if vals[k] is None else format(vals[k], fmt) for k, _ in present]
        a, b = vals.get("rtmux-linux"), vals.get("linux-std")
        ratio = f"{a / b:.2f}" if a is not None and b else "–"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")

    lines.append("| `uname -r` | " + " | ".join(f"`{r.linux[k].kernel}`" for k, _ in present) + " | |")
    line("boot to shell (guest s, /proc/uptime)", lambda x: x.boot_s, ".2f")
    line(f"`{linux_script.hackbench(r.hackbench_loops)}` (guest s)", lambda x: x.hackbench_s, ".3f")
    return lines


def _partition_note(r: BenchResults) -> str:
    res = _linux(r, "rtmux-loaded")
    idle = _linux(r, "rtmux-rtos-idle")
    if res is None or res.load_start_s is None:
        return ""
    total = r.partition_samples
    loaded = max(0, total - round(res.load_start_s * 1e6 / PERIOD_US))
    shell = f"{idle.boot_s:.2f} s" if idle is not None else "?"
    text = _para(f"""
        The rtos partition samples from the moment the system boots: {total} samples, {PARTITION_WARMUP} more
        than the other cases, because Linux boots during the first second (its shell was ready at {shell} of
        guest time in the idle run) and only then starts the load ({res.load_start_s:.2f} s in the loaded
        run), so that about {loaded} of the loaded run's samples were taken under the Linux load.""")
    if loaded < r.samples:
        text += f" **That is fewer than {r.samples}: the load started late.**"
    return text


def _para(text: str) -> str:
    """A paragraph written over several source lines, as one line."""
    return " ".join(text.split())


HOW_RTOS = """
- **rtos bare metal**: `build/rtos/latency.img` alone; a thread at the top priority (255) released every
  period by the tickless timer; latency = counter read by the woken thread - release point (interrupt
  entry, handler, scheduler and context switch, like latmus in user mode). QEMU's counter ticks every
  16 ns. Its load: three round-robin FPU-busy threads at the lowest priority and the EL1 physical timer
  interrupting every 47 us, waking a priority-100 worker that does ~20 us of FP work each time.
- **rtos in rtmux partition**: the system of `configs/qemu-virt.toml` (the rtos partition on CPU 0 takes
  its interrupts directly, the Linux partition is on CPU 1) with the rtos partition booting the same
  latency app. **EL2 entries** of its CPU while it measures: the hypervisor's count in its report at
  its first console tick (4 ms after boot, printed in the measurement mode of `--seed`; the rtos has
  finished its initialisation, whose distributor set-up traps 3 times) subtracted from its report when
  the rtos partition stops (its PSCI SYSTEM_OFF after its last sample, which is not counted).
- **rtos in rtmux partition, V-Bus traffic**: the same with the latency app also serving the channel
  `echo` (`echo=1`: a priority-30 thread receiving and sending back every byte); Linux, once at its
  shell, measures the V-Bus round trips and throughput of the table below, then keeps `rtmux-ping echo
  --bulk` running until the rtos partition's last sample. That partition samples longer than the
  others by the time the measurements take, so that the usual sample count falls under traffic; its
  max is compared with the Linux-idle row's."""

HOW_LINUX = """
  (one SCHED_FIFO 98 thread pinned to CPU 0, `clock_nanosleep`, memory locked). Bare rows: Debian's
  kernels under `./rtmux linux run --smp 1`; under rtmux: the standard kernel as the Linux partition (one
  CPU, which Linux calls CPU 0). A bare boot measures idle, then starts the load and measures again;
  under rtmux the loaded cyclictest shares the boot of the rtos partition's loaded case, and the idle one
  has its own boot (the rtos partition runs the latency app in every rtmux boot, without end in that one).
- **Percentiles** (nearest rank) come from 1-us histograms: for cyclictest the value is exact (whole
  microseconds, rounded down, as cyclictest reports them); for the rtos, which measures to the nanosecond
  but counts in 1-us cells, it is the upper edge of the cell that holds it, or the max when lower, shown
  `≤`: with every sample below 1 us, p99 and p99.9 can only be said to be at most the max. A percentile
  above cyclictest's histogram range is shown as the max."""

HOW_ICOUNT = """
- **Determinism**: every run repeats exactly, but for one race of QEMU 7.2's own: on a busy host, the
  clock warp to the next timer while the vCPU idles can overshoot by a few instructions, so a sample
  now and then reads one counter tick (16 ns) more ("Determinism: QEMU's clock warp", below). Linux
  boots in the measurement mode of `--seed` (`./rtmux run --seed` / `./rtmux linux run --seed`: fixed
  rng-seed and kaslr-seed that the hypervisor keeps, QEMU's `-seed` and an RTC that follows guest time,
  no network device, whose answers come from the host), and its script is started by its init at boot
  (`--linux-script`, kernel argument `rtmux.run=`), not typed from the host. Measurement only: every
  such boot has the same KASLR offset.
- **icount round-robin artifact**: with several vCPUs QEMU runs them in turns in one host thread, so an
  interrupt for one vCPU can wait for the other's slice. The bare rows use one vCPU. In the rtmux rows the
  rtos is on CPU 0, measured free of it ("The rtos beside a busy vCPU", below); the Linux partition is
  on CPU 1, so its rows are checked with the measured work moved to CPU 0: the row "on CPU 0 (artifact
  check)" runs the loaded Linux case on the same system with the two partitions' CPUs exchanged (the
  rtos sampling on CPU 1; not in quick runs). Where the two placements disagree, the CPU-0 row is the
  hypervisor's cost."""

MODE_ICOUNT_TEXT = """
Figures are guest time under emulation, not hardware figures. The bare rows use one vCPU (`-smp 1`), free
of QEMU's icount round-robin artifact (below, "The rtos beside a busy vCPU"); the rtmux rows run on `-smp 2`
with the rtos on CPU 0 (the artifact-free CPU) and Linux on CPU 1 (see the notes below)."""

MODE_REALTIME_TEXT = """
**Host-noise-dominated:** QEMU's emulation speed, the host's scheduler and the other processes on the host
decide these figures; they change from run to run and say nothing reliable about the guests. Only the
icount section is a benchmark."""

CTXSW_TEXT = """
rtos context switch (semaphore ping-pong between two threads of equal priority; each switch includes one
rt_sem_give, one blocking rt_sem_take and the full register switch with FP/SIMD state):"""


POSIX_COST_TEXT = """
The POSIX layer's cost (rtos/posix/bench/cost.c, bare, one boot): the same work through POSIX and
through the native rtos calls, timed with the same clock; averages in ns, the worst cases where the
program measures them one by one."""


HYPCOST_TEXT = """
What the hypervisor costs Linux (issue 27): tests/guests/hypcost/, a bare-metal guest, times each path
that traps to the hypervisor, many iterations between two reads of the counter, bare on QEMU (-smp 2,
no EL2) and as the Linux partition of tests/system/configs/hypcost.toml (CPUs 1-2, the rtos demo on CPU
0); ns per iteration, the difference is the hypervisor's. In icount mode 1 ns is 1 instruction, the
rtos's on CPU 0 included while it runs (its 1 kHz demo). The ping-pong runs on two vCPUs, each waiting
in WFI: under icount's round-robin the time is both CPUs' instructions."""


def _hypcost_table(r: BenchResults) -> list[str]:
    lines = [_para(HYPCOST_TEXT), ""]
    lines += ["| path | bare (ns) | under rtmux (ns) | hypervisor (ns) |", "|---|---:|---:|---:|"]
    for c in r.hypcost:
        lines.append(f"| {c.what} | {c.bare_ns:.3f} | {c.rtmux_ns:.3f} | {c.cost_ns:.3f} |")
    return lines


def _posix_cost_table(r: BenchResults) -> list[str]:
    lines = [_para(POSIX_COST_TEXT), ""]
    lines += ["| work | native (ns) | POSIX (ns) | ratio | worst native / POSIX (ns) |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for c in r.posix_cost:
        worst = f"{c.native_max_ns} / {c.posix_max_ns}" if c.native_max_ns is not None else "-"
        lines.append(f"| {c.what} | {c.native_ns:.3f} | {c.posix_ns:.3f} | {c.ratio:.3f} | {worst} |")
    return lines


def _figure_link(figures: Mapping[str, Path] | None, key: str, output: Path) -> list[str]:
    """The Markdown image of figure `key` (relative to `output`'s folder) and a blank line; nothing
    without it."""
    if not figures or key not in figures:
        return []
    rel = os.path.relpath(figures[key], output.parent)
    return [f"![{FIGURES[key][1]}]({Path(rel).as_posix()})", ""]


def render_section(r: BenchResults, csv_file: Path, figures: Mapping[str, Path] | None, output: Path) -> str:
    """The Markdown between the mode's markers (markers not included); `figures`: key (FIGURES) -> file,
    each shown beside its table."""
    rel = output.parent
    icount = r.mode == MODE_ICOUNT
    title = (
        "## rtos, Linux and PREEMPT_RT Linux, bare and under rtmux (QEMU icount)"
        if icount
        else "## The same cases without icount (plain TCG: host-noise-dominated)"
    )
    kernels = ", ".join(
        f"{'standard' if k.flavour == 'std' else 'PREEMPT_RT'} `{k.release}` "
        f"(Debian `{k.package}` {k.version})"
        for k in r.kernels.values()
    )
    command = f"./rtmux bench{' --quick' if r.quick else ''}{'' if icount else ' --realtime'}"
    make = " (`make bench`)" if icount and not r.quick else ""
    version = getattr(r, "source", "")  # results pickled before the field existed have none
    source = f" from commit `{version}`" if version else ""
    lines = [title, ""]
    if r.quick:
        lines += [f"**Quick run** (`{command}`, {r.samples} samples per case): a smoke test, not the "
                  "reference figures.", ""]  # fmt: skip
    lines += [
        _para(f"""
            Measured {r.date.strftime("%Y-%m-%d %H:%M UTC")}{source} with `{r.qemu_version}`;
            kernels: {kernels}.
            Run by `{command}`{make} in {fmt_duration(r.wall_s)} of wall time, {r.jobs} QEMU run(s)
            at a time."""),
        "",
        f"Mode: {qemu.MODE_ICOUNT if icount else qemu.MODE_PLAIN}. "
        + _para(MODE_ICOUNT_TEXT if icount else MODE_REALTIME_TEXT),
        "",
        _para(f"""
            Timer latency, {PERIOD_US} us period, microseconds (the rtos measures to the nanosecond,
            cyclictest whole microseconds; p99 and p99.9 come from 1-us histograms, see the notes).
            EL2 entries: the hypervisor's count of entries on the rtos partition's CPU while it
            measured (target 0; see the notes):"""),
        "",
        *table_rows(r),
        "",
    ]
    lines += _figure_link(figures, "headline", output)
    lines += _figure_link(figures, "histograms", output)
    csv_rel = csv_file.relative_to(rel).as_posix()
    data_dir = paths.display(r.rows[0].data_file.parent) if r.rows else "build/bench"
    lines += [
        f"All figures: [`{csv_rel}`]({csv_rel}). Gnuplot histograms (latmus format, not committed): "
        f"`{data_dir}/<case>.dat`, with the scripts Linux ran.",
        "",
    ]
    if icount:
        lines += ["Targets:", "", "| target | measured | status |", "|---|---:|---|"]
        lines += [f"| {t.name} | {t.measured} | {verdict(t.met, t.measured_here)} |" for t in targets(r)]
        lines.append("")
        det = r.determinism
        if det is not None:
            state = "**identical**" if det.identical else "**NOT identical**"
            if det.identical and det.odd_runs:
                state = '**identical but for one odd run**, QEMU\'s (see "Determinism" below)'
            told = det.differences + det.odd_runs
            lines += [
                _para(f"""
                    Determinism: the quick bare-metal rtos cases ({" and ".join(det.cases)}, {det.samples}
                    samples each) were run three times: {state} (RTS| summary, every RTD| interval and
                    the histogram).""")
                + ("" if not told else " " + "; ".join(told)),
                "",
            ]
    control_table = _control_table(r)
    if control_table:
        lines += [*control_table, ""]
    linux_table = _linux_table(r)
    if linux_table:
        lines += ["Linux, bare and as the rtmux partition (guest time):", "", *linux_table, ""]
    vbus_table = _vbus_table(r)
    if vbus_table:
        lines += [*vbus_table, "", *_figure_link(figures, "vbus", output)]
    files_table = _files_table(r)
    if files_table:
        lines += [*files_table, ""]
    smp_table = _smp_table(r)
    if smp_table:
        lines += [*smp_table, ""]
    shared_table = _shared_table(r)
    if shared_table:
        lines += [*shared_table, "", *_figure_link(figures, "shared", output)]
    if r.ctxsw is not None:
        c = r.ctxsw
        lines += [_para(CTXSW_TEXT), "", "| switches | total (ns) | ns per switch |", "|---:|---:|---:|"]
        lines += [f"| {c.switches} | {c.total_ns} | {c.ns_per_switch:.3f} |", ""]
    if r.posix_cost:
        lines += [*_posix_cost_table(r), ""]
    if r.hypcost:
        lines += [*_hypcost_table(r), ""]
    lines += [f"Hypervisor size: {r.hyp_lines} non-blank lines of C and assembly (hyp/ and lib/).", ""]
    lines += ["### How each case runs", ""]
    lines += [HOW_RTOS.strip("\n") + " " + _partition_note(r)]
    lines += [f"- **Linux**: `{cyclictest.command(r.samples, '/tmp/FILE')}`" + HOW_LINUX.rstrip()]
    lines += [f"- **Linux load**: {linux_script.LOAD_DESCRIPTION}."]
    if icount:
        lines += [HOW_ICOUNT.strip("\n")]
    lines += ["", "<details><summary>Commands (each case reproduces on its own)</summary>", ""]
    for doc in r.docs:
        lines += [f"**{doc.title}**", "", "```", doc.rtmux, doc.qemu, "```", ""]
        if doc.script is not None:
            lines += ["Run by Linux's init at boot (`rtmux.run=` hook):", "", "```sh", doc.script, "```", ""]
    lines += ["</details>"]
    return "\n".join(lines)


def summary_lines(r: BenchResults) -> list[str]:
    """What the command prints at the end: one line per case, the targets, determinism."""
    f, p = latstats.fmt_value, latstats.fmt_percentile
    out = []
    for row in r.rows:
        s = row.stats
        out.append(
            f"{row.label}: min {f(s, s.min_us)} avg {f(s, s.avg_us, average=True)} p99 {p(s, s.p99_us)} "
            f"p99.9 {p(s, s.p999_us)} max {f(s, s.max_us)} us ({s.samples} samples)"
        )
    if r.mode == MODE_ICOUNT:
        out += [
            f"target {t.name}: {t.measured} "
            f"({'not measured' if not t.measured_here else 'met' if t.met else 'MISSED'})"
            for t in targets(r)
        ]
        if r.determinism is not None:
            det = r.determinism
            out.append("determinism: quick bare rtos cases run three times: " + determinism_verdict(det))
    return out


def determinism_verdict(det: Determinism) -> str:
    """identical, identical but for one odd run (told), or NOT identical with what differed."""
    if not det.identical:
        return "NOT identical: " + "; ".join(det.differences)
    if det.odd_runs:
        return (
            "identical but for one odd run (QEMU 7.2's icount clock warp under host load, "
            'BENCHMARKS.md "Determinism"): ' + "; ".join(det.odd_runs)
        )
    return "identical"


# ---------------------------------------------------------------------------------------------- files

# The figures, by key: file stem (docs/img/<stem>[-realtime].png) and the text of the section's link.
FIGURES = {
    "headline": (
        "bench-headline",
        "Timer latency per case: worst case, p99.9 and average, grouped by system",
    ),
    "histograms": (
        "bench-latency",
        "Latency histograms: the rtos cases on a sub-microsecond scale, the others in 1-us cells",
    ),
    "vbus": ("bench-vbus", "V-Bus round trips and throughput against a pipe pair, same boot"),
    "shared": ("bench-shared", "Shared-core mode: world switch cost and the rtos's latency on a shared CPU"),
}

# The headline figure's cases: (group, [(case, condition)]), top to bottom. The reference rows (the
# emulator's artifact checks, three busy vCPUs) and the POSIX control loop are in the table only.
HEADLINE = (
    ("rtos\nbare metal", (("rtos-bare-idle", "idle"), ("rtos-bare-load", "own load"))),
    ("rtos under rtmux,\nits own CPU", (("rtos-rtmux-idle", "Linux idle"),
                                        ("rtos-rtmux-load", "Linux loaded"))),
    ("rtos under rtmux,\nsharing Linux's CPU", (("rtos-shared-idle", "Linux idle"),
                                                ("rtos-shared-load", "Linux loaded"))),
    ("rtos under rtmux,\nV-Bus traffic", (("rtos-rtmux-vbus", "Linux talking"),)),
    ("PREEMPT_RT Linux\n(bare, cyclictest)", (("linux-rt-idle", "idle"), ("linux-rt-load", "loaded"))),
    ("Linux\n(bare, cyclictest)", (("linux-std-idle", "idle"), ("linux-std-load", "loaded"))),
    ("Linux under rtmux\n(cyclictest)", (("linux-rtmux-idle", "idle"), ("linux-rtmux-load", "loaded"))),
)  # fmt: skip


def figure_path(folder: Path, key: str, mode: str) -> Path:
    return folder / f"{FIGURES[key][0]}{suffix(mode)}.png"


def figure_dir(output: Path, quick: bool, data_dir: Path) -> Path:
    """Where a run's figures go: docs/img/ beside its Markdown file, except for a quick run into the
    repository's BENCHMARKS.md, whose figures go to its data folder (img/), so that a quick run never
    replaces the committed full run's pictures."""
    if quick and output.resolve() == paths.BENCHMARKS_MD.resolve():
        return data_dir / "img"
    return output.parent / "docs" / "img"


def curves(r: BenchResults) -> list[plot.Curve]:
    return [
        plot.Curve(
            row.label,
            row.system,
            row.load,
            row.counts,
            row.stats.min_us,
            row.stats.max_us,
            row.stats.whole_us,
            row.stats.avg_us,
            row.stats.p999_us,
        )
        for row in r.rows
    ]


def headline_bars(r: BenchResults) -> list[plot.Bar]:
    """The headline figure's rows: the HEADLINE cases the results have, each with the targets on its
    worst case (one mark per bound, the names of equal bounds joined)."""
    limits: dict[str, dict[float, list[Target]]] = {}
    if r.mode == MODE_ICOUNT:
        for t in targets(r):
            if t.case is not None and t.limit_us is not None:
                limits.setdefault(t.case, {}).setdefault(round(t.limit_us, 6), []).append(t)
    bars = []
    for group, cases in HEADLINE:
        for case, condition in cases:
            row = r.row(case)
            if row is None:
                continue
            s = row.stats
            marks = tuple(
                (limit, ", ".join(dict.fromkeys(t.short for t in ts if t.short)), all(t.met for t in ts))
                for limit, ts in sorted(limits.get(case, {}).items())
            )
            bars.append(
                plot.Bar(group, condition, s.avg_us, s.p999_us, s.max_us, s.whole_us,
                         latstats.is_bound(s, s.p999_us), marks)
            )  # fmt: skip
    return bars


def run_name(r: BenchResults) -> str:
    """The run a figure comes from, for its title: kind, date, commit, mode and samples."""
    kind = "quick run" if r.quick else "full run"
    commit = f", commit {r.source}" if getattr(r, "source", "") else ""
    mode = "QEMU icount, guest time" if r.mode == MODE_ICOUNT else "plain TCG, host-noise-dominated"
    return f"{kind} of {r.date.strftime('%Y-%m-%d')}{commit}, {mode}, {r.samples} samples per case"


def headline_title(r: BenchResults) -> str:
    return (
        f"Timer latency, {PERIOD_US} us period: worst case, p99.9 and average per case (lower is better)\n"
        f"{run_name(r)}"
    )


def plot_title(r: BenchResults) -> str:
    return f"Timer latency histograms, {PERIOD_US} us period\n{run_name(r)}"


def vbus_figure(r: BenchResults) -> plot.Vbus | None:
    res = _linux(r, "rtmux-vbus")
    if res is None or res.vbus is None:
        return None
    v = res.vbus

    def rtt(x: rtmux_ping.RoundTrips) -> tuple[float, float, float, float]:
        return (x.min_us, x.avg_us, x.p99_us, x.max_us)

    def hist(h: rtmux_ping.RttHistogram | None) -> tuple[float, dict[int, int]] | None:
        return None if h is None else (h.cell_ns / 1000, dict(h.counts))

    return plot.Vbus(
        rtt(v.rtt), rtt(v.pipe_rtt), (v.bulk.tx_mbps, v.bulk.rx_mbps),
        (v.pipe_bulk.tx_mbps, v.pipe_bulk.rx_mbps), TARGET_VBUS_RTT_US, TARGET_VBUS_MBPS,
        hist(getattr(v, "rtt_hist", None)), hist(getattr(v, "pipe_rtt_hist", None)),
    )  # fmt: skip


def shared_figure(r: BenchResults) -> plot.Shared | None:
    switches = []
    for what in ("idle", "loaded"):
        res = _linux(r, f"rtmux-shared-{what}")
        if res is not None and res.share is not None:
            c = res.share.counts
            switches.append((what, float(c["switch_ns_to_linux"]), float(c["switch_ns_to_rtos"])))
    latency = []
    for case, label in (
        ("rtos-bare-idle", "bare metal, idle"),
        ("rtos-rtmux-idle", "own CPU, Linux idle"),
        ("rtos-rtmux-load", "own CPU, Linux loaded"),
        ("rtos-shared-idle", "shared CPU, Linux idle"),
        ("rtos-shared-load", "shared CPU, Linux loaded"),
    ):
        row = r.row(case)
        if row is not None:
            latency.append((label, row.stats.avg_us, row.stats.max_us))
    if not switches and r.row("rtos-shared-load") is None and r.row("rtos-shared-idle") is None:
        return None
    return plot.Shared(tuple(switches), tuple(latency), TARGET_RTOS_MAX_US)


def draw(r: BenchResults, folder: Path) -> dict[str, Path]:
    """Every figure the results allow, into `folder`: key -> file."""
    out: dict[str, Path] = {}
    bars = headline_bars(r)
    if bars:
        out["headline"] = figure_path(folder, "headline", r.mode)
        plot.headline(bars, out["headline"], headline_title(r))
    hist = curves(r)
    if hist:
        out["histograms"] = figure_path(folder, "histograms", r.mode)
        plot.histograms(hist, out["histograms"], plot_title(r))
    v = vbus_figure(r)
    if v is not None:
        out["vbus"] = figure_path(folder, "vbus", r.mode)
        plot.vbus(
            v,
            out["vbus"],
            f"V-Bus: a Linux program to an rtos thread and back, against a pipe pair\n{run_name(r)}",
        )
    s = shared_figure(r)
    if s is not None:
        out["shared"] = figure_path(folder, "shared", r.mode)
        plot.shared(
            s, out["shared"], f"Shared-core mode (-smp 1): world switch and rtos latency\n{run_name(r)}"
        )
    return out


def write_all(r: BenchResults, output: Path, figures_dir: Path | None = None) -> list[Path]:
    """Write the CSV, the figures (into `figures_dir`, default docs/img/ beside `output`) and the Markdown
    section; returns the paths written."""
    csv_file = csv_path(output, r.mode)
    csv_file.parent.mkdir(parents=True, exist_ok=True)
    csv_file.write_text(render_csv(r), encoding="utf-8")
    figures = draw(r, figures_dir if figures_dir is not None else output.parent / "docs" / "img")
    begin, end = markers(r.mode)
    text = output.read_text(encoding="utf-8") if output.exists() else "# rtmux benchmarks\n"
    output.write_text(
        replace_section(text, render_section(r, csv_file, figures, output), begin, end), encoding="utf-8"
    )
    return [output, csv_file, *figures.values()]


# ------------------------------------------------------------------------------ redraw from the CSV

_MEASURED_RE = re.compile(
    r"Measured (?P<date>\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC(?: from commit `(?P<commit>[^`]+)`)? with "
    r"`(?P<qemu>[^`]+)`"
)


def results_from_csv(csv_text: str, markdown: str, mode: str = MODE_ICOUNT) -> BenchResults:
    """What a run's CSV and its Markdown section keep of its results: every row's figures (no
    histograms), the run's date, commit, QEMU and sample count; enough for the headline figure."""
    begin, end = markers(mode)
    if markdown.count(begin) != 1 or markdown.count(end) != 1:
        raise RtmuxError(f"no `{begin}` section to read the run's date and commit from")
    section = markdown[markdown.index(begin) : markdown.index(end)]
    m = _MEASURED_RE.search(" ".join(section.split()))
    if m is None:
        raise RtmuxError("the section has no `Measured DATE UTC ... with `QEMU ...`` line")
    lines = [line for line in read_csv(csv_text) if line["mode"] == mode]
    if not lines:
        raise RtmuxError(f"the CSV has no {mode} rows")
    rows = []
    for line in lines:
        whole = line["overruns"] == ""
        stats = latstats.LatencyStats(
            int(line["samples"]), float(line["min_us"]), float(line["avg_us"]), float(line["p99_us"]),
            float(line["p99_9_us"]), float(line["max_us"]), None if whole else int(line["overruns"]), whole,
        )  # fmt: skip
        el2 = line["rtos_el2_entries"]
        rows.append(
            Row(line["case"], line["label"], line["system"], line["load"] == "1", stats, {},
                Path(line["histogram"]), "", None if el2 == "" else int(el2))
        )  # fmt: skip
    samples = [row.stats.samples for row in rows if not row.id.startswith(("rtos-rtmux", "rtos-shared"))]
    return BenchResults(
        mode=mode,
        quick="**Quick run**" in section,
        samples=max(set(samples), key=samples.count) if samples else rows[0].stats.samples,
        date=datetime.strptime(m["date"], "%Y-%m-%d %H:%M").replace(tzinfo=UTC),
        qemu_version=m["qemu"],
        jobs=0,
        rows=rows,
        source=m["commit"] or "",
    )


def redraw(output: Path, figures_dir: Path | None = None) -> list[Path]:
    """The headline figure again, from `output`'s CSV and section (icount), into `figures_dir` (default
    docs/img/ beside `output`); returns the files written."""
    csv_file = csv_path(output, MODE_ICOUNT)
    for f in (output, csv_file):
        if not f.exists():
            raise RtmuxError(f"{paths.display(f)}: not found (run `./rtmux bench` first)")
    r = results_from_csv(csv_file.read_text(encoding="utf-8"), output.read_text(encoding="utf-8"))
    path = figure_path(
        figures_dir if figures_dir is not None else output.parent / "docs" / "img", "headline", r.mode
    )
    plot.headline(headline_bars(r), path, headline_title(r))
    return [path]


def rows_by_id(r: BenchResults) -> dict[str, Row]:
    return {row.id: row for row in r.rows}


def replace_section(text: str, body: str, begin: str, end: str) -> str:
    """`text` with the part between the markers replaced by `body`; appended when the markers are absent."""
    section = f"{begin}\n{body.strip()}\n{end}"
    n_begin, n_end = text.count(begin), text.count(end)
    if n_begin == 0 and n_end == 0:
        head = text.rstrip("\n")
        return f"{head}\n\n{section}\n" if head else f"{section}\n"
    if n_begin != 1 or n_end != 1:
        raise RtmuxError(
            f"expected one `{begin}` and one `{end}`, found {n_begin} and {n_end}; fix the file by hand"
        )
    i, j = text.index(begin), text.index(end)
    if j < i:
        raise RtmuxError(f"`{end}` comes before `{begin}`; fix the file by hand")
    return text[:i] + section + text[j + len(end) :]
