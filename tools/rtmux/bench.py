"""`./rtmux bench` (`make bench`): rtmux beside bare-metal, Linux and PREEMPT_RT Linux on one emulated board.

Every case samples a 1 ms periodic timer (SAMPLES_FULL samples, SAMPLES_QUICK with --quick), idle and
under load:

  rtos bare metal          build/rtos/latency.img alone (-smp 1); load: its own (FPU threads, interrupts)
  rtos in its partition    the rtmux system of configs/qemu-virt.toml, the rtos partition (CPU 0) running
                           the latency app; Linux (CPU 1) idle, or running the Linux load
  Linux std, PREEMPT_RT    Debian's kernels bare (-smp 1), cyclictest pinned to CPU 0; Linux load
  Linux std under rtmux    the same cyclictest in the Linux partition of the rtmux system

plus the rtos context-switch time, Linux's boot-to-shell time and a hackbench run (bare and under rtmux),
the hypervisor's size, and a determinism check (the quick bare rtos cases run twice must agree exactly).
Each case is one QEMU boot (a Linux boot measures idle, then loaded); in icount mode the boots run
`--jobs` at a time, which does not change guest time. The figures go into a marker-delimited section of
BENCHMARKS.md, a CSV beside it, a histogram plot and gnuplot files (benchreport.py).
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import pickle
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rtmux import cyclictest, initramfs, latmus, latstats, linux, paths, qemu, rtos, sysbench, system
from rtmux.errors import EXIT_TIMEOUT, RtmuxError

PERIOD_US = 1000
SAMPLES_FULL = 10_000
SAMPLES_QUICK = 1_000
SWITCHES = rtos.DEFAULT_SWITCHES
# The rtos partition starts sampling when the system boots; Linux reaches its shell ~1.0 guest s later and
# only then starts the load. Its run is this many samples longer than the others so that at least the
# usual sample count is taken once Linux is idle at its shell or loaded (checked from Linux's uptime).
PARTITION_WARMUP = 1500
# Linux waits this long after the rtos partition's last sample before it stops the load.
PARTITION_HOLD_MARGIN_S = 0.3
HACKBENCH_LOOPS_FULL = 500
HACKBENCH_LOOPS_QUICK = 100

MODE_ICOUNT = "icount"
MODE_REALTIME = "realtime"


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


# ------------------------------------------------------------------------------------------- progress


def estimate_remaining(
    running: list[tuple[float, float]], queued: list[float], jobs: int, speed: float
) -> float:
    """Wall seconds until the last run ends. `running`: (predicted s, elapsed s) of each started run;
    `queued`: predicted s of the runs not started, in start order; `speed`: measured / predicted time of
    the runs finished so far. Each queued run starts on the first of `jobs` slots to become free."""
    if jobs < 1:
        raise ValueError("at least one job")
    slots = sorted(max(pred * speed - elapsed, 0.0) for pred, elapsed in running)
    slots += [0.0] * max(jobs - len(slots), 0)
    for pred in queued:
        slots.sort()
        slots[0] += pred * speed
    return max(slots) if slots else 0.0


class Progress:
    """Prints `[bench E elapsed, ~R left] ...` lines: which run of how many starts and ends (with its
    figures), the phases of Linux boots, and a reminder when nothing was printed for a while. The
    remaining time comes from each run's predicted cost, corrected by how long finished runs really took."""

    def __init__(
        self,
        predicted: dict[str, float],
        jobs: int,
        out: TextIO,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.predicted = predicted
        self.order = list(predicted)
        self.jobs = jobs
        self.out = out
        self.clock = clock
        self.start = clock()
        self.started: dict[str, float] = {}
        self.finished: dict[str, float] = {}
        self.last_print = self.start
        self.lock = threading.Lock()

    def number(self, run_id: str) -> str:
        return f"{self.order.index(run_id) + 1} of {len(self.order)}"

    def speed(self) -> float:
        pred = sum(self.predicted[r] for r in self.finished)
        if pred <= 0:
            return 1.0
        return min(max(sum(self.finished.values()) / pred, 0.25), 4.0)

    def remaining(self) -> float:
        now = self.clock()
        running = [(self.predicted[r], now - t0) for r, t0 in self.started.items() if r not in self.finished]
        queued = [self.predicted[r] for r in self.order if r not in self.started]
        return estimate_remaining(running, queued, self.jobs, self.speed())

    def say(self, text: str) -> None:
        with self.lock:
            now = self.clock()
            left = (
                "done" if len(self.finished) == len(self.order) else f"~{fmt_duration(self.remaining())} left"
            )
            print(
                f"[bench {fmt_duration(now - self.start)} elapsed, {left}] {text}", file=self.out, flush=True
            )
            self.last_print = now

    def begin(self, run_id: str, title: str) -> None:
        with self.lock:
            self.started[run_id] = self.clock()
        self.say(f"case {self.number(run_id)} started: {title}")

    def end(self, run_id: str, summary: str) -> None:
        with self.lock:
            wall = self.clock() - self.started[run_id]
            self.finished[run_id] = wall
        self.say(
            f"case {self.number(run_id)} done in {fmt_duration(wall)} "
            f"({len(self.finished)} of {len(self.order)} finished): {summary}"
        )

    def quiet_for(self) -> float:
        return self.clock() - self.last_print

    def running(self) -> list[str]:
        return [self.number(r) for r in self.order if r in self.started and r not in self.finished]


# -------------------------------------------------------------------------------------------- results


@dataclass
class Row:
    """One line of the results table: a case's figures and its 1-us histogram."""

    id: str  # file stem of its gnuplot file, CSV id
    label: str
    system: (
        str  # what runs: "rtos bare", "rtos in rtmux", "Linux std", "Linux PREEMPT_RT", "Linux under rtmux"
    )
    load: bool
    stats: latstats.LatencyStats
    counts: dict[int, int]
    data_file: Path
    run_id: str


@dataclass
class RunDoc:
    """How a run is reproduced: the ./rtmux command, QEMU's command line and the script typed into Linux."""

    run_id: str
    title: str
    rtmux: str
    qemu: str
    script: str | None = None


@dataclass
class Determinism:
    samples: int
    cases: list[str]  # labels of the cases compared
    differences: list[str]  # empty: every pair identical

    @property
    def identical(self) -> bool:
        return not self.differences


@dataclass
class KernelInfo:
    flavour: str
    release: str  # uname -r as the guests printed it
    package: str
    version: str


@dataclass
class BenchResults:
    mode: str
    quick: bool
    samples: int
    date: datetime
    qemu_version: str
    jobs: int
    wall_s: float = 0.0
    rows: list[Row] = field(default_factory=list)
    ctxsw: latmus.CtxLine | None = None
    linux: dict[str, sysbench.LinuxResult] = field(default_factory=dict)  # run id -> result
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    determinism: Determinism | None = None
    docs: list[RunDoc] = field(default_factory=list)
    hyp_lines: int = 0
    partition_samples: int = 0  # samples of the rtos partition's runs
    hackbench_loops: int = HACKBENCH_LOOPS_FULL
    source: str = ""  # `git describe --always --dirty` of the tree that was built and measured

    @property
    def icount(self) -> bool:
        return self.mode == MODE_ICOUNT

    def row(self, row_id: str) -> Row | None:
        return next((r for r in self.rows if r.id == row_id), None)


@dataclass
class RunOutput:
    """What one run adds to the results."""

    rows: list[Row] = field(default_factory=list)
    linux: sysbench.LinuxResult | None = None
    ctxsw: latmus.CtxLine | None = None
    records: tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]] | None = None  # determinism runs
    docs: list[RunDoc] = field(default_factory=list)
    summary: str = ""


