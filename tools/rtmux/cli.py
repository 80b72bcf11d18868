"""Command line of ./rtmux."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeAlias

from rtmux import __version__, boarddesc, config, paths, qemu, sdk
from rtmux.bench import model as bench
from rtmux.bench import runner, tail
from rtmux.board import GIC_VERSIONS
from rtmux.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PIPE,
    EXIT_SETUP,
    GuestFailure,
    RtmuxError,
    SetupError,
    UsageError,
)
from rtmux.formats import latmus, rtos_trace
from rtmux.image import debian, sdcard
from rtmux.run import gdb, linux, path, rtos, system, trace

# argparse's type of the object add_subparsers returns.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

EPILOG = """\
exit status: 0 success; 1 the guest failed (test failure, fatal error, malformed output, QEMU error);
2 usage error or something missing (QEMU, an image, a failed build); 124 QEMU timed out and was killed.
Every QEMU run has a wall-clock timeout; on failure the whole guest console is printed to stderr.
Images are rebuilt with `make -s rtos` first unless --no-build is given.
The same options mean the same everywhere: --timeout S (seconds, > 0), --icount, --no-build,
--bootargs (boot arguments; `run` takes PARTITION=ARGS), CONFIG (a system configuration).
"""


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _test_names(text: str) -> str:
    names = [name.strip() for name in text.split(",")]
    if not all(names) or any(not name.replace("_", "").isalnum() for name in names):
        raise argparse.ArgumentTypeError(f"expected test names separated by commas: {text!r}")
    return ",".join(names)


def _add_icount(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--icount",
        action="store_true",
        help=f"deterministic time: -icount {qemu.ICOUNT} (1 instruction = 1 ns of guest time)",
    )


def _add_timeout(
    p: argparse.ArgumentParser,
    default: float | None,
    default_text: str | None = None,
    limits: str = "QEMU is killed after it",
) -> None:
    """--timeout S, the same flag and validation (seconds, > 0) for every command."""
    if default_text is None:
        default_text = f"{default:g} s" if default is not None else "scales with the run"
    p.add_argument(
        "--timeout",
        type=_positive_float,
        default=default,
        metavar="S",
        help=f"wall-clock limit in seconds; {limits} (default {default_text})",
    )


def _add_no_build(p: argparse.ArgumentParser, what: str = "make -s rtos") -> None:
    p.add_argument("--no-build", action="store_true", help=f"use the existing images, skip `{what}`")


def _add_bootargs(p: argparse.ArgumentParser, help_text: str) -> None:
    """--bootargs ARGS; --append, its old spelling, still works (not shown)."""
    p.add_argument("--bootargs", default="", metavar="ARGS", help=help_text)
    p.add_argument("--append", dest="bootargs", help=argparse.SUPPRESS)


def _add_determinism(p: argparse.ArgumentParser) -> None:
    """--linux-script and --seed: the deterministic mode of a Linux boot (measurement only)."""
    p.add_argument(
        "--linux-script",
        type=Path,
        default=None,
        metavar="FILE",
        help="shell script that Linux's init runs at boot (kernel argument rtmux.run=), then powers off; "
        "nothing is typed, so that an --icount run repeats exactly; exits with its status",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="FOR MEASUREMENT ONLY: fixed random seeds (kaslr-seed, rng-seed) derived from N, kept at every "
        "start, QEMU's -seed N and an RTC that follows guest time; a bare Linux boots without its network "
        "(use a system configuration without one too: ./rtmux run warns when it has one), and the "
        "hypervisor reports its entries per CPU at its first tick. With --icount and --linux-script a boot "
        "repeats exactly; every boot has the same KASLR offset",
    )


def _read_script(args: argparse.Namespace) -> str | None:
    if args.linux_script is None:
        return None
    if args.linux_cmd is not None:
        raise SetupError("--linux-cmd and --linux-script exclude each other")
    try:
        return str(args.linux_script.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SetupError(f"--linux-script {args.linux_script}: {exc.strerror}") from exc


def _add_config(p: argparse.ArgumentParser) -> None:
    """CONFIG, a system configuration: optional positional; --config CONFIG still works (not shown)."""
    p.add_argument(
        "config",
        nargs="?",
        type=Path,
        default=config.DEFAULT_CONFIG,
        metavar="CONFIG",
        help=f"TOML system configuration (default {paths.display(config.DEFAULT_CONFIG)})",
    )
    p.add_argument("--config", dest="config_option", type=Path, default=None, help=argparse.SUPPRESS)


def _config_of(args: argparse.Namespace) -> Path:
    option: Path | None = args.config_option
    positional: Path = args.config
    return option if option is not None else positional


def _add_gic(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gic",
        type=int,
        choices=GIC_VERSIONS,
        default=3,
        help="the GIC version QEMU virt gets (3, the default, or 2: a GICv2 as on a Raspberry Pi 4)",
    )


def _add_cntfrq(p: argparse.ArgumentParser) -> None:
    _add_gic(p)
    p.add_argument(
        "--cntfrq",
        type=_positive_int,
        metavar="HZ",
        default=None,
        help="the generic timer's counter frequency instead of QEMU's 62.5 MHz, as on a board: "
        "24000000 (i.MX 8M), 54000000 (Raspberry Pi 4), 1000000000 (Armv8.6+)",
    )


def _port(text: str) -> int:
    port = _positive_int(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 1 to 65535: {text!r}")
    return port


def _add_gdb(p: argparse.ArgumentParser, partition: bool) -> None:
    """--gdb (with `partition`: --gdb [PARTITION]), --gdb-port N, --gdb-wait: QEMU's gdb server."""
    if partition:
        p.add_argument(
            "--gdb",
            nargs="?",
            const="",
            default=None,
            metavar="PARTITION",
            help="start QEMU's gdb server and print the gdb-multiarch command that attaches to it with "
            "PARTITION's symbols (default: the rtos partition's ELF; `hyp`: the hypervisor's; a Linux "
            f"partition: see {gdb.DOC}); the default --timeout is then "
            f"{linux.INTERACTIVE_TIMEOUT_S:g} s",
        )
    else:
        p.add_argument(
            "--gdb",
            action="store_true",
            help="start QEMU's gdb server and print the gdb-multiarch command that attaches to it with the "
            f"image's symbols (its ELF beside it; {gdb.DOC}); the default --timeout is then "
            f"{rtos.INTERACTIVE_RUN_TIMEOUT_S:g} s",
        )
    p.add_argument(
        "--gdb-port",
        type=_port,
        default=None,
        metavar="N",
        help=f"with --gdb: the server's TCP port on {gdb.HOST} (default: a free one)",
    )
    p.add_argument(
        "--gdb-wait",
        action="store_true",
        help="with --gdb: QEMU waits for gdb before the first instruction (QEMU's -S; `continue` starts it)",
    )


