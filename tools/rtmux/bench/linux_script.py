"""The benchmark's Linux boots: Debian's kernel bare (`./rtmux linux run`) and the whole rtmux system
(`./rtmux run`, configs/qemu-virt.toml with the rtos partition running its latency app).

Each boot runs one shell script (`script`) in Linux, started by the init's `rtmux.run=` hook at a fixed
point of the boot (nothing is typed), with fixed seeds and no network (`SEED`: the measurement mode of
`--seed`), so that under icount a boot repeats exactly. The script reports through lines
`@bench KEY=VALUE`, printed with `printf '@%s ...' bench` (so that an echo of the script, were it typed,
would never contain them), and dumps each cyclictest histogram between `@bench hist=NAME` and
`@bench end=NAME` (non-empty cells only). `parse_console` reads them back, together with the rtos
partition's latency records (its lines are tagged `[rtos] `, Linux's `[linux] `; bare Linux has no tags)
and the hypervisor's entry counts of the rtos partition's CPU (`rtos_el2_entries`).

A script runs, in order and each only when its Plan asks: the Linux boot-to-shell time (/proc/uptime)
and a hackbench run; an idle cyclictest; the load (LOAD_SCRIPT); a cyclictest under the load; the
POSIX control loop (examples/control-loop, /usr/bin/control-loop; under the load when there is one); the V-Bus
measurements (VbusPlan: rtmux-ping through the channel `echo`, served by the rtos partition's latency
app with echo=1, and the same through a pipe pair, then V-Bus traffic kept going); Linux's side of
the files measurements (FilesPlan: the files the rtos partition's rtos/linuxsvc/bench/remote.c reads,
a wait for its end, then a local dd on the same file); then it waits, the load or traffic still
running, until Linux's uptime reaches `hold_until_s` (the end of the rtos partition's measurement),
stops the load and dumps the histograms.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rtmux import paths, sdk
from rtmux.config.model import VBUS_STATS_PORT
from rtmux.errors import GuestFailure, RtmuxError
from rtmux.formats import control_loop, cyclictest, hyp_console, latmus, linux_files, rtmux_ping
from rtmux.run import linux, system

# The fixed seed of every Linux boot of the benchmark (./rtmux run --seed, ./rtmux linux run --seed).
SEED = 1

# hackbench timing and load: the recipe of the first system benchmark (hackbench plus a memory-copy loop),
# the copy loop started once per Linux CPU.
HACKBENCH_GROUPS = "-g 2 -f 10"
LOAD_HACKBENCH = f"hackbench {HACKBENCH_GROUPS} -l 200"
LOAD_COPY = "dd if=/dev/zero of=/dev/null bs=1M count=64"
LOAD_SCRIPT = f"""\
pids=
n=$(grep -c ^processor /proc/cpuinfo)
i=0
while [ $i -lt $n ]; do (while :; do {LOAD_COPY} 2>/dev/null; done) & pids="$pids $!"; i=$((i+1)); done
(while :; do {LOAD_HACKBENCH} >/dev/null 2>&1; done) & pids="$pids $!\""""
LOAD_DESCRIPTION = (
    f"`{LOAD_HACKBENCH}` in a loop plus one `{LOAD_COPY}` loop per Linux CPU (hackbench and a "
    "memory-copy loop), all at normal priority"
)
STOP_LOAD = "kill $pids 2>/dev/null; killall -9 hackbench dd 2>/dev/null"

_LINE_RE = re.compile(r"^@bench ([a-z_]+)=(.*)$")
_TAG_LINUX = "[linux] "
_TAG_RTOS = "[rtos] "
_PRINTK_RE = re.compile(r"^\[\s*\d+\.\d+\]")


# V-Bus traffic while the rtos partition measures: rtmux-ping's bulk mode through `echo`, again and again
# (a run that fails, the rtos having stopped at the end, is retried until the script stops the loop).
VBUS_TRAFFIC = "(while :; do rtmux-ping echo --bulk -t 1 -T 30 >/dev/null 2>&1 || sleep 0.1; done) &"
VBUS_MESSAGE_SIZE = 64

# The POSIX control loop (examples/control-loop) as the initramfs holds it, and where its output goes.
CONTROL_PROGRAM = "control-loop"
CONTROL_OUT = "/tmp/rtmux-control.out"


def control_command(periods: int) -> str:
    """The control loop's command line in Linux: `periods` periods of PERIOD_US (its default period)."""
    return f"{CONTROL_PROGRAM} {periods}"


