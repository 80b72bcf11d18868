"""The `LSB|` lines of rtos/linuxsvc/bench/remote.c: Linux's files from an rtos thread, measured.

    LSB| pread64 samples 1000 min_ns 30112 avg_ns 31460 p99_ns 35008 max_ns 60400
    LSB| write bytes 4194304 ns 51200000
    LSB| hist alone 0 1000                 KIND US COUNT: a non-empty 1-us cell of the run KIND
    LSB| latency alone samples 1000 min_ns 400 avg_ns 402 p99_ns 416 p999_ns 416 max_ns 416 overruns 0 reads 0
    LSB| latency linux_busy samples 1000 min_ns 448 ... overruns 0 reads 0
    LSB| latency remote_io samples 1000 min_ns 400 ... overruns 0 reads 5210
    LSB| done

Times in nanoseconds (averages rounded down, percentiles nearest-rank and exact); `LSB| done` ends a
complete run, `LSB| error ...` a failed one. Lines may carry a console tag (`[rtos] `) before the prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rtmux.formats import latstats

_TAG = r"^(?:\[[\w-]+\] )?"
_START_RE = re.compile(_TAG + r"LSB\|")
_PREAD_RE = re.compile(
    _TAG + r"LSB\| pread64 samples (?P<n>\d+) min_ns (?P<min>\d+) avg_ns (?P<avg>\d+) p99_ns (?P<p99>\d+) "
    r"max_ns (?P<max>\d+)\s*$"
)
_WRITE_RE = re.compile(_TAG + r"LSB\| write bytes (?P<bytes>\d+) ns (?P<ns>\d+)\s*$")
_HIST_RE = re.compile(_TAG + r"LSB\| hist (?P<kind>[a-z_]+) (?P<us>\d+) (?P<n>\d+)\s*$")
_LATENCY_RE = re.compile(
    _TAG + r"LSB\| latency (?P<kind>[a-z_]+) samples (?P<n>\d+) min_ns (?P<min>\d+) avg_ns (?P<avg>\d+) "
    r"p99_ns (?P<p99>\d+) p999_ns (?P<p999>\d+) max_ns (?P<max>\d+) overruns (?P<overruns>\d+) "
    r"reads (?P<reads>\d+)\s*$"
)
_DONE_RE = re.compile(_TAG + r"LSB\| done\s*$")
_ERROR_RE = re.compile(_TAG + r"LSB\| error:? (?P<what>.*)$")
# The latency runs, in the order the program makes them: alone (Linux idle), alone beside a busy Linux,
# then beside a thread on remote I/O.
KINDS = ("alone", "linux_busy", "remote_io")


class LinuxFilesFormatError(ValueError):
    pass


@dataclass(frozen=True)
class RoundTrips:
    """The remote preads' times from call to return, nanoseconds."""

    samples: int
    min_ns: int
    avg_ns: int
    p99_ns: int
    max_ns: int


@dataclass(frozen=True)
class Latency:
    """One 1 kHz run of the periodic thread: its lateness after each release point, nanoseconds."""

    kind: str
    samples: int
    min_ns: int
    avg_ns: int
    p99_ns: int
    p999_ns: int
    max_ns: int
    overruns: int
    reads: int  # the other thread's remote preads while it ran (0: alone)
    cells: dict[int, int]  # 1-us cell -> samples

    def stats(self) -> latstats.LatencyStats:
        """The benchmark's figures (microseconds; the percentiles are exact)."""
        return latstats.from_ns(
            self.samples, self.min_ns, self.avg_ns, self.p99_ns, self.p999_ns, self.max_ns, self.overruns
        )


@dataclass(frozen=True)
class Throughput:
    """Bytes written (and synced) in a time, nanoseconds."""

    nbytes: int
    ns: int

    @property
    def mbps(self) -> float:
        """10^6 bytes per second, as rtmux-ping's."""
        return self.nbytes * 1e3 / self.ns if self.ns > 0 else float("inf")


@dataclass(frozen=True)
class Report:
    """A complete run of remote.c."""

    pread: RoundTrips
    write: Throughput
    latency: dict[str, Latency]  # KINDS -> its run