@dataclass
class Run:
    id: str
    title: str
    predicted_s: float
    work: Callable[[Callable[[str], None]], RunOutput]  # argument: reports a phase


# ------------------------------------------------------------------------------------------ cost model


def predicted_s(
    icount: bool,
    *,
    boot: str = "",
    hackbench_loops: int = 0,
    idle_s: float = 0,
    loaded_s: float = 0,
    rtos_load_s: float = 0,
) -> float:
    """Wall seconds a run takes on one free core of a current x86 machine (measured once; the progress
    lines correct it as runs finish). In icount mode an idle guest skips to its next timer, a loaded one
    costs every instruction: Linux's load and hackbench (process switches, system calls) ~37 s per guest
    second, the rtos's own load ~5.5 s. Without icount guest time is host time."""
    boots = {"": 0.0, "rtos": 1.0, "linux": 5.0, "rtmux": 10.0}
    hackbench = hackbench_loops / 500 * 0.6  # guest seconds of the standard kernel
    if not icount:
        return boots[boot] * 2 + 3.0 * hackbench + 1.1 * (idle_s + loaded_s + rtos_load_s)
    return boots[boot] + 37.0 * (hackbench + loaded_s) + 0.6 * idle_s + 5.5 * rtos_load_s


def plan_cost(icount: bool, plan: sysbench.Plan, boot: str, shell_s: float = 1.0) -> float:
    """predicted_s of a Linux boot that runs `plan` (Linux reaches its shell at `shell_s` guest seconds)."""
    guest = plan.samples * PERIOD_US / 1e6
    idle = guest if plan.idle else 0.0
    loaded = guest if plan.loaded else 0.0
    if plan.hold_until_s:
        if plan.load:
            loaded = max(loaded, plan.hold_until_s - shell_s)
        else:
            idle += plan.hold_until_s - shell_s
    if plan.load:
        loaded += 0.3  # stopping the load
    loops = plan.hackbench_loops if plan.hackbench else 0
    return predicted_s(icount, boot=boot, hackbench_loops=loops, idle_s=idle, loaded_s=loaded)