@dataclass(frozen=True)
class VbusPlan:
    """The V-Bus measurements of a boot: `round_trips` round trips of VBUS_MESSAGE_SIZE bytes through the
    channel `echo` and through a pipe pair (`rtmux-ping --pipe`, the reference), `bulk_s` seconds of 4 KiB
    writes each way through each, then V-Bus traffic (VBUS_TRAFFIC) until the hold ends."""

    round_trips: int
    bulk_s: int

    def commands(self) -> dict[str, str]:
        """Result name -> the rtmux-ping command measuring it."""
        n, size, t = self.round_trips, VBUS_MESSAGE_SIZE, self.bulk_s
        return {
            "vbus_rtt": f"rtmux-ping echo --hist -n {n} -s {size} -T 30",
            "pipe_rtt": f"rtmux-ping --pipe --hist -n {n} -s {size} -T 30",
            "vbus_bulk": f"rtmux-ping echo --bulk -t {t} -T 30",
            "pipe_bulk": f"rtmux-ping --pipe --bulk -t {t} -T 30",
        }


# Linux's files from the rtos (FilesPlan): the exported directory (configs/qemu-virt.toml's), the file
# the rtos reads, the one it writes and Linux's dd writes after it, and dd's writes (as the rtos's: 4 MiB
# in 8 KiB writes, then fsync).
FILES_DIR = "/srv/rtos"
FILES_READ = f"{FILES_DIR}/bench.bin"
FILES_WRITE = f"{FILES_DIR}/bench-w.bin"
FILES_DD_BS = "8k"
FILES_DD_COUNT = 512
FILES_DD_BYTES = 8192 * FILES_DD_COUNT
# While remote.c's `busy` is in FILES_DIR (its run linux_busy: the rtos's periodic thread with no remote
# I/O of its own), Linux loops on FILES_LINUX_LOAD, which keeps its CPU as busy as diod's serving does:
# the file the rtos reads in its remote-I/O run, read locally, and the V-Bus device's counters' port,
# which the hypervisor serves on Linux's CPU without the rtos.
FILES_BUSY = f"{FILES_DIR}/busy"
FILES_LINUX_LOAD = (
    f"dd if={FILES_WRITE} of=/dev/null bs={FILES_DD_BS} 2>/dev/null; "
    f"cat /dev/virtio-ports/{VBUS_STATS_PORT} >/dev/null"
)
# Linux's monotonic clock in nanoseconds (busybox's date has no %N and its dd prints no rate).
FILES_NS = r"ns() { sed -n 's/^now at \([0-9]*\) nsecs$/\1/p;3q' /proc/timer_list; }"


def files_dd(count: int) -> str:
    """The local dd of the files measurements: `count` blocks of FILES_DD_BS onto FILES_WRITE, synced."""
    return f"dd if=/dev/zero of={FILES_WRITE} bs={FILES_DD_BS} count={count} conv=fsync"


@dataclass(frozen=True)
class FilesPlan:
    """Linux's side of the rtos partition's rtos/linuxsvc/bench/remote.c (Linux's files from an rtos
    thread): write the 4 KiB file it reads (FILES_READ), touch `ready`, wait for its `done` (at most
    `wait_s` guest seconds), then time the same writes with a local dd (files_dd): the time of
    `files_dd(FILES_DD_COUNT)` less that of `files_dd(0)` just before it (a dd that only starts, opens,
    syncs and closes), each between two reads of Linux's monotonic clock."""

    wait_s: float

    def __post_init__(self) -> None:
        if self.wait_s <= 0:
            raise ValueError("the wait for the rtos needs a bound")


@dataclass(frozen=True)
class Plan:
    """What one Linux boot does (see the module's docstring)."""

    samples: int  # cyclictest samples per measurement
    hackbench: bool = False
    idle: bool = False
    load: bool = False
    loaded: bool = False  # a cyclictest under the load (needs load)
    hold_until_s: float = 0.0  # with an rtos partition measuring: Linux uptime (s) to wait for
    hackbench_loops: int = 500
    vbus: VbusPlan | None = None
    control: int = 0  # periods of the POSIX control loop (examples/control-loop), after the cyclictests
    files: FilesPlan | None = None

    def __post_init__(self) -> None:
        if self.loaded and not self.load:
            raise ValueError("a loaded cyclictest needs the load")
        if self.vbus is not None and self.load:
            raise ValueError("the V-Bus measurements run with Linux otherwise idle")
        if self.files is not None and (self.load or self.vbus is not None):
            raise ValueError("the files measurements run with Linux otherwise idle")

    @property
    def phases(self) -> list[str]:
        """The phases the script announces with `@bench phase=NAME`, in order."""
        names = ["hackbench"] * self.hackbench + ["idle"] * self.idle + ["loaded"] * self.load
        names += ["control"] * (self.control > 0)
        names += ["vbus"] * (self.vbus is not None)
        names += ["files"] * (self.files is not None)
        return names + (["hold"] if self.hold_until_s else []) + ["dump"]


