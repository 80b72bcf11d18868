"""Lines the hypervisor prints that tools and tests read (hyp/core/vcpu.c, hyp/core/lifecycle.c)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# `rtmux: el2-entries cpu=N partition=NAME total=N dabt=N ...`: one CPU's entries into EL2 so far, printed
# at every partition stop and on request (escape then e).
EL2_ENTRIES_RE = re.compile(r"^rtmux: el2-entries cpu=(?P<cpu>\d+) partition=(?P<part>\S+) (?P<counts>.*)$")
_COUNT_RE = re.compile(r"(\w+)=(\d+)")


@dataclass(frozen=True)
class El2Entries:
    cpu: int
    partition: str
    # "total", then by cause: dabt, iabt, hvc, smc, sysreg, other, irq, serror, el2irq, wfi
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return self.counts["total"]


def el2_entries(text: str) -> list[El2Entries]:
    """Every el2-entries line of a console, in order."""
    out = []
    for line in text.splitlines():
        m = EL2_ENTRIES_RE.match(line.strip())
        if m:
            counts = {k: int(v) for k, v in _COUNT_RE.findall(m["counts"])}
            if "total" in counts:
                out.append(El2Entries(int(m["cpu"]), m["part"], counts))
    return out


# `rtmux: mmio partition=NAME uart=N gicd=N ...`: the accesses to each of a partition's emulated MMIO
# regions so far (what its dabt entries went to), printed after its CPU's el2-entries line.
MMIO_RE = re.compile(r"^rtmux: mmio partition=(?P<part>\S+)(?P<counts>( \w+=\d+)*)$")


@dataclass(frozen=True)
class MmioAccesses:
    partition: str
    counts: dict[str, int]  # by region name, in the hypervisor's registration order


def mmio_accesses(text: str) -> list[MmioAccesses]:
    """Every mmio line of a console, in order."""
    out = []
    for line in text.splitlines():
        m = MMIO_RE.match(line.strip())
        if m:
            out.append(MmioAccesses(m["part"], {k: int(v) for k, v in _COUNT_RE.findall(m["counts"])}))
    return out


# `rtmux: share cpu=N rtos=NAME linux=NAME rtos_ms=N linux_ms=N idle_ms=N to_linux=N to_rtos=N
# switch_ns_to_linux=N switch_ns_to_rtos=N longest_wait_ms=N starved=N`: a CPU the rtos shares with Linux
# (hyp/core/share.c), printed with the el2-entries lines.
SHARE_RE = re.compile(
    r"^rtmux: share cpu=(?P<cpu>\d+) rtos=(?P<rtos>\S+) linux=(?P<linux>\S+)(?P<counts>( \w+=\d+)*)$"
)
# `rtmux: share cpu=N: NAME has not run for N ms ...` / `... ran again after N ms without the CPU ...`
STARVED_RE = re.compile(r"^rtmux: share cpu=\d+: \S+ (has not run for|ran again after) (?P<ms>\d+) ms")


@dataclass(frozen=True)
class ShareReport:
    cpu: int
    rtos: str
    linux: str
    # rtos_ms, linux_ms, idle_ms, to_linux, to_rtos, switch_ns_to_linux, switch_ns_to_rtos,
    # longest_wait_ms, starved
    counts: dict[str, int]


def share_reports(text: str) -> list[ShareReport]:
    """Every share line of a console, in order."""
    out = []
    for line in text.splitlines():
        m = SHARE_RE.match(line.strip())
        if m:
            counts = {k: int(v) for k, v in _COUNT_RE.findall(m["counts"])}
            out.append(ShareReport(int(m["cpu"]), m["rtos"], m["linux"], counts))
    return out


def starvation_waits(text: str) -> list[int]:
    """The waits (ms) of every starvation line of a console, in order."""
    out = []
    for line in text.splitlines():
        m = STARVED_RE.match(line.strip())
        if m:
            out.append(int(m["ms"]))
    return out
