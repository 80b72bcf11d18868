"""`./rtmux bench` (`make bench`): the rtos benchmarks in icount mode, written into BENCHMARKS.md.

For now the rtos runs alone on QEMU (one vCPU, no hypervisor). The results go into a section of
BENCHMARKS.md between BEGIN_MARKER and END_MARKER; the rest of the file is left as it is.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rtmux import latmus, paths, qemu, rtos
from rtmux.errors import RtmuxError

BEGIN_MARKER = "<!-- rtos-bench:begin -->"
END_MARKER = "<!-- rtos-bench:end -->"

# Targets set for the rtos by its issue, in icount guest time.
TARGET_MAX_LATENCY_US = 2.0
TARGET_NS_PER_SWITCH = 500.0

PERIOD_US = 1000
SAMPLES_FULL = 10_000
SAMPLES_QUICK = 1_000
SWITCHES = rtos.DEFAULT_SWITCHES


@dataclass(frozen=True)
class LatencyCase:
    name: str  # file stem under build/bench/
    label: str
    load: bool


LATENCY_CASES = (
    LatencyCase("latency-idle", "timer latency, idle", load=False),
    LatencyCase("latency-load", "timer latency, load (FPU threads + 21 kHz interrupts + worker)", load=True),
)


@dataclass
class LatencyResult:
    case: LatencyCase
    samples: int
    rts: latmus.RtsLine
    histogram: Path
    rtmux_command: str
    qemu_command: str
    wall_s: float


@dataclass
class CtxswResult:
    ctx: latmus.CtxLine
    rtmux_command: str
    qemu_command: str
    wall_s: float


@dataclass
class BenchResults:
    date: datetime
    qemu_version: str
    quick: bool
    latency: list[LatencyResult]
    ctxsw: CtxswResult


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Case n of m, elapsed time, and the remaining time extrapolated from the work done so far.

    Each case has a weight (its expected relative cost); the time per unit of weight measured so far
    predicts the rest, so the estimate improves as the run goes on.
    """

    def __init__(self, weights: list[float], out: TextIO) -> None:
        self.weights = weights
        self.out = out
        self.start = time.monotonic()
        self.done_weight = 0.0
        self.index = 0

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def remaining(self, partial: float = 0.0) -> str:
        done = self.done_weight + partial
        if done <= 0:
            return "estimating"
        left = sum(self.weights) - done
        return "~" + fmt_duration(self.elapsed() / done * left)

    def begin(self, label: str) -> None:
        self.index += 1
        self.say(f"case {self.index} of {len(self.weights)}: {label}")

    def finish(self, summary: str) -> None:
        self.done_weight += self.weights[self.index - 1]
        self.say(f"case {self.index} of {len(self.weights)} done: {summary}")

    def say(self, text: str, partial: float = 0.0) -> None:
        print(
            f"[bench {fmt_duration(self.elapsed())} elapsed, {self.remaining(partial)} left] {text}",
            file=self.out,
            flush=True,
        )


def _interval_progress(progress: Progress, guest_total_s: float, weight: float) -> Callable[[str], None]:
    """on_line callback: one progress line per RTD| report interval of a latency run."""
    seen = 0

    def on_line(line: str) -> None:
        nonlocal seen
        if line.startswith("RTD|"):
            seen += 1
            # RTD| lines come once per guest second (report_ms default 1000).
            share = min(seen / guest_total_s, 1.0) if guest_total_s > 0 else 0.0
            progress.say(f"  guest time {seen} s of {guest_total_s:g} s", partial=share * weight)

    return on_line