def hackbench(loops: int) -> str:
    """The timed hackbench run (a throughput figure: guest seconds for a fixed amount of work)."""
    return f"hackbench {HACKBENCH_GROUPS} -l {loops}"


def histfile(name: str) -> str:
    return f"/tmp/rtmux-{name}.hist"


def script(plan: Plan) -> str:
    """The shell script typed into Linux for `plan` (busybox sh)."""
    lines = [
        'say() { printf \'@%s %s=%s\\n\' bench "$1" "$2"; }',
        'say kernel "$(uname -r)"',
        'say cpus "$(grep -c ^processor /proc/cpuinfo)"',
        "say uptime \"$(cut -d' ' -f1 /proc/uptime)\"",
    ]
    if plan.hackbench:
        lines += [
            "say phase hackbench",
            f"say hackbench \"$({hackbench(plan.hackbench_loops)} | sed -n 's/^Time: //p')\"",
        ]
    if plan.idle:
        lines += ["say phase idle", f"{cyclictest.command(plan.samples, histfile('idle'))} >/dev/null"]
        lines += ["say idle_status $?"]
    if plan.load:
        lines += [LOAD_SCRIPT, "say load_start \"$(cut -d' ' -f1 /proc/uptime)\"", "say phase loaded"]
        if plan.loaded:
            lines += [f"{cyclictest.command(plan.samples, histfile('loaded'))} >/dev/null"]
            lines += ["say loaded_status $?"]
    if plan.control:
        lines += [
            "say phase control",
            f"{control_command(plan.control)} >{CONTROL_OUT}",
            "say control_status $?",
        ]
    if plan.vbus is not None:
        lines += ["say phase vbus"]
        for name, command in plan.vbus.commands().items():
            # rtmux-ping's last line is its result; its status is said apart (a pipe would lose it).
            lines += [
                f"out=$({command})",
                f"say {name}_status $?",
                f'say {name} "$(echo "$out" | tail -n 1)"',
            ]
            if name.endswith("_rtt"):  # its distribution (--hist), one line
                lines += [f'say {name}_hist "$(echo "$out" | sed -n \'s/^rtt_hist_ns //p\')"']
        lines += ["say vbus_end \"$(cut -d' ' -f1 /proc/uptime)\"", VBUS_TRAFFIC, "traffic=$!"]
    if plan.files is not None:
        # the wait is bounded in Linux's uptime (whole seconds; `read` and `${up%.*}` are the shell's own)
        wait = max(1, round(plan.files.wait_s))
        lines += [
            "say phase files",
            f"mkdir -p {FILES_DIR} && rm -f {FILES_DIR}/ready {FILES_DIR}/done {FILES_BUSY} {FILES_WRITE}",
            f"dd if=/dev/zero of={FILES_READ} bs=4096 count=1 2>/dev/null",
            f"touch {FILES_DIR}/ready",
            f"read up rest </proc/uptime; end=$((${{up%.*}} + {wait})); b=0",
            f"while [ ! -e {FILES_DIR}/done ] && read up rest </proc/uptime && [ ${{up%.*}} -lt $end ]; do",
            f"  if [ -e {FILES_BUSY} ]; then {FILES_LINUX_LOAD}; b=$((b+1)); else usleep 100000; fi",
            "done",
            f'say files_wait "$([ -e {FILES_DIR}/done ] && echo done || echo timeout)"',
            'say files_busy_rounds "$b"',
            FILES_NS,
            f"rm -f {FILES_WRITE}",
            f"t0=$(ns); {files_dd(0)} 2>/dev/null; t1=$(ns)",
            f"{files_dd(FILES_DD_COUNT)} 2>/dev/null; st=$?; t2=$(ns)",
            'say dd_status "$st"',
            'say dd_ns "$t0 $t1 $t2"',
            f'say dd_bytes "$(wc -c <{FILES_WRITE})"',
        ]
    if plan.hold_until_s:
        lines += [
            "say phase hold",
            f"while awk -v t={plan.hold_until_s:.2f} '{{exit !($1 < t)}}' /proc/uptime; do sleep 0.1; done",
        ]
    if plan.load:
        lines += [STOP_LOAD, "say load_end \"$(cut -d' ' -f1 /proc/uptime)\""]
    if plan.vbus is not None:
        lines += ["kill $traffic; killall rtmux-ping 2>/dev/null; wait"]
    lines += ["say phase dump"]
    for name in ("idle", "loaded"):
        if getattr(plan, name):
            lines += [f"say hist {name}; grep -v ' 000000$' {histfile(name)}; say end {name}"]
    if plan.control:
        lines += [f"say hist control; grep '^CT[HL]|' {CONTROL_OUT}; say end control"]
    lines += ["say done 1"]
    return "\n".join(lines)


