"""Boot one test image bare on QEMU `virt` (one CPU, icount) with a wall-clock timeout, and classify it.

The rtos prints `rtos: exit(N)` when main() returns or exit() is called; N is the suite's result code
(include/posixtest.h). A `FATAL` line is a crash (fault, panic, stack overflow).
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

QEMU = "qemu-system-aarch64"
QEMU_ARGS = (
    "-M virt,virtualization=on,gic-version=3 -cpu cortex-a72 -smp 1 -m 1G -nographic -nic none "
    "-icount shift=0,align=off,sleep=off"
).split()

# The suite's result codes (include/posixtest.h).
CODES = {0: "PASS", 1: "FAIL", 2: "UNRESOLVED", 4: "UNSUPPORTED", 5: "UNTESTED"}
# Results that are not exit codes.
NOT_BUILT = "NOT BUILT"
TIMEOUT = "TIMEOUT"
CRASH = "CRASH"
OTHER = "OTHER"  # an exit code the suite does not define
RESULTS = (*CODES.values(), TIMEOUT, CRASH, OTHER, NOT_BUILT)

EXIT_LINE = re.compile(r"^rtos: exit\((-?\d+)\)", re.M)


@dataclass(frozen=True)
class RunResult:
    result: str  # one of RESULTS
    detail: str  # the FATAL line, the test's last words, or the exit code
    console: str
    seconds: float


def classify(console: str, timed_out: bool) -> tuple[str, str]:
    """(result, detail) from a run's console output."""
    lines = [line.rstrip("\r") for line in console.splitlines()]
    fatal = next((line for line in lines if line.startswith("FATAL")), None)
    if fatal is not None:
        return CRASH, fatal
    m = EXIT_LINE.search(console)
    said = [line for line in lines if line.strip() and not line.startswith(("rtos: ", "QEMU", "qemu-system"))]
    last = said[-1].strip() if said else ""
    if m is None:
        return (TIMEOUT if timed_out else CRASH), last or "no exit line"
    code = int(m[1])
    if code in CODES:
        return CODES[code], last
    return OTHER, f"exit({code}) {last}".strip()


def run(image: Path, timeout_s: float, qemu: str = QEMU) -> RunResult:
    """Boot `image` for at most `timeout_s` seconds of wall-clock time."""
    cmd = [qemu, *QEMU_ARGS, "-kernel", str(image)]
    start = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s
        )
        raw = proc.stdout
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed QEMU
        timed_out = True
        raw = exc.stdout if isinstance(exc.stdout, bytes) else b""
    console = raw.decode("utf-8", "replace")
    result, detail = classify(console, timed_out)
    return RunResult(result, detail, console, time.monotonic() - start)
