"""`./rtmux rtos path`: the rtos's timer-to-thread and switch paths counted instruction by instruction.

QEMU runs the latency (or ctxsw) image in icount mode with one instruction per translation block and
logs every block it executes (`-d exec,nochain`), so the log is the exact sequence of program counters.
Each is attributed to the function the ELF's symbol table places it in, and the functions to the
stages of the path. In icount mode one instruction is one nanosecond of guest time, so the counts are
the path's cost.

- latency: from the IRQ vector to the first instruction of rt_time_now in the woken sampler (the
  counter read that measures the latency), the last such path of the run (every one is the same while
  nothing else runs).
- ctxsw: one round of the semaphore ping-pong (two switches), from one rt_sem_give of thread "ping" to
  the next; per switch is half.
"""

from __future__ import annotations

import bisect
import re
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rtmux import paths, qemu
from rtmux.errors import RtmuxError, SetupError
from rtmux.run import rtos

# The stages of the timer's path to its thread (BENCHMARKS.md names them so); a function not listed
# here counts in "return to the thread".
STAGES: dict[str, tuple[str, ...]] = {
    "vector entry and register save": ("arch_vectors", "irq_entry", "irq_nested"),
    "acknowledge and dispatch": ("k_irq_handle", "k_irq_dispatch", "k_irq_entry", "intc_ack", "intc_eoi"),
    "timer queue": ("k_timer_isr", "k_tq_pop_expired", "k_tq_first", "k_tq_remove", "k_lock", "k_unlock"),
    "wake-up": ("thread_timeout_expired", "k_wake", "k_make_ready", "k_rq_add_tail"),
    "scheduler": ("k_irq_exit", "k_reschedule", "k_rq_best", "k_check_stack"),
    "switch": ("arch_switch", "arch_switch_no_save"),
}
OTHER_STAGE = "return to the thread"
STAGE_ORDER = (*STAGES, OTHER_STAGE)

_TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
IRQ_VECTOR_OFFSET = 0x280  # current EL with SP_ELx, IRQ
TRACE_TIMEOUT_S = 300.0
NM = "aarch64-linux-gnu-nm"


@dataclass
class Symbols:
    """Function start addresses from an ELF, sorted."""

    addrs: list[int]
    names: list[str]

    @classmethod
    def from_nm(cls, text: str) -> Symbols:
        pairs = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                pairs.append((int(parts[0], 16), parts[2]))
        pairs.sort()
        return cls([a for a, _ in pairs], [n for _, n in pairs])

    def name(self, pc: int) -> str:
        i = bisect.bisect_right(self.addrs, pc) - 1
        return self.names[i] if i >= 0 else "?"

    def address(self, name: str) -> int:
        try:
            return self.addrs[self.names.index(name)]
        except ValueError:
            raise RtmuxError(f"the image has no symbol {name}") from None


@dataclass
class Breakdown:
    """Instructions per function, in the order first met, and their total."""

    functions: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.functions.values())

    def stages(self) -> dict[str, int]:
        out = dict.fromkeys(STAGE_ORDER, 0)
        for fn, n in self.functions.items():
            out[stage_of(fn)] += n
        return out


def stage_of(function: str) -> str:
    base = function.split(".")[0]  # GCC's clones: k_reschedule.part.0
    for stage, names in STAGES.items():
        if base in names:
            return stage
    return OTHER_STAGE


def parse_pcs(lines: Iterable[str]) -> list[int]:
    """The program counters of a `-d exec` log, in execution order. A block QEMU entered and left
    before its instruction ran (an interrupt or the icount budget, checked at the block's start) is
    logged again when it runs: a PC repeated at once is one instruction (none of the paths measured
    branches to itself)."""
    pcs: list[int] = []
    for line in lines:
        m = _TRACE.match(line)
        if m:
            pc = int(m.group(1), 16)
            if not pcs or pcs[-1] != pc:
                pcs.append(pc)
    return pcs