@dataclass
class Console:
    """What parse_console finds in a boot's console."""

    values: dict[str, str] = field(default_factory=dict)
    histograms: dict[str, str] = field(default_factory=dict)  # name -> the histogram file's lines
    rtos: str = ""  # the rtos partition's lines, tags removed


def parse_console(text: str) -> Console:
    """The `@bench` values, the histogram dumps and the rtos partition's lines of a console."""
    out = Console()
    rtos: list[str] = []
    dump: tuple[str, list[str]] | None = None
    for raw in text.splitlines():
        if raw.startswith(_TAG_RTOS):
            rtos.append(raw[len(_TAG_RTOS) :])
            continue
        line = raw[len(_TAG_LINUX) :] if raw.startswith(_TAG_LINUX) else raw
        m = _LINE_RE.match(line.rstrip())
        if m is None:
            if dump is not None and not _PRINTK_RE.match(line):
                dump[1].append(line)
            continue
        key, value = m[1], m[2]
        if key == "hist":
            dump = (value, [])
        elif key == "end":
            if dump is None or dump[0] != value:
                raise RtmuxError(f"`@bench end={value}` without its `@bench hist={value}`")
            out.histograms[value] = "\n".join(dump[1])
            dump = None
        elif key != "phase":
            out.values[key] = value
    out.rtos = "\n".join(rtos)
    return out


@dataclass
class LinuxResult:
    """The figures of one Linux boot."""

    kernel: str
    cpus: int
    boot_s: float  # Linux's uptime when the script started: boot to shell, guest seconds
    hackbench_s: float | None
    idle: cyclictest.Histogram | None
    loaded: cyclictest.Histogram | None
    load_start_s: float | None
    load_end_s: float | None
    rtos: latmus.LatencyReport | None
    wall_s: float
    console: str
    rtos_el2: int | None = None  # EL2 entries of the rtos partition's CPU while it measured
    vbus: VbusResult | None = None
    # by cause (dabt, irq, wfi, ...), while it measured: a CPU the rtos shares with Linux enters EL2 at
    # every idle WFI (the CPU passes to Linux), never for the rtos's interrupts
    rtos_el2_by_cause: dict[str, int] = field(default_factory=dict)
    share: hyp_console.ShareReport | None = None  # shared-core mode: the books at the last report
    control: control_loop.Report | None = None  # Linux's run of the POSIX control loop (Plan.control)
    rtos_control: control_loop.Report | None = None  # the rtos partition's, when it ran the control loop
    files: FilesResult | None = None  # FilesPlan's: the rtos partition's report and Linux's dd


@dataclass(frozen=True)
class FilesResult:
    """The files measurements of one boot: the rtos partition's remote.c report and Linux's local dd
    (FilesPlan: the same bytes in the same writes, its start, open, sync and close subtracted)."""

    rtos: linux_files.Report
    dd: linux_files.Throughput
    dd_whole_ns: int  # the dd of FILES_DD_COUNT blocks, not subtracted
    dd_empty_ns: int  # the dd of no block (subtracted)
    busy_rounds: int = 0  # rounds of FILES_LINUX_LOAD while remote.c's run linux_busy asked for them