def _gdb_request(args: argparse.Namespace) -> gdb.Request | None:
    """--gdb's request, or None without --gdb (refusing --gdb-port and --gdb-wait then)."""
    if args.gdb is None or args.gdb is False:
        if args.gdb_port is not None or args.gdb_wait:
            raise UsageError("--gdb-port and --gdb-wait go with --gdb")
        return None
    target = args.gdb if isinstance(args.gdb, str) and args.gdb else None
    return gdb.Request(target, args.gdb_port, args.gdb_wait)


def _add_common(p: argparse.ArgumentParser, timeout: float | None) -> None:
    _add_icount(p)
    _add_timeout(p, timeout)
    _add_no_build(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rtmux",
        description="rtmux host tools: boot, test and measure the rtos under QEMU.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rtmux {__version__}")
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p_rtos = top.add_parser(
        "rtos",
        help="the real-time executive alone on QEMU (one vCPU)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p_rtos.add_subparsers(dest="rtos_command", required=True, metavar="SUBCOMMAND")

    p = sub.add_parser("run", help="boot an image with the console on stdout (Ctrl-A x quits QEMU)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--app", choices=paths.RTOS_APPS, default="demo", help="which image (default demo)")
    which.add_argument(
        "--image",
        type=Path,
        metavar="FILE",
        help="an application's image built with the rtos SDK (docs/posix.md), instead of --app",
    )
    _add_bootargs(p, 'the rtos\'s boot arguments, e.g. "only=prio_order"')
    _add_icount(p)
    _add_timeout(
        p,
        None,
        f"{rtos.INTERACTIVE_RUN_TIMEOUT_S:g} s on a terminal, {rtos.RUN_TIMEOUT_S:g} s otherwise",
        "QEMU is stopped after it, which ends the run normally",
    )
    _add_no_build(p)
    _add_cntfrq(p)
    _add_gdb(p, partition=False)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("selftest", help="run the on-target test suite; passes only on `N passed, 0 failed`")
    p.add_argument("--only", type=_test_names, metavar="A,B", help="run only these tests")
    _add_common(p, rtos.SELFTEST_TIMEOUT_S)
    _add_cntfrq(p)
    p.set_defaults(func=cmd_selftest)

    p = sub.add_parser("latency", help="timer latency (latmus format) and its gnuplot histogram")
    p.add_argument(
        "--period-us",
        type=_positive_int,
        default=rtos.DEFAULT_PERIOD_US,
        metavar="N",
        help=f"sampling period in microseconds (default {rtos.DEFAULT_PERIOD_US})",
    )
    count = p.add_mutually_exclusive_group()
    count.add_argument(
        "--samples",
        type=_positive_int,
        metavar="N",
        help=f"number of samples (default {rtos.DEFAULT_SAMPLES})",
    )
    count.add_argument(
        "--duration",
        type=_positive_float,
        metavar="S",
        help="guest seconds to sample; samples = S * 1e6 / period",
    )
    p.add_argument(
        "--load",
        action="store_true",
        help="lower-priority FPU busy threads and a ~21 kHz interrupt waking a worker thread",
    )
    p.add_argument(
        "--trace",
        action="store_true",
        help="with the rtos's scheduler trace recording (trace=1): what it costs (docs/tracing.md)",
    )
    p.add_argument(
        "--cpu1",
        choices=rtos.CPU1_PATTERNS,
        default=None,
        help="boot two vCPUs and run this reference load on the second (rtos/include/rtos/cpuload.h)",
    )
    p.add_argument(
        "--load-cpus",
        type=int,
        choices=range(1, rtos.LOAD_CPUS_MAX + 1),
        default=1,
        metavar="N",
        help=f"with --cpu1: boot 1 + N vCPUs, the load on all but the first (1 to {rtos.LOAD_CPUS_MAX}; 1)",
    )
    p.add_argument(
        "--histogram",
        type=Path,
        default=paths.BUILD_DIR / "latency-hist.dat",
        metavar="FILE",
        help="gnuplot histogram file (default build/latency-hist.dat)",
    )
    _add_common(p, None)
    _add_cntfrq(p)
    p.set_defaults(func=cmd_latency)

    p = sub.add_parser("ctxsw", help="context-switch time (semaphore ping-pong)")
    p.add_argument(
        "--switches",
        type=_positive_int,
        default=rtos.DEFAULT_SWITCHES,
        metavar="N",
        help=f"context switches to time (default {rtos.DEFAULT_SWITCHES})",
    )
    _add_common(p, rtos.CTXSW_TIMEOUT_S)
    p.set_defaults(func=cmd_ctxsw)

    p = sub.add_parser(
        "path",
        help="count the timer-to-thread path (latency) or a context switch (ctxsw) instruction by "
        "instruction, per function and stage (QEMU icount, one instruction per block)",
    )
    p.add_argument("which", choices=("latency", "ctxsw"), nargs="?", default="latency")
    p.add_argument("--no-build", action="store_true", help="use the existing images, skip `make -s rtos`")
    p.set_defaults(func=cmd_path)

    p = top.add_parser(
        "bench",
        help="rtos, Linux and PREEMPT_RT Linux, bare and under rtmux, in icount mode; into BENCHMARKS.md",
        description="Measure timer latency (1 ms period, idle and under load) of the rtos bare metal and in "
        "its rtmux partition, of Debian's standard and PREEMPT_RT kernels bare (cyclictest) and of the "
        "standard kernel as the rtmux Linux partition; the rtos context switch; Linux's boot time and "
        "hackbench, bare and under rtmux. Writes a section of BENCHMARKS.md, a CSV beside it, its figures "
        "(docs/img/ beside it; a --quick run into the repository's BENCHMARKS.md puts them into the data "
        "folder's img/) and gnuplot histograms (build/bench/). `./rtmux bench linux-tail` boots instead "
        "the two loaded standard-kernel Linux cases (bare -smp 1, and under rtmux) once per seed and reports "
        "the distribution of their maxima and their p99.9 (a section of its own, and a CSV beside it); "
        "`--full` runs it after the benchmark.",
    )
    p.add_argument(
        "part",
        nargs="?",
        choices=("linux-tail",),
        help="linux-tail: Linux's loaded cyclictest tail over --seeds boots of each case, bare and under "
        "rtmux, instead of the benchmark",
    )
    p.add_argument(
        "--seeds",
        type=_positive_int,
        default=tail.DEFAULT_SEEDS,
        metavar="N",
        help=f"linux-tail: boots per case, with seeds 1 to N (default {tail.DEFAULT_SEEDS})",
    )
    p.add_argument(
        "--samples",
        type=_positive_int,
        default=None,
        metavar="N",
        help=f"linux-tail: cyclictest samples a boot (default {bench.SAMPLES_FULL}, "
        f"{bench.SAMPLES_QUICK} with --quick)",
    )
    p.add_argument(
        "--cpu0",
        action="store_true",
        help="linux-tail: also boot the artifact check (Linux under rtmux on CPU 0) with every seed",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="the benchmark, then linux-tail (`make bench-full`)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"{bench.SAMPLES_QUICK} samples per case instead of {bench.SAMPLES_FULL} (a few minutes)",
    )
    p.add_argument(
        "--realtime",
        action="store_true",
        help="the same cases without icount (plain TCG: host-noise-dominated), into their own section",
    )
    p.add_argument(
        "--redraw",
        action="store_true",
        help="run nothing: draw the headline figure again from the CSV and section of --output (into "
        "docs/img/ beside it)",
    )
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=runner.default_jobs(),
        metavar="N",
        help="QEMU runs at a time in icount mode, where guest time does not depend on the host "
        f"(default: the CPU count, {runner.default_jobs()} here); --realtime always runs one at a time",
    )
    _add_no_build(p, "make -s rtos hyp")
    _add_timeout(p, None, "none; every QEMU run also has its own", "the benchmark is stopped after it")
    p.add_argument(
        "--output",
        type=Path,
        default=paths.BENCHMARKS_MD,
        metavar="FILE",
        help="Markdown file to update (default BENCHMARKS.md); the CSV goes beside it, the figures into "
        "docs/img/ beside it",
    )
    p.add_argument(
        "--data",
        type=Path,
        default=paths.BENCH_DIR,
        metavar="DIR",
        help="folder for the gnuplot histograms and scripts (default build/bench)",
    )
    p.set_defaults(func=cmd_bench)
    _add_linux(top)
    _add_check(top)
    _add_run(top)
    _add_trace(top)
    _add_app(top)
    _add_board(top)
    _add_sdcard(top)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    gdb_request = _gdb_request(args)
    if args.image is None:
        rtos.build(not args.no_build)
    result = rtos.run(
        args.image if args.image is not None else args.app,
        args.bootargs,
        icount=args.icount,
        timeout_s=args.timeout,
        cntfrq=args.cntfrq,
        gic=args.gic,
        gdb_request=gdb_request,
    )
    # an application's exit(N) is the command's status, as a program's would be
    status = rtos.app_exit_status(result.console)
    return status if status is not None else EXIT_OK


