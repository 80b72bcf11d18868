"""The benchmark's results as data: the cases' rows, how each run is reproduced, what one run returns,
and the constants every part of the benchmark shares (sampling period, sample counts, modes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rtmux import paths
from rtmux.bench import linux_script
from rtmux.formats import hypcost, latmus, latstats, posix_cost
from rtmux.run import rtos

PERIOD_US = 1000
# The bare reference for the rtos beside a busy vCPU (issue 11): the latency app with the second vCPU
# copying memory (rtos/cpuload.h), no hypervisor; against the partition rows it separates QEMU's icount
# round-robin from rtmux (BENCHMARKS.md).
CPU1_REFERENCE = "copy"
CPU1_SWEEP = "sweep"  # rtos/include/rtos/cpuload.h: a wake-up every 1.013 ms, ~10 us of work
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
# The V-Bus case (issue 12): round trips of 64 B and seconds of 4 KiB bulk writes, through the channel and
# through a pipe pair each. Its rtos partition samples longer than the others by the time these take
# (~20 us a round trip, both bulk runs, one second of margin), so that its usual sample count is taken
# under V-Bus traffic once they are over.
VBUS_ROUND_TRIPS_FULL = 10_000
VBUS_ROUND_TRIPS_QUICK = 1_000
VBUS_BULK_S_FULL = 2
VBUS_BULK_S_QUICK = 1


def vbus_extra_samples(round_trips: int, bulk_s: int) -> int:
    return round((2 * round_trips * 20e-6 + 2 * bulk_s + 1.0) * 1e6 / PERIOD_US)


# The multi-CPU case (issue 13): configs/qemu-virt-4cpu.toml, Linux on CPUs 1-3. Its Linux runs the timed
# hackbench first, then the load while the rtos partition measures; the partition samples longer than the
# others by the hackbench's guest time (~0.6 s per 500 loops on one CPU, less on three) plus a second of
# margin for the slower three-CPU boot, so that its usual sample count is taken under the load (checked
# from Linux's uptime).
SMP_CONFIG = paths.REPO_ROOT / "configs" / "qemu-virt-4cpu.toml"
SMP_LINUX_CPUS = 3
# Samples of the bare-metal reference with CPUs 1-3 copying memory: fewer than the other cases', because
# icount's round-robin makes each of its samples late by up to 200 ms (2,000 samples: ~2 minutes of wall
# time, at 2026-11-24's measurement), and one such run is enough to show the emulator's delay.
SMP_BARE_SAMPLES = 2_000


# Shared-core mode (issue 14): configs/qemu-virt-1cpu.toml, the rtos and Linux on the one CPU of -smp 1
# (free of icount's round-robin between vCPUs). Its rtos partition measures as the others do, Linux idle
# and then loaded; Linux's hackbench runs beside an idle rtos: the latency app waking once a second.
SHARED_CONFIG = paths.REPO_ROOT / "configs" / "qemu-virt-1cpu.toml"

# GICv2 (issue 26): configs/qemu-virt-gicv2.toml, the default system on QEMU virt with gic-version=2 (the
# same images). Its rtos partition and Linux measure as in the loaded GICv3 case.
GICV2_CONFIG = paths.REPO_ROOT / "configs" / "qemu-virt-gicv2.toml"
SHARED_IDLE_RTOS_ARGS = "period_us=1000000 samples=0"


def smp_extra_samples(hackbench_loops: int) -> int:
    return round((hackbench_loops / 500 * 0.6 + 1.0) * 1e6 / PERIOD_US)


# The POSIX control loop (issue 24): one C file built for the rtos (its SDK) and for Linux (the initramfs'
# /usr/bin/control-loop); its rows: the rtos bare, the rtos partition beside the Linux load, PREEMPT_RT
# bare -smp 1 under the same load.
CONTROL_EXAMPLE = paths.EXAMPLES_DIR / "control-loop"
CONTROL_ROWS = ("ctl-rtos-bare", "ctl-rtos-rtmux-load", "ctl-linux-rt-load")
# The POSIX layer's cost over the native rtos calls (rtos/posix/bench/cost.c, `make posix-bench`).
POSIX_COST_IMAGE = paths.BUILD_DIR / "posix" / "cost.img"

# What the hypervisor costs Linux (issue 27): tests/guests/hypcost/ bare (-smp 2, no EL2) and as the
# Linux partition of this configuration (CPUs 1-2 beside the rtos demo on CPU 0). About a second of
# wall time each.
HYPCOST_IMAGE = paths.BUILD_DIR / "guests" / "hypcost.img"
HYPCOST_CONFIG = paths.REPO_ROOT / "tests" / "system" / "configs" / "hypcost.toml"
HYPCOST_TIMEOUT_S = 120.0

# Linux's files from rtos threads (issue 25): rtos/linuxsvc/bench/remote.c as the rtos partition of the
# default system, built with the case's sample count for each of its measurements (files_image); its
# rows: a 1 kHz POSIX thread's lateness alone (Linux idle), alone beside a busy Linux, and beside a thread
# looping on remote preads. Linux waits for it at most FILES_WAIT_BASE_S plus FILES_WAIT_PER_SAMPLE_S a
# sample (guest time: a pread, three periods).
FILES_ROWS = ("files-rtos-rtmux-alone", "files-rtos-rtmux-linux-load", "files-rtos-rtmux-io-load")
FILES_WAIT_BASE_S = 30.0
FILES_WAIT_PER_SAMPLE_S = 0.005


def files_image(samples: int) -> Path:
    """remote.c built with `samples` samples of each measurement (the Makefile's remote-N.img)."""
    return paths.BUILD_DIR / "linuxsvc" / f"remote-{samples}.img"


MODE_ICOUNT = "icount"
MODE_REALTIME = "realtime"


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


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
    el2_entries: int | None = None  # rtos in its partition: its CPU's EL2 entries while it measured


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
    differences: list[str]  # empty: every case repeated (at worst with one run out of three apart)
    # A run that differed from the two others of its case, which agreed: QEMU 7.2's icount clock warp
    # races with the vCPU thread under host load (BENCHMARKS.md, "Determinism"), so one odd run out of
    # three is told but not counted as ours; a difference our code makes does not vanish on a third run.
    odd_runs: list[str] = field(default_factory=list)

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
    posix_cost: list[posix_cost.Cost] = field(default_factory=list)  # the POSIX layer over native calls
    hypcost: list[hypcost.Cost] = field(default_factory=list)  # the hypervisor's paths, bare and under it
    linux: dict[str, linux_script.LinuxResult] = field(default_factory=dict)  # run id -> result
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
    linux: linux_script.LinuxResult | None = None
    ctxsw: latmus.CtxLine | None = None
    posix_cost: list[posix_cost.Cost] = field(default_factory=list)
    hypcost: list[hypcost.Cost] = field(default_factory=list)
    records: tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]] | None = None  # determinism runs
    docs: list[RunDoc] = field(default_factory=list)
    summary: str = ""


@dataclass
class Run:
    id: str
    title: str
    predicted_s: float
    work: Callable[[Callable[[str], None]], RunOutput]  # argument: reports a phase


@dataclass(frozen=True)
class Options:
    quick: bool = False
    realtime: bool = False
    jobs: int = 1
    output: Path = paths.BENCHMARKS_MD
    data_dir: Path = paths.BENCH_DIR
    build: bool = True
    timeout_s: float | None = None  # wall-clock limit of the whole run (each QEMU run has its own too)
    samples: int | None = None  # samples per case instead of SAMPLES_FULL / SAMPLES_QUICK (linux-tail)


def records(report: latmus.LatencyReport) -> tuple[str, tuple[str, ...], tuple[tuple[int, int], ...]]:
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