@dataclass(frozen=True)
class VbusResult:
    """A VbusPlan's figures (guest time): round trips and throughput through the V-Bus and a pipe pair."""

    rtt: rtmux_ping.RoundTrips
    pipe_rtt: rtmux_ping.RoundTrips
    bulk: rtmux_ping.Throughput
    pipe_bulk: rtmux_ping.Throughput
    end_s: float  # Linux's uptime when the measurements ended (the traffic then starts)
    rtt_hist: rtmux_ping.RttHistogram | None = None  # the round trips' distributions (--hist)
    pipe_rtt_hist: rtmux_ping.RttHistogram | None = None


def _vbus_result(values: dict[str, str], plan: VbusPlan, what: str) -> VbusResult:
    for name, command in plan.commands().items():
        if values.get(f"{name}_status") != "0":
            raise RtmuxError(f"{what}: `{command}` exited with status {values.get(f'{name}_status')}")
    try:
        rtts = {k: rtmux_ping.parse_rtt(values.get(k, "")) for k in ("vbus_rtt", "pipe_rtt")}
        bulks = {k: rtmux_ping.parse_throughput(values.get(k, "")) for k in ("vbus_bulk", "pipe_bulk")}
        hists = {k: rtmux_ping.parse_hist(values.get(f"{k}_hist", "")) for k in ("vbus_rtt", "pipe_rtt")}
    except rtmux_ping.RtmuxPingFormatError as exc:
        raise RtmuxError(f"{what}: {exc}") from exc
    for name, rtt in rtts.items():
        if rtt.n != plan.round_trips or hists[name].n != plan.round_trips:
            raise RtmuxError(
                f"{what}: {name}: {rtt.n} round trips ({hists[name].n} in its histogram), "
                f"{plan.round_trips} were asked"
            )
    return VbusResult(
        rtts["vbus_rtt"],
        rtts["pipe_rtt"],
        bulks["vbus_bulk"],
        bulks["pipe_bulk"],
        _float(values, "vbus_end", what),
        hists["vbus_rtt"],
        hists["pipe_rtt"],
    )


def _files_result(values: dict[str, str], rtos_text: str, samples: int, what: str) -> FilesResult:
    """The files measurements of a boot whose rtos partition ran remote.c with `samples` samples of
    each measurement (RtmuxError naming what is wrong)."""
    if values.get("files_wait") != "done":
        raise RtmuxError(
            f"{what}: the rtos partition's remote.c did not create {FILES_DIR}/done in time "
            f"(`@bench files_wait={values.get('files_wait')}`)"
        )
    try:
        report = linux_files.parse(rtos_text)
    except linux_files.LinuxFilesFormatError as exc:
        raise RtmuxError(f"{what}: rtos partition: {exc}") from exc
    counts = [report.pread.samples] + [run.samples for run in report.latency.values()]
    if counts != [samples] * len(counts):
        raise RtmuxError(
            f"{what}: the rtos partition's remote.c took {counts} samples (pread, latency runs), "
            f"{samples} each were expected (its image's LSB_SAMPLES, LSB_PERIODS)"
        )
    if report.latency["remote_io"].reads < 1:
        raise RtmuxError(f"{what}: no remote read while the latency ran beside remote I/O")
    busy = values.get("files_busy_rounds", "")
    if not busy.isdigit() or int(busy) < 1:
        raise RtmuxError(
            f"{what}: Linux ran no round of its load while the rtos asked for it (`@bench files_busy_rounds="
            f"{busy}`): the run linux_busy had no busy Linux beside it"
        )
    if values.get("dd_status") != "0":
        raise RtmuxError(f"{what}: `{files_dd(FILES_DD_COUNT)}` exited with status {values.get('dd_status')}")
    times = values.get("dd_ns", "").split()
    if len(times) != 3 or not all(t.isdigit() for t in times):
        raise RtmuxError(f"{what}: no valid `@bench dd_ns=T0 T1 T2` line (got {values.get('dd_ns')!r})")
    t0, t1, t2 = (int(t) for t in times)
    if not t0 <= t1 <= t2:
        raise RtmuxError(f"{what}: Linux's clock went backwards around dd: {t0} {t1} {t2}")
    nbytes = int(_float(values, "dd_bytes", what))
    if nbytes != FILES_DD_BYTES:
        raise RtmuxError(f"{what}: dd wrote {nbytes} bytes, not {FILES_DD_BYTES}")
    whole, empty = t2 - t1, t1 - t0
    return FilesResult(report, linux_files.Throughput(nbytes, max(whole - empty, 1)), whole, empty, int(busy))