def cmd_selftest(args: argparse.Namespace) -> int:
    rtos.build(not args.no_build)
    passed, _ = rtos.selftest(
        args.only,
        icount=args.icount,
        timeout_s=args.timeout,
        echo=sys.stdout,
        cntfrq=args.cntfrq,
        gic=args.gic,
    )
    print(f"rtmux: selftest passed ({passed} tests)", flush=True)
    return EXIT_OK


def cmd_latency(args: argparse.Namespace) -> int:
    if args.duration is not None:
        try:
            samples = latmus.samples_for_duration(args.duration, args.period_us)
        except ValueError as exc:
            raise RtmuxError(str(exc)) from exc
    else:
        samples = args.samples if args.samples is not None else rtos.DEFAULT_SAMPLES
    timeout = (
        args.timeout
        if args.timeout is not None
        else rtos.default_latency_timeout(samples, args.period_us, args.load)
    )
    rtos.build(not args.no_build)
    run = rtos.latency(
        period_us=args.period_us,
        samples=samples,
        load=args.load,
        icount=args.icount,
        timeout_s=timeout,
        histogram_path=args.histogram,
        on_line=rtos.latency_echo,
        cpu1=args.cpu1,
        load_cpus=args.load_cpus,
        cntfrq=args.cntfrq,
        gic=args.gic,
        trace=args.trace,
    )
    rts = run.report.summary
    print(
        f"rtmux: {samples} samples, min {rts.lat_min:.3f} avg {rts.lat_avg:.3f} max {rts.lat_max:.3f} us, "
        f"{rts.overruns} overruns; histogram: {paths.display(run.histogram_path)}",
        flush=True,
    )
    return EXIT_OK


