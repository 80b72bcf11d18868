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