def _float(values: dict[str, str], key: str, what: str) -> float:
    try:
        return float(values[key])
    except (KeyError, ValueError):
        raise RtmuxError(f"{what}: no valid `@bench {key}=` line (got {values.get(key)!r})") from None


def control_report(text: str, periods: int, what: str) -> control_loop.Report:
    """A run of the POSIX control loop of `periods` periods, which must have had SCHED_FIFO."""
    try:
        report = control_loop.parse(text)
    except control_loop.ControlLoopFormatError as exc:
        raise RtmuxError(f"{what}: the control loop's output: {exc}") from exc
    if report.periods != periods or report.samples != periods:
        raise RtmuxError(
            f"{what}: the control loop reports {report.samples} samples of {report.periods} periods, "
            f"{periods} were asked"
        )
    if not report.realtime:
        raise RtmuxError(f"{what}: the control loop ran without SCHED_FIFO (prio 0): not a measurement")
    return report


def read_results(
    console: str,
    plan: Plan,
    *,
    what: str,
    rtos_samples: int | None,
    wall_s: float = 0.0,
    rtos_control: int | None = None,
    rtos_files: int | None = None,
) -> LinuxResult:
    """Check and read the console of a boot that ran script(plan); RtmuxError naming what is wrong.
    `rtos_samples`: the rtos partition ran the latency app for that many samples; `rtos_control`: it ran
    the POSIX control loop for that many periods; `rtos_files`: it ran rtos/linuxsvc/bench/remote.c with
    that many samples of each measurement (one of the three, or none; the last with plan.files)."""
    found = parse_console(console)
    values = found.values
    if "done" not in values:
        raise RtmuxError(f"{what}: the script did not finish (no `@bench done=` line)")
    hists: dict[str, cyclictest.Histogram] = {}
    for name in ("idle", "loaded"):
        if not getattr(plan, name):
            continue
        status = values.get(f"{name}_status")
        if status != "0":
            raise RtmuxError(f"{what}: the {name} cyclictest exited with status {status}")
        if name not in found.histograms:
            raise RtmuxError(f"{what}: no dump of the {name} cyclictest's histogram")
        try:
            hists[name] = cyclictest.parse_histogram(found.histograms[name], samples=plan.samples)
        except cyclictest.CyclictestFormatError as exc:
            raise RtmuxError(f"{what}: {name} cyclictest: {exc}") from exc
    hackbench = _float(values, "hackbench", what) if plan.hackbench else None
    control = None
    if plan.control:
        if values.get("control_status") != "0":
            raise RtmuxError(
                f"{what}: `{control_command(plan.control)}` exited with status {values.get('control_status')}"
            )
        if "control" not in found.histograms:
            raise RtmuxError(f"{what}: no dump of the control loop's output")
        control = control_report(found.histograms["control"], plan.control, f"{what}: Linux")
    report = None
    rtos_el2 = None
    by_cause: dict[str, int] = {}
    rtos_ctl = None
    if rtos_control is not None:
        rtos_ctl = control_report(found.rtos, rtos_control, f"{what}: rtos partition")
        by_cause = rtos_el2_counts(console, what=what)
        rtos_el2 = by_cause["total"]
    files = None
    if (rtos_files is None) != (plan.files is None):
        raise RtmuxError(f"{what}: the files measurements need both the plan's FilesPlan and remote.c")
    if rtos_files is not None:
        files = _files_result(values, found.rtos, rtos_files, what)
        by_cause = rtos_el2_counts(console, what=what)
        rtos_el2 = by_cause["total"]
    if rtos_samples is not None:
        try:
            report = latmus.parse_latency(found.rtos)
        except latmus.LatmusFormatError as exc:
            raise RtmuxError(f"{what}: rtos partition: malformed latency output: {exc}") from exc
        if report.histogram.samples != rtos_samples:
            raise RtmuxError(
                f"{what}: the rtos partition reports {report.histogram.samples} samples, "
                f"{rtos_samples} were requested"
            )
        by_cause = rtos_el2_counts(console, what=what)
        rtos_el2 = by_cause["total"]
    shares = hyp_console.share_reports(console)
    return LinuxResult(
        kernel=values.get("kernel", "?"),
        cpus=int(_float(values, "cpus", what)),
        boot_s=_float(values, "uptime", what),
        hackbench_s=hackbench,
        idle=hists.get("idle"),
        loaded=hists.get("loaded"),
        load_start_s=_float(values, "load_start", what) if plan.load else None,
        load_end_s=_float(values, "load_end", what) if plan.load else None,
        rtos=report,
        wall_s=wall_s,
        console=console,
        rtos_el2=rtos_el2,
        vbus=None if plan.vbus is None else _vbus_result(values, plan.vbus, what),
        rtos_el2_by_cause=by_cause,
        share=shares[-1] if shares else None,
        control=control,
        rtos_control=rtos_ctl,
        files=files,
    )