def cmd_ctxsw(args: argparse.Namespace) -> int:
    rtos.build(not args.no_build)
    ctx = rtos.ctxsw(switches=args.switches, icount=args.icount, timeout_s=args.timeout, echo=sys.stdout)
    print(f"rtmux: {ctx.ns_per_switch:.3f} ns per context switch ({ctx.switches} switches)", flush=True)
    return EXIT_OK


def cmd_path(args: argparse.Namespace) -> int:
    rtos.build(not args.no_build)
    print(path.report(args.which, path.measure(args.which)), flush=True)
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    if args.redraw:
        if args.part or args.full:
            raise SetupError("--redraw draws the benchmark's figure again: no part, no --full")
        runner.redraw(args.output)
        return EXIT_OK
    if (args.part or args.full) and args.realtime:
        raise SetupError("linux-tail (and --full) measure in icount mode: leave out --realtime")
    if args.samples is not None and args.part != "linux-tail":
        raise SetupError("--samples is linux-tail's: `./rtmux bench linux-tail --samples N`")
    if args.part and args.full:
        raise SetupError("--full runs the benchmark and linux-tail: leave out `linux-tail`")
    opts = bench.Options(
        quick=args.quick,
        realtime=args.realtime,
        jobs=args.jobs,
        output=args.output,
        data_dir=args.data,
        build=not args.no_build,
        timeout_s=args.timeout,
        samples=args.samples,
    )
    if args.part == "linux-tail":
        tail.run_linux_tail(opts, args.seeds, cpu0=args.cpu0)
        return EXIT_OK
    runner.run_bench(opts)
    if args.full:  # the images are those the benchmark just built
        tail.run_linux_tail(replace(opts, build=False), args.seeds, cpu0=args.cpu0)
    return EXIT_OK


