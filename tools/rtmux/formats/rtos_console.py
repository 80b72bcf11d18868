"""Common rtos console lines and the selftest report (docs/rtos-console.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BOOT_RE = re.compile(r"^rtos: rtmux rtos (?P<version>\S+) entered at EL(?P<el>[0-3])$")
SYSTEM_OFF = "rtos: system off"
SYSTEM_HALTED = "rtos: system halted after fatal error"
FATAL_PREFIX = "FATAL: "
FATAL_REGS_RE = re.compile(
    r"^FATAL: ESR=0x(?P<esr>[0-9a-fA-F]+) FAR=0x(?P<far>[0-9a-fA-F]+) "
    r"ELR=0x(?P<elr>[0-9a-fA-F]+) thread=(?P<thread>\S+)$"
)
SELFTEST_HEADER_RE = re.compile(r"^selftest: (?P<count>\d+) tests?$")
SELFTEST_RESULT_RE = re.compile(r"^(?P<name>[A-Za-z0-9_]+): (?P<verdict>OK|FAIL)(?: \((?P<detail>.*)\))?$")
SELFTEST_SUMMARY_RE = re.compile(r"^(?P<passed>\d+) passed, (?P<failed>\d+) failed$")
# The demo application's report, once a second (rtos/apps/demo/main.c, logger_entry).
DEMO_REPORT_RE = re.compile(
    r"^demo: t=(?P<t>\d+)s control loop (?P<cycles>\d+) cycles, (?P<overruns>\d+) overruns, .*"
    r"worst wake-up (?P<worst>[\d.]+) us, checksum (?P<checksum>unchanged|CHANGED)$"
)


def boot_line(text: str) -> re.Match[str] | None:
    """The `rtos: rtmux rtos <version> entered at EL<n>` line, if the guest got that far."""
    for line in text.splitlines():
        m = BOOT_RE.match(line.strip())
        if m:
            return m
    return None


def has_system_off(text: str) -> bool:
    return any(line.strip() == SYSTEM_OFF for line in text.splitlines())


@dataclass(frozen=True)
class Fatal:
    """A fatal error report: `FATAL: <reason>` and its register line (when present)."""

    reason: str
    esr: int | None = None
    far: int | None = None
    elr: int | None = None
    thread: str | None = None
    halted: bool = False

    def describe(self) -> str:
        where = f" in thread {self.thread}" if self.thread else ""
        regs = ""
        if self.esr is not None:
            regs = f" (ESR=0x{self.esr:x} FAR=0x{self.far:x} ELR=0x{self.elr:x})"
        return f"{self.reason}{where}{regs}"


def fatal_reports(text: str) -> list[Fatal]:
    """Every fatal error report on the console, in order.

    A report is a run of consecutive `FATAL:` lines: its first line other than the register line gives
    the reason. Some are survived (a fault hook kills the thread and the system continues); the one
    followed by `rtos: system halted after fatal error` has halted=True.
    """
    reports: list[Fatal] = []
    reason: str | None = None
    regs: re.Match[str] | None = None
    in_report = False

    def close() -> None:
        if in_report:
            reports.append(_fatal(reason, regs, halted=False))

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(FATAL_PREFIX):
            if not in_report:
                reason, regs, in_report = None, None, True
            m = FATAL_REGS_RE.match(line)
            if m and regs is None:
                regs = m
            elif not m and reason is None:
                reason = line[len(FATAL_PREFIX) :]
            continue
        close()
        in_report = False
        if line == SYSTEM_HALTED:
            if reports:
                last = reports[-1]
                reports[-1] = Fatal(last.reason, last.esr, last.far, last.elr, last.thread, halted=True)
            else:
                reports.append(Fatal("fatal error (no FATAL: line before the halt)", halted=True))
    close()
    return reports


def _fatal(reason: str | None, regs: re.Match[str] | None, halted: bool) -> Fatal:
    if regs is None:
        return Fatal(reason=reason or "fatal error", halted=halted)
    return Fatal(
        reason=reason or "fatal error",
        esr=int(regs["esr"], 16),
        far=int(regs["far"], 16),
        elr=int(regs["elr"], 16),
        thread=regs["thread"],
        halted=halted,
    )


def find_fatal(text: str) -> Fatal | None:
    """The fatal error that halted the system, or None (reports the system survived do not count)."""
    for report in fatal_reports(text):
        if report.halted:
            return report
    return None


@dataclass(frozen=True)
class TestResult:
    name: str
    ok: bool
    detail: str = ""


@dataclass
class SelftestReport:
    announced: int | None = None  # from `selftest: N tests`
    results: list[TestResult] = field(default_factory=list)
    passed: int | None = None  # from the summary line; None when it is missing
    failed: int | None = None

    @property
    def has_summary(self) -> bool:
        return self.passed is not None

    @property
    def failures(self) -> list[TestResult]:
        return [r for r in self.results if not r.ok]


def parse_selftest(text: str) -> SelftestReport:
    """Read the selftest lines; free text between them is ignored. The last summary line counts."""
    report = SelftestReport()
    for raw in text.splitlines():
        line = raw.strip()
        if m := SELFTEST_HEADER_RE.match(line):
            report.announced = int(m["count"])
        elif m := SELFTEST_SUMMARY_RE.match(line):
            report.passed = int(m["passed"])
            report.failed = int(m["failed"])
        elif (m := SELFTEST_RESULT_RE.match(line)) and m["name"] not in ("rtos", "selftest"):
            report.results.append(TestResult(m["name"], m["verdict"] == "OK", m["detail"] or ""))
    return report


@dataclass(frozen=True)
class DemoReport:
    """One second of the demo's control loop: overruns and cycles so far, the second's worst wake-up, and
    whether the rtos's code still has its boot-time checksum ("unchanged" or "CHANGED")."""

    t_s: int
    cycles: int
    overruns: int
    worst_us: float
    checksum: str


def demo_reports(text: str, tag: str | None = "rtos") -> list[DemoReport]:
    """The demo's reports in `text`, in order. Under the hypervisor its lines carry the partition's
    console tag (`[rtos] demo: ...`); tag=None reads untagged (bare) output. A last line without its
    newline (QEMU stopped while it was printed) is not a report: it may be cut anywhere."""
    prefix = f"[{tag}] " if tag is not None else ""
    reports = []
    lines = text.splitlines()
    if lines and not text.endswith(("\n", "\r")):
        lines.pop()
    for line in lines:
        if not line.startswith(prefix):
            continue
        m = DEMO_REPORT_RE.match(line[len(prefix) :].strip())
        if m:
            reports.append(
                DemoReport(
                    int(m["t"]), int(m["cycles"]), int(m["overruns"]), float(m["worst"]), m["checksum"]
                )
            )
    return reports