def parse(text: str) -> Report:
    """The run in `text` (a console; lines without the prefix are ignored). Raises LinuxFilesFormatError
    when the program reported an error, did not finish, or printed a line or figures that do not hold
    together (repeated lines, percentiles out of order, a histogram not summing to its samples)."""
    preads: list[RoundTrips] = []
    writes: list[Throughput] = []
    runs: dict[str, Latency] = {}
    cells: dict[str, dict[int, int]] = {}
    done = False
    for line in text.splitlines():
        if not _START_RE.match(line):
            continue
        if done:
            raise LinuxFilesFormatError(f"a line after `LSB| done`: {line!r}")
        if e := _ERROR_RE.match(line):
            raise LinuxFilesFormatError(f"the program failed: {e['what']}")
        if m := _PREAD_RE.match(line):
            preads.append(RoundTrips(int(m["n"]), int(m["min"]), int(m["avg"]), int(m["p99"]), int(m["max"])))
        elif m := _WRITE_RE.match(line):
            writes.append(Throughput(int(m["bytes"]), int(m["ns"])))
        elif m := _HIST_RE.match(line):
            kind_cells = cells.setdefault(m["kind"], {})
            us = int(m["us"])
            if us in kind_cells or m["kind"] in runs:
                raise LinuxFilesFormatError(f"histogram cell {us} us of {m['kind']} out of place: {line!r}")
            kind_cells[us] = int(m["n"])
        elif m := _LATENCY_RE.match(line):
            kind = m["kind"]
            if kind in runs:
                raise LinuxFilesFormatError(f"two `LSB| latency {kind}` lines")
            runs[kind] = Latency(
                kind, int(m["n"]), int(m["min"]), int(m["avg"]), int(m["p99"]), int(m["p999"]),
                int(m["max"]), int(m["overruns"]), int(m["reads"]), cells.get(kind, {}),
            )  # fmt: skip
        elif _DONE_RE.match(line):
            done = True
        else:
            raise LinuxFilesFormatError(f"malformed LSB| line: {line!r}")
    if not done:
        raise LinuxFilesFormatError("no `LSB| done` line: the program did not finish")
    if len(preads) != 1 or len(writes) != 1:
        raise LinuxFilesFormatError(
            f"{len(preads)} `LSB| pread64` and {len(writes)} `LSB| write` lines, one of each expected"
        )
    if sorted(runs) != sorted(KINDS) or sorted(cells) != sorted(KINDS):
        raise LinuxFilesFormatError(
            f"latency runs {sorted(runs)} (histograms of {sorted(cells)}), expected {list(KINDS)}"
        )
    report = Report(preads[0], writes[0], {k: runs[k] for k in KINDS})
    _check(report)
    return report


def _check(r: Report) -> None:
    p = r.pread
    if p.samples < 1 or not (p.min_ns <= p.avg_ns <= p.max_ns and p.min_ns <= p.p99_ns <= p.max_ns):
        raise LinuxFilesFormatError(f"pread64 figures out of order: {p}")
    if r.write.nbytes < 1 or r.write.ns < 1:
        raise LinuxFilesFormatError(f"no write measured: {r.write}")
    for run in r.latency.values():
        ordered = run.min_ns <= run.avg_ns <= run.max_ns and run.min_ns <= run.p99_ns <= run.p999_ns
        if run.samples < 1 or not ordered or run.p999_ns > run.max_ns:
            raise LinuxFilesFormatError(f"latency {run.kind}: figures out of order")
        if sum(run.cells.values()) != run.samples:
            raise LinuxFilesFormatError(
                f"latency {run.kind}: the histogram holds {sum(run.cells.values())} samples, "
                f"the result line says {run.samples}"
            )
        if min(run.cells) != run.min_ns // 1000 or max(run.cells) != run.max_ns // 1000:
            raise LinuxFilesFormatError(f"latency {run.kind}: the histogram's cells miss its min or max")
        for name, fraction, value in (("p99", 0.99, run.p99_ns), ("p99.9", 0.999, run.p999_ns)):
            if latstats.quantile_cell(run.cells, fraction) != value // 1000:
                raise LinuxFilesFormatError(f"latency {run.kind}: {name} is not in its histogram cell")
    for kind in ("alone", "linux_busy"):
        if r.latency[kind].reads != 0:
            raise LinuxFilesFormatError(f"latency {kind}: remote reads counted while it ran alone")
