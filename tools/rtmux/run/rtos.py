"""`./rtmux rtos ...`: build, boot and check the rtos images under QEMU (docs/rtos-console.md)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from rtmux import paths, qemu
from rtmux.errors import EXIT_TIMEOUT, GuestFailure, RtmuxError, SetupError, UsageError
from rtmux.formats import latmus
from rtmux.formats.rtos_console import find_fatal, has_system_off, parse_selftest
from rtmux.run import gdb

BUILD_TIMEOUT_S = 1800
# `rtos run` has a wall-clock limit like every QEMU run; a person at a terminal gets as long as with
# `./rtmux run` and `./rtmux linux run`. Reaching it ends the run normally (run() below).
RUN_TIMEOUT_S = 600.0
INTERACTIVE_RUN_TIMEOUT_S = 3600.0
SELFTEST_TIMEOUT_S = 300.0
CTXSW_TIMEOUT_S = 300.0
DEFAULT_PERIOD_US = 1000
DEFAULT_SAMPLES = 10000
DEFAULT_SWITCHES = 20000


def build(enabled: bool = True) -> None:
    """Run `make -s rtos` in the repository root so that no stale image is ever booted."""
    if not enabled:
        return
    if not (paths.REPO_ROOT / "Makefile").is_file():
        raise SetupError(f"no Makefile in {paths.REPO_ROOT}; cannot build the rtos images")
    try:
        proc = subprocess.Popen(
            ["make", "-s", "rtos"], cwd=paths.REPO_ROOT, stdin=subprocess.DEVNULL, process_group=0
        )
    except FileNotFoundError as exc:
        raise SetupError(
            "`make` not found; install the build tools with `make deps` (tools/deps.sh)"
        ) from exc
    try:
        rc = proc.wait(timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"`make -s rtos` did not finish within {BUILD_TIMEOUT_S} s") from exc
    finally:
        if proc.poll() is None:
            # make runs in its own process group (which it and the compilers it started form); end it.
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    if rc != 0:
        raise SetupError(
            f"`make -s rtos` failed (exit status {rc}); fix the build (output above), "
            "or pass --no-build to boot the images already in build/rtos/"
        )


# The reference loads rtos/include/rtos/cpuload.h defines for the second vCPU (boot argument cpu1=).
CPU1_PATTERNS = ("spin", "copy", "tick", "sweep")
BUSY_CPU1_PATTERNS = ("spin", "copy")  # those that never let the second vCPU idle
# The most CPUs such a load may occupy (load_cpus=N, RT_CPULOAD_MAX_CPUS): -smp 4.
LOAD_CPUS_MAX = 3


def image_for(app: str | Path) -> Path:
    """build/rtos/<app>.img for an in-tree application's name, or an image's own path (an
    application built with the rtos SDK)."""
    if isinstance(app, Path):
        if not app.is_file():
            raise SetupError(f"image {paths.display(app)} not found; build it first (`make` in its folder)")
        return app
    image = paths.rtos_image(app)
    if not image.is_file():
        raise SetupError(f"image {paths.display(image)} not found; build it with `make rtos`")
    return image


# An application linked with the C library ends with exit(N) (or main's return), rtos/libc/syscalls.c.
EXIT_LINE = re.compile(r"^(?:\[rtos\] )?rtos: exit\((-?\d+)\)$", re.M)


def app_exit_status(console: str) -> int | None:
    """The status of the application's exit() as a process's (0-255), None if it did not call it."""
    found = EXIT_LINE.findall(console)
    return int(found[-1]) & 0xFF if found else None


def image_label(app: str | Path) -> str:
    """How messages name the image: NAME.img."""
    return app.name if isinstance(app, Path) else f"{app}.img"


def boot(
    app: str | Path,
    bootargs: str,
    *,
    icount: bool,
    timeout_s: float,
    echo: TextIO | None = None,
    on_line: Callable[[str], None] | None = None,
    interactive: bool = False,
    smp: int = 1,
    cntfrq: int | None = None,
    gic: int = 3,
    extra_args: Sequence[str] = (),
) -> qemu.RunResult:
    """Boot build/rtos/<app>.img (or the image at a path) under QEMU (one vCPU unless `smp`; the
    counter at `cntfrq` Hz when given; a GICv2 board with `gic` 2; QEMU's `extra_args` last) and
    capture its console."""
    check_cntfrq(cntfrq)
    qemu_path = qemu.find_qemu()
    image = image_for(app)
    cmd = qemu.qemu_command(image, bootargs, icount=icount, smp=smp, qemu=qemu_path, cntfrq=cntfrq, gic=gic)
    cmd += extra_args
    return qemu.run_console(cmd, timeout_s, echo=echo, on_line=on_line, interactive=interactive)


# The counter frequencies the rtos accepts (k_time_init): CNTFRQ_EL0 1 Hz to 4 GHz. Boards: 24 MHz
# (i.MX 8M), 54 MHz (Raspberry Pi 4), 62.5 MHz (QEMU's default), 1 GHz (Armv8.6 and later).
CNTFRQ_MAX = 4_000_000_000


def check_cntfrq(cntfrq: int | None) -> None:
    if cntfrq is not None and not 1 <= cntfrq <= CNTFRQ_MAX:
        raise RtmuxError(
            f"the counter frequency must be 1 Hz to 4 GHz (the rtos refuses others), not {cntfrq}"
        )


def format_bootargs(args: dict[str, object]) -> str:
    """`key=value` boot arguments, space separated, in the given order."""
    parts = []
    for key, value in args.items():
        text = str(int(value)) if isinstance(value, bool) else str(value)
        if not text or any(c.isspace() for c in text):
            raise RtmuxError(f"boot argument {key}={text!r} must be non-empty and contain no blanks")
        parts.append(f"{key}={text}")
    return " ".join(parts)


def check_exit(result: qemu.RunResult, what: str, *, need_system_off: bool = True) -> None:
    """Raise GuestFailure unless the guest ended by itself, cleanly: no timeout, no fatal error."""
    if result.timed_out:
        raise GuestFailure(
            f"{what}: QEMU timed out after {result.timeout_s:g} s (wall clock) and was killed",
            result,
            EXIT_TIMEOUT,
        )
    fatal = find_fatal(result.console)
    if fatal is not None:
        raise GuestFailure(f"{what}: the guest stopped after a fatal error: {fatal.describe()}", result)
    if result.returncode != 0:
        raise GuestFailure(f"{what}: QEMU exited with status {result.returncode}", result)
    if need_system_off and not has_system_off(result.console):
        raise GuestFailure(f"{what}: QEMU exited but the console has no `rtos: system off` line", result)


# ---------------------------------------------------------------------------------------------- run


def run(
    app: str | Path,
    append: str,
    *,
    icount: bool,
    timeout_s: float | None,
    cntfrq: int | None = None,
    gic: int = 3,
    gdb_request: gdb.Request | None = None,
) -> qemu.RunResult:
    """Boot an image with the console on stdout (and stdin on QEMU when it is a terminal) until it ends
    or `timeout_s` (default: RUN_TIMEOUT_S, INTERACTIVE_RUN_TIMEOUT_S on a terminal) has passed.

    This is the command to watch an application (the demo never ends by itself), not to judge one
    (`rtos selftest`, `latency` and `ctxsw` do, and a timeout fails them): reaching the limit stops
    QEMU and ends the run normally, with a line saying so instead of the console again, which was
    already on stdout. A fatal error or QEMU's own failure still fails it.

    `gdb_request` (its target is ignored: the image's own ELF): QEMU's gdb server, announced on stderr
    with the gdb command that attaches to it; the default limit is then INTERACTIVE_RUN_TIMEOUT_S."""
    extra: list[str] = []
    if gdb_request is not None:
        image = image_for(app)
        server = gdb.server(gdb.rtos_target(image, f"{image_label(app)} (the rtos alone)", (0,)), gdb_request)
        extra = server.qemu_args()
        for line in gdb.instructions(server):
            print(f"rtmux: {line}", file=sys.stderr)
        sys.stderr.flush()
    if timeout_s is None:
        interactive = gdb_request is not None or (sys.stdin is not None and sys.stdin.isatty())
        timeout_s = INTERACTIVE_RUN_TIMEOUT_S if interactive else RUN_TIMEOUT_S
    result = boot(
        app,
        append,
        icount=icount,
        timeout_s=timeout_s,
        echo=sys.stdout,
        interactive=True,
        cntfrq=cntfrq,
        gic=gic,
        extra_args=extra,
    )
    if result.timed_out:
        fatal = find_fatal(result.console)
        if fatal is not None:
            raise GuestFailure(
                f"{image_label(app)}: the guest stopped after a fatal error: {fatal.describe()}", result
            )
        sys.stdout.flush()
        print(
            f"rtmux: {image_label(app)}: stopped after {timeout_s:g} s (wall clock), the limit of this run; "
            "--timeout S sets it",
            file=sys.stderr,
            flush=True,
        )
        return result
    check_exit(result, image_label(app), need_system_off=False)
    return result


# ----------------------------------------------------------------------------------------- selftest


def selftest(
    only: str | None,
    *,
    icount: bool,
    timeout_s: float,
    echo: TextIO | None,
    cntfrq: int | None = None,
    gic: int = 3,
) -> tuple[int, int]:
    """Run the on-target tests; (passed, failed) when all passed, GuestFailure otherwise."""
    bootargs = format_bootargs({"only": only}) if only else ""
    result = boot("selftest", bootargs, icount=icount, timeout_s=timeout_s, echo=echo, cntfrq=cntfrq, gic=gic)
    if result.timed_out:
        check_exit(result, "selftest")
    report = parse_selftest(result.console)
    if report.failures or (report.failed or 0) > 0:
        names = ", ".join(r.name for r in report.failures) or "see the console"
        raise GuestFailure(
            f"selftest: {report.failed or len(report.failures)} test(s) failed: {names}", result
        )
    check_exit(result, "selftest")
    if not report.has_summary:
        raise GuestFailure("selftest: no summary line `N passed, M failed` on the console", result)
    assert report.passed is not None and report.failed is not None
    if report.passed == 0:
        raise GuestFailure("selftest: no test ran (0 passed)", result)
    return report.passed, report.failed


# ------------------------------------------------------------------------------------------ latency


def default_latency_timeout(samples: int, period_us: int, load: bool = False) -> float:
    """A generous wall-clock limit for a latency run: 2 minutes plus 10x (30x with load) its guest time.

    Plain emulation runs about in real time. In icount mode an idle guest skips to its next timer and
    runs far faster than real time, but a loaded guest never idles and every guest nanosecond costs one
    emulated instruction: about 6 s of host time per guest second measured on a 2-core development
    machine.
    """
    return 120.0 + (30.0 if load else 10.0) * samples * period_us / 1e6


@dataclass
class LatencyRun:
    report: latmus.LatencyReport
    result: qemu.RunResult
    histogram_path: Path


def latency(
    *,
    period_us: int,
    samples: int,
    load: bool,
    icount: bool,
    timeout_s: float,
    histogram_path: Path,
    on_line: Callable[[str], None] | None,
    cpu1: str | None = None,
    load_cpus: int = 1,
    cntfrq: int | None = None,
    gic: int = 3,
    trace: bool = False,
) -> LatencyRun:
    """Run the latency monitor, check its output strictly and write the gnuplot histogram. With `cpu1`
    (a pattern of rtos/cpuload.h) the board has 1 + `load_cpus` vCPUs and all but the first run that
    reference load; with `trace` the rtos's scheduler trace records all along (trace=1)."""
    if period_us < 1:
        raise RtmuxError("the sampling period must be at least 1 us")
    if samples < 1:
        raise RtmuxError("the sample count must be at least 1 (every run needs an end)")
    args: dict[str, object] = {"period_us": period_us, "samples": samples, "load": load}
    if not 1 <= load_cpus <= LOAD_CPUS_MAX:
        raise RtmuxError(f"the load may occupy 1 to {LOAD_CPUS_MAX} CPUs, not {load_cpus}")
    if cpu1 is not None:
        args["cpu1"] = cpu1
        if load_cpus != 1:
            args["load_cpus"] = load_cpus
    elif load_cpus != 1:
        raise RtmuxError("load_cpus needs a load pattern (cpu1)")
    if trace:
        args["trace"] = 1
    if icount and load and cpu1 in BUSY_CPU1_PATTERNS:
        raise UsageError(
            f"--load with --cpu1 {cpu1} does not run in icount mode: QEMU's icount runs the vCPUs in turn in "
            "one host thread, and beside a busy vCPU the rtos's CPU, with the load's ~21,000 interrupts a "
            "second, stops getting guest time (not one of 5 samples in 150 s; the same image without "
            "icount: 1,000 samples in 1.6 s). BENCHMARKS.md, 'The rtos beside a busy vCPU', explains the "
            "round-robin. Run it without --icount (timing then follows the host), or with --cpu1 tick"
        )
    bootargs = format_bootargs(args)
    smp = 1 if cpu1 is None else 1 + load_cpus
    started = datetime.now().astimezone()
    result = boot(
        "latency",
        bootargs,
        icount=icount,
        timeout_s=timeout_s,
        on_line=on_line,
        smp=smp,
        cntfrq=cntfrq,
        gic=gic,
    )
    if cpu1 is not None and f"cpu1 load '{cpu1}' started on {load_cpus} CPU(s)" not in result.console:
        raise GuestFailure(f"latency: the cpu1={cpu1} load did not start on {load_cpus} CPU(s)", result)
    check_exit(result, "latency")
    if trace and "rtos: trace on" not in result.console:
        raise GuestFailure("latency: the rtos did not start its trace (trace=1)", result)
    try:
        report = latmus.parse_latency(result.console)
    except latmus.LatmusFormatError as exc:
        raise GuestFailure(f"latency: malformed output: {exc}", result) from exc
    if report.histogram.samples != samples:
        raise GuestFailure(
            f"latency: the histogram has {report.histogram.samples} samples, {samples} were requested", result
        )
    if report.header.period_us is not None and report.header.period_us != period_us:
        raise GuestFailure(
            f"latency: RTT| reports a {report.header.period_us} us period, {period_us} us was requested",
            result,
        )
    latmus.write_histogram(
        histogram_path,
        report,
        started=started,
        period_us=period_us,
        mode=qemu.mode_description(icount),
        load=load,
        command=shown_command("latency", bootargs, icount, smp, cntfrq, gic),
    )
    return LatencyRun(report, result, histogram_path)


def latency_echo(line: str) -> None:
    """Live view of a latency run: everything but the (long) histogram data lines."""
    if not line.startswith("HSD|"):
        print(line, flush=True)


# -------------------------------------------------------------------------------------------- ctxsw


def ctxsw(*, switches: int, icount: bool, timeout_s: float, echo: TextIO | None) -> latmus.CtxLine:
    if switches < 1:
        raise RtmuxError("the number of switches must be at least 1")
    bootargs = format_bootargs({"switches": switches})
    result = boot("ctxsw", bootargs, icount=icount, timeout_s=timeout_s, echo=echo)
    check_exit(result, "ctxsw")
    try:
        ctx = latmus.parse_ctxsw(result.console)
    except latmus.LatmusFormatError as exc:
        raise GuestFailure(f"ctxsw: malformed output: {exc}", result) from exc
    if ctx.switches < switches:
        raise GuestFailure(f"ctxsw: CTX| reports {ctx.switches} switches, {switches} were requested", result)
    return ctx


def shown_command(
    app: str, bootargs: str, icount: bool, smp: int = 1, cntfrq: int | None = None, gic: int = 3
) -> str:
    """The QEMU command line as documentation shows it: image path relative to the repository root."""
    image = paths.display(paths.rtos_image(app))
    return shlex.join(qemu.qemu_command(image, bootargs, icount=icount, smp=smp, cntfrq=cntfrq, gic=gic))