_STOPPED_RE = re.compile(r"^rtmux: partition (\S+) stopped: ", re.MULTILINE)


def rtos_el2_entries(console: str, *, what: str, partition: str = "rtos") -> int:
    """The EL2 entries of `partition`'s CPU while it measured (rtos_el2_counts' total)."""
    return rtos_el2_counts(console, what=what, partition=partition)["total"]


def rtos_el2_counts(console: str, *, what: str, partition: str = "rtos") -> dict[str, int]:
    """The EL2 entries of `partition`'s CPU while it measured, in total and by cause: from the
    hypervisor's report at its first console tick (the measurement mode's boot report, 4 ms after boot,
    the rtos's initialisation done) to its report when the partition stopped (its PSCI SYSTEM_OFF after
    the last sample), that SYSTEM_OFF call itself not counted (in total and hvc/smc). RtmuxError when a
    report is missing."""
    stop = next((m for m in _STOPPED_RE.finditer(console) if m[1] == partition), None)
    if stop is None:
        raise RtmuxError(f"{what}: no `rtmux: partition {partition} stopped` line")
    before = [e for e in hyp_console.el2_entries(console[: stop.start()]) if e.partition == partition]
    after = [e for e in hyp_console.el2_entries(console[stop.start() :]) if e.partition == partition]
    if not before or not after:
        raise RtmuxError(
            f"{what}: the hypervisor's el2-entries reports for partition {partition} at boot and at its "
            "stop are missing (is the image packed with --seed, whose boot report this needs?)"
        )
    first, last = before[0], after[0]
    if first.cpu != last.cpu:
        raise RtmuxError(f"{what}: partition {partition} reported on CPU {first.cpu}, then {last.cpu}")
    calls = last.counts.get("hvc", 0) + last.counts.get("smc", 0)
    calls -= first.counts.get("hvc", 0) + first.counts.get("smc", 0)
    if calls < 1:
        raise RtmuxError(f"{what}: partition {partition} stopped without a PSCI call counted")
    counts = {k: v - first.counts.get(k, 0) for k, v in last.counts.items()}
    call = "hvc" if last.counts.get("hvc", 0) > first.counts.get("hvc", 0) else "smc"
    counts[call] -= 1
    counts["total"] -= 1
    return counts


class _PhaseSink:
    """A write-only text stream for run_command's echo: calls `on_phase(name)` for each phase line."""

    def __init__(self, on_phase: Callable[[str], None]) -> None:
        self.on_phase = on_phase
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for raw in lines:
            line = raw[len(_TAG_LINUX) :] if raw.startswith(_TAG_LINUX) else raw
            m = _LINE_RE.match(line.rstrip())
            if m and m[1] == "phase":
                self.on_phase(m[2])
        return len(text)

    def flush(self) -> None:
        pass


def run(
    argv: list[str],
    plan: Plan,
    *,
    what: str,
    timeout_s: float,
    rtos_samples: int | None = None,
    on_phase: Callable[[str], None] | None = None,
    rtos_control: int | None = None,
    rtos_files: int | None = None,
) -> LinuxResult:
    """Boot `argv`, whose Linux runs script(plan) at boot (linux.boot_argv's or system_argv's `script`),
    and read the figures (GuestFailure or RtmuxError, with the console, when something failed)."""
    sink = _PhaseSink(on_phase) if on_phase is not None else None
    cmd_run = linux.run_script(argv, timeout_s=timeout_s, echo=sink)  # type: ignore[arg-type]
    status = linux.check_command(cmd_run, what)
    if status != 0:
        raise GuestFailure(f"{what}: the benchmark script exited with status {status}", cmd_run.result)
    try:
        return read_results(
            cmd_run.result.console,
            plan,
            what=what,
            rtos_samples=rtos_samples,
            wall_s=cmd_run.result.elapsed_s,
            rtos_control=rtos_control,
            rtos_files=rtos_files,
        )
    except RtmuxError as exc:
        raise GuestFailure(str(exc), cmd_run.result) from exc