# ---------------------------------------------------------------------------------------------- bench


@dataclass(frozen=True)
class Options:
    quick: bool = False
    realtime: bool = False
    jobs: int = 1
    output: Path = paths.BENCHMARKS_MD
    data_dir: Path = paths.BENCH_DIR
    build: bool = True
    timeout_s: float | None = None  # wall-clock limit of the whole run (each QEMU run has its own too)


def _rtmux_cmd(args: list[str]) -> str:
    return shlex.join(["./rtmux", *args])


def _shown_argv(argv: list[str]) -> str:
    """QEMU's command line as documentation shows it: program by name, paths relative to the repository."""
    shown = [qemu.QEMU_BIN]
    for arg in argv[1:]:
        shown.append(paths.display(Path(arg)) if arg.startswith(str(paths.REPO_ROOT)) else arg)
    return shlex.join(shown)


def _script_cmd(script_path: Path) -> str:
    return f'"$(cat {paths.display(script_path)})"'


class Bench:
    """Prepares the images, defines the runs and gathers their outputs into BenchResults."""

    def __init__(self, opts: Options, out: TextIO) -> None:
        self.opts = opts
        self.out = out
        self.icount = not opts.realtime
        self.mode = MODE_ICOUNT if self.icount else MODE_REALTIME
        self.samples = SAMPLES_QUICK if opts.quick else SAMPLES_FULL
        self.data = opts.data_dir / self.mode
        self.guests: dict[str, initramfs.Guest] = {}
        self.systems: dict[str, tuple[list[str], Path]] = {}
        self.hyp_lines = 0

    # ------------------------------------------------------------------ preparation (sequential)

    def prepare(self) -> None:
        if self.opts.build:
            system.make(["rtos", "hyp"])
        self.hyp_lines = sysbench.hypervisor_lines()  # the sources of the hypervisor just built
        for flavour in ("std", "rt"):
            self.guests[flavour] = initramfs.build(flavour)
        n, w = self.samples, PARTITION_WARMUP
        for name, args in (
            ("rtos-idle", f"period_us={PERIOD_US} samples={n + w}"),
            ("rtos-loaded", f"period_us={PERIOD_US} samples={n + w}"),
            ("linux", f"period_us={PERIOD_US} samples=0"),
            ("linux-cpu0", f"period_us={PERIOD_US} samples=0"),
        ):
            if name == "linux-cpu0" and self.opts.quick:
                continue
            self.systems[name] = sysbench.system_argv(
                f"{self.mode}-{name}",
                args,
                icount=self.icount,
                folder=self.data / "configs",
                swapped=name == "linux-cpu0",
            )
        self.data.mkdir(parents=True, exist_ok=True)

    # ----------------------------------------------------------------------------- the runs

    def plans(self) -> dict[str, sysbench.Plan]:
        """What Linux does in each Linux boot."""
        n = self.samples
        loops = HACKBENCH_LOOPS_QUICK if self.opts.quick else HACKBENCH_LOOPS_FULL
        hold = (n + PARTITION_WARMUP) * PERIOD_US / 1e6 + PARTITION_HOLD_MARGIN_S
        return {
            # PREEMPT_RT's hackbench is not compared with anything and costs three times the standard one's.
            "linux-std": sysbench.Plan(
                n, hackbench=True, idle=True, load=True, loaded=True, hackbench_loops=loops
            ),
            "linux-rt": sysbench.Plan(n, idle=True, load=True, loaded=True),
            "rtmux-rtos-idle": sysbench.Plan(n, hold_until_s=hold),
            "rtmux-loaded": sysbench.Plan(n, load=True, loaded=True, hold_until_s=hold),
            "rtmux-linux": sysbench.Plan(n, hackbench=True, idle=True, hackbench_loops=loops),
            "rtmux-linux-cpu0": sysbench.Plan(n, load=True, loaded=True),
        }

    def runs(self) -> list[Run]:
        n, icount = self.samples, self.icount
        guest_s = n * PERIOD_US / 1e6
        plans = self.plans()
        runs = [
            Run(
                "rtos-bare-idle",
                "rtos bare metal, idle",
                predicted_s(icount, boot="rtos", idle_s=guest_s),
                lambda phase: self.rtos_bare(False, n, "rtos-bare-idle"),
            ),
            Run(
                "rtos-bare-load",
                "rtos bare metal, its own load",
                predicted_s(icount, boot="rtos", rtos_load_s=guest_s),
                lambda phase: self.rtos_bare(True, n, "rtos-bare-load"),
            ),
            Run(
                "ctxsw",
                "rtos context switch",
                predicted_s(icount, boot="rtos", rtos_load_s=0.2),
                lambda phase: self.ctxsw(),
            ),
            Run(
                "linux-std",
                "Linux std bare (-smp 1): boot, hackbench, cyclictest idle and loaded",
                plan_cost(icount, plans["linux-std"], "linux"),
                lambda phase: self.linux_bare("std", plans["linux-std"], phase),
            ),
            Run(
                "linux-rt",
                "Linux PREEMPT_RT bare (-smp 1): boot, cyclictest idle and loaded",
                plan_cost(icount, plans["linux-rt"], "linux"),
                lambda phase: self.linux_bare("rt", plans["linux-rt"], phase),
            ),
            Run(
                "rtmux-rtos-idle",
                "rtmux: rtos partition latency, Linux idle",
                plan_cost(icount, plans["rtmux-rtos-idle"], "rtmux"),
                lambda phase: self.rtmux_rtos_idle(plans["rtmux-rtos-idle"], phase),
            ),
            Run(
                "rtmux-loaded",
                "rtmux: rtos partition latency and Linux cyclictest, Linux loaded",
                plan_cost(icount, plans["rtmux-loaded"], "rtmux"),
                lambda phase: self.rtmux_loaded(plans["rtmux-loaded"], phase),
            ),
            Run(
                "rtmux-linux",
                "rtmux: Linux boot, hackbench, cyclictest idle",
                plan_cost(icount, plans["rtmux-linux"], "rtmux"),
                lambda phase: self.rtmux_linux_idle(plans["rtmux-linux"], phase),
            ),
        ]
        if not self.opts.quick:
            # Left out of --quick, whose time limit (3 minutes on 2 cores) it would break.
            runs.append(
                Run(
                    "rtmux-linux-cpu0",
                    "rtmux, artifact check: Linux on CPU 0, rtos on CPU 1: cyclictest, Linux loaded",
                    plan_cost(icount, plans["rtmux-linux-cpu0"], "rtmux"),
                    lambda phase: self.rtmux_linux_cpu0(plans["rtmux-linux-cpu0"], phase),
                )
            )
        if icount:
            # Determinism: the quick bare rtos cases twice (the quick run's own cases are the first time).
            q = SAMPLES_QUICK
            for load in (False, True):
                kind = "load" if load else "idle"
                for k in (1, 2) if not self.opts.quick else (2,):
                    runs.append(
                        Run(
                            f"repeat-{kind}-{k}",
                            f"determinism: rtos bare {kind}, {q} samples, run {k}",
                            predicted_s(
                                icount,
                                boot="rtos",
                                idle_s=0 if load else q / 1000,
                                rtos_load_s=q / 1000 if load else 0,
                            ),
                            lambda phase, load=load, k=k: self.rtos_repeat(load, k),
                        )
                    )
        return runs

    # ---------------------------------------------------------------------------- rtos bare

    def _rtos_latency(self, load: bool, samples: int, hist: Path) -> latmus.LatencyReport:
        run = rtos.latency(
            period_us=PERIOD_US,
            samples=samples,
            load=load,
            icount=self.icount,
            timeout_s=rtos.default_latency_timeout(samples, PERIOD_US, load) * 2,
            histogram_path=hist,
            on_line=None,
        )
        return run.report

    def rtos_bare(self, load: bool, samples: int, row_id: str) -> RunOutput:
        hist = self.data / f"{row_id}.dat"
        report = self._rtos_latency(load, samples, hist)
        stats = latstats.rtos_stats(report)
        label = "rtos bare metal, rtos load" if load else "rtos bare metal, idle"
        row = Row(row_id, label, "rtos bare", load, stats, dict(report.histogram.counts), hist, row_id)
        args = ["rtos", "latency"] + ["--icount"] * self.icount
        args += ["--period-us", str(PERIOD_US), "--samples", str(samples)] + ["--load"] * load
        args += ["--histogram", paths.display(hist)]
        bootargs = rtos.format_bootargs({"period_us": PERIOD_US, "samples": samples, "load": load})
        doc = RunDoc(row_id, label, _rtmux_cmd(args), rtos.shown_command("latency", bootargs, self.icount))
        out = RunOutput(rows=[row], docs=[doc], summary=_summary(stats))
        if self.opts.quick and self.icount:
            out.records = _records(report)
        return out

    def rtos_repeat(self, load: bool, k: int) -> RunOutput:
        kind = "load" if load else "idle"
        report = self._rtos_latency(
            load, SAMPLES_QUICK, self.data / "determinism" / f"rtos-bare-{kind}-{k}.dat"
        )
        return RunOutput(records=_records(report), summary=_summary(latstats.rtos_stats(report)))

    def ctxsw(self) -> RunOutput:
        ctx = rtos.ctxsw(switches=SWITCHES, icount=self.icount, timeout_s=rtos.CTXSW_TIMEOUT_S, echo=None)
        args = ["rtos", "ctxsw"] + ["--icount"] * self.icount + ["--switches", str(SWITCHES)]
        shown = rtos.shown_command("ctxsw", rtos.format_bootargs({"switches": SWITCHES}), self.icount)
        return RunOutput(
            ctxsw=ctx,
            docs=[RunDoc("ctxsw", "rtos context switch", _rtmux_cmd(args), shown)],
            summary=f"{ctx.ns_per_switch:.3f} ns per switch",
        )

    # ------------------------------------------------------------------------------- Linux

    def _linux_timeout(self, plan: sysbench.Plan) -> float:
        """Three times the predicted wall time, plus 5 minutes."""
        return 300.0 + 3.0 * plan_cost(self.icount, plan, "rtmux")

    def _write_script(self, run_id: str, plan: sysbench.Plan) -> Path:
        path = self.data / f"{run_id}.sh"
        path.write_text(sysbench.script(plan) + "\n", encoding="utf-8")
        return path

    def _cyclictest_row(
        self,
        row_id: str,
        label: str,
        system_name: str,
        load: bool,
        hist: cyclictest.Histogram,
        run_id: str,
        started: datetime,
        command: str,
    ) -> Row:
        path = self.data / f"{row_id}.dat"
        cyclictest.write_gnuplot(
            path,
            hist,
            title=label,
            started=started,
            mode=qemu.mode_description(self.icount),
            load=load,
            command=command,
        )
        return Row(row_id, label, system_name, load, hist.stats(), dict(hist.counts), path, run_id)

    def linux_bare(self, flavour: str, plan: sysbench.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = f"linux-{flavour}"
        guest = self.guests[flavour]
        script_path = self._write_script(run_id, plan)
        argv = linux.boot_argv(guest, smp=1, memory=linux.DEFAULT_MEMORY, icount=self.icount, append="")
        started = datetime.now().astimezone()
        result = sysbench.run(
            argv, plan, what=f"Linux {flavour} bare", timeout_s=self._linux_timeout(plan), on_phase=phase
        )
        _check_kernel(result, guest.kernel.release, run_id)
        name = "Linux std" if flavour == "std" else "Linux PREEMPT_RT"
        rtmux_args = ["linux", "run", "--kernel", flavour] + ["--icount"] * self.icount + ["--smp", "1"]
        doc = RunDoc(
            run_id,
            f"{name} bare (-smp 1)",
            f"{_rtmux_cmd(rtmux_args)} --linux-cmd {_script_cmd(script_path)}",
            _shown_argv(argv),
            sysbench.script(plan),
        )
        assert result.idle is not None and result.loaded is not None
        cmd_idle = cyclictest.command(plan.samples, sysbench.histfile("idle"))
        cmd_loaded = cyclictest.command(plan.samples, sysbench.histfile("loaded"))
        rows = [
            self._cyclictest_row(
                f"{run_id}-idle",
                f"{name} (bare, -smp 1), idle",
                name,
                False,
                result.idle,
                run_id,
                started,
                cmd_idle,
            ),
            self._cyclictest_row(
                f"{run_id}-load",
                f"{name} (bare, -smp 1), Linux load",
                name,
                True,
                result.loaded,
                run_id,
                started,
                cmd_loaded,
            ),
        ]
        return RunOutput(rows=rows, linux=result, docs=[doc], summary=_linux_summary(result))

    def _system_doc(self, run_id: str, title: str, name: str, rtos_args: str, plan: sysbench.Plan) -> RunDoc:
        argv, _ = self.systems[name]
        script_path = self._write_script(run_id, plan)
        args = (
            ["run"]
            + ["--icount"] * self.icount
            + ["--rtos-app", "latency", "--bootargs", f"rtos={rtos_args}"]
        )
        return RunDoc(
            run_id,
            title,
            f"{_rtmux_cmd(args)} --linux-cmd {_script_cmd(script_path)}",
            _shown_argv(argv),
            sysbench.script(plan),
        )

    def _rtos_partition_row(
        self,
        row_id: str,
        label: str,
        load: bool,
        report: latmus.LatencyReport,
        run_id: str,
        started: datetime,
        rtos_args: str,
    ) -> Row:
        path = self.data / f"{row_id}.dat"
        latmus.write_histogram(
            path,
            report,
            started=started,
            period_us=PERIOD_US,
            mode=qemu.mode_description(self.icount),
            load=load,
            command=f"./rtmux run --rtos-app latency --bootargs rtos='{rtos_args}'",
        )
        stats = latstats.rtos_stats(report)
        return Row(row_id, label, "rtos in rtmux", load, stats, dict(report.histogram.counts), path, run_id)

    def rtmux_rtos_idle(self, plan: sysbench.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-rtos-idle"
        rtos_samples = self.samples + PARTITION_WARMUP
        rtos_args = f"period_us={PERIOD_US} samples={rtos_samples}"
        doc = self._system_doc(run_id, "rtmux: rtos partition, Linux idle", "rtos-idle", rtos_args, plan)
        started = datetime.now().astimezone()
        result = sysbench.run(
            self.systems["rtos-idle"][0],
            plan,
            what="rtmux, Linux idle",
            timeout_s=self._linux_timeout(plan),
            rtos_samples=rtos_samples,
            on_phase=phase,
        )
        assert result.rtos is not None
        row = self._rtos_partition_row(
            "rtos-rtmux-idle",
            "rtos in rtmux partition, Linux idle",
            False,
            result.rtos,
            run_id,
            started,
            rtos_args,
        )
        return RunOutput(rows=[row], linux=result, docs=[doc], summary=_summary(row.stats))

    def rtmux_loaded(self, plan: sysbench.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-loaded"
        rtos_samples = self.samples + PARTITION_WARMUP
        rtos_args = f"period_us={PERIOD_US} samples={rtos_samples}"
        doc = self._system_doc(
            run_id, "rtmux: rtos partition and Linux cyclictest, Linux loaded", "rtos-loaded", rtos_args, plan
        )
        started = datetime.now().astimezone()
        result = sysbench.run(
            self.systems["rtos-loaded"][0],
            plan,
            what="rtmux, Linux loaded",
            timeout_s=self._linux_timeout(plan),
            rtos_samples=rtos_samples,
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.rtos is not None and result.loaded is not None
        rows = [
            self._rtos_partition_row(
                "rtos-rtmux-load",
                "rtos in rtmux partition, Linux load",
                True,
                result.rtos,
                run_id,
                started,
                rtos_args,
            ),
            self._cyclictest_row(
                "linux-rtmux-load",
                "Linux std under rtmux, Linux load",
                "Linux under rtmux",
                True,
                result.loaded,
                run_id,
                started,
                cyclictest.command(plan.samples, sysbench.histfile("loaded")),
            ),
        ]
        return RunOutput(
            rows=rows,
            linux=result,
            docs=[doc],
            summary=f"rtos {_summary(rows[0].stats)}; Linux {_summary(rows[1].stats)}",
        )

    def rtmux_linux_idle(self, plan: sysbench.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-linux"
        rtos_args = f"period_us={PERIOD_US} samples=0"
        doc = self._system_doc(
            run_id, "rtmux: Linux boot, hackbench and cyclictest, Linux idle", "linux", rtos_args, plan
        )
        started = datetime.now().astimezone()
        result = sysbench.run(
            self.systems["linux"][0],
            plan,
            what="rtmux, Linux cyclictest",
            timeout_s=self._linux_timeout(plan),
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.idle is not None
        row = self._cyclictest_row(
            "linux-rtmux-idle",
            "Linux std under rtmux, idle",
            "Linux under rtmux",
            False,
            result.idle,
            run_id,
            started,
            cyclictest.command(plan.samples, sysbench.histfile("idle")),
        )
        return RunOutput(rows=[row], linux=result, docs=[doc], summary=_linux_summary(result))

    def rtmux_linux_cpu0(self, plan: sysbench.Plan, phase: Callable[[str], None]) -> RunOutput:
        """The icount round-robin check of the design brief: the loaded Linux case under rtmux with the
        measured work moved to CPU 0 (the partitions' CPUs exchanged, the rtos sampling on CPU 1)."""
        run_id = "rtmux-linux-cpu0"
        rtos_args = f"period_us={PERIOD_US} samples=0"
        argv, config = self.systems["linux-cpu0"]
        script_path = self._write_script(run_id, plan)
        args = ["run", "--config", paths.display(config)] + ["--icount"] * self.icount
        args += ["--rtos-app", "latency", "--bootargs", f"rtos={rtos_args}"]
        doc = RunDoc(
            run_id,
            "rtmux, artifact check: Linux partition on CPU 0 (qemu-virt.toml with the CPUs exchanged)",
            f"{_rtmux_cmd(args)} --linux-cmd {_script_cmd(script_path)}",
            _shown_argv(argv),
            sysbench.script(plan),
        )
        started = datetime.now().astimezone()
        result = sysbench.run(
            argv, plan, what="rtmux, Linux on CPU 0", timeout_s=self._linux_timeout(plan), on_phase=phase
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.loaded is not None
        row = self._cyclictest_row(
            "linux-rtmux0-load",
            "Linux std under rtmux on CPU 0 (artifact check), Linux load",
            "Linux under rtmux on CPU 0",
            True,
            result.loaded,
            run_id,
            started,
            cyclictest.command(plan.samples, sysbench.histfile("loaded")),
        )
        return RunOutput(rows=[row], linux=result, docs=[doc], summary=_summary(row.stats))


def _summary(stats: latstats.LatencyStats) -> str:
    f = latstats.fmt_value
    return (
        f"min {f(stats, stats.min_us)} avg {f(stats, stats.avg_us, average=True)} "
        f"p99.9 {latstats.fmt_percentile(stats, stats.p999_us)} max {f(stats, stats.max_us)} us"
    )


def _linux_summary(r: sysbench.LinuxResult) -> str:
    parts = [f"{r.kernel}, shell at {r.boot_s:.2f} s"]
    if r.hackbench_s is not None:
        parts.append(f"hackbench {r.hackbench_s:.3f} s")
    for name, hist in (("idle", r.idle), ("loaded", r.loaded)):
        if hist is not None:
            parts.append(f"{name} {_summary(hist.stats())}")
    return "; ".join(parts)


def _check_kernel(result: sysbench.LinuxResult, release: str, what: str) -> None:
    if result.kernel != release:
        raise RtmuxError(f"{what}: Linux reports `uname -r` {result.kernel!r}, {release!r} was booted")


def _records(report: latmus.LatencyReport) -> tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]:
    """What must repeat exactly between two runs of the same deterministic case."""
    return (
        report.summary.text,
        tuple(repr(i) for i in report.intervals),
        tuple(sorted(report.histogram.counts.items())),
    )


def compare_records(
    label: str,
    first: tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]],
    second: tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]],
) -> list[str]:
    """The differences between two runs' records (empty when identical), each said in words."""
    diffs = []
    if first[0] != second[0]:
        diffs.append(f"{label}: RTS| lines differ: `{first[0]}` vs `{second[0]}`")
    if first[1] != second[1]:
        diffs.append(f"{label}: RTD| interval lines differ")
    if first[2] != second[2]:
        diffs.append(f"{label}: histograms differ")
    return diffs


# ------------------------------------------------------------------------------------- parallel runs


class BenchTimeout(RtmuxError):
    exit_status = EXIT_TIMEOUT


def child_pids() -> list[int]:
    """The processes this process started that are still running (Linux: /proc/PID/task/TID/children)."""
    pids: list[int] = []
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            pids += [int(p) for p in Path(path).read_text().split()]
        except (OSError, ValueError):
            continue
    return pids


def _kill_children() -> None:
    """Kill the QEMUs of unfinished runs: worker threads cannot be interrupted, but each run ends as soon
    as its QEMU is gone (run_console then returns, and the run fails)."""
    for pid in child_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def execute(
    runs: list[Run],
    jobs: int,
    progress: Progress,
    heartbeat_s: float = 60.0,
    on_abort: Callable[[], None] = _kill_children,
    timeout_s: float | None = None,
) -> dict[str, RunOutput]:
    """Run everything, `jobs` at a time, longest first. The first failure, an interruption, or the
    overall wall-clock limit `timeout_s` calls `on_abort` to end the runs still going, and is raised."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    order = sorted(runs, key=lambda r: -r.predicted_s) if jobs > 1 else list(runs)
    outputs: dict[str, RunOutput] = {}

    def work(run: Run) -> RunOutput:
        progress.begin(run.id, run.title)
        out = run.work(lambda name: progress.say(f"case {progress.number(run.id)}: {run.title}: {name}"))
        progress.end(run.id, out.summary)
        return out

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="bench")
    futures = {pool.submit(work, run): run for run in order}
    pending = set(futures)
    try:
        while pending:
            wait = (
                heartbeat_s if deadline is None else max(min(heartbeat_s, deadline - time.monotonic()), 0.0)
            )
            done, pending = concurrent.futures.wait(
                pending, timeout=wait, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for fut in done:
                outputs[futures[fut].id] = fut.result()  # raises the run's failure
            if pending and deadline is not None and time.monotonic() >= deadline:
                raise BenchTimeout(
                    f"bench: the wall-clock limit of {timeout_s:g} s expired while case(s) "
                    f"{', '.join(progress.running())} ran; they were stopped"
                )
            if not done and progress.quiet_for() >= heartbeat_s:
                progress.say(f"running case(s) {', '.join(progress.running())}")
    except BaseException:
        for fut in pending:
            fut.cancel()
        on_abort()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return outputs


# What the measured images and scripts are built from (BENCHMARKS.md and the plot are outputs).
SOURCE_PATHS = ("hyp", "rtos", "lib", "guest", "configs", "tools", "Makefile")


def _git(args: list[str]) -> str | None:
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=paths.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def source_version() -> str:
    """The commit measured (`git describe --always`), `-dirty` when a tracked source differs from it;
    "" when git cannot tell."""
    version = _git(["describe", "--always"])
    if not version:
        return ""
    changed = _git(["status", "--porcelain", "--untracked-files=no", "--", *SOURCE_PATHS])
    return f"{version}-dirty" if changed else version


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def run_bench(opts: Options, out: TextIO | None = None) -> BenchResults:
    """The whole benchmark: prepare, run every case, write BENCHMARKS.md's section, CSV, plot, data."""
    from rtmux import benchreport

    out = out if out is not None else sys.stdout
    t0 = time.monotonic()
    jobs = 1 if opts.realtime else max(1, opts.jobs)
    bench = Bench(opts, out)
    version = qemu.qemu_version()
    mode = "icount" if bench.icount else "plain TCG emulation (host-noise-dominated)"
    print(
        f"rtmux bench: {mode}, {bench.samples} samples per case at {PERIOD_US} us, {jobs} run(s) at a time; "
        f"{version}",
        file=out,
        flush=True,
    )
    source = source_version()
    bench.prepare()
    runs = bench.runs()
    progress = Progress({r.id: r.predicted_s for r in runs}, jobs, out)
    progress.say(f"{len(runs)} QEMU runs")
    outputs = execute(runs, jobs, progress, timeout_s=opts.timeout_s)
    results = BenchResults(
        mode=bench.mode,
        quick=opts.quick,
        samples=bench.samples,
        date=datetime.now(UTC),
        qemu_version=version,
        jobs=jobs,
        hyp_lines=bench.hyp_lines,
        partition_samples=bench.samples + PARTITION_WARMUP,
        hackbench_loops=HACKBENCH_LOOPS_QUICK if opts.quick else HACKBENCH_LOOPS_FULL,
        source=source,
    )
    for run in runs:  # the table keeps the runs' order, not their finishing order
        o = outputs[run.id]
        results.rows += o.rows
        results.docs += o.docs
        if o.linux is not None:
            results.linux[run.id] = o.linux
        if o.ctxsw is not None:
            results.ctxsw = o.ctxsw
    order = [
        "rtos-bare-idle",
        "rtos-bare-load",
        "rtos-rtmux-idle",
        "rtos-rtmux-load",
        "linux-std-idle",
        "linux-std-load",
        "linux-rt-idle",
        "linux-rt-load",
        "linux-rtmux-idle",
        "linux-rtmux-load",
        "linux-rtmux0-load",
    ]
    results.rows.sort(key=lambda r: order.index(r.id) if r.id in order else len(order))
    for flavour, guest in bench.guests.items():
        k = guest.kernel
        results.kernels[flavour] = KernelInfo(flavour, k.release, k.package.name, k.package.version)
    if bench.icount:
        results.determinism = _determinism(outputs, opts.quick)
    results.wall_s = time.monotonic() - t0
    # Everything measured, for a later look (pickle: same code, same machine; not an exchange format).
    (bench.data / "results.pickle").write_bytes(pickle.dumps(results))
    written = benchreport.write_all(results, opts.output)
    print(f"rtmux bench: done in {fmt_duration(results.wall_s)}", file=out)
    for path in written:
        print(f"  wrote {paths.display(path)}", file=out)
    print(f"  gnuplot histograms in {paths.display(bench.data)}/", file=out)
    for line in benchreport.summary_lines(results):
        print(f"  {line}", file=out)
    out.flush()
    return results


def _determinism(outputs: dict[str, RunOutput], quick: bool) -> Determinism:
    diffs: list[str] = []
    labels = []
    for kind, main in (("idle", "rtos-bare-idle"), ("load", "rtos-bare-load")):
        first = outputs[main].records if quick else outputs[f"repeat-{kind}-1"].records
        second = outputs[f"repeat-{kind}-2"].records
        assert first is not None and second is not None
        label = "with its own load" if kind == "load" else "idle"
        labels.append(label)
        diffs += compare_records(label, first, second)
    return Determinism(SAMPLES_QUICK, labels, diffs)


# ------------------------------------------------------------------------------------- BENCHMARKS.md


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