def run_bench(*, quick: bool, build: bool, output: Path, out: TextIO | None = None) -> BenchResults:
    out = out if out is not None else sys.stdout
    samples = SAMPLES_QUICK if quick else SAMPLES_FULL
    rtos.build(build)
    version = qemu.qemu_version()
    guest_s = samples * PERIOD_US / 1e6
    # Relative wall-clock cost, measured in icount mode: an idle guest second costs ~0.3 s of host time
    # (the idle CPU skips to the next timer), a loaded one ~5 s; the context-switch run well under 1 s.
    weights = [guest_s * (5.0 if case.load else 0.3) for case in LATENCY_CASES] + [0.5]
    progress = Progress(weights, out)
    progress.say(f"rtos benchmarks, icount mode, {samples} samples at {PERIOD_US} us; {version}")
    date = datetime.now(UTC)
    paths.BENCH_DIR.mkdir(parents=True, exist_ok=True)

    latency_results: list[LatencyResult] = []
    for i, case in enumerate(LATENCY_CASES):
        hist = paths.BENCH_DIR / f"{case.name}.dat"
        progress.begin(f"{case.label}, {samples} samples at {PERIOD_US} us")
        t0 = time.monotonic()
        run = rtos.latency(
            period_us=PERIOD_US,
            samples=samples,
            load=case.load,
            icount=True,
            timeout_s=rtos.default_latency_timeout(samples, PERIOD_US, case.load),
            histogram_path=hist,
            on_line=_interval_progress(progress, guest_s, weights[i]),
        )
        rts = run.report.summary
        wall = time.monotonic() - t0
        progress.finish(f"min {rts.lat_min:.3f} avg {rts.lat_avg:.3f} max {rts.lat_max:.3f} us")
        args = ["./rtmux", "rtos", "latency", "--icount", "--period-us", str(PERIOD_US)]
        args += ["--samples", str(samples)] + (["--load"] if case.load else [])
        args += ["--histogram", paths.display(hist)]
        bootargs = rtos.format_bootargs({"period_us": PERIOD_US, "samples": samples, "load": case.load})
        latency_results.append(
            LatencyResult(
                case,
                samples,
                rts,
                hist,
                shlex.join(args),
                rtos.shown_command("latency", bootargs, True),
                wall,
            )
        )

    progress.begin(f"context switches, {SWITCHES} switches")
    t0 = time.monotonic()
    ctx = rtos.ctxsw(switches=SWITCHES, icount=True, timeout_s=rtos.CTXSW_TIMEOUT_S, echo=None)
    progress.finish(f"{ctx.ns_per_switch:.3f} ns per switch")
    ctx_result = CtxswResult(
        ctx,
        shlex.join(["./rtmux", "rtos", "ctxsw", "--icount", "--switches", str(SWITCHES)]),
        rtos.shown_command("ctxsw", rtos.format_bootargs({"switches": SWITCHES}), True),
        time.monotonic() - t0,
    )

    results = BenchResults(date, version, quick, latency_results, ctx_result)
    update_file(output, render_section(results))
    print(
        f"rtmux: results written to {paths.display(output)}; histograms in {paths.display(paths.BENCH_DIR)}/",
        file=out,
    )
    for line in target_lines(results):
        print(f"  {line}", file=out)
    return results


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def targets(results: BenchResults) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for each target of the rtos."""
    rows = []
    for r in results.latency:
        cond = "with load" if r.case.load else "idle"
        rows.append(
            (
                f"max timer latency {cond} <= {TARGET_MAX_LATENCY_US:g} us",
                f"{r.rts.lat_max:.3f} us",
                r.rts.lat_max <= TARGET_MAX_LATENCY_US,
            )
        )
    per = results.ctxsw.ctx.ns_per_switch
    rows.append(
        (f"context switch <= {TARGET_NS_PER_SWITCH:g} ns", f"{per:.3f} ns", per <= TARGET_NS_PER_SWITCH)
    )
    return rows


def target_lines(results: BenchResults) -> list[str]:
    return [f"{name}: {measured} ({'met' if met else 'MISSED'})" for name, measured, met in targets(results)]


def render_section(results: BenchResults) -> str:
    """The Markdown between the markers (markers not included)."""
    samples = results.latency[0].samples if results.latency else 0
    lines = [
        "## rtos alone on QEMU (icount)",
        "",
        f"Measured {results.date.strftime('%Y-%m-%d %H:%M UTC')} with `{results.qemu_version}`"
        + (
            " — **quick run** (`./rtmux bench --quick`), not the reference figures." if results.quick else "."
        ),
        "",
        f"Mode: {qemu.MODE_ICOUNT}. Figures are guest time under emulation, not hardware figures. "
        "One vCPU (`-smp 1`), so they are free of the icount round-robin artifact that affects runs "
        "with several vCPUs. The rtos runs bare, without the hypervisor.",
        "",
        "Commands (`make bench` runs `./rtmux bench`, which runs these):",
        "",
        "```",
    ]
    lines += [r.rtmux_command for r in results.latency] + [results.ctxsw.rtmux_command]
    lines += ["```", "", "QEMU command lines:", "", "```"]
    lines += [r.qemu_command for r in results.latency] + [results.ctxsw.qemu_command]
    lines += [
        "```",
        "",
        "What is measured: a thread at the top priority (255) is released every period by the tickless "
        "timer; latency = time the thread reads the counter after waking - release point, so it includes "
        "the interrupt entry, the timer handler, the scheduler and the context switch (like latmus in user "
        "mode). QEMU's counter ticks every 16 ns. Load = three round-robin FPU-busy threads at the lowest "
        "priority (the CPU is never idle) and the EL1 physical timer interrupting every 47 us (~21 kHz), "
        "its handler waking a priority-100 worker that does ~20 us of FP work per wake-up.",
        "",
        f"Timer latency, {PERIOD_US} us period, {samples} samples per case (microseconds):",
        "",
        "| case | min | avg | max | overruns | samples |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results.latency:
        lines.append(
            f"| {r.case.label} | {r.rts.lat_min:.3f} | {r.rts.lat_avg:.3f} | {r.rts.lat_max:.3f} "
            f"| {r.rts.overruns} | {r.samples} |"
        )
    ctx = results.ctxsw.ctx
    lines += [
        "",
        "Context switch (semaphore ping-pong between two threads of equal priority; each switch includes "
        "one rt_sem_give, one blocking rt_sem_take and the full register switch with FP/SIMD state):",
        "",
        "| switches | total (ns) | ns per switch |",
        "|---:|---:|---:|",
        f"| {ctx.switches} | {ctx.total_ns} | {ctx.ns_per_switch:.3f} |",
        "",
        "Targets:",
        "",
        "| target | measured | status |",
        "|---|---:|---|",
    ]
    lines += [f"| {name} | {measured} | {verdict(met)} |" for name, measured, met in targets(results)]
    hists = ", ".join(f"`{paths.display(r.histogram)}`" for r in results.latency)
    lines += ["", f"Histograms (gnuplot, not committed): {hists}."]
    return "\n".join(lines)


def replace_section(text: str, body: str, begin: str = BEGIN_MARKER, end: str = END_MARKER) -> str:
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


def update_file(path: Path, body: str) -> None:
    """Write the benchmark section into `path` (created with a title when missing)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# rtmux benchmarks\n"
    path.write_text(replace_section(text, body), encoding="utf-8")
