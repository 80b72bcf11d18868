"""Console responders and readers shared by the system tests (imported as `tests.system.console_script`:
the repository root is on pytest's and mypy's paths, so the module has one name for both).

A `Script` drives one QEMU run through `rtmux.qemu.run_console`: it waits for each pattern in turn and
types the text that goes with it, then (optionally) waits for a number of the rtos demo's once-a-second
reports and ends the run. Patterns must match what a command computes (`echo ok-$((6*7))` answers
`ok-42`), never the command line the shell echoes back, so a step cannot pass by having been typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rtmux import qemu
from rtmux.formats.hyp_console import el2_entries, mmio_accesses
from rtmux.formats.rtos_console import DemoReport, demo_reports

# Shell for Linux's boot-time scripts: wait_for FILE N waits for FILE up to N tenths of a second, or
# fails the script (`@timeout waiting for FILE`).
WAIT_FOR = r"""
wait_for() {
    i=0
    while [ ! -e "$1" ]; do
        usleep 100000
        i=$((i + 1))
        if [ $i -ge "$2" ]; then echo "@timeout waiting for $1"; exit 1; fi
    done
}
"""
PROMPT = r"rtmux-linux:~# "  # the Linux guest's shell prompt (guest/initramfs/init: PS1)
# EL2 entries the rtos's start costs inside rtmux (its GIC distributor set-up traps; 3 today): more in a
# report means the hypervisor ran on the rtos's CPU after its start.
RTOS_INIT_ENTRIES = 16
# One of the rtos demo's reports (rtos/apps/demo); three of them are three seconds of guest time.
DEMO_LINE = r"\[rtos\] demo: t=\d+s.*\n"


@dataclass
class Script:
    """A run_console responder.

    steps: (pattern, text) pairs. Each pattern is searched (multi-line) after the end of the previous
    match; when it matches, its text (if any) is typed, and the next pattern must come from what that
    text causes (one input at a time).
    after: once every step matched, wait for this many more rtos demo reports before stopping.
    linger_s: how long the run goes on (wall time) once the script is complete.
    """

    steps: list[tuple[str, str]]
    after: int = 0
    linger_s: float = 1.0
    text: str = ""
    pos: int = 0  # where the next pattern is searched from
    done: int = 0  # steps matched
    matched_at: list[int] = field(default_factory=list)  # console offset of the end of each step's match
    log: list[str] = field(default_factory=list)  # the patterns matched, in order
    finished: bool = False  # every step matched and the `after` reports came

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        reply = None
        while self.done < len(self.steps):
            pattern, send = self.steps[self.done]
            m = re.compile(pattern, re.MULTILINE).search(self.text, self.pos)
            if m is None:
                return reply
            self.pos = m.end()
            self.done += 1
            self.matched_at.append(m.end())
            self.log.append(pattern)
            reply = qemu.Reply(send=send.encode()) if send else None
            if send:
                break
        if self.done == len(self.steps) and not self.finished:
            if len(demo_reports(self.text[self.pos :])) >= self.after:
                self.finished = True
                typed = reply.send if reply is not None else b""
                return qemu.Reply(send=typed, stop_after_s=self.linger_s)
        return reply

    def progress(self) -> str:
        """Where the script stopped, for an assertion message."""
        nxt = self.steps[self.done][0] if self.done < len(self.steps) else f"{self.after} rtos reports"
        return f"script reached step {self.done} of {len(self.steps)} (waiting for {nxt!r})"


def until(pattern: str, times: int = 1, after: int = 3) -> Script:
    """A script that types nothing: it stops once `pattern` has appeared `times` times and `after` rtos
    demo reports followed the last of them."""
    return Script([(pattern, "")] * times, after=after, linger_s=0.0)


def run(argv: list[str], timeout_s: float, script: Script) -> qemu.RunResult:
    """One QEMU run driven by `script`, under a hard wall-clock timeout."""
    return qemu.run_console(argv, timeout_s, respond=script)


def run_to_end(
    argv: list[str], timeout_s: float, script: Script, tail: int | None = None
) -> tuple[qemu.RunResult, str]:
    """`run`, then what every scripted run must show: the script got to its end and the hypervisor never
    panicked. Returns the run and its description (`describe`) for the caller's own assertions."""
    r = run(argv, timeout_s, script)
    why = describe(r, script, tail)
    assert "PANIC" not in r.console, why
    assert script.finished, why
    return r, why


def describe(r: qemu.RunResult, script: Script | None = None, tail: int | None = None) -> str:
    """A run for an assertion message: the command, how it ended, how far the script got, the console
    (its last `tail` characters when given)."""
    where = f"; {script.progress()}" if script is not None else ""
    console = r.console if tail is None or len(r.console) <= tail else "..." + r.console[-tail:]
    return (
        f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out} "
        f"wall: {r.elapsed_s:.1f} s{where}\n{console}"
    )


def linux_value(console: str, name: str) -> str | None:
    """What an `echo NAME=...` in Linux printed (the first such line), or None."""
    m = re.search(rf"^\[linux\] {re.escape(name)}=(\S*)$", console, re.MULTILINE)
    return m[1] if m else None