def count(names: Sequence[str]) -> Breakdown:
    b = Breakdown()
    for n in names:
        b.functions[n] = b.functions.get(n, 0) + 1
    return b


def timer_path(pcs: Sequence[int], syms: Symbols) -> Breakdown:
    """The last complete path from the IRQ vector to rt_time_now."""
    vector = syms.address("arch_vectors") + IRQ_VECTOR_OFFSET
    names = [syms.name(pc) for pc in pcs]
    last: tuple[int, int] | None = None
    i = 0
    while i < len(pcs):
        if pcs[i] == vector:
            j = i
            while j < len(pcs) and names[j] != "rt_time_now":
                if j > i and pcs[j] == vector:
                    break  # another interrupt before the sampler ran: not a timer-to-thread path
                j += 1
            if j < len(pcs) and names[j] == "rt_time_now":
                last = (i, j)
            i = j
        i += 1
    if last is None:
        raise RtmuxError("the trace holds no path from the IRQ vector to rt_time_now")
    return count(names[last[0] : last[1]])


def switch_round(pcs: Sequence[int], syms: Symbols) -> Breakdown:
    """One ping-pong round (two switches) between rt_sem_give calls of thread_a, the second to last."""
    names = [syms.name(pc) for pc in pcs]
    starts = [i for i in range(1, len(names)) if names[i] == "rt_sem_give" and names[i - 1] == "thread_a"]
    if len(starts) < 3:
        raise RtmuxError("the trace holds fewer than two whole ping-pong rounds")
    return count(names[starts[-3] : starts[-2]])


def trace(app: str, bootargs: str, timeout_s: float = TRACE_TIMEOUT_S) -> list[int]:
    """Boot build/rtos/<app>.img in icount mode, one instruction per block, and return its PCs."""
    qemu_path = qemu.find_qemu()
    image = rtos.image_for(app)
    with tempfile.TemporaryDirectory(prefix="rtmux-path-") as tmp:
        log = Path(tmp) / "exec.log"
        cmd = qemu.qemu_command(image, bootargs, icount=True, qemu=qemu_path)
        cmd += ["-singlestep", "-d", "exec,nochain", "-D", str(log)]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise RtmuxError(f"QEMU did not finish the traced run in {timeout_s:.0f} s") from exc
        if out.returncode != 0 or "system off" not in out.stdout:
            raise RtmuxError(
                f"the traced run of {app}.img failed (QEMU status {out.returncode}); its console:\n"
                f"{out.stdout}{out.stderr}"
            )
        with log.open() as f:
            return parse_pcs(f)


def symbols(app: str) -> Symbols:
    elf = paths.rtos_image(app).with_suffix(".elf")
    try:
        out = subprocess.run([NM, "-n", str(elf)], capture_output=True, text=True, check=True)
    except FileNotFoundError as exc:
        raise SetupError(f"{NM} is missing: run `make deps`") from exc
    except subprocess.CalledProcessError as exc:
        raise RtmuxError(f"{NM} cannot read {paths.display(elf)}: {exc.stderr.strip()}") from exc
    return Symbols.from_nm(out.stdout)


def measure(which: str) -> Breakdown:
    if which == "latency":
        return timer_path(trace("latency", "samples=5 period_us=1000 report_ms=1000"), symbols("latency"))
    if which == "ctxsw":
        return switch_round(trace("ctxsw", "switches=20"), symbols("ctxsw"))
    raise RtmuxError(f"unknown path {which!r}: latency or ctxsw")


def report(which: str, b: Breakdown) -> str:
    lines = []
    if which == "latency":
        lines.append(f"timer interrupt to the sampler's counter read: {b.total} instructions (icount: ns)")
        for stage, n in b.stages().items():
            lines.append(f"  {n:5d}  {stage}")
    else:
        lines.append(f"one ping-pong round, two switches: {b.total} instructions, {b.total / 2:.1f} each")
    lines.append("per function:")
    for fn, n in b.functions.items():
        lines.append(f"  {n:5d}  {fn}")
    return "\n".join(lines)
