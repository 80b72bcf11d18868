"""Running the benchmark: every case as its own QEMU, `--jobs` at a time, then the report."""

from __future__ import annotations

import concurrent.futures
import glob
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rtmux import paths, qemu
from rtmux.bench import report
from rtmux.bench.cases import Bench
from rtmux.bench.model import (
    CONTROL_ROWS,
    FILES_ROWS,
    HACKBENCH_LOOPS_FULL,
    HACKBENCH_LOOPS_QUICK,
    PARTITION_WARMUP,
    PERIOD_US,
    SAMPLES_QUICK,
    BenchResults,
    Determinism,
    KernelInfo,
    Options,
    Run,
    RunOutput,
    compare_records,
    fmt_duration,
)
from rtmux.bench.progress import Progress
from rtmux.errors import EXIT_TIMEOUT, RtmuxError

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


# What the measured images and scripts are built from (BENCHMARKS.md and the figures are outputs).
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
    """The whole benchmark: prepare, run every case, write BENCHMARKS.md's section, CSV, figures, data."""

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
        results.posix_cost += o.posix_cost
        results.hypcost += o.hypcost
    order = [
        "rtos-bare-idle",
        "rtos-bare-load",
        "rtos-rtmux-idle",
        "rtos-rtmux-load",
        "rtos-rtmux-vbus",
        "rtos-rtmux-gicv2-load",
        "linux-std-idle",
        "linux-std-load",
        "linux-rt-idle",
        "linux-rt-load",
        "linux-rtmux-idle",
        "linux-rtmux-load",
        "linux-rtmux-gicv2-load",
        "linux-rtmux0-load",
    ]

    def rank(row_id: str) -> int:  # the others in the runs' order, the POSIX control loop's, Linux's files'
        if row_id in CONTROL_ROWS:
            return len(order) + 1 + CONTROL_ROWS.index(row_id)
        if row_id in FILES_ROWS:
            return len(order) + 1 + len(CONTROL_ROWS) + FILES_ROWS.index(row_id)
        return order.index(row_id) if row_id in order else len(order)

    results.rows.sort(key=lambda r: rank(r.id))
    for flavour, guest in bench.guests.items():
        k = guest.kernel
        results.kernels[flavour] = KernelInfo(flavour, k.release, k.package.name, k.package.version)
    if bench.icount:
        results.determinism = _determinism(outputs, opts.quick)
    results.wall_s = time.monotonic() - t0
    # Everything measured, for a later look (pickle: same code, same machine; not an exchange format).
    (bench.data / "results.pickle").write_bytes(pickle.dumps(results))
    written = report.write_all(
        results, opts.output, report.figure_dir(opts.output, opts.quick, opts.data_dir)
    )
    print(f"rtmux bench: done in {fmt_duration(results.wall_s)}", file=out)
    for path in written:
        print(f"  wrote {paths.display(path)}", file=out)
    print(f"  gnuplot histograms in {paths.display(bench.data)}/", file=out)
    for line in report.summary_lines(results):
        print(f"  {line}", file=out)
    out.flush()
    return results


def redraw(output: Path, out: TextIO | None = None) -> list[Path]:
    """`./rtmux bench --redraw`: the headline figure again from `output`'s CSV and section, no QEMU run."""
    out = out if out is not None else sys.stdout
    written = report.redraw(output)
    for path in written:
        print(f"rtmux bench: wrote {paths.display(path)}", file=out, flush=True)
    return written


def _determinism(outputs: dict[str, RunOutput], quick: bool) -> Determinism:
    diffs: list[str] = []
    odd: list[str] = []
    labels = []
    for kind, main in (("idle", "rtos-bare-idle"), ("load", "rtos-bare-load")):
        keys = [main if quick else f"repeat-{kind}-1", f"repeat-{kind}-2", f"repeat-{kind}-3"]
        runs = [r for r in (outputs[k].records for k in keys) if r is not None]
        assert len(runs) == 3
        label = "with its own load" if kind == "load" else "idle"
        labels.append(label)
        if runs[0] == runs[1] == runs[2]:
            continue
        agree = [n for n in range(3) if runs[n - 1] == runs[n - 2]]  # the two others agree with each other
        if agree:
            n = agree[0]
            said = "; ".join(compare_records(label, runs[n - 1], runs[n]))
            odd.append(f"{label}: run {n + 1} of 3 differed from the two others ({said})")
        else:  # no two runs agree: not the emulator's one-off
            diffs += compare_records(label, runs[0], runs[1]) + compare_records(label, runs[0], runs[2])
    return Determinism(SAMPLES_QUICK, labels, diffs, odd)