# The hypervisor's report of what it refused or emulated for a partition (hyp/core/lifecycle.c), printed
# when the partition stops or resets; its counts are cumulative over the partition's resets.
_STATS = re.compile(
    r"^rtmux: partition (?P<name>\S+): refused or emulated: (\d+) aborts, (\d+) set/way operations, "
    r"(\d+) PMU/debug registers, (\d+) undefined system registers, "
    r"(\d+) level-interrupt resamples \((\d+) withdrawn\)$",
    re.MULTILINE,
)
STAT_NAMES = ("aborts", "setway", "sysregs", "undefs", "resamples", "withdrawn")


# What guest/rtmux-debugcheck's `all` prints when every check passes, perf's counts as N (the program
# checks them against its loop and fails otherwise).
DEBUGCHECK = [
    "step: 1000 steps for 1000 instructions",
    "break: stopped at the breakpoint (TRAP_HWBKPT)",
    "watch: stopped at the write (TRAP_HWBKPT), address right",
    "perf: instructions N for a 2000001-instruction loop, cycles N",
]


def debugcheck_lines(console: str) -> list[str]:
    """rtmux-debugcheck's result lines in Linux's console output, perf's counts replaced by N."""
    found = re.findall(r"^\[linux\] ((?:step|break|watch|perf): .*?)\r?$", console, re.MULTILINE)
    return [re.sub(r"(instructions|cycles) \d+", r"\1 N", line) for line in found]


def hyp_stats(console: str, partition: str = "linux") -> dict[str, int] | None:
    """The last such report for `partition` (a count per STAT_NAMES), or None when none was
    printed (the hypervisor prints none while every count is zero)."""
    found = [m for m in _STATS.finditer(console) if m["name"] == partition]
    if not found:
        return None
    return dict(zip(STAT_NAMES, (int(g) for g in found[-1].groups()[1:]), strict=True))


def rtos_cpu_entries(console: str, partition: str = "rtos") -> list[int]:
    """The rtos partition's EL2 entry totals from every `rtmux: el2-entries` report, in order (the
    hypervisor prints one per CPU at each partition stop, and on escape then e)."""
    return [e.total for e in el2_entries(console) if e.partition == partition]


# The hypervisor's boot line naming the board's GIC version.
GICV2_LINE = "rtmux: interrupt controller: GICv2"


def rtos_cpu_untouched(console: str, gic: int | None = None) -> str | None:
    """None when the rtos's CPU entered the hypervisor during its start only: every report of its EL2
    entries shows the same small total (its GIC set-up). Otherwise what the reports show.

    On a GICv2 (`gic` 2, or by default when the hypervisor's boot line says so) the rtos sends its SGIs
    (the V-Bus doorbell) by writing GICD_SGIR, which traps: there its total grows by one per doorbell,
    and each entry must be one of its own accesses to the distributor (a data abort the distributor's
    emulation served: never an interrupt or anything else the hypervisor did on its CPU)."""
    reports = [e for e in el2_entries(console) if e.partition == "rtos"]
    totals = [e.total for e in reports]
    if not totals:
        return "no el2-entries report of the rtos's CPU"
    if gic == 2 or (gic is None and GICV2_LINE in console):
        gicd = [m.counts.get("gicd", 0) for m in mmio_accesses(console) if m.partition == "rtos"]
        if totals != sorted(totals) or len(gicd) != len(reports):
            return f"the rtos's reports do not add up: totals {totals}, distributor accesses {gicd}"
        for e, d in zip(reports, gicd, strict=True):
            if e.counts.get("dabt", 0) != e.total or d != e.total:
                return f"the rtos's CPU entered the hypervisor for more than its GIC accesses: {e.counts}"
        return None
    if len(set(totals)) != 1 or not 0 < totals[0] <= RTOS_INIT_ENTRIES:
        return f"the rtos's CPU entered the hypervisor after its start: totals {totals}"
    return None


def rtos_reported_unharmed(
    console: str, why: str, quiet_from: str, quiet_reports: int = 3, gic: int | None = None
) -> list[DemoReport]:
    """The rtos demo's reports: its code unchanged in every one, none missing, its CPU never entered by
    the hypervisor after its start (on a GICv2, but for its own distributor accesses: rtos_cpu_untouched),
    and no missed period from `quiet_from` on (the first report after it may still count the last busy
    second). While Linux computes, missed periods are the emulator's (docs/security.md), so they are
    judged only once it is quiet."""
    reports = demo_reports(console)
    assert {d.checksum for d in reports} == {"unchanged"}, why
    untouched = rtos_cpu_untouched(console, gic)
    assert untouched is None, f"{untouched}{why}"
    seconds = [d.t_s for d in reports]
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), f"gap in {seconds}{why}"
    quiet = demo_reports(console[console.index(quiet_from) :])
    assert len(quiet) >= quiet_reports and len({d.overruns for d in quiet[1:]}) == 1, why
    return reports