def _add_linux(top: Subparsers) -> None:
    p_linux = top.add_parser(
        "linux",
        help="Debian's arm64 kernel (standard or PREEMPT_RT) bare on QEMU with the rtmux initramfs",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p_linux.add_subparsers(dest="linux_command", required=True, metavar="SUBCOMMAND")

    def add_refresh(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--refresh", action="store_true", help="ask apt for the current package versions again"
        )

    def add_kernel(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--kernel",
            choices=paths.LINUX_FLAVOURS,
            default="std",
            help="std or PREEMPT_RT (rt); default std",
        )

    p = sub.add_parser("run", help="boot; with --linux-cmd run CMD in the guest and exit with its status")
    add_kernel(p)
    p.add_argument(
        "--smp", type=_positive_int, default=linux.DEFAULT_SMP, metavar="N", help="vCPUs (default 1)"
    )
    p.add_argument("--memory", default=linux.DEFAULT_MEMORY, metavar="SIZE", help="guest RAM (default 1G)")
    _add_icount(p)
    _add_timeout(
        p,
        None,
        f"{linux.CMD_TIMEOUT_S:g} s with --linux-cmd, {linux.INTERACTIVE_TIMEOUT_S:g} s without",
        "QEMU is killed after it (a failure with --linux-cmd; without, the session simply ends)",
    )
    p.add_argument("--linux-cmd", metavar="CMD", help="shell command to run once the guest is ready")
    _add_determinism(p)
    _add_bootargs(p, f"kernel command line arguments added after {linux.BASE_BOOTARGS!r}")
    add_refresh(p)
    p.set_defaults(func=cmd_linux_run)

    p = sub.add_parser("initramfs", help="build build/linux/initramfs-<kernel>.cpio.gz (if inputs changed)")
    add_kernel(p)
    p.add_argument("--list", action="store_true", help="list the archive's contents")
    add_refresh(p)
    p.set_defaults(func=cmd_linux_initramfs)

    p = sub.add_parser("fetch", help="download and unpack the Debian packages into cache/debian/")
    add_refresh(p)
    p.set_defaults(func=cmd_linux_fetch)


def cmd_linux_run(args: argparse.Namespace) -> int:
    return linux.run(
        args.kernel,
        smp=args.smp,
        memory=args.memory,
        icount=args.icount,
        append=args.bootargs,
        linux_cmd=args.linux_cmd,
        linux_script=_read_script(args),
        seed=args.seed,
        timeout_s=args.timeout,
        refresh=args.refresh,
    )


def cmd_linux_initramfs(args: argparse.Namespace) -> int:
    for line in linux.initramfs_report(args.kernel, refresh=args.refresh, listing=args.list):
        print(line)
    return EXIT_OK


def cmd_linux_fetch(args: argparse.Namespace) -> int:
    for line in linux.fetch(args.refresh):
        print(line)
    return EXIT_OK


def _add_app(top: Subparsers) -> None:
    p_app = top.add_parser("app", help="rtos applications built with the rtos SDK, outside the checkout")
    sub = p_app.add_subparsers(dest="app_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser(
        "new",
        help="write a new application (main.c, Makefile, CMakeLists.txt, system.toml) into DIR",
        description="Write a minimal POSIX application into DIR (new or empty): main.c, a Makefile and a "
        "CMakeLists.txt that build it against the SDK (`make sdk`, build/sdk/), and system.toml, which "
        "boots it beside Linux with `./rtmux run DIR/system.toml`. docs/posix.md walks through it.",
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="the application's folder")
    p.add_argument("--name", help="the application's name (default: DIR's name)")
    _add_no_build(p, "make -s sdk")
    p.set_defaults(func=cmd_app_new)


def cmd_app_new(args: argparse.Namespace) -> int:
    app = sdk.new_app(args.dir, args.name, build=not args.no_build)
    where = app.folder
    print(f"rtmux: wrote {app.name} into {where}: {', '.join(f.name for f in app.files)}")
    print(
        f"  build it:        make -C {where}   (or cmake with the SDK's toolchain.cmake: see CMakeLists.txt)"
    )
    print(f"  boot it alone:   ./rtmux rtos run --image {where}/build/{app.name}.img")
    print(f"  beside Linux:    ./rtmux run {where}/system.toml")
    return EXIT_OK


def _add_check(top: Subparsers) -> None:
    p = top.add_parser("check", help="validate a system configuration and print where everything goes")
    _add_config(p)
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    try:
        loaded = config.load(_config_of(args), find_kernel=debian.cached_kernel_image)
        print(config.describe(loaded), flush=True)
    except config.ConfigError as exc:
        for message in exc.errors:
            print(message, file=sys.stderr)
        print(f"rtmux: {exc.path}: {len(exc.errors)} error(s); nothing was built", file=sys.stderr)
        return exc.exit_status
    return EXIT_OK


def _add_board(top: Subparsers) -> None:
    p_board = top.add_parser("board", help="board descriptions (platform/<board>/board.toml)")
    sub = p_board.add_subparsers(dest="board_cmd", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser(
        "import",
        help="write a board description from the board's own device tree",
        description="Read FILE.dtb and write the board's description (RAM, CPUs, PSCI, GIC, timer, console "
        "UART) as TOML; each thing the DTB does not give, or that rtmux cannot use, is printed on stderr and "
        "kept as a comment at the top of the file. Then each field rtmux needs that the description lacks "
        "(or the images cannot use) is printed, and the exit status is 1 while there is one: the build "
        "refuses the description until they are given by hand.",
    )
    p.add_argument("dtb", type=Path, metavar="FILE.dtb")
    p.add_argument("--name", help="the board's name in the description (default: the DTB's file name)")
    p.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    p.set_defaults(func=cmd_board_import)


def cmd_board_import(args: argparse.Namespace) -> int:
    try:
        data = args.dtb.read_bytes()
    except OSError as exc:
        print(f"rtmux: board import: {args.dtb}: {exc.strerror}", file=sys.stderr)
        return EXIT_SETUP
    try:
        imported = boarddesc.from_dtb(data, args.name or args.dtb.name.removesuffix(".dtb"))
    except boarddesc.BoardError as exc:
        print(f"rtmux: board import: {args.dtb}: {exc}", file=sys.stderr)
        return EXIT_SETUP
    for line in imported.missing:
        print(f"rtmux: board import: {args.dtb.name}: {line}", file=sys.stderr)
    text = boarddesc.to_toml(imported, args.dtb.name)
    if args.output is None:
        print(text, end="", flush=True)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
        print(
            f"rtmux: board import: wrote {args.output} ({len(imported.missing)} thing(s) missing)",
            file=sys.stderr,
        )
    # The description is the DTB's, written even so; what rtmux needs of it and does not find refuses it
    # (the images' header is not generated for it) until it is given by hand.
    problems = boarddesc.problems(imported.description)
    for line in problems:
        print(f"rtmux: board import: {args.dtb.name}: not buildable: {line}", file=sys.stderr)
    if problems:
        print(
            f"rtmux: board import: {len(problems)} problem(s): give or correct those fields, then build "
            f"with BOARD={imported.description.name} (docs/boards.md)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def _add_sdcard(top: Subparsers) -> None:
    p = top.add_parser(
        "sdcard",
        help="a Raspberry Pi 4 boot partition from Debian packages (U-Boot, bl31, config.txt, boot script)",
        description="Lay out in DIR what the Raspberry Pi 4 boots from its card's FAT32 partition: Debian's "
        "rpi_4 U-Boot (u-boot-rpi), TF-A's rpi4 bl31 (arm-trusted-firmware), config.txt, U-Boot's boot "
        "script (boot.cmd and boot.scr: it loads rtmux.img and starts it with booti), the Raspberry Pi "
        "firmware files when a source of them is at hand and the board's DTB; README.txt lists every file, "
        "where it came from and what is still to add by hand. Copy DIR's contents onto the card. The "
        "i.MX 8M Plus EVK boots from its vendor's U-Boot instead (docs/boards.md).",
    )
    p.add_argument("--board", required=True, choices=sdcard.BOARDS, help="the board (rpi4)")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="the folder to fill")
    p.add_argument(
        "--firmware",
        type=Path,
        metavar="DIR",
        help=f"the Raspberry Pi firmware's boot files ({', '.join(sdcard.FIRMWARE_FILES)}), e.g. the boot/ "
        "folder of the raspberrypi/firmware repository; default: Debian's raspi-firmware when apt reaches "
        "the non-free-firmware component",
    )
    p.add_argument(
        "--image",
        type=Path,
        metavar="FILE",
        help=f"an rtmux image (arm64 Image header) to copy in as {sdcard.IMAGE}",
    )
    p.add_argument("--refresh", action="store_true", help="ask apt for the current package versions again")
    p.set_defaults(func=cmd_sdcard)


def cmd_sdcard(args: argparse.Namespace) -> int:
    inputs = sdcard.debian_inputs(args.firmware, args.image, refresh=args.refresh)
    card = sdcard.write(args.output, inputs)
    where = paths.display(card.folder)
    print(f"rtmux: sdcard: {where}: a Raspberry Pi 4 boot partition (copy its contents onto the card)")
    for line in sdcard.summary(card):
        print(line)
    if card.missing:
        print(
            f"rtmux: sdcard: {len(card.missing)} file(s) still to add by hand ({where}/README.txt says why):"
        )
        for name in card.missing:
            print(f"  {name}")
        if any(name in sdcard.FIRMWARE_FILES for name in card.missing):
            print(f"rtmux: sdcard: firmware: {inputs.firmware_note}")
    for note in card.notes:
        print(f"rtmux: sdcard: note: {note}")
    return EXIT_OK


def _add_run(top: Subparsers) -> None:
    p = top.add_parser(
        "run",
        help="build and boot the whole system (hypervisor, rtos, Linux) of a configuration",
        description="Build the system image of CONFIG and boot it under QEMU. Without --linux-cmd the "
        "console is interactive (Ctrl-T then a partition number switches input, Ctrl-A x quits QEMU); "
        "with --linux-cmd, wait for Linux's shell, run CMD, power Linux off and exit with CMD's status.",
    )
    _add_config(p)
    # The whole system boots in icount mode unless told otherwise: plain TCG puts the host's load into
    # the rtos's latency lines, and icount with sleep=on puts the host's timer slack into them
    # (README.md, "What the figures mean").
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--icount",
        dest="icount",
        action="store_true",
        default=True,
        help=f"deterministic time, the default: -icount {qemu.ICOUNT} (1 instruction = 1 ns of guest time)",
    )
    mode.add_argument(
        "--plain",
        dest="icount",
        action="store_false",
        help="plain TCG emulation: guest time is wall time, every vCPU on its own host thread",
    )
    _add_timeout(
        p,
        None,
        f"{linux.CMD_TIMEOUT_S:g} s with --linux-cmd, {linux.INTERACTIVE_TIMEOUT_S:g} s without",
        "QEMU is killed after it (a failure with --linux-cmd; without, the session simply ends)",
    )
    p.add_argument("--linux-cmd", default=None, metavar="CMD", help="shell command to run in Linux")
    _add_determinism(p)
    p.add_argument(
        "--rtos-app",
        choices=paths.RTOS_APPS,
        default=None,
        help="rtos application image to boot instead of the configured one, without the configured boot "
        "arguments (they are that application's; --bootargs PART=ARGS gives it some)",
    )
    p.add_argument(
        "--bootargs",
        action="append",
        default=[],
        metavar="PART=ARGS",
        help="replace a partition's boot arguments (repeatable), e.g. rtos='samples=0 load=1'",
    )
    p.add_argument(
        "--firmware",
        choices=system.FIRMWARES,
        default=system.FIRMWARE_NONE,
        help="how the system image is started: none (the default), QEMU loads it itself (-kernel); "
        "u-boot, Debian's U-Boot (u-boot-qemu, fetched into cache/debian/) is the board's firmware (-bios), "
        "loads the image from QEMU's TFTP server and starts it with booti, as on a board (docs/boards.md)",
    )
    _add_no_build(p, "make -s rtos hyp")
    _add_gdb(p, partition=True)
    p.set_defaults(func=cmd_system_run)


def cmd_system_run(args: argparse.Namespace) -> int:
    bootargs = {}
    for item in args.bootargs:
        name, sep, value = item.partition("=")
        if not sep or not name:
            print(f"rtmux: --bootargs {item!r}: expected PARTITION=ARGS", file=sys.stderr)
            return EXIT_SETUP
        bootargs[name] = value
    gdb_request = _gdb_request(args)
    config_path = _config_of(args)
    if (
        args.gdb
        and _looks_like_config(args.gdb)
        and args.config_option is None
        and args.config == config.DEFAULT_CONFIG
    ):
        # `--gdb CONFIG`: argparse gave the configuration to --gdb's optional PARTITION
        config_path, gdb_request = Path(args.gdb), gdb.Request(None, args.gdb_port, args.gdb_wait)
    return system.run(
        config_path,
        icount=args.icount,
        timeout_s=args.timeout,
        linux_cmd=args.linux_cmd,
        rtos_image=paths.rtos_image(args.rtos_app) if args.rtos_app else None,
        bootargs=bootargs,
        no_build=args.no_build,
        linux_script=_read_script(args),
        seed=args.seed,
        firmware=args.firmware,
        gdb_request=gdb_request,
    )


def _add_trace(top: Subparsers) -> None:
    p = top.add_parser(
        "trace",
        help="boot with the rtos's scheduler trace on; write a Perfetto / Chrome trace file and a timeline",
        description="Boot CONFIG (or, with --rtos APP, the rtos alone) with the rtos's scheduler trace on "
        "(boot argument trace=1), let it run, stop QEMU and read the trace's ring out of the rtos's memory; "
        "write PREFIX.json (trace-event format: ui.perfetto.dev or chrome://tracing open it), PREFIX.png "
        "(the last --window-ms) and PREFIX.bin (the ring's bytes). docs/tracing.md.",
    )
    _add_config(p)
    p.add_argument(
        "--rtos",
        choices=paths.RTOS_APPS,
        default=None,
        metavar="APP",
        help=f"trace the rtos application APP alone on QEMU, not a system ({', '.join(paths.RTOS_APPS)})",
    )
    p.add_argument("--partition", default=None, help="the rtos partition to trace (default: the only one)")
    p.add_argument(
        "--bootargs",
        default=None,
        metavar="ARGS",
        help="the rtos's boot arguments instead of the configured ones",
    )
    p.add_argument(
        "--seconds",
        type=_positive_float,
        default=trace.DEFAULT_SECONDS,
        metavar="S",
        help=f"wall-clock seconds to record after the trace is on (default {trace.DEFAULT_SECONDS:g})",
    )
    p.add_argument(
        "--until",
        type=re.compile,
        default=None,
        metavar="REGEX",
        help="record until a console line matches REGEX instead (e.g. a deadline-miss report)",
    )
    p.add_argument("--events", type=int, default=None, metavar="N", help="export only the last N events")
    p.add_argument(
        "--window-ms",
        type=_positive_float,
        default=trace.DEFAULT_WINDOW_MS,
        metavar="MS",
        help=f"the timeline picture's span, the last MS of the trace (default {trace.DEFAULT_WINDOW_MS:g})",
    )
    p.add_argument("-o", "--output", type=Path, default=None, metavar="PREFIX", help="output files' prefix")
    p.add_argument("--no-picture", action="store_true", help="skip the timeline picture")
    p.add_argument(
        "--from",
        dest="from_file",
        type=Path,
        default=None,
        metavar="FILE",
        help="convert a saved ring (PREFIX.bin)",
    )
    p.add_argument("--list", action="store_true", help="also print the exported events, one per line")
    p.add_argument(
        "--linux-script",
        type=Path,
        default=None,
        metavar="FILE",
        help="a system's Linux runs this script at boot (as `./rtmux run --linux-script`): trace the rtos "
        "while Linux does something; with --until on a line the script prints, the trace ends there",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="FOR MEASUREMENT ONLY: fixed seeds, as `./rtmux run --seed` (with --icount and --linux-script "
        "the same trace at every run)",
    )
    _add_icount(p)
    _add_timeout(p, 600.0)
    _add_no_build(p, "make -s rtos hyp")
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    if args.events is not None and args.events <= 0:
        raise UsageError(f"--events {args.events}: expected a positive number of events")
    if args.from_file is not None:
        try:
            data = args.from_file.read_bytes()
        except OSError as exc:
            raise SetupError(f"--from {args.from_file}: {exc.strerror}") from exc
        name = args.from_file.stem
        title = f"rtos trace ({args.from_file.name})"
    else:
        if args.rtos is not None:
            if args.linux_script is not None or args.seed is not None:
                raise UsageError("--linux-script and --seed trace a system, not --rtos APP alone")
            rtos.build(not args.no_build)
            target = trace.rtos_target(args.rtos, args.bootargs or "", icount=args.icount)
            name = args.rtos
        else:
            script = None
            if args.linux_script is not None:
                try:
                    script = str(args.linux_script.read_text(encoding="utf-8"))
                except OSError as exc:
                    raise SetupError(f"--linux-script {args.linux_script}: {exc.strerror}") from exc
            target = trace.system_target(
                _config_of(args),
                args.partition,
                args.bootargs,
                icount=args.icount,
                no_build=args.no_build,
                linux_script=script,
                seed=args.seed,
            )
            name = _config_of(args).stem
        trace.check_events(args.events, target.ring)
        print(f"rtmux: trace: booting {target.what}: {qemu.mode_description(args.icount)}", file=sys.stderr)
        got = trace.capture(
            target, seconds=args.seconds, until=args.until, timeout_s=args.timeout, echo=sys.stdout
        )
        if got.result.console and not got.result.console.endswith("\n"):
            print(flush=True)  # QEMU stopped mid-line: the tools' lines start on their own
        print(f"rtmux: trace: read after {got.reason}", file=sys.stderr)
        data = got.data
        title = f"rtos scheduler trace: {target.what}"
    try:
        written = trace.write(
            data,
            args.output if args.output is not None else trace.default_prefix(name),
            events=args.events,
            window_ms=args.window_ms,
            picture=not args.no_picture,
            title=title,
        )
    except rtos_trace.TraceError as exc:
        raise RtmuxError(str(exc)) from exc
    if args.list:
        chosen = written.trace.events[-written.exported :] if written.exported else []
        for line in rtos_trace.listing(written.trace, chosen):
            print(line)
    for line in trace.summary(written):
        print(f"rtmux: trace: {line}")
    return EXIT_OK


def _looks_like_config(text: str) -> bool:
    """A path rather than a partition's name (names have no `/` and no `.toml`)."""
    return "/" in text or text.endswith(".toml")


def _on_sigterm(signum: int, frame: object) -> None:
    # Unwind normally so that every QEMU or make process we started is killed on the way out.
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        status: int = args.func(args)
        return status
    except GuestFailure as exc:
        sys.stdout.flush()
        qemu.print_console(exc.result, sys.stderr)
        print(f"rtmux: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except RtmuxError as exc:
        sys.stdout.flush()
        print(f"rtmux: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("rtmux: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of the output went away (`./rtmux linux initramfs --list | head`): stop without a
        # word, as a filter does, and keep the interpreter's last flush from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE
    except OSError as exc:
        print(f"rtmux: error: {exc}", file=sys.stderr)
        return EXIT_SETUP