# ------------------------------------------------------------------------------------ system images

_build_lock = threading.Lock()


_PARTITION_RE = re.compile(r"^\[\[partition\]\]\s*$")
_CPUS_RE = re.compile(r"^(cpus\s*=\s*)\[\s*(\d+)\s*\](.*)$")


def swap_cpus(text: str) -> str:
    """A system configuration's text with the CPUs of its two partitions exchanged (each must own one
    CPU, given as `cpus = [N]`): the artifact check runs Linux on CPU 0 and the rtos on CPU 1."""
    lines = text.splitlines(keepends=True)
    found: list[tuple[int, re.Match[str]]] = []
    in_partition = False
    for i, line in enumerate(lines):
        if line.startswith("["):
            in_partition = bool(_PARTITION_RE.match(line))
            continue
        m = _CPUS_RE.match(line.rstrip("\n"))
        if in_partition and m:
            found.append((i, m))
    if len(found) != 2:
        raise RtmuxError(f"expected two partitions with `cpus = [N]`, found {len(found)}")
    (i, a), (j, b) = found
    lines[i] = f"{a[1]}[{b[2]}]  # exchanged for the benchmark's artifact check\n"
    lines[j] = f"{b[1]}[{a[2]}]  # exchanged for the benchmark's artifact check\n"
    return "".join(lines)


_TABLE_RE = re.compile(r"^\s*\[")
_DEVICE_TABLE_RE = re.compile(r"^\s*\[\[partition\.device\]\]\s*(#.*)?$")


def without_devices(text: str) -> str:
    """A system configuration's text without its `[[partition.device]]` tables (the default system's
    network, whose answers come from the host and would make a run depend on it), each replaced by a
    comment saying so."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if _DEVICE_TABLE_RE.match(line):
            skipping = True
            out.append("# [[partition.device]] left out by the benchmark (deterministic runs)\n")
            continue
        if skipping and _TABLE_RE.match(line):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out)


def system_argv(
    name: str,
    rtos_bootargs: str,
    *,
    icount: bool,
    folder: Path,
    swapped: bool = False,
    script_text: str | None = None,
    base: Path = system.DEFAULT_CONFIG,
    rtos_image: Path | None = None,
    seed: int = SEED,
) -> tuple[list[str], Path]:
    """Pack the system `base` (the default one unless said) with the rtos partition running the latency
    app with `rtos_bootargs`, as build/system/bench-NAME.img (a copy of `base` named after the case, so
    that cases, and other users of ./rtmux run, never overwrite each other's image; without its network
    device; `swapped`: with the partitions' CPUs exchanged), in the measurement mode (`seed`, SEED unless
    said), Linux running `script_text` at boot. With `rtos_image` (an application built with the SDK),
    the default system with that image in the rtos partition, without boot arguments, instead
    (`rtos_bootargs` must be "").
    Returns QEMU's command line and the configuration copy."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / f"bench-{name}.toml"
    if rtos_image is not None:
        if rtos_bootargs or base != system.DEFAULT_CONFIG:
            raise RtmuxError("an SDK application's image boots in the default system without boot arguments")
        text = without_devices(sdk.system_config(Path(paths.display(rtos_image)), rtos_image.stem))
    else:
        text = without_devices(base.read_text(encoding="utf-8"))
    config.write_text(swap_cpus(text) if swapped else text, encoding="utf-8")
    with _build_lock:
        built = system.build(
            config,
            rtos_image=rtos_image if rtos_image is not None else paths.rtos_image("latency"),
            bootargs={"rtos": rtos_bootargs},
            icount=icount,
            no_build=True,
            linux_script=script_text,
            seed=seed,
        )
    linux_cpus = [p.cpus for p in built.config.partitions if p.kind == "linux"]
    if swapped and linux_cpus != [(0,)]:
        raise RtmuxError(f"{paths.display(config)}: the Linux partition should own CPU 0, not {linux_cpus}")
    return built.argv, config


def hypervisor_lines() -> int:
    """Lines of C and assembly of the hypervisor (hyp/ and the shared lib/), blank lines excluded."""
    files = [
        p for d in ("hyp", "lib") for p in (paths.REPO_ROOT / d).rglob("*") if p.suffix in {".c", ".h", ".S"}
    ]
    return sum(1 for f in files for line in f.read_text().splitlines() if line.strip())
